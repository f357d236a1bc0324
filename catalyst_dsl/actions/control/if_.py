"""`if`: run `then` when the condition holds, else `else`.

A what-if that cannot know the condition shows both branches, each as conditional.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, BOOLEAN, STEPS, STRING, obj, opt, req
from catalyst_dsl.actions.control.return_ import Return
from catalyst_dsl.ir import nodes as ir

if TYPE_CHECKING:  # the engine's side, as types only: the engine passes itself in
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
    branch = "then" if engine.truthy(value) else "else"
    body = run.step.config.get(branch)
    if isinstance(body, ir.StepsV):
        inner = run.child()
        engine.run_steps(body.steps, run.frame, inner, run.at(branch))
        inner.hand_out()
    return {"branch": branch, "executed": isinstance(body, ir.StepsV)}
