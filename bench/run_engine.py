"""Benchmark: the interpreter's own cost (engine overhead per step and the state save).

Usage: python bench/run_engine.py [STEPS] [--rounds N]   (default 100 steps, 5 rounds; also runs 10x STEPS)

Runs playbooks of no-op steps in one process, each step saved as a real run saves it (a
record appended to the run's journal and synced; the whole snapshot at the end). Prints,
in CPU time (user + system) of this process:
- the whole run and the time per step, with and without saving state (`var` and
  `log-debug` steps);
- a durable `var` step at step 100 and at step 1,000 of one run of 1,100 `var` steps
  (the mean over steps 50 to 150 and 950 to 1,050), and their ratio in each run
  (min / median / max over `--rounds` runs);
- one save of a running 100-step run: a journal record, and a full snapshot;
- linearity: the time of 10x STEPS divided by the time of STEPS;
- a whole `catalyst run` process of 100 `var` steps against one of a single `var` step:
  the difference, divided by 99, is what a step costs a real run, start-up left out.
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.config import load_project
from catalyst_dsl.runtime.lifecycle.context import RunOptions
from catalyst_dsl.runtime.lifecycle.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
import processes  # noqa: E402 - bench/ is not a package


def playbook(steps: int, only_var: bool = False) -> str:
    lines = ["name: noop", "description: no-op steps", "owner: Engineer", "steps:"]
    for s in range(steps):
        if only_var or s % 2 == 0:
            lines += [f"  - var: v{s}", f"    value: {s}"]
        else:
            lines += [f'  - log-debug: "step {s}"']
    return "\n".join(lines) + "\n"


def project(root: Path, steps: int, only_var: bool = False) -> Path:
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "noop.yaml").write_text(playbook(steps, only_var))
    return root


def session_of(root: Path) -> Session:
    return Session(load_project(root, DiagnosticSink()), RunOptions(out=io.StringIO(), interactive=False))


def run_once(steps: int, save: bool, only_var: bool = False, each=None) -> float:
    """CPU seconds of one run; `each(state)` is called after every save."""
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp), steps, only_var)
        session = session_of(root)
        store = session.store
        real = store.save

        def save_and_mark(state) -> None:
            if save:
                real(state)
            if each is not None:
                each(state)

        store.save = save_and_mark
        file = str(root / "playbooks" / "noop.yaml")
        session.checked(file)  # compile and check first: this benchmark is about running
        started = time.process_time()
        code = session.start(file, {})
        elapsed = time.process_time() - started
        assert code == 0, code
        return elapsed


def step_cost_at(rounds: int) -> tuple[list[float], list[float]]:
    """CPU per durable `var` step around step 100 and around step 1,000 of one run of 1,100
    `var` steps (the mean over steps 50 to 150 and 950 to 1,050), for each of `rounds` runs."""
    at_100, at_1000 = [], []
    for _ in range(rounds):
        marks: dict[int, float] = {}
        run_once(1100, True, only_var=True, each=lambda state: marks.setdefault(len(state.steps), time.process_time()))
        at_100.append((marks[150] - marks[50]) / 100)
        at_1000.append((marks[1050] - marks[950]) / 100)
    return at_100, at_1000


def save_costs(steps: int) -> tuple[float, float]:
    """One save of a running `steps`-step run (median of 50): as a journal record, and as a full snapshot."""
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp), steps)
        session = session_of(root)
        session.start(str(root / "playbooks" / "noop.yaml"), {})
        summary = session.store.list()[0]
        store = session_of(root).store
        state = store.load(summary.run_id)
        state.status, state.ended_at = "running", None  # a live run, as saved after each step
        store.save(state)  # the change of status is a full snapshot; what follows are records
        records, snapshots = [], []
        for _ in range(50):
            started = time.process_time()
            store.save(state)
            records.append(time.process_time() - started)
        writer = store._runs[state.run_id]
        for _ in range(50):
            writer.compact_next = True
            started = time.process_time()
            store.save(state)
            snapshots.append(time.process_time() - started)
        return statistics.median(records), statistics.median(snapshots)


def best(steps: int, save: bool, repeat: int = 5) -> float:
    return min(run_once(steps, save) for _ in range(repeat))


def whole_process(rounds: int) -> tuple[list[float], list[float]]:
    """CPU of `catalyst run` processes of 100 `var` steps and of one, round by round."""
    with tempfile.TemporaryDirectory() as tmp:
        env = processes.child_env(Path(tmp) / "pycache")
        many = project(Path(tmp) / "many", 100, only_var=True)
        one = project(Path(tmp) / "one", 1, only_var=True)
        argv = [sys.executable, "-m", "catalyst_dsl", "run", "noop"]
        processes.measure(argv, many, env)  # bytecode written, the check cached
        processes.measure(argv, one, env)
        cpu_many, cpu_one = [], []
        for _ in range(rounds):
            cpu_many.append(processes.measure(argv, many, env).cpu)
            cpu_one.append(processes.measure(argv, one, env).cpu)
        return cpu_many, cpu_one


def main() -> None:
    # The runs' anchors go to a state directory of the benchmark's own, not the user's.
    with tempfile.TemporaryDirectory(prefix="bench-state-") as state_home:
        os.environ["XDG_STATE_HOME"] = state_home
        measure_all(sys.argv[1:])


def measure_all(args: list[str]) -> None:
    rounds = 5
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at : at + 2]
    steps = int(args[0]) if args else 100
    print(processes.machine())
    run_once(steps, True)  # warm the caches (grammar, imports)
    with_save = best(steps, True)
    without = best(steps, False)
    print(f"{steps} no-op steps: {with_save * 1000:.1f} ms CPU with state saves, {without * 1000:.1f} ms without")
    print(
        f"engine overhead per step: {without / steps * 1000:.3f} ms; with its save: {with_save / steps * 1000:.3f} ms"
    )
    at_100, at_1000 = step_cost_at(rounds)
    ratios = [late / early for early, late in zip(at_100, at_1000)]
    print(
        f"a durable var step at step 100: {processes.spread([t * 1000 for t in at_100], 'ms')} CPU;"
        f" at step 1,000: {processes.spread([t * 1000 for t in at_1000], 'ms')};"
        f" step 1,000 / step 100 in each run: {processes.spread(ratios, 'x', 2)} ({rounds} runs of 1,100 steps)"
    )
    record, snapshot = save_costs(steps)
    print(
        f"one save of a running {steps}-step run: a journal record {record * 1000:.3f} ms CPU,"
        f" a full snapshot {snapshot * 1000:.2f} ms (medians of 50)"
    )
    big_with = best(steps * 10, True, 3)
    big_without = best(steps * 10, False, 3)
    print(
        f"{steps * 10} steps: {big_with * 1000:.1f} ms CPU with saves ({big_with / with_save:.1f}x), "
        f"{big_without * 1000:.1f} ms without ({big_without / without:.1f}x)"
    )
    cpu_many, cpu_one = whole_process(rounds)
    per_step = [(m - o) / 99 for m, o in zip(cpu_many, cpu_one)]
    print(
        f"`catalyst run` of 100 var steps: {processes.spread(cpu_many)} CPU; of 1: {processes.spread(cpu_one)};"
        f" a step: {processes.spread([p * 1000 for p in per_step], 'ms')} ({rounds} rounds, interleaved)"
    )
    print(processes.machine())


if __name__ == "__main__":
    main()
