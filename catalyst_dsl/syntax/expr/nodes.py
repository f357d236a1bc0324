"""Expression and template trees: what `{{ }}` and `${{ }}` parse into.

Offsets (`start`, `end`) are relative to the template text the node was parsed from, so
one parse can be cached and shared by every place the same text is written; a
`ScalarMap` turns them into file positions when a diagnostic needs one.
"""

from __future__ import annotations

from typing import Union

from catalyst_dsl._internal.records import field, record


def _pos():
    return field(default=0, eq=False, kw_only=True)


@record
class Literal:
    value: object
    kind: str  # "number" | "string" | "boolean" | "null" | "undefined"
    start: int = _pos()
    end: int = _pos()


@record
class ArrayExpr:
    items: tuple["Expr", ...]
    start: int = _pos()
    end: int = _pos()


@record
class ObjectEntry:
    key: str
    value: "Expr"
    start: int = _pos()
    end: int = _pos()


@record
class ObjectExpr:
    entries: tuple[ObjectEntry, ...]
    start: int = _pos()
    end: int = _pos()


@record
class Name:
    name: str
    start: int = _pos()
    end: int = _pos()


@record
class Member:
    target: "Expr"
    name: str
    start: int = _pos()
    end: int = _pos()


@record
class Index:
    target: "Expr"
    index: "Expr"
    start: int = _pos()
    end: int = _pos()


@record
class Call:
    callee: "Expr"
    args: tuple["Expr", ...]
    start: int = _pos()
    end: int = _pos()


@record
class Unary:
    op: str
    operand: "Expr"
    start: int = _pos()
    end: int = _pos()


@record
class Binary:
    op: str
    left: "Expr"
    right: "Expr"
    start: int = _pos()
    end: int = _pos()


@record
class Conditional:
    test: "Expr"
    then: "Expr"
    otherwise: "Expr"
    start: int = _pos()
    end: int = _pos()


@record
class PathRef:
    """`{{ a.b.0 }}`: a name and the segments after it. Names may contain `-`."""

    root: str
    segments: tuple[str, ...]
    start: int = _pos()
    end: int = _pos()

    @property
    def dotted(self) -> str:
        return ".".join((self.root, *self.segments))


@record
class ProtocolRef:
    """`{{ xe://features/x/spec }}`: a path in one of the path protocols."""

    protocol: str
    path: str
    start: int = _pos()
    end: int = _pos()


Expr = Union[Literal, ArrayExpr, ObjectExpr, Name, Member, Index, Call, Unary, Binary, Conditional]
Reference = Union[PathRef, ProtocolRef]


@record
class TextPart:
    text: str
    start: int = _pos()
    end: int = _pos()


@record
class RefPart:
    """`{{ reference }}`; the reference's offsets count from `base` in the template."""

    ref: Reference
    start: int = _pos()
    end: int = _pos()
    base: int = _pos()


@record
class ExprPart:
    """`${{ expression }}`; the expression's offsets count from `base` in the template."""

    expr: Expr
    start: int = _pos()
    end: int = _pos()
    base: int = _pos()


Part = Union[TextPart, RefPart, ExprPart]


@record
class TemplateError:
    """A problem found while parsing a template; offsets as for nodes."""

    code: str
    message: str
    start: int
    end: int
    help: str | None = None


def children(node: object) -> tuple:
    """The sub-expressions of an expression node, for walkers."""
    if isinstance(node, (Member,)):
        return (node.target,)
    if isinstance(node, Index):
        return (node.target, node.index)
    if isinstance(node, Call):
        return (node.callee, *node.args)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Conditional):
        return (node.test, node.then, node.otherwise)
    if isinstance(node, ArrayExpr):
        return node.items
    if isinstance(node, ObjectExpr):
        return tuple(e.value for e in node.entries)
    return ()
