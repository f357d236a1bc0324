"""Benchmark: a library of playbooks that call each other, checked as a whole.

Usage: python bench/library_graph.py [N] [STEPS]
1. N playbooks (default 200) of STEPS steps (default 20), each calling two others by name
   with typed inputs and writing inside its allowedWritePaths, checked in one process as
   `catalyst check` does (settings, discovery, calls, cycles, permissions).
2. The cycle search alone on a random call graph (seeded) of E/3 playbooks calling three
   others each, E = 10,000 and 100,000 edges: linear in edges means 10x the edges takes
   about 10x the time.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from catalyst_dsl.checks.library_view import Edge
from catalyst_dsl.checks.rules.cycles import strongly_connected
from catalyst_dsl.compiler import collector_tuned_for_checking, discover
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.check import check_project
from catalyst_dsl.project.config import load_project


def playbook(index: int, count: int, steps: int) -> str:
    lines = [
        f"name: flow-{index}",
        "description: a generated playbook in a library",
        "owner: Engineer",
        "inputs:",
        "  - string: feature-id",
        "    required: true",
        "allowedWritePaths:",
        "  - \".xe/features/**\"",
        "  - \"out/**\"",
        "steps:",
    ]
    for s in range(steps - 2):
        if s % 3 == 0:
            lines += [f"  - name: read-{s}", f"    file-read: \".xe/features/{{{{feature-id}}}}/spec-{s}.md\""]
        elif s % 3 == 1:
            lines += [
                f"  - file-write: \"out/flow-{index}/{{{{feature-id}}}}-{s}.md\"",
                f"    content: \"{{{{read-{s - 1}}}}}\"",
            ]
        else:
            lines += [
                f"  - name: run-{s}",
                f"    bash: echo {{{{feature-id}}}} {s}",
                f"    writes: [\"out/flow-{index}/log-{s}.txt\"]",
            ]
    for callee in (index + 1, index + 2):
        if callee < count:  # calls go forward only: a DAG, so no cycle to report
            lines += [
                f"  - playbook: flow-{callee}",
                "    inheritPermissions: true",
                "    inputs:",
                "      feature-id: \"{{feature-id}}\"",
            ]
    return "\n".join(lines) + "\n"


def library(count: int, steps: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalyst.toml").write_text("")
        (root / "playbooks").mkdir()
        for i in range(count):
            (root / "playbooks" / f"flow-{i}.yaml").write_text(playbook(i, count, steps))
        start = time.perf_counter()
        project = load_project(root, DiagnosticSink())
        files = discover([str(root / "playbooks")])
        result = check_project(project, files)
        elapsed = time.perf_counter() - start
        errors = sum(1 for d in result.diagnostics if d.severity.value == "error")
        edges = sum(len(result.library.edges(f)) for f in files)
        print(f"library of {count} playbooks x {steps} steps, {edges} calls: {elapsed * 1000:.0f} ms, {errors} errors")


def bare_traversal(graph) -> None:
    """A depth-first walk that does nothing else: the floor any cycle search pays."""
    seen: set[str] = set()
    for root in graph:
        if root in seen:
            continue
        seen.add(root)
        work = [iter(graph[root])]
        while work:
            for edge in work[-1]:
                if edge.callee not in seen:
                    seen.add(edge.callee)
                    work.append(iter(graph[edge.callee]))
                    break
            else:
                work.pop()


def cycle_search(edges: int) -> tuple[float, float]:
    rng = random.Random(edges)
    nodes = [f"p{i}" for i in range(edges // 3)]
    graph = {n: [Edge(n, "", "playbook", None, rng.choice(nodes)) for _ in range(3)] for n in nodes}
    best = floor = float("inf")
    for _ in range(3):
        with collector_tuned_for_checking():  # as check_project runs it
            start = time.perf_counter()
            components = strongly_connected(graph)
            best = min(best, time.perf_counter() - start)
            start = time.perf_counter()
            bare_traversal(graph)
            floor = min(floor, time.perf_counter() - start)
    assert sum(len(c) for c in components) == len(nodes)
    return best, floor


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    library(count, steps)
    (small, small_floor), (large, large_floor) = cycle_search(10_000), cycle_search(100_000)
    print(
        f"cycle search: 10,000 edges {small * 1000:.1f} ms, 100,000 edges {large * 1000:.1f} ms "
        f"({large / small:.1f}x for 10x the edges)"
    )
    print(
        f"bare depth-first walk of the same graphs: {small_floor * 1000:.1f} ms, {large_floor * 1000:.1f} ms "
        f"({large_floor / small_floor:.1f}x)"
    )
    print(
        f"cycle search / bare walk: {small / small_floor:.1f}x at 10,000 edges, "
        f"{large / large_floor:.1f}x at 100,000 (constant = linear work)"
    )


if __name__ == "__main__":
    main()
