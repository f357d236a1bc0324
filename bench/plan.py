"""Benchmark: a what-if plan of a playbook of N steps (default 100), in one process.

Usage: python bench/plan.py [STEPS]
Steps mix writes (diffs), reads, variables, conditions, AI prompts (unknown) and shell
steps (unknown). Prints the time to plan (best of 5, after one warm-up) and the plan's
size, for STEPS and 10x STEPS, to show both grow linearly.
"""

from __future__ import annotations

import io
import sys
import tempfile
import time
from pathlib import Path

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.config import load_project
from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json
from catalyst_dsl.runtime.lifecycle.context import RunOptions
from catalyst_dsl.runtime.lifecycle.session import Session


def playbook(steps: int) -> str:
    lines = [
        "name: planned",
        "description: a generated playbook",
        "owner: Engineer",
        "inputs:",
        "  - string: feature-id",
        "    default: search",
        "allowedWritePaths:",
        "  - out/**",
        "steps:",
    ]
    for s in range(steps):
        kind = s % 5
        if kind == 0:
            lines += [
                f"  - file-write: out/{{{{feature-id}}}}/file-{s}.md",
                f"    content: \"line {s}\\nsecond line\\n\"",
            ]
        elif kind == 1:
            lines += [f"  - name: read-{s}", f"    file-read: out/{{{{feature-id}}}}/file-{s - 1}.md"]
        elif kind == 2:
            lines += [f"  - var: size-{s}", f"    value: ${{{{ get('read-{s - 1}').length }}}}"]
        elif kind == 3:
            lines += [f"  - name: ask-{s}", f"    ai-prompt: \"Summarise file {s}\""]
        else:
            lines += [f"  - condition: ${{{{ get('size-{s - 2}') > 5 }}}}", f"    display: \"big {s}\""]
    return "\n".join(lines) + "\n"


def measure(steps: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "playbooks").mkdir()
        (root / "catalyst.toml").write_text("")
        file = root / "playbooks" / "planned.yaml"
        file.write_text(playbook(steps))
        session = Session(load_project(root, DiagnosticSink()), RunOptions(out=io.StringIO(), interactive=False))
        session.checked(str(file))  # compile and check once: this measures planning
        best, size = float("inf"), 0
        for _ in range(6):
            started = time.perf_counter()
            plan = session.plan(str(file), {})
            text = canonical_json(plan)
            best = min(best, time.perf_counter() - started)
            size = len(text.encode("utf-8"))
        return best, size


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    small = measure(steps)
    large = measure(steps * 10)
    print(f"{steps} steps: planned in {small[0] * 1000:.1f} ms, plan {small[1] / 1024:.1f} KiB")
    print(
        f"{steps * 10} steps: planned in {large[0] * 1000:.1f} ms ({large[0] / small[0]:.1f}x), "
        f"plan {large[1] / 1024:.1f} KiB ({large[1] / small[1]:.1f}x)"
    )


if __name__ == "__main__":
    main()
