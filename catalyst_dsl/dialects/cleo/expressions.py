"""The expressions and values the lowering writes: guards on the run-wide context, contract
checks, node references, literals (B4.4, B4.6).
"""

from __future__ import annotations

import functools
import json
from typing import Optional

from catalyst_dsl.dialects.cleo.lowering_tables import CONTRACT, IDENTIFIER
from catalyst_dsl.dialects.cleo.model import Cantbook, Guard, Node
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.expr.templates import parse_template
from catalyst_dsl.syntax.yaml_nodes import YNode, YScalar


def escaped_text(text: str) -> str:
    """Text between cleo placeholders, with braces catalyst would read as a template kept as text."""
    return text.replace("{{", "\\{{")


def scalar_value(keys, key: str):
    value = keys.get(key, (None, None))[1]
    return value.value if isinstance(value, YScalar) else None


def has_key(key: str) -> str:
    """Whether the context holds `key` as its own key, even with a null value (B4.4)."""
    return f"Object.keys(bindings).includes({json.dumps(key)})"


def node_ref(node_id: str) -> str:
    """A node's result in an expression: by name, or through get() for an id with '-'."""
    return node_id if IDENTIFIER.match(node_id) else f"get({json.dumps(node_id)})"


def expression_template(text: str, span, expected: t.Type = t.BOOLEAN) -> ir.Tmpl:
    expression = "${{ " + text + " }}"
    return ir.Tmpl(expression, _parsed(expression).parts, span=span, expected=expected)


@functools.lru_cache(maxsize=4096)
def _parsed(expression: str):
    """An expression this module writes, parsed once: the same few texts recur on every
    node (`bindings`, a guard on one field, a key's check). The parts are immutable."""
    return parse_template(expression)


def contract_checks(texts: list[tuple[str, str]], node: Node) -> Optional[ir.Checks]:
    """Each (condition, what its failure says) as a check raising ContractViolation; the
    words are an expression too, for a value only the run knows."""
    if not texts:
        return None
    checks = tuple(
        ir.Check(
            "expression",
            ir.MapV((ir.Entry("expression", expression_template(x, node.map.span)),)),
            span=node.map.span,
            message=expression_template(said, node.map.span, t.STRING),
        )
        for x, said in texts
    )
    return ir.Checks(checks, CONTRACT, span=node.map.span)


def guard_condition(guard: Guard, inputs: set[str]) -> Optional[ir.Tmpl]:
    """A `when` guard as a condition on the run-wide context after the routing node's output
    was merged (B4.4). `has` is "an own key of the context"; an input is in it from the start."""
    field = json.dumps(guard.field)
    has, subject = has_key(guard.field), f"bindings[{field}]"
    if guard.field in inputs and IDENTIFIER.match(guard.field):
        has, subject = "true", f"({has_key(guard.field)} ? bindings[{field}] : {guard.field})"
    op, value = guard.operator, guard.value
    is_nan = lambda v: isinstance(v, float) and v != v
    if op in ("equals", "notEquals") and is_nan(value):
        # cleo compares like Object.is: NaN equals NaN, the one value not equal to itself.
        text = f"({has} && {subject} !== {subject})"
    elif op in ("equals", "notEquals"):
        text = f"({has} && {subject} === {_literal(value)})"
    elif op == "in":
        values = ", ".join(_literal(v) for v in value if not is_nan(v))
        nan = f" || {subject} !== {subject}" if any(is_nan(v) for v in value) else ""
        text = f"({has} && ([{values}].includes({subject}){nan}))"
    elif op == "exists":
        text = has if value else f"!({has})"
    else:
        text = f"!!({subject})" if value else f"!({subject})"
    if op == "notEquals":
        text = f"!{text}"
    expression = "${{ " + text + " }}"
    parsed = _parsed(expression)
    if parsed.errors:  # not expected: every piece above is written to parse; never a crash
        return None
    return ir.Tmpl(expression, parsed.parts, span=guard.node.span, expected=t.BOOLEAN)


def guard_text(guard: Guard) -> str:
    """The guard as the cantbook says it, for messages: `status equals "done"`."""
    op, value = guard.operator, guard.value
    if op == "exists":
        return f"{guard.field} {'exists' if value else 'does not exist'}"
    if op == "truthy":
        return f"{guard.field} {'is truthy' if value else 'is not truthy'}"
    shown = "NaN" if isinstance(value, float) and value != value else json.dumps(value, ensure_ascii=False)
    words = {"equals": "equals", "notEquals": "does not equal", "in": "is one of"}
    return f"{guard.field} {words.get(op, op)} {shown}"


def _literal(value: object) -> str:
    """A YAML scalar as an expression literal (infinities as numbers too large for a float)."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "1e999" if value > 0 else "-1e999"
    return json.dumps(value)


def ir_value(value: object, node: YNode) -> ir.Value:
    if isinstance(value, list):
        return ir.ListV(tuple(ir_value(v, node) for v in value))
    if isinstance(value, dict):
        return ir.MapV(tuple(ir.Entry(k, ir_value(v, node)) for k, v in value.items()))
    return ir.Lit(value, span=node.span)


def first_line(book: Cantbook):
    return book.source.span(
        book.root.start, book.root.start + max(1, book.source.text.find("\n", book.root.start) - book.root.start)
    )
