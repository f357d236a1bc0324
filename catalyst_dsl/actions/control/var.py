"""`var`: set a variable in the current scope, or update it where it was defined."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, NULL, STRING, obj, opt, req

if TYPE_CHECKING:  # the engine's side, as types only: the engine passes itself in
    from catalyst_dsl.actions.control.protocol import Engine, StepRun


#: How the engine treats the step (see actions/control/__init__.py): its name is the
#: variable's, not a result's.
REPORTS_FINISH = False
KEEPS_RESULT = False
NAMES_RESULT = False

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "var",
    "control",
    "Set a variable in the current scope (or update it where it was defined).",
    obj(name=req(STRING, "variable name"), value=opt(ANY, "the value; templates keep their type")),
    "name",
    NULL,
    Effect.PURE,
    WhatIf.RUN,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    name = engine.entry(run, "name", config)
    run.scope.assign(str(name), engine.entry(run, "value", config))
    return None


simulate = run
