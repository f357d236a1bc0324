"""`playbook`: call another playbook with inputs, and get its outputs as the step's result."""

from __future__ import annotations

from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """Its config typed, and the call noted with the types of the inputs it passes (when
    they are a written mapping), for the library's checks of the called playbook."""
    input_types: dict[str, t.Type] | None = None
    for entry in step.config.entries:
        if entry.key == "inputs" and isinstance(entry.value, ir.MapV):
            input_types = {e.key: checker.value(e.value, scope) for e in entry.value.entries}
        else:
            checker.value(entry.value, scope)
    checker.note_call(step, input_types)
    return t.ANY
