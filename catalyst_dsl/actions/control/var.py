"""`var`: set a variable in the current scope, or update it where it was defined."""

from __future__ import annotations

from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def defined_name(step: ir.Step) -> ir.Lit | None:
    """The name the step defines, when it is written as text (else it is reported elsewhere)."""
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
