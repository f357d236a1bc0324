"""`parallel`: run steps at the same time; what follows waits for all of them."""

from __future__ import annotations

from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The steps walked in one scope; every branch ends before what follows, so all they
    define is defined after the group."""
    steps = step.config.get("steps")
    branches = checker.inner(scope)
    if isinstance(steps, ir.StepsV):
        checker.walk(steps.steps, branches)
    checker.flow_out(scope, [(branches, None, None)], step.span)
    return checker.catalog.get(step.action).result
