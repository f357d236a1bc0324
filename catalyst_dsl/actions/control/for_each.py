"""`for-each`: run the steps once for each item of a list."""

from __future__ import annotations

from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The list typed; the body walked with the item (typed as the list's element) and its
    index. What the body defines may be missing after it, unless the loop is over a
    written, non-empty list (then its body runs)."""
    cfg = step.config
    items = cfg.get("in")
    itype = checker.value(items, scope) if items is not None else t.ANY
    element = t.ANY
    if isinstance(itype, t.ArrayT):
        element = itype.item  # a non-array is reported where `in` is typed
    body = checker.inner(scope)
    item = cfg.get("item")
    if isinstance(item, ir.Lit) and isinstance(item.value, str):
        body.define(checker.binding(item.value, element, "loop", item.span, checker.value_origin(items, scope)))
    index = cfg.get("index")
    index_name = index.value if isinstance(index, ir.Lit) and isinstance(index.value, str) else "index"
    body.define(checker.binding(index_name, t.NUMBER, "loop", index.span if index is not None else step.span))
    steps = cfg.get("steps")
    if isinstance(steps, ir.StepsV):
        checker.guarded(steps.steps, body)
    runs = isinstance(items, ir.ListV) and len(items.items) > 0
    reason = f"defined only when the for-each at {checker.line(step.span)} runs at least once"
    never = [] if runs else [(checker.inner(scope), reason, None)]
    checker.flow_out(scope, [(body, reason, None)] + never, step.span)
    return checker.catalog.get(step.action).result
