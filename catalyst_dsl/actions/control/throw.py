"""`throw`: fail with an error code that error policies and `catch` clauses match."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, NULL, STRING, obj, opt, req

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.actions.control.protocol import Engine, StepRun


#: How the engine treats the step (see actions/control/__init__.py).
REPORTS_FINISH = False
KEEPS_RESULT = False
NAMES_RESULT = True

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "throw",
    "control",
    "Fail with an error code (PascalCase) that error policies and catch blocks match.",
    obj(code=req(STRING), message=opt(STRING), guidance=opt(STRING), metadata=opt(ANY)),
    "code",
    NULL,
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    config = engine.config(run) if config is None else config
    raise engine.error(
        str(config.get("code") or "Error"),
        str(config.get("message") or config.get("code") or "thrown"),
        guidance=config.get("guidance"),
        metadata=config.get("metadata"),
    )


simulate = run
