"""`playbook`: run another playbook, isolated: it cannot change this playbook's variables.

The called playbook gets a frame of its own (its inputs, its grants) one level deeper;
the engine builds that frame (`call_playbook`), this module keeps the depth in bounds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, BOOLEAN, ObjectT, STRING, obj, opt, req

if TYPE_CHECKING:  # the engine's side, as types only: the engine passes itself in
    from catalyst_dsl.actions.control.protocol import Engine, StepRun


#: How the engine treats the step (see actions/control/__init__.py): the journal keeps
#: its outputs.
REPORTS_FINISH = True
KEEPS_RESULT = True
NAMES_RESULT = True

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "playbook",
    "control",
    "Run another playbook, isolated: it cannot change this playbook's variables.",
    obj(
        name=req(STRING, "playbook name or relative path"),
        inputs=opt(ObjectT((), ANY)),
        inheritPermissions=opt(BOOLEAN),
    ),
    "name",
    ANY,
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    config = engine.config(run) if config is None else config
    if run.frame.depth + 1 > engine.max_depth:
        raise engine.error(
            "RecursionLimit",
            f"calling {config.get('name')} would go deeper than max-depth {engine.max_depth}",
            guidance="raise max-depth in catalyst.toml, or check the condition that ends the recursion",
        )
    return engine.call_playbook(run, config)


simulate = run
