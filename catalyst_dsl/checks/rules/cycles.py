"""Cycles in the call graph: every strongly connected component, each reported once.

Tarjan's algorithm, written iteratively so a long chain of calls cannot exhaust Python's
stack; it visits each playbook and each edge once, so the search is linear in edges.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from catalyst_dsl.diagnostics.ids import CALL_CYCLE, CONDITIONAL_SELF_CALL, UNCONDITIONAL_SELF_CALL
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.checks.library_view import Edge, LibraryView

Graph = dict[str, list[Edge]]


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Components in the order Tarjan's algorithm closes them; nodes in each in visit order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph.get(root, ())))]
        while work:
            node, edges = work[-1]
            advanced = False
            for edge in edges:
                child = edge.callee
                if child is None or child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                component.reverse()
                components.append(component)
    return components


def check_call_cycles(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    """Report the cycles of calls through the files checked, and their self-calls."""
    loaded = library.loaded()
    graph = {path: library.edges(path) for path in loaded}
    names = {path: c.playbook.name if c.playbook else Path(path).stem for path, c in loaded.items()}
    check_cycles(graph, names, set(files), sink, library.project.config.max_depth)


def check_cycles(
    graph: Graph, names: dict[str, str], reported: set[str], sink: DiagnosticSink, max_depth: int = 10
) -> None:
    """Report each cycle that passes through a file in `reported`.

    `names` maps a file to its playbook name, for messages.
    """
    for edges in graph.values():
        for edge in edges:
            if edge.callee == edge.caller and edge.caller in reported:
                _self_call(edge, names, sink, max_depth)
    for component in strongly_connected(graph):
        if len(component) < 2 or not reported.intersection(component):
            continue
        members = set(component)
        start = min(component)
        path = _shortest_cycle(graph, start, members)
        order = " → ".join(names.get(p, Path(p).stem) for p in [e.caller for e in path] + [start])
        inside = [e for p in sorted(component) for e in graph[p] if e.callee in members and e.callee != e.caller]
        others = sorted(members - {e.caller for e in path})
        extra = (
            f"; {', '.join(names.get(p, Path(p).stem) for p in others)} {'is' if len(others) == 1 else 'are'} on it too"
            if others
            else ""
        )
        first = path[0]
        sink.report(
            CALL_CYCLE,
            f"these playbooks call each other in a cycle: {order}{extra}",
            first.span,
            labels=[
                Label(
                    e.span,
                    f"{names.get(e.caller, Path(e.caller).stem)} calls {names.get(e.callee, Path(e.callee).stem)} here",
                )
                for e in inside
                if e is not first and e.span
            ],
            help="break the cycle: move the shared steps into a playbook that none of them calls back, or "
            "guard a self-call with a condition",
        )


def _self_call(edge: Edge, names: dict[str, str], sink: DiagnosticSink, max_depth: int) -> None:
    name = names.get(edge.caller, Path(edge.caller).stem)
    if edge.guarded:
        sink.report(
            CONDITIONAL_SELF_CALL,
            f"'{name}' calls itself under a condition; a run that nests deeper than {max_depth} calls stops "
            "with an error",
            edge.span,
            help="make sure the condition turns false; the limit is max-depth in the project settings",
        )
    else:
        sink.report(
            UNCONDITIONAL_SELF_CALL,
            f"'{name}' calls itself unconditionally, so it can never finish",
            edge.span,
            help="put the call under a condition (a `condition:` or an `if`) that ends the recursion",
        )


def _shortest_cycle(graph: Graph, start: str, members: set[str]) -> list[Edge]:
    """The edges of a shortest cycle through `start` inside one component (BFS)."""
    came_by: dict[str, Edge] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for edge in graph.get(node, ()):
            child = edge.callee
            if child not in members or child == node:
                continue
            if child == start:
                path = [edge]
                while path[-1].caller != start:
                    path.append(came_by[path[-1].caller])
                path.reverse()
                return path
            if child not in came_by:
                came_by[child] = edge
                queue.append(child)
    return []
