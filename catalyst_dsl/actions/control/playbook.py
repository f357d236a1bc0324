"""`playbook`: run another playbook, isolated: it cannot change this playbook's variables.

The called playbook gets a frame of its own (its inputs, its grants) one level deeper;
the engine builds that frame (`call_playbook`), this module keeps the depth in bounds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, BOOLEAN, ObjectT, STRING, obj, opt, req
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
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


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """Its config typed, and the call noted with the types of the inputs it passes (when
    they are a written mapping), for the library's checks of the called playbook."""
    from catalyst_dsl.ir import nodes as ir

    input_types: dict[str, t.Type] | None = None
    for entry in step.config.entries:
        if entry.key == "inputs" and isinstance(entry.value, ir.MapV):
            input_types = {e.key: checker.value(e.value, scope) for e in entry.value.entries}
        else:
            checker.value(entry.value, scope)
    checker.note_call(step, input_types)
    return t.ANY
