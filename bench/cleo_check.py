"""Benchmark: check cleo cantbooks, 200 of the size people write and one 10,000-node graph.

Usage: python bench/cleo_check.py [RUNS]   (default 5)
Each run checks the 200 generated cantbooks of 12 nodes (guarded branches, contracts,
templates, loop-backs) in one process, then one chain of 1,000 and one of 10,000 nodes with
a guarded diamond every ten nodes, so the 10x ratio shows whether time grows linearly.
Prints the machine, its load, and CPU and wall time (min / median / max over the runs).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import machine  # noqa: E402

from catalyst_dsl.compiler import collector_tuned_for_checking, compile_path  # noqa: E402


def cantbook(index: int) -> str:
    return f"""version: "1.0"
name: generated-{index}
description: a generated cantbook
inputs:
  - name: taskId
    required: true
  - name: tag
    default: latest
nodes:
  - id: classify
    type: agentic
    skill: ct-research-agent
    inputs:
      task: "{{{{ inputs.taskId }}}}"
  - id: research
    type: agentic
    skill: ct-research-agent
    on_failure:
      max_iterations: 3
  - id: plan
    type: agentic
    skill: ct-spec-writer
    requires:
      from: classify
      fields: [complexity]
  - id: build
    type: deterministic
    command: pnpm
    args: [run, build]
    depends: [plan]
    timeout_ms: 600000
  - id: test
    type: deterministic
    command: pnpm
    args: [run, test, "--", "{{{{ inputs.tag }}}}"]
    depends: [build]
    on_failure:
      max_iterations: 2
      inject_into: build
  - id: review
    type: approval
    prompt: "Publish {{{{ inputs.tag }}}}?"
    depends: [test]
  - id: publish
    type: agentic
    agent: release-lead
    ensures:
      outputFiles: [published]
    depends: [review]
edges:
  - from: classify
    to: research
    when: {{ field: complexity, notEquals: low }}
  - from: classify
    to: plan
    when: {{ field: complexity, equals: low }}
  - from: research
    to: plan
error_handlers:
  - on: contract_violation
    action: abort
"""


def chain(count: int) -> str:
    lines = ['version: "1.0"', f"name: chain-{count}", "nodes:"]
    edges = ["edges:"]
    for i in range(count):
        lines += [f"  - id: n{i}", "    type: agentic", "    skill: s"]
        if i == 0:
            continue
        if i % 10 == 2:  # n(i-2) branches to n(i-1) or straight to n(i): a diamond
            edges += [
                f"  - from: n{i - 2}",
                f"    to: n{i - 1}",
                "    when: { field: go, equals: true }",
                f"  - from: n{i - 2}",
                f"    to: n{i}",
                "    when: { field: go, notEquals: true }",
                f"  - from: n{i - 1}",
                f"    to: n{i}",
            ]
        elif i % 10 != 1:
            edges += [f"  - from: n{i - 1}", f"    to: n{i}"]
    return "\n".join(lines + edges) + "\n"


def timed(paths: list[Path]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    with collector_tuned_for_checking():
        for path in paths:
            result = compile_path(str(path))
            assert not any(d.severity.value == "error" for d in result.diagnostics), path
    return time.process_time() - cpu, time.perf_counter() - wall


def spread(values: list[float]) -> str:
    return f"min {min(values):.3f} s, median {statistics.median(values):.3f} s, max {max(values):.3f} s"


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        books = []
        for i in range(200):
            books.append(root / f"generated-{i}.cantbook")
            books[-1].write_text(cantbook(i))
        small, big = root / "chain-1000.cantbook", root / "chain-10000.cantbook"
        small.write_text(chain(1_000))
        big.write_text(chain(10_000))
        results: dict[str, list[tuple[float, float]]] = {"200 cantbooks": [], "1,000 nodes": [], "10,000 nodes": []}
        for _ in range(runs):  # interleaved, so load changes touch all three alike
            results["200 cantbooks"].append(timed(books))
            results["1,000 nodes"].append(timed([small]))
            results["10,000 nodes"].append(timed([big]))
    for label, samples in results.items():
        print(f"{label:>14}: CPU {spread([c for c, _ in samples])}; wall {spread([w for _, w in samples])}")
    ratio = statistics.median(c for c, _ in results["10,000 nodes"]) / statistics.median(
        c for c, _ in results["1,000 nodes"]
    )
    print(f"10,000 / 1,000 nodes, median CPU: {ratio:.1f}x (linear is 10x)")


if __name__ == "__main__":
    main()
