"""What a cleo cantbook says, once read: its inputs, nodes, edges with their guards, handlers."""

from __future__ import annotations

import re
from typing import Optional

from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.dialects.cleo import graph as g
from catalyst_dsl.syntax.source import SourceFile, Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq

#: cleo's placeholders (B4.9); the second pattern finds names cleo does not read as one.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
DASHED_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*-[A-Za-z0-9_.-]*)\s*\}\}")
DEFAULT_CAP = 3
#: What a node merges into cleo's context besides an agent's answer (B4.5, B4.10): a
#: program's keys (suffix after its id, field of its result) and `__lastApproval`'s (key,
#: path in the checkpoint's result). The checker, the lowering and the export read these.
PROGRAM_OUTPUTS = (("_stdout", "stdout"), ("_exitCode", "exitCode"))
LAST_APPROVAL = "__lastApproval"
#: The edge the walk last took into a node with several ways in, one of which carries a
#: `contract.ensures` ("source → target"): that contract is checked only after that edge.
ENTERED_BY = "__enteredBy"
LAST_APPROVAL_KEYS = (
    ("decision", "selected"),
    ("approver", "approval.by"),
    ("role", "approval.role"),
    ("reason", "approval.note"),
    ("approvedAt", "approval.at"),
    ("via", "approval.via"),
)


@record(frozen=False, eq=False)
class Guard:
    field: str
    operator: str
    value: object
    node: YMap
    #: Whether the value is a list or mapping (compared by identity in JavaScript: never equal).
    composite: bool = False


@record(frozen=False, eq=False)
class Edge:
    source: int
    target: int
    span: Span
    guard: Optional[Guard] = None
    requires: tuple[str, ...] = ()
    ensures: tuple[str, ...] = ()
    explicit: bool = True


@record(frozen=False, eq=False)
class Node:
    index: int
    id: str
    type: Optional[str]
    map: YMap
    id_span: Span
    keys: dict[str, tuple[YScalar, YNode]]
    depends: list[tuple[str, YScalar]] = factory(list)
    requires_from: Optional[YScalar] = None
    requires_fields: tuple[str, ...] = ()
    ensures_keys: tuple[str, ...] = ()
    ensures_schema: Optional[str] = None
    ensures_exit_code: Optional[int] = None
    cap: Optional[int] = None
    inject_into: Optional[YScalar] = None
    escalate: bool = False


@record(frozen=False, eq=False)
class Input:
    name: str
    span: Span
    required: bool = False
    default: Optional[YNode] = None
    description: Optional[str] = None


@record(frozen=False, eq=False)
class Handler:
    on: str
    action: str
    message: Optional[str]
    span: Span


@record(frozen=False, eq=False)
class Cantbook:
    source: SourceFile
    root: YMap
    name: str
    description: str
    inputs: list[Input]
    nodes: list[Node]
    edges: list[Edge]
    handlers: list[Handler]
    graph: Optional[g.Graph] = None
    #: The single entry, when the graph is sound enough to walk (no cycle, one root).
    entry: Optional[int] = None
    order: list[int] = factory(list)
    #: Whether any error was reported for the file: then nothing is lowered.
    broken: bool = False


def _plain(node: YNode) -> object:
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [_plain(i) for i in node.items]
    return {k.text: _plain(v) for k, v in node.pairs}
