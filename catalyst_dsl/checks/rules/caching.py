"""`cache:` only on steps whose result may stand in for running them (actions/caching.py)."""

from __future__ import annotations

from catalyst_dsl.actions.caching import refusal
from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.diagnostics.ids import UNCACHEABLE_STEP
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir


def check_caching(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog | None = None) -> None:
    for step in ir.all_steps(playbook):
        if step.cache is None or catalog is None:
            continue
        why = refusal(step, catalog.get(step.action))
        if why is not None:
            sink.report(
                UNCACHEABLE_STEP,
                f"this step's result cannot be reused: {why}",
                step.action_span or step.span,
                help="remove `cache:` from it",
            )
