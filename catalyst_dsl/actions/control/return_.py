"""`return`: end the playbook or function, with its outputs."""

from __future__ import annotations

from typing import Iterator

from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def returns(steps: tuple[ir.Step, ...] | list[ir.Step]) -> Iterator[ir.Step]:
    """`return` steps of a body, looking into if/try/for-each but not nested functions."""
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
