"""The library's call graph: one box per playbook, one arrow per caller and callee.

Calls on a cycle (playbooks that call each other, a playbook that calls itself) are
drawn in the warning colour, as `catalyst check` reports them (C8xx). A call whose target
is not found, or is computed at run time, points at a grey box saying so.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from catalyst_dsl.checks.library_view import Edge
from catalyst_dsl.checks.rules.cycles import strongly_connected
from catalyst_dsl.report.graph.model import Graph, Link, Node


def call_graph(names: Mapping[str, str], edges: Mapping[str, Sequence[Edge]], title: str = "playbooks") -> Graph:
    """`names`: each playbook file and its name, in the order to draw them; `edges`: the
    calls each file makes (`Library.edges`)."""
    ident = {path: f"p{i}" for i, path in enumerate(names)}
    graph = {path: list(edges.get(path, ())) for path in names}
    on_cycle: set[str] = set()
    for component in strongly_connected(graph):
        if len(component) > 1:
            on_cycle.update(component)
    on_cycle.update(e.caller for calls in graph.values() for e in calls if e.callee == e.caller)
    nodes = [Node(ident[path], name, "playbook", path, marked=path in on_cycle) for path, name in names.items()]
    unknown: dict[str, str] = {}
    links: dict[tuple[str, str], Link] = {}
    for path, calls in graph.items():
        for edge in calls:
            if edge.callee in ident:
                target = ident[edge.callee]
                cycle = path in on_cycle and edge.callee in on_cycle and _same_cycle(graph, path, edge.callee)
                style = "cycle" if cycle else "normal"
            else:
                said = f"{edge.target} (computed at run time)" if edge.dynamic else f"{edge.target} (not found)"
                if said not in unknown:
                    unknown[said] = f"u{len(unknown)}"
                    nodes.append(Node(unknown[said], said, "missing"))
                target, style = unknown[said], "normal"
            key = (ident[path], target)
            label = "conditional" if edge.guarded else ""
            known = links.get(key)
            if known is None or (known.label and not label):
                # One arrow per pair; it is conditional only if every call of the pair is.
                links[key] = Link(ident[path], target, label, style)
    return Graph(title, tuple(nodes), tuple(links.values()))


def _same_cycle(graph: Mapping[str, Sequence[Edge]], caller: str, callee: str) -> bool:
    """Whether `callee` leads back to `caller` (the call is on a cycle, not merely between
    two playbooks that each sit on one)."""
    seen, todo = {callee}, [callee]
    while todo:
        here = todo.pop()
        if here == caller:
            return True
        for edge in graph.get(here, ()):
            if edge.callee in graph and edge.callee not in seen:
                seen.add(edge.callee)
                todo.append(edge.callee)
    return False
