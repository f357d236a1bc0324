"""`if`: run the `then` steps when the condition holds, else the `else` steps."""

from __future__ import annotations

from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The condition checked; each branch walked in a scope of its own. A name both branches
    define is defined after the `if`; one only a branch defines may be missing (C508),
    except in a later `if` on the same condition, whose branch has the same key."""
    cfg = step.config
    cond = cfg.get("condition")
    if cond is not None:
        checker.condition(cond, scope, "if")
    text = cond.text if isinstance(cond, ir.Tmpl) else repr(cond.value) if isinstance(cond, ir.Lit) else None
    branches = []
    for branch in ("then", "else"):
        body = cfg.get(branch)
        key = ("if", "".join(text.split()), branch) if text is not None else None
        inner = checker.inner(scope, key)
        if isinstance(body, ir.StepsV):
            checker.guarded(body.steps, inner)
        reason = f"defined only when the `if` at {checker.line(step.span)} takes its `{branch}` branch"
        branches.append((inner, reason, key))
    checker.flow_out(scope, branches, step.span)
    return checker.catalog.get(step.action).result
