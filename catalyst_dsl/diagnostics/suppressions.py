"""Inline suppressions: `# catalyst: ignore[C817]` comments (HTML comments in Markdown,
but for its YAML front matter).

`ignore[…]` at the end of a line silences those codes on that line; on a line of its own,
on the next line. `ignore-file[…]` silences them in the whole file. A suppression that
silences nothing is reported (C040), and so is a code the registry does not know (C041),
so stale comments do not pile up. Only the start line of a finding counts.

ShellCheck's findings (C640-C643) are silenced by their code or by ShellCheck's own
(`ignore[SC2086]`), which leads their message.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from catalyst_dsl.diagnostics.ids import (
    SHELLCHECK_ERROR,
    SHELLCHECK_INFO,
    SHELLCHECK_STYLE,
    SHELLCHECK_WARNING,
    UNKNOWN_SUPPRESSION_CODE,
    UNUSED_SUPPRESSION,
)
from catalyst_dsl.diagnostics.model import Diagnostic, DiagnosticSink
from catalyst_dsl.diagnostics.suggest import suggest
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.front_matter import front_matter_end
from catalyst_dsl.syntax.source import SourceFile, Span

_BODY = r"catalyst:\s*(ignore(?:-file)?)\[([^\]\n]*)\]"
#: A YAML comment starts a line or follows a space; inside a quoted or plain value the
#: same text is data (`syntax.yaml_text`), and silences nothing. In a block scalar it is
#: read: a script's comment line silences what is found on the next.
YAML_COMMENT = LazyPattern(r"(?:^|(?<=\s))#\s*" + _BODY)
MARKDOWN_COMMENT = LazyPattern(r"<!--\s*" + _BODY + r"\s*-->")
#: Codes never silenced by a comment: the findings about the comments themselves.
_ABOUT_SUPPRESSIONS = frozenset({UNUSED_SUPPRESSION, UNKNOWN_SUPPRESSION_CODE})
#: The findings that are ShellCheck's, each message led by its SC code ("SC2086: ...").
_SHELLCHECK = frozenset({SHELLCHECK_ERROR, SHELLCHECK_WARNING, SHELLCHECK_INFO, SHELLCHECK_STYLE})
_SHELLCHECK_CODE = LazyPattern(r"SC[0-9]{4}")


@record(frozen=False)
class Suppression:
    code: str
    #: The line it silences; None for the whole file.
    line: int | None
    #: Where the code is written in the comment.
    span: Span
    used: bool = False


def suppressions_in(source: SourceFile, sink: DiagnosticSink) -> list[Suppression]:
    """The suppressions written in `source`; unknown codes are reported as C041."""
    found: list[Suppression] = []
    if "catalyst:" not in source.text:
        return found  # every comment names `catalyst:`: most files have none to look for
    for match in _comments(source):
        kind, codes = match.group(1), match.group(2)
        start = match.start()
        line_start = source.text.rfind("\n", 0, start) + 1
        alone = not source.text[line_start:start].strip()
        line = source.position(start)[0]
        target = None if kind == "ignore-file" else (line + 1 if alone else line)
        offset = match.start(2)
        for item in codes.split(","):
            code = item.strip()
            where = offset + (len(item) - len(item.lstrip()))
            offset += len(item) + 1
            span = source.span(where, where + max(len(code), 1))
            from catalyst_dsl.diagnostics.codes import CODES  # the table of 200 codes: only where a comment names one

            if code not in CODES and not _SHELLCHECK_CODE.fullmatch(code):
                upper = code.upper()
                if upper != code and (upper in CODES or _SHELLCHECK_CODE.fullmatch(upper)):
                    hint = f"did you mean '{upper}'? codes are written in capitals"  # `sc2086` silences nothing
                else:
                    hint = suggest(code, CODES, prefix="did you mean ") or "codes are listed in docs/diagnostics.md"
                what = "an empty code" if not code else f"unknown code '{code}'"
                sink.report(UNKNOWN_SUPPRESSION_CODE, f"{what} in a catalyst suppression comment", span, help=hint)
                continue
            found.append(Suppression(code, target, span))
    return found


def _comments(source: SourceFile):
    """The suppression comments of `source`: YAML's, or in Markdown HTML comments and, in
    its front matter, which is YAML, YAML's (an HTML comment there would be YAML text)."""
    from catalyst_dsl.syntax.yaml_text import data_spans

    markdown = source.path.endswith(".md")
    data = data_spans(source.text, markdown)
    if not markdown:
        return [m for m in YAML_COMMENT.finditer(source.text) if not data.inside(m.start(), blocks=False)]
    html = MARKDOWN_COMMENT.finditer(source.text)
    end = front_matter_end(source.text)
    if end is None:
        return html
    yaml_comments = [m for m in YAML_COMMENT.finditer(source.text, 4, end) if not data.inside(m.start(), blocks=False)]
    return sorted([*yaml_comments, *html], key=lambda m: m.start())


def apply_suppressions(
    diagnostics: Sequence[Diagnostic], sources: Iterable[SourceFile], shellcheck_ran: bool = True
) -> list[Diagnostic]:
    """`diagnostics` less those a comment silences, plus C040 and C041 for the comments.
    When ShellCheck did not run (`shellcheck_ran` false), whether a comment silencing its
    findings is used cannot be told: it is not reported as unused."""
    sink = DiagnosticSink()
    written: list[Suppression] = []
    # Indexed by (file, code, line), line None for the whole file: each finding looks up
    # two keys, so the work grows with findings plus comments, not their product.
    index: dict[tuple[str, str, int | None], list[Suppression]] = {}
    for source in sources:
        for s in suppressions_in(source, sink):
            written.append(s)
            index.setdefault((source.path, s.code, s.line), []).append(s)
    kept: list[Diagnostic] = []
    for d in diagnostics:
        if d.span is None or d.code in _ABOUT_SUPPRESSIONS or not _silence(d, index):
            kept.append(d)
    for s in written:
        if not s.used and (shellcheck_ran or not _about_shellcheck(s.code)):
            where = "in this file" if s.line is None else f"on line {s.line}"
            sink.report(
                UNUSED_SUPPRESSION,
                f"the suppression of {s.code} silences nothing: no {s.code} {where}",
                s.span,
                help="remove it from the comment",
            )
    return sorted([*kept, *sink.items], key=Diagnostic.sort_key)


def _about_shellcheck(code: str) -> bool:
    return code in _SHELLCHECK or bool(_SHELLCHECK_CODE.fullmatch(code))


def _silence(d: Diagnostic, index: dict[tuple[str, str, int | None], list[Suppression]]) -> bool:
    matching = [*index.get((d.span.file, d.code, d.span.line), ()), *index.get((d.span.file, d.code, None), ())]
    if d.code in _SHELLCHECK:
        own = d.message.split(":", 1)[0]
        matching += [*index.get((d.span.file, own, d.span.line), ()), *index.get((d.span.file, own, None), ())]
    for s in matching:
        s.used = True  # every matching comment counts as used, not only the first
    return bool(matching)
