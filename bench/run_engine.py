"""Benchmark: the interpreter's own cost (engine overhead per step and the state save).

Usage: python bench/run_engine.py [STEPS]   (default 100; also runs 10x STEPS)

Runs a playbook of no-op steps (`var` and `log-debug`) in one process, each step saving
the snapshot as a real run does (temp file, fsync, rename). Prints:
- the whole run and the time per step, with and without saving state;
- the engine overhead per step (the run without saving, divided by steps);
- one state save of a finished STEPS-step run;
- linearity: the time of 10x STEPS divided by the time of STEPS.
"""

from __future__ import annotations

import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.config import load_project
from catalyst_dsl.runtime.lifecycle.context import RunOptions
from catalyst_dsl.runtime.lifecycle.session import Session


def playbook(steps: int) -> str:
    lines = ["name: noop", "description: no-op steps", "owner: Engineer", "steps:"]
    for s in range(steps):
        if s % 2 == 0:
            lines += [f"  - var: v{s}", f"    value: {s}"]
        else:
            lines += [f"  - log-debug: \"step {s}\""]
    return "\n".join(lines) + "\n"


def project(root: Path, steps: int) -> Path:
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "noop.yaml").write_text(playbook(steps))
    return root


class _NoSave:
    """Stands in for the store's save to measure the engine alone."""

    def __init__(self, store) -> None:
        self.store = store

    def __call__(self, state) -> None:
        pass


def run_once(steps: int, save: bool) -> tuple[float, Session]:
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp), steps)
        session = Session(load_project(root, DiagnosticSink()), RunOptions(out=io.StringIO(), interactive=False))
        if not save:
            session.store.save = _NoSave(session.store)
        file = str(root / "playbooks" / "noop.yaml")
        session.checked(file)  # compile and check first: this benchmark is about running
        started = time.perf_counter()
        code = session.start(file, {})
        elapsed = time.perf_counter() - started
        assert code == 0, code
        return elapsed, session


def save_cost(steps: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp), steps)
        session = Session(load_project(root, DiagnosticSink()), RunOptions(out=io.StringIO(), interactive=False))
        session.start(str(root / "playbooks" / "noop.yaml"), {})
        summary = session.store.list()[0]
        state = session.store.load(summary.run_id)
        state.status = "running"  # a live run's snapshot, as saved after each step
        times = []
        for _ in range(50):
            started = time.perf_counter()
            session.store.save(state)
            times.append(time.perf_counter() - started)
        return statistics.median(times)


def best(steps: int, save: bool, repeat: int = 5) -> float:
    return min(run_once(steps, save)[0] for _ in range(repeat))


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    run_once(steps, True)  # warm the caches (grammar, imports)
    with_save = best(steps, True)
    without = best(steps, False)
    print(f"{steps} no-op steps: {with_save * 1000:.1f} ms with state saves, {without * 1000:.1f} ms without")
    print(
        f"engine overhead per step: {without / steps * 1000:.3f} ms; with its save: {with_save / steps * 1000:.3f} ms"
    )
    print(f"one state save of a {steps}-step run: {save_cost(steps) * 1000:.2f} ms (median of 50)")
    big_with = best(steps * 10, True, 3)
    big_without = best(steps * 10, False, 3)
    print(
        f"{steps * 10} steps: {big_with * 1000:.1f} ms with saves ({big_with / with_save:.1f}x), "
        f"{big_without * 1000:.1f} ms without ({big_without / without:.1f}x)"
    )


if __name__ == "__main__":
    main()
