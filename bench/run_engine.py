"""Benchmark: the interpreter's own cost (engine overhead per step and the state save).

Usage: python bench/run_engine.py [STEPS] [--rounds N]   (default 100 steps, 5 rounds; also runs 10x STEPS)

Runs playbooks of no-op steps in one process, each step saved as a real run saves it (a
record appended to the run's journal and synced; the whole snapshot at the end). Prints,
in CPU time (user + system) of this process:
- the whole run and the time per step, with and without saving state (`var` and
  `log-debug` steps);
- a durable `var` step at step 100 and at step 1,000 of one run of 1,100 `var` steps
  (the mean over steps 50 to 150 and 950 to 1,050, and the median step of each), and their
  ratio in each run (min / median / max over `--rounds` runs);
- one save of a running 100-step run: a journal record, and a full snapshot;
- one save of a run at 100 steps and of one at 1,000, saved in turn;
- linearity: the time of 10x STEPS divided by the time of STEPS;
- whole `catalyst run` processes of 1, 100 and 1,000 `var` steps: the difference between
  two sizes, divided by the steps between them, is what a step costs a real run, start-up
  left out (its check's share included: a longer playbook takes longer to read).
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


def step_cost_at(rounds: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """CPU per durable `var` step around step 100 and around step 1,000 of one run of 1,100
    `var` steps, for each of `rounds` runs: the mean over steps 50 to 150 and 950 to 1,050
    (what the steps cost, the collector's passes included), then the median step of each
    (what a step costs when nothing else lands in it)."""
    means_100, means_1000, medians_100, medians_1000 = [], [], [], []
    for _ in range(rounds):
        marks: dict[int, float] = {}
        run_once(1100, True, only_var=True, each=lambda state: marks.setdefault(len(state.steps), time.process_time()))
        means_100.append((marks[150] - marks[50]) / 100)
        means_1000.append((marks[1050] - marks[950]) / 100)
        medians_100.append(statistics.median(marks[n + 1] - marks[n] for n in range(50, 150)))
        medians_1000.append(statistics.median(marks[n + 1] - marks[n] for n in range(950, 1050)))
    return means_100, means_1000, medians_100, medians_1000


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


def interleaved_saves(count: int = 400) -> tuple[float, float]:
    """One save of a running run of 100 steps and of one of 1,000, a step added each time,
    the two runs saved in turn so that the machine's drift falls on both (medians of `count`)."""
    from catalyst_dsl.runtime.state.store import PlaybookRef, StateStore, StepRecord, new_run_state

    def step(state, index: int) -> StepRecord:
        return StepRecord(
            path=f"steps/{index}",
            name=f"v{index}",
            action="var",
            status="completed",
            attempts=1,
            started_at=state.started_at,
            duration=0.0001,
            result=index,
            fingerprint="0123456789abcdef",
        )

    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for size in (100, 1000):
            store = StateStore(Path(tmp) / str(size))
            state = store.create(new_run_state(PlaybookRef(name=f"noop{size}", file="noop.yaml", fingerprint="f")))
            for index in range(size):
                state.steps.append(step(state, index))
                store.save(state)
            runs.append((store, state, size, []))
        for index in range(count):
            for store, state, size, times in runs:
                state.steps.append(step(state, size + index))
                started = time.process_time()
                store.save(state)
                times.append(time.process_time() - started)
        return statistics.median(runs[0][3]), statistics.median(runs[1][3])


def best(steps: int, save: bool, repeat: int = 5) -> float:
    return min(run_once(steps, save) for _ in range(repeat))


def whole_process(rounds: int) -> dict[int, list[float]]:
    """CPU of `catalyst run` processes of 1, 100 and 1,000 `var` steps, round by round."""
    with tempfile.TemporaryDirectory() as tmp:
        env = processes.child_env(Path(tmp) / "pycache")
        sizes = (1, 100, 1000)
        roots = {size: project(Path(tmp) / str(size), size, only_var=True) for size in sizes}
        argv = [sys.executable, "-m", "catalyst_dsl", "run", "noop"]
        for root in roots.values():
            processes.measure(argv, root, env)  # bytecode written, the check cached
        cpu: dict[int, list[float]] = {size: [] for size in sizes}
        for _ in range(rounds):
            for size in sizes:
                cpu[size].append(processes.measure(argv, roots[size], env).cpu)
        return cpu


def per_step(more: list[float], fewer: list[float], steps: int) -> str:
    """What a step costs a whole process: round by round, and from the rounds' minimums."""
    rounds = [(m - f) / steps * 1000 for m, f in zip(more, fewer)]
    return f"{processes.spread(rounds, 'ms')}, from the minimums {(min(more) - min(fewer)) / steps * 1000:.3f} ms"


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
    at_100, at_1000, median_100, median_1000 = step_cost_at(rounds)
    for name, early, late in (("mean", at_100, at_1000), ("median step", median_100, median_1000)):
        ratios = [b / a for a, b in zip(early, late)]
        print(
            f"a durable var step ({name}) at step 100: {processes.spread([t * 1000 for t in early], 'ms')} CPU;"
            f" at step 1,000: {processes.spread([t * 1000 for t in late], 'ms')};"
            f" step 1,000 / step 100 in each run: {processes.spread(ratios, 'x', 2)} ({rounds} runs of 1,100 steps)"
        )
    record, snapshot = save_costs(steps)
    print(
        f"one save of a running {steps}-step run: a journal record {record * 1000:.3f} ms CPU,"
        f" a full snapshot {snapshot * 1000:.2f} ms (medians of 50)"
    )
    small, large = interleaved_saves()
    print(
        f"one save (a journal record) of a run at 100 steps: {small * 1000:.3f} ms CPU, at 1,000 steps:"
        f" {large * 1000:.3f} ms ({large / small:.2f}x; the two runs saved in turn, medians of 400)"
    )
    big_with = best(steps * 10, True, 3)
    big_without = best(steps * 10, False, 3)
    print(
        f"{steps * 10} steps: {big_with * 1000:.1f} ms CPU with saves ({big_with / with_save:.1f}x), "
        f"{big_without * 1000:.1f} ms without ({big_without / without:.1f}x)"
    )
    cpu = whole_process(rounds)
    print(
        f"`catalyst run` of 1, 100 and 1,000 var steps: {processes.spread(cpu[1])}, {processes.spread(cpu[100])},"
        f" {processes.spread(cpu[1000])} CPU ({rounds} rounds, interleaved)"
    )
    print(f"  a step, 100 against 1: {per_step(cpu[100], cpu[1], 99)}")
    print(f"  a step, 1,000 against 100: {per_step(cpu[1000], cpu[100], 900)}")
    print(processes.machine())


if __name__ == "__main__":
    main()
