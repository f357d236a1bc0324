"""`if`: run `then` when the condition holds, else `else`.

A what-if that cannot know the condition shows both branches, each as conditional.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, BOOLEAN, STEPS, STRING, obj, opt, req
from catalyst_dsl.actions.control.return_ import Return
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
    from catalyst_dsl.actions.control.protocol import Engine, Simulator, StepRun

#: How the engine treats the step (see actions/control/__init__.py).
REPORTS_FINISH = True
KEEPS_RESULT = False
NAMES_RESULT = True

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "if",
    "control",
    "Run `then` when the condition is true, else `else`.",
    obj(condition=req(ANY, "a boolean expression"), then=opt(STEPS), else_=opt(STEPS)),
    "condition",
    obj(branch=STRING, executed=BOOLEAN),
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    return _taken(engine, run, engine.entry(run, "condition", config))


def simulate(engine: Simulator, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    from catalyst_dsl.ir import nodes as ir

    value = engine.entry(run, "condition", config)
    if value is not engine.UNKNOWN:
        return _taken(engine, run, value)
    with engine.plan.conditional():
        for branch in ("then", "else"):
            body = run.step.config.get(branch)
            if isinstance(body, ir.StepsV):
                inner = run.child()
                try:
                    engine.run_steps(body.steps, run.frame, inner, run.at(branch))
                except Return:
                    pass  # a return in one possible branch: the plan goes on with the other
                inner.hand_out()
    return engine.UNKNOWN


def _taken(engine: Engine, run: StepRun, value: Any) -> dict[str, Any]:
    """The branch the condition's value chooses, run."""
    from catalyst_dsl.ir import nodes as ir

    branch = "then" if engine.truthy(value) else "else"
    body = run.step.config.get(branch)
    if isinstance(body, ir.StepsV):
        inner = run.child()
        engine.run_steps(body.steps, run.frame, inner, run.at(branch))
        inner.hand_out()
    return {"branch": branch, "executed": isinstance(body, ir.StepsV)}


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The condition checked; each branch walked in a scope of its own. A name both branches
    define is defined after the `if`; one only a branch defines may be missing (C508),
    except in a later `if` on the same condition, whose branch has the same key."""
    from catalyst_dsl.ir import nodes as ir

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
