"""`route` branches whose `when` can both hold (C829), where that can be proven statically.

A route runs the one branch whose `when` holds and stops with `RouteAmbiguous` when
several do (actions/control/route.py). This rule finds, before a run, two branches that
can both hold for some value, and only where that is certain from their text:

- the two conditions are the same expression;
- one is the other with more conditions joined by `&&` (when the longer holds, so does the
  shorter);
- the conditions differ only in comparisons of one value with literals (`x == "a"`,
  `n > 5`, `n <= 10`), and a value meets them all: one of the literals, or next to one.

`||` is read as alternatives: two branches overlap when one alternative of each does.
Anything else is taken as unknown, and unknown is never reported: a comparison with a
value from elsewhere, `!=` alone (the value's possible values are not known), text
compared by order, literals of different kinds. A branch that can never hold is another
mistake, and is not looked for.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Optional

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.control.route import branch_name
from catalyst_dsl.diagnostics.ids import ROUTE_BRANCHES_OVERLAP
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.expr.templates import single_part

#: How many alternatives (`||`) a condition is read as at most: more is not looked at.
MAX_ALTERNATIVES = 16
#: The comparisons the rule reasons about, and each one with its sides swapped.
MIRRORED = {"==": "==", "===": "===", "!=": "!=", "!==": "!==", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
NEGATED = {"==": "!=", "===": "!==", "!=": "==", "!==": "===", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
EQUALITY = frozenset({"==", "===", "!=", "!=="})


class Atom(NamedTuple):
    """One condition of a conjunction: a comparison of `subject` with `literal`, or (op None)
    an expression taken as it is, `literal` saying whether it must be true or false."""

    subject: object
    op: Optional[str]
    literal: object


def check_route_overlaps(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog) -> None:
    for step in ir.all_steps(playbook):
        if step.action == "route":
            _route(step, sink)


def _route(step: ir.Step, sink: DiagnosticSink) -> None:
    branches = step.config.get("branches")
    found = []
    for branch in branches.items if isinstance(branches, ir.ListV) else ():
        when = branch.get("when") if isinstance(branch, ir.MapV) else None
        if when is not None:
            found.append((when, _alternatives(when), branch_name(branch)))
    for j, (when, later, label) in enumerate(found):
        for i, (earlier_when, earlier, earlier_label) in enumerate(found[:j]):
            why = _overlap(earlier, later)
            if why is None:
                continue
            sink.report(
                ROUTE_BRANCHES_OVERLAP,
                f"branches {i + 1} ({earlier_label}) and {j + 1} ({label}) of this route can both hold: {why}",
                when.span or step.span,
                labels=[Label(earlier_when.span, f"branch {i + 1}'s condition")] if earlier_when.span else [],
                help="make the conditions exclusive, so that at most one holds for any value: a run where both "
                "hold stops with RouteAmbiguous",
            )
            break  # one finding per branch: the first it overlaps


# -- a condition as alternatives of conjunctions ----------------------------------------------


def _alternatives(when: ir.Value) -> Optional[list[frozenset[Atom]]]:
    """The condition as `||` of `&&` of atoms; None when it is not one expression."""
    if isinstance(when, ir.Lit):
        if isinstance(when.value, bool):
            return [frozenset()] if when.value else []
        return None
    part = single_part(when.parts) if isinstance(when, ir.Tmpl) else None
    if part is None:
        return None
    expr = part.expr if isinstance(part, ast.ExprPart) else part.ref
    found = _dnf(expr, True)
    return found if found is not None and len(found) <= MAX_ALTERNATIVES else None


def _dnf(expr: object, holds: bool) -> Optional[list[frozenset[Atom]]]:
    """`expr` (or, when not `holds`, its negation) as alternatives; None past the limit."""
    if isinstance(expr, ast.Unary) and expr.op == "!":
        return _dnf(expr.operand, not holds)
    if isinstance(expr, ast.Binary) and expr.op in ("&&", "||"):
        left, right = _dnf(expr.left, holds), _dnf(expr.right, holds)
        if left is None or right is None:
            return None
        if (expr.op == "&&") == holds:  # a conjunction (or the negation of a disjunction)
            if len(left) * len(right) > MAX_ALTERNATIVES:
                return None
            return [a | b for a in left for b in right]
        return left + right if len(left) + len(right) <= MAX_ALTERNATIVES else None
    if isinstance(expr, ast.Literal) and expr.kind == "boolean":
        return [frozenset()] if expr.value == holds else []
    compared = _comparison(expr)
    if compared is not None:
        subject, op, literal = compared
        return [frozenset({Atom(subject, op if holds else NEGATED[op], literal)})]
    return [frozenset({Atom(_key(expr), None, holds)})]


def _comparison(expr: object) -> Optional[tuple[object, str, object]]:
    """(subject, op, literal) for a comparison of something with a literal."""
    if not isinstance(expr, ast.Binary) or expr.op not in MIRRORED:
        return None
    if isinstance(expr.right, ast.Literal) and not isinstance(expr.left, ast.Literal):
        return _key(expr.left), expr.op, _literal(expr.right)
    if isinstance(expr.left, ast.Literal) and not isinstance(expr.right, ast.Literal):
        return _key(expr.right), MIRRORED[expr.op], _literal(expr.left)
    return None


def _literal(literal: ast.Literal) -> object:
    return _UNDEFINED if literal.kind == "undefined" else literal.value


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


_UNDEFINED = _Undefined()


def _key(expr: object) -> object:
    """What an expression reads, the same however it is written: `{{ a.b }}`, `a.b` and
    `a["b"]` are one value."""
    path = _path(expr)
    return ("path", path) if path is not None else expr


def _path(expr: object) -> Optional[tuple[str, ...]]:
    if isinstance(expr, ast.Name):
        return (expr.name,)
    if isinstance(expr, ast.PathRef):
        return (expr.root, *expr.segments)
    if isinstance(expr, ast.Member):
        inner = _path(expr.target)
        return None if inner is None else (*inner, expr.name)
    if isinstance(expr, ast.Index) and isinstance(expr.index, ast.Literal) and expr.index.kind in ("string", "number"):
        inner = _path(expr.target)
        return None if inner is None else (*inner, str(expr.index.value))
    return None


# -- when two conjunctions can both hold ------------------------------------------------------


def _overlap(first: Optional[list[frozenset[Atom]]], second: Optional[list[frozenset[Atom]]]) -> Optional[str]:
    """Why some value makes both conditions hold, or None when that is not certain."""
    if not first or not second:
        return None
    if first == second:
        return "their conditions are the same"
    for a in first:
        for b in second:
            why = _both(a, b)
            if why is not None:
                return why
    return None


def _both(a: frozenset[Atom], b: frozenset[Atom]) -> Optional[str]:
    compared = _compared(a, b)
    if compared is not None:
        return compared
    if a == b:
        return "one way each can hold is the same in both"
    if a < b or b < a:
        return "whenever the one holds, so does the other, which asks less"
    return None


def _compared(a: frozenset[Atom], b: frozenset[Atom]) -> Optional[str]:
    """Both hold for a value of the one thing they compare differently, shown."""
    one_sided = (a ^ b) or (a & b)
    subjects = {atom.subject for atom in one_sided}
    if len(subjects) != 1 or any(atom.op is None for atom in one_sided):
        return None
    [subject] = subjects
    roots = _roots(subject)
    shared = a & b
    # What both ask besides may depend on the compared value: then nothing is certain.
    if any(atom.subject != subject and roots & _roots(atom.subject) for atom in shared):
        return None
    constraints = [atom for atom in a | b if atom.subject == subject]
    if any(atom.op is None for atom in constraints):
        return None
    witness = _witness(constraints)
    if witness is _NONE:
        return None
    return f"both hold when {_shown(subject)} is {_as_json(witness)}"


_NONE = object()


def _witness(constraints: list[Atom]) -> object:
    """A value meeting every comparison, among the literals and the numbers next to them;
    _NONE when there is none, or when what the value may be is not known."""
    literals = [atom.literal for atom in constraints]
    if all(_is_number(v) for v in literals):
        candidates = sorted({n + d for n in literals for d in (-1, 0, 1)} | set(_midpoints(sorted(set(literals)))))
    elif all(atom.op in EQUALITY for atom in constraints) and len({_kind(v) for v in literals}) == 1:
        # Text, booleans, null: only a value the conditions name can be shown to meet them.
        candidates = [atom.literal for atom in constraints if atom.op in ("==", "===")]
    else:
        return _NONE
    for candidate in candidates:
        if all(_holds(candidate, atom.op, atom.literal) for atom in constraints):
            return candidate
    return _NONE


def _midpoints(values: list) -> Iterator[float]:
    for low, high in zip(values, values[1:]):
        yield (low + high) / 2


def _holds(value: object, op: str, literal: object) -> bool:
    if op in ("==", "==="):
        return _same(value, literal)
    if op in ("!=", "!=="):
        return not _same(value, literal)
    return {"<": value < literal, "<=": value <= literal, ">": value > literal, ">=": value >= literal}[op]


def _same(a: object, b: object) -> bool:
    return _kind(a) == _kind(b) and a == b


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: object) -> str:
    if value is None or value is _UNDEFINED:
        return repr(value)
    return "number" if _is_number(value) else type(value).__name__


def _roots(subject: object) -> set[str]:
    """The names an expression reads (the first of each path)."""
    if isinstance(subject, tuple) and len(subject) == 2 and subject[0] == "path":
        return {subject[1][0]}
    found: set[str] = set()
    _names(subject, found)
    return found


def _names(node: object, found: set[str]) -> None:
    if isinstance(node, ast.Name):
        found.add(node.name)
    elif isinstance(node, ast.PathRef):
        found.add(node.root)
    elif isinstance(node, tuple):
        for item in node:
            _names(item, found)
    elif hasattr(node, "__slots__"):
        for slot in node.__slots__:
            _names(getattr(node, slot, None), found)


def _shown(subject: object) -> str:
    if isinstance(subject, tuple) and len(subject) == 2 and subject[0] == "path":
        return ".".join(subject[1])
    return "the value compared"


def _as_json(value: object) -> str:
    import json  # here: only a finding shows a value, and a check without one never loads json

    if value is _UNDEFINED:
        return "undefined"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value)
