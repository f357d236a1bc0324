"""Findings as an editor is shown them: a diagnostic in the protocol's terms, and a file's
own findings (those its compilation alone gives)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from catalyst_dsl.diagnostics.fixes import replacement
from catalyst_dsl.diagnostics.ids import UNUSED_SUPPRESSION
from catalyst_dsl.lsp.positions import to_range

_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}
_START = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))


def to_lsp(d, sources) -> lsp.Diagnostic:
    """`d` (a `diagnostics.model.Diagnostic`) for the editor; `sources` by path, for positions."""
    source = sources.get(d.span.file) if d.span is not None else None
    where = to_range(source, d.span) if d.span is not None else _START
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(
                uri=Path(label.span.file).as_uri(), range=to_range(sources.get(label.span.file), label.span)
            ),
            message=label.message,
        )
        for label in d.labels
    ]
    if d.help and d.span is not None:
        related.append(
            lsp.DiagnosticRelatedInformation(
                location=lsp.Location(uri=Path(d.span.file).as_uri(), range=where), message=f"help: {d.help}"
            )
        )
    fix = replacement(d, source)  # the same edit SARIF offers
    return lsp.Diagnostic(
        range=where,
        message=d.message,
        severity=_SEVERITY.get(d.severity.value),
        code=d.code,
        source="catalyst",
        related_information=related or None,
        data={"replacement": fix.text} if fix else None,
    )


def own(source, compiled, config) -> list[lsp.Diagnostic]:
    """A file's findings from its compilation alone, with the settings' rules applied."""
    from catalyst_dsl.project.rules import reported

    mine = [d for d in compiled.diagnostics if d.span is None or d.span.file == source.path]
    # A suppression of a library finding (a call's, a permission's) silences nothing in
    # the file alone: whether it is unused (C040) is for the library check to say.
    shown = [d for d in reported(mine, [source], config) if d.code != UNUSED_SUPPRESSION]
    return [to_lsp(d, {source.path: source}) for d in shown]
