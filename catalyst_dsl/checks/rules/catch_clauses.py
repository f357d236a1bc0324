"""`catch` clauses that never run (C832): a run takes the first clause that matches its
failure, so a clause after one with the same code, or after `default` (which matches
any), is never reached. Both a `try` step's clauses and the playbook's own are read.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.control.try_ import catch_clauses
from catalyst_dsl.diagnostics.ids import UNREACHABLE_CATCH_CLAUSE
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.syntax.source import Span
from catalyst_dsl.ir import nodes as ir


def check_catch_clauses(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog) -> None:
    _clauses([(clause.code, clause.span) for clause in playbook.catch], "the playbook's catch", sink)
    for step in ir.all_steps(playbook):
        if step.action == "try":
            written = [(code, clause.get("code").span) for _, clause, code in catch_clauses(step) if code is not None]
            _clauses(written, "this try's catch", sink)


def _clauses(written: list[tuple[str, Span | None]], whose: str, sink: DiagnosticSink) -> None:
    first: dict[str, tuple[int, Span | None]] = {}  # a code -> the clause that takes it first
    for k, (code, span) in enumerate(written):
        taken = first.get("default") or first.get(code)
        if taken is not None and span is not None:
            earlier, earlier_span = taken
            takes = "(`default`) takes every failure" if written[earlier][0] == "default" else f"takes '{code}'"
            sink.report(
                UNREACHABLE_CATCH_CLAUSE,
                f"clause {k + 1} of {whose} never runs: clause {earlier + 1} {takes} first",
                span,
                labels=[Label(earlier_span, f"clause {earlier + 1}")] if earlier_span is not None else [],
                help="remove the clause, or move it before the one that takes its failures"
                if code != written[earlier][0]
                else "merge its steps into the first clause of that code",
            )
        first.setdefault(code, (k, span))
