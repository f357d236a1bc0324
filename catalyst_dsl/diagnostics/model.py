"""The diagnostic model: code, severity, message, span, labels, notes and help."""

from __future__ import annotations

import enum
from typing import Iterable

from catalyst_dsl.records import record
from catalyst_dsl.syntax.source import Span


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


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
        from catalyst_dsl.diagnostics.codes import CODES

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
        from catalyst_dsl.diagnostics.codes import CODES

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
