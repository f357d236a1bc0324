"""`function`: define an action from steps, which later steps call by its name.

A function runs in a scope below the one it was defined in (its inputs as variables),
and its `return` gives the call's result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import InputsT, NULL, STEPS, STRING, obj, opt, req
from catalyst_dsl.actions.control.return_ import Return
from catalyst_dsl.actions.control.return_ import return_type, returns
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
    from catalyst_dsl.actions.control.protocol import Engine, StepRun

#: How the engine treats the step (see actions/control/__init__.py): its name is the
#: function's, not a result's.
REPORTS_FINISH = False
KEEPS_RESULT = False
NAMES_RESULT = False

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "function",
    "control",
    "Define an action from steps; later steps call it by name with named or positional inputs.",
    obj(name=req(STRING, "the new action's name"), inputs=opt(InputsT()), steps=req(STEPS), description=opt(STRING)),
    "name",
    NULL,
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    name = engine.entry(run, "name", config)
    run.frame.functions[str(name)] = (run.step, run.scope)
    return None


simulate = run


def call(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    """A step that names a function defined earlier: its body, with the step's config as inputs."""
    from catalyst_dsl.ir import nodes as ir

    definition, defined_in = run.frame.functions[run.step.action]
    given = engine.config(run) if config is None else config
    values = engine.function_inputs(run.step.action, definition.config.get("inputs"), given)
    body = definition.config.get("steps")
    try:
        if isinstance(body, ir.StepsV):
            engine.run_steps(body.steps, run.frame, engine.scope(defined_in, dict(values)), run.at("fn"))
    except Return as done:
        return done.values
    return None


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The body walked with the function's inputs as parameters; the function's result is
    what its one `return` gives (any type when it has several or none)."""
    from catalyst_dsl.ir import nodes as ir

    name = step.config.get("name")
    body = checker.inner(scope)
    inputs = step.config.get("inputs")
    if isinstance(inputs, ir.InputsV):
        for decl in inputs.inputs:
            body.define(checker.binding(decl.name, t.input_type(decl), "parameter", decl.span))
    steps = step.config.get("steps")
    results: list[t.Type] = []
    if isinstance(steps, ir.StepsV):
        checker.walk(steps.steps, body)
        for ret in returns(steps.steps):
            results.append(return_type(checker, ret, body))
    if isinstance(name, ir.Lit) and isinstance(name.value, str):
        checker.function_results[name.value] = results[0] if len(results) == 1 else t.ANY
    return t.NULL
