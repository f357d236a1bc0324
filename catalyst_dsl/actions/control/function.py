"""`function`: define a named group of steps with inputs, callable later as an action."""

from __future__ import annotations

from catalyst_dsl.actions.control.return_ import return_type, returns
from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The body walked with the function's inputs as parameters; the function's result is
    what its one `return` gives (any type when it has several or none)."""
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
