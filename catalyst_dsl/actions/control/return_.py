"""`return`: end the playbook (or the function) successfully, with its outputs.

The outputs travel up as the `Return` exception, through the steps that contain the
`return`, to the playbook or function call that catches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, NULL, obj, opt

if TYPE_CHECKING:  # the engine's side, as types only: the engine passes itself in
    from catalyst_dsl.actions.control.protocol import Engine, StepRun


#: How the engine treats the step (see actions/control/__init__.py).
REPORTS_FINISH = False
KEEPS_RESULT = False
NAMES_RESULT = True

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "return",
    "control",
    "End the playbook (or function) successfully with outputs. A scalar is returned as {result: value}.",
    obj(rest=ANY, result=opt(ANY, "the value when a scalar is returned")),
    "result",
    NULL,
    Effect.CONTROL,
    WhatIf.CONTROL,
)


class Return(Exception):
    """A `return` unwinding to its playbook or function, carrying the outputs."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__("return")
        self.values = values


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    config = engine.config(run) if config is None else config
    # `code` and `message` say how the run ended; they are not outputs (docs/decisions.md).
    raise Return({k: v for k, v in config.items() if k not in ("code", "message")})


simulate = run
