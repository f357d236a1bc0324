"""`return`: end the playbook (or the function) successfully, with its outputs.

The outputs travel up as the `Return` exception, through the steps that contain the
`return`, to the playbook or function call that catches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, NULL, obj, opt
from typing import Iterator
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
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


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def returns(steps: tuple[ir.Step, ...] | list[ir.Step]) -> Iterator[ir.Step]:
    """`return` steps of a body, looking into if/try/for-each but not nested functions."""
    from catalyst_dsl.ir import nodes as ir

    for step in steps:
        if step.action == "return":
            yield step
        elif step.action != "function":
            for entry in step.config.entries:
                for nested in ir.nested_steps(entry.value):
                    yield from returns(nested)


def playbook_returns(playbook: ir.Playbook) -> Iterator[ir.Step]:
    """Every `return` of the playbook's own steps, its `catch` steps and its `finally` steps."""
    yield from returns(playbook.steps)
    for clause in playbook.catch:
        yield from returns(clause.steps)
    yield from returns(playbook.finally_)


def return_type(checker: Checker, ret: ir.Step, scope: Scope) -> t.Type:
    """The object a `return` gives back, its values typed without reporting (the body they
    are read in was checked already)."""
    entries = ret.config.entries
    if len(entries) == 1 and entries[0].key == "result":
        return t.ObjectT((("result", t.Field(checker.quiet_type(entries[0].value, scope), True)),), None)
    return t.ObjectT(tuple((e.key, t.Field(checker.quiet_type(e.value, scope), True)) for e in entries), None)
