"""Benchmark: check N generated playbooks of S steps in one process (default 200 x 20).

Usage: python bench/check_library.py [N] [STEPS]
Prints the wall time of the whole check and per playbook; also shows linearity by
checking one playbook of S steps and one of 10*S steps.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from catalyst_dsl.compiler import collector_tuned_for_checking, compile_path


def playbook(index: int, steps: int) -> str:
    lines = [
        f"name: generated-{index}",
        "description: a generated playbook",
        "owner: Engineer",
        "inputs:",
        "  - string: feature-id",
        "    required: true",
        "steps:",
    ]
    for s in range(steps):
        kind = s % 4
        if kind == 0:
            lines += [f"  - name: read-{s}", f"    file-read: \".xe/features/{{{{feature-id}}}}/spec-{s}.md\""]
        elif kind == 1:
            lines += [f"  - var: count-{s}", f"    value: ${{{{ get('read-{s - 1}').length + {s} }}}}"]
        elif kind == 2:
            lines += [
                f"  - if: ${{{{ get('count-{s - 1}') > 10 }}}}",
                "    then:",
                f"      - display: \"big {{{{count-{s - 1}}}}}\"",
            ]
        else:
            lines += [f"  - name: run-{s}", f"    bash: echo {{{{feature-id}}}} {s}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(count):
            path = Path(tmp) / f"generated-{i}.yaml"
            path.write_text(playbook(i, steps))
            paths.append(str(path))
        start = time.perf_counter()
        with collector_tuned_for_checking():  # as `catalyst check` does
            errors = sum(1 for p in paths for d in compile_path(p).diagnostics if d.severity.value == "error")
        elapsed = time.perf_counter() - start
        print(
            f"{count} playbooks x {steps} steps: {elapsed * 1000:.0f} ms "
            f"({elapsed / count * 1000:.2f} ms each), {errors} errors"
        )
        times: dict[int, float] = {}
        for size in (steps * 10, steps * 100):
            path = Path(tmp) / "big.yaml"
            path.write_text(playbook(0, size))
            compile_path(str(path))
            best = float("inf")
            for _ in range(5):
                with collector_tuned_for_checking():
                    start = time.perf_counter()
                    compile_path(str(path))
                    best = min(best, time.perf_counter() - start)
            times[size] = best
            print(f"one playbook of {size} steps: {best * 1000:.1f} ms (best of 5)")
        print(f"10x the steps: {times[steps * 100] / times[steps * 10]:.1f}x the time (target <= 12x)")


if __name__ == "__main__":
    main()
