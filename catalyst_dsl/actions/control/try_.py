"""`try`: run steps, hand an error to the first `catch` clause whose code matches, then `finally`."""

from __future__ import annotations

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The steps walked, then each handler with `$error`, then the `finally` steps. Without
    a handler an error ends the run, so after the try its steps all ran; with handlers,
    what follows is reached through the steps or through a handler."""
    cfg = step.config
    steps = cfg.get("steps")
    body = checker.inner(scope)
    if isinstance(steps, ir.StepsV):
        checker.walk(steps.steps, body)
    where = checker.line(step.span)
    paths_out = [(body, f"defined only when the steps of the try at {where} end without an error", None)]
    catch = cfg.get("catch")
    for clause in catch.items if isinstance(catch, ir.ListV) else ():
        if isinstance(clause, ir.MapV):
            handler = checker.inner(scope)
            handler.define(checker.binding("$error", B.ERROR_TYPE, "error", clause.span))
            clause_steps = clause.get("steps")
            if isinstance(clause_steps, ir.StepsV):
                checker.guarded(clause_steps.steps, handler)
            paths_out.append((handler, f"defined only when the try at {where} catches an error", None))
    checker.flow_out(scope, paths_out, step.span)
    final = cfg.get("finally")
    if isinstance(final, ir.StepsV):
        after = checker.inner(scope)
        checker.walk(final.steps, after)
        checker.flow_out(scope, [(after, None, None)], step.span)
    return checker.catalog.get(step.action).result
