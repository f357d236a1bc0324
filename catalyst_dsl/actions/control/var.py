"""`var`: set a variable in the current scope, or update it where it was defined."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, NULL, STRING, obj, opt, req
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
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


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def defined_name(step: ir.Step) -> ir.Lit | None:
    """The name the step defines, when it is written as text (else it is reported elsewhere)."""
    from catalyst_dsl.ir import nodes as ir

    name = step.config.get("name")
    return name if isinstance(name, ir.Lit) and isinstance(name.value, str) else None


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The value typed; the variable defined (or its type widened where it was defined)
    with where its value comes from, for C821. The step itself has no result."""
    value = step.config.get("value")
    vtype = checker.value(value, scope) if value is not None else t.NULL
    name = defined_name(step)
    if name is not None:
        scope.assign(checker.binding(name.value, vtype, "var", name.span, checker.value_origin(value, scope)))
        checker.defined_types.setdefault(name.value, vtype)
    return t.ANY
