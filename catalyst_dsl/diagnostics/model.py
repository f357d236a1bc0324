"""The diagnostic model: code, severity, message, span, labels, notes and help."""

from __future__ import annotations

from typing import Iterable

from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.source import Span


@record
class Label:
    """A secondary position with a short message, such as 'first defined here'."""

    span: Span
    message: str


@record
class Diagnostic:
    code: str
    severity: Severity
    message: str
    span: Span | None
    labels: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: str | None = None

    @property
    def name(self) -> str:
        from catalyst_dsl.diagnostics.codes import CODES  # here: a check with nothing to report never loads it

        return CODES[self.code].name

    def sort_key(self) -> tuple:
        span = self.span
        where = (span.file, span.line, span.col) if span else ("", 0, 0)
        return (*where, self.severity.rank, self.code, self.message)


class DiagnosticSink:
    """Collects diagnostics for one compilation; the severity comes from the registry."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def report(
        self,
        code: str,
        message: str,
        span: Span | None,
        *,
        help: str | None = None,
        notes: Iterable[str] = (),
        labels: Iterable[Label] = (),
        severity: Severity | None = None,
    ) -> Diagnostic:
        from catalyst_dsl.diagnostics.codes import CODES  # at the first finding, not at start-up

        diagnostic = Diagnostic(
            code=code,
            severity=severity or CODES[code].severity,
            message=message,
            span=span,
            labels=tuple(labels),
            notes=tuple(notes),
            help=help,
        )
        self.items.append(diagnostic)
        return diagnostic

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.items.extend(diagnostics)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=Diagnostic.sort_key)
