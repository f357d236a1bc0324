"""Reliability of `catalyst run`, end to end through the real command line.

Each test builds a throwaway project (a `catalyst.toml` and `playbooks/`) and drives the
`catalyst` command in a subprocess, the way a user or a CI job does:

1. crash safety: SIGKILL at many points of a run, then `catalyst resume` until it is done;
2. two runs that write the same paths (locks), and two that do not;
3. damaged snapshots and changed playbooks refused on resume (exit 3, no traceback);
4. writes that escape the project at run time, refused before anything is written;
5. secrets never reach a file, the console or a JSON log;
6. Ctrl-C and SIGTERM: state saved, exit 130, locks released, resumable.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

#: `python -m catalyst_dsl`, but with `../side` (`_side`) as every program's temp folder, kept.
CATALYST = [sys.executable, str(Path(__file__).parents[1] / "helpers" / "kept_temp_catalyst.py")]
REPO = Path(__file__).resolve().parents[2]
RUN_ID = re.compile(r"\b(\d{8}-\d{6}-[a-z0-9-]+-\d{3})\b")
SECRET = "s3cr3t-VALUE-123"


# -- helpers ------------------------------------------------------------------------------------


def _env(**extra: str) -> dict[str, str]:
    """A clean environment for the command: no secrets of the caller, the repo importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALYST_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def _side(tmp_path: Path) -> Path:
    """A directory beside the project where steps that declare no writes leave their marks:
    `kept_temp_catalyst.py` makes it every program's temp folder, and keeps it (the temp
    folder is theirs to write; the project is not)."""
    side = tmp_path / "side"
    side.mkdir()
    return side


def make_project(root: Path, playbooks: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    (root / "playbooks").mkdir(exist_ok=True)
    for name, text in playbooks.items():
        write_playbook(root, name, text)
    return root


def write_playbook(root: Path, name: str, text: str) -> None:
    (root / "playbooks" / f"{name}.yaml").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def catalyst(
    project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CATALYST, *args],
        cwd=project,
        env=env or _env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def spawn(project: Path, *args: str, env: dict[str, str] | None = None, log: Path) -> subprocess.Popen:
    """Start the command in the background, its output going to `log`.out / `log`.err."""
    out = open(log.with_suffix(".out"), "w", encoding="utf-8")
    err = open(log.with_suffix(".err"), "w", encoding="utf-8")
    try:
        # As a terminal starts it: with Ctrl-C's default action even when the tests run in a
        # background job, which inherits SIGINT ignored (and Python then never raises
        # KeyboardInterrupt).
        return subprocess.Popen(
            [*CATALYST, *args],
            cwd=project,
            env=env or _env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    finally:
        out.close()
        err.close()


def run_id_of(result_text: str) -> str:
    found = RUN_ID.search(result_text)
    assert found, f"no run id in the output:\n{result_text}"
    return found.group(1)


def runs_dir(project: Path) -> Path:
    return project / ".xe" / "runs"


def live_path(project: Path, run_id: str) -> Path:
    return runs_dir(project) / f"run-{run_id}.json"


def live_snapshots(project: Path) -> list[Path]:
    return sorted(runs_dir(project).glob("run-*.json"))


def archived_path(project: Path, run_id: str) -> Path | None:
    found = list((runs_dir(project) / "history").glob(f"*/*/*/run-{run_id}.json"))
    return found[0] if found else None


def archived(project: Path, run_id: str) -> dict:
    path = archived_path(project, run_id)
    assert path is not None, (
        f"run {run_id} was not moved to history; live files: {[p.name for p in live_snapshots(project)]}"
    )
    return json.loads(path.read_text(encoding="utf-8"))


def lock_holders(project: Path) -> list[str]:
    """The run ids named by the lock files present now."""
    holders = []
    for path in (runs_dir(project) / "locks").glob("*.lock"):
        try:
            holders.append(json.loads(path.read_text(encoding="utf-8"))["runId"])
        except (FileNotFoundError, ValueError, KeyError):
            continue
    return holders


def no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout


def describe(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


# -- 1. crash test: SIGKILL anywhere, resume until done ----------------------------------------------

CRASH_PLAYBOOK = """
name: crash
description: Twelve steps of every kind, to be killed anywhere and resumed.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - file-write: out/f0.txt
    content: zero
  - bash: |
      sleep 0.05
      echo step1 >> out/log.txt
    writes: [out/log.txt]
  - var: greeting
    value: hello
  - json-write: out/data.json
    value: {n: 3, items: [a, b]}
  - bash: |
      sleep 0.05
      echo step4 >> out/log.txt
    writes: [out/log.txt]
  - for-each: item
    in: [a, b, c]
    steps:
      - file-write: "out/item-{{item}}.txt"
        content: "item {{item}} says {{greeting}}"
      - bash: |
          sleep 0.03
          echo step5-{{item}} >> out/log.txt
        writes: [out/log.txt]
  - file-write: out/f6.txt
    content: "{{greeting}} six"
  - bash: |
      sleep 0.05
      echo step7 >> out/log.txt
    writes: [out/log.txt]
  - display: "{{greeting}} from the crash test"
  - json-write: out/summary.json
    value: {greeting: "{{greeting}}", done: true}
  - bash: |
      sleep 0.05
      echo step10 >> out/log.txt
    writes: [out/log.txt]
  - file-write: out/f11.txt
    content: eleven
"""

CRASH_PATHS = {
    "steps/0",
    "steps/1",
    "steps/2",
    "steps/3",
    "steps/4",
    "steps/5",
    "steps/6",
    "steps/7",
    "steps/8",
    "steps/9",
    "steps/10",
    "steps/11",
    "steps/5/each/0/0",
    "steps/5/each/0/1",
    "steps/5/each/1/0",
    "steps/5/each/1/1",
    "steps/5/each/2/0",
    "steps/5/each/2/1",
    # What each loop iteration ran for (a resume refuses a list that changed under it).
    "steps/5/each/0/item",
    "steps/5/each/1/item",
    "steps/5/each/2/item",
}

#: The step path that appends each log line.
CRASH_LINES = {
    "step1": "steps/1",
    "step4": "steps/4",
    "step7": "steps/7",
    "step10": "steps/10",
    "step5-a": "steps/5/each/0/1",
    "step5-b": "steps/5/each/1/1",
    "step5-c": "steps/5/each/2/1",
}

CRASH_FILES = {
    "out/f0.txt": "zero",
    "out/item-a.txt": "item a says hello",
    "out/item-b.txt": "item b says hello",
    "out/item-c.txt": "item c says hello",
    "out/f6.txt": "hello six",
    "out/f11.txt": "eleven",
}


class SnapshotWatcher:
    """Reads the run's files over and over, as a resume would after a kill at that instant:
    every snapshot file must be whole JSON, and the run must read (its snapshot with its
    journal's records folded in) and verify."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.reads = 0
        self.bad: list[str] = []

    def read(self, path: Path) -> dict | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        self.reads += 1
        try:
            data = json.loads(raw)
        except ValueError as error:
            self.bad.append(f"{path.name}: {error}: {raw[:200]!r}…{raw[-200:]!r}")
            return None
        if not isinstance(data, dict):
            self.bad.append(f"{path.name}: not an object")
            return None
        return data

    def run(self, run_id: str) -> dict | None:
        """The live run as a resume would read it now, as JSON data; None when it is not live."""
        if self.read(live_path(self.project, run_id)) is None:
            return None
        data, problems = folded(self.project, run_id)
        if data is None and problems:
            self.bad.append(f"run {run_id}: {problems[0]}")
        elif problems:
            self.bad.append(f"run {run_id} does not verify: {problems}")
        return data

    def read_all(self) -> None:
        """Every snapshot and backup in the state directory, live and archived."""
        for path in [
            *runs_dir(self.project).glob("run-*.json*"),
            *runs_dir(self.project).glob("history/*/*/*/run-*.json"),
        ]:
            self.read(path)


def folded(project: Path, run_id: str) -> tuple[dict | None, list[str]]:
    """The live run `run_id` as the store reads it (its snapshot with its journal's records
    folded in), as JSON data, and what in it does not verify; a read that races a save is
    read again, as a load does."""
    from catalyst_dsl.runtime.errors import RunAbort
    from catalyst_dsl.runtime.state.snapshot_codec import converter
    from catalyst_dsl.runtime.state.store import StateStore

    problems: list[str] = []
    for _ in range(4):
        try:
            state, problems = StateStore(runs_dir(project)).inspect(str(live_path(project, run_id)))
        except RunAbort as abort:
            if not live_path(project, run_id).exists():
                return None, []  # archived meanwhile
            problems = [abort.message]
            continue
        if not problems:
            return converter().unstructure(state), []
    return None, problems


def _kill_cycle(project: Path, args: list[str], run_id: str | None, rule, watcher: SnapshotWatcher, log: Path):
    """Run `catalyst *args`, SIGKILL it when `rule(entries_added, seconds, snapshot)` says so.

    Returns (run_id, exit code or None when killed, snapshot read just after the kill).
    """
    proc = spawn(project, *args, log=log)
    started = time.monotonic()
    baseline = None
    killed = False
    try:
        while proc.poll() is None:
            if run_id is None:
                found = live_snapshots(project)
                if found:
                    run_id = found[0].name[4:-5]
            data = watcher.run(run_id) if run_id else None
            entries = len(data.get("steps") or []) if data else 0
            if baseline is None:
                baseline = entries
            if (data is not None or rule.time_based) and rule(entries - baseline, time.monotonic() - started, data):
                if rule.delay:
                    time.sleep(rule.delay)
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            if time.monotonic() - started > 30:
                raise AssertionError("a run took more than 30 s")
            time.sleep(0.001)
    finally:
        if not killed and proc.poll() is None and sys.exc_info()[0] is not None:
            proc.kill()
        code = proc.wait(timeout=30)
    if run_id is None:  # killed before it made its first snapshot
        found = live_snapshots(project)
        run_id = found[0].name[4:-5] if found else None
    after = watcher.run(run_id) if run_id else None
    watcher.read_all()
    return run_id, (None if killed and code == -signal.SIGKILL else code), after


def _unfinished(data: dict | None) -> bool:
    """Not every step is recorded yet. Kills after that point are `StatusRule`'s alone,
    so that the other scenarios never land in the last moments of a run by chance."""
    return data is None or len(data.get("steps") or []) < len(CRASH_PATHS)


class EntryRule:
    """Kill once the journal has grown by `grow` entries (then wait `delay`)."""

    time_based = False

    def __init__(self, grow: int, delay: float = 0.0) -> None:
        self.grow, self.delay = grow, delay

    def __call__(self, added: int, seconds: float, data: dict | None) -> bool:
        return added >= self.grow and _unfinished(data)


class TimeRule:
    """Kill `after` seconds after the process started, wherever it is (before the last step)."""

    time_based = True
    delay = 0.0

    def __init__(self, after: float) -> None:
        self.after = after

    def __call__(self, added: int, seconds: float, data: dict | None) -> bool:
        return seconds >= self.after and _unfinished(data)


class StatusRule:
    """Kill as soon as the live snapshot says the run is `status`: between the final save
    of a finished run and its move to history."""

    time_based = False
    delay = 0.0

    def __init__(self, status: str) -> None:
        self.status = status

    def __call__(self, added: int, seconds: float, data: dict | None) -> bool:
        return data is not None and data.get("status") == self.status


def _crash_scenario(tmp_path: Path, rules: list) -> dict:
    project = make_project(tmp_path / "project", {"crash": CRASH_PLAYBOOK})
    watcher = SnapshotWatcher(project)
    run_id = None
    kills = []  # (entries at kill, inFlight at kill)
    finished = False
    for cycle, rule in enumerate([*rules, None]):
        if run_id is not None and archived_path(project, run_id) is not None:
            finished = True
            break
        # Autonomous: its programs' writes are approved by the run itself (and recorded), so
        # a kill can also land between such an approval and the step.
        args = ["run", "crash", "--mode", "autonomous"] if run_id is None else ["resume", run_id]
        log = tmp_path / f"cycle-{cycle}"
        if rule is None:
            proc = spawn(project, *args, log=log)
            code = proc.wait(timeout=60)
            watcher.read_all()
            out, err = log.with_suffix(".out").read_text(), log.with_suffix(".err").read_text()
            assert code == 0, f"the final `catalyst {' '.join(args)}` exited {code}\n{out}\n{err}"
            if run_id is None:
                run_id = run_id_of(out)
            finished = True
            break
        run_id, code, after = _kill_cycle(project, args, run_id, rule, watcher, log)
        out, err = log.with_suffix(".out").read_text(), log.with_suffix(".err").read_text()
        assert "Traceback" not in err, f"`catalyst {' '.join(args)}` crashed by itself:\n{err}"
        if code is not None:
            # It finished before the kill landed: it must have finished well.
            assert code == 0, f"`catalyst {' '.join(args)}` exited {code}\n{out}\n{err}"
            run_id = run_id or run_id_of(out)
            finished = True
            break
        if after is not None:
            assert after.get("status") in ("running", "completed"), (
                f"a killed run's snapshot says {after.get('status')!r}"
            )
            kills.append((len(after.get("steps") or []), after.get("inFlight")))
        else:
            # Killed before its first snapshot (or after it was archived).
            kills.append((None, None))
        # A killed `bash` step's script lives on in its own session for a moment: let it end,
        # as it would after a real crash, before the resume runs the step again.
        time.sleep(0.12)
    assert finished
    assert not watcher.bad, "a run was read half-written or not verifying:\n" + "\n".join(watcher.bad)
    assert watcher.reads > 0

    assert not live_snapshots(project), f"live snapshots left behind: {[p.name for p in live_snapshots(project)]}"
    final = archived(project, run_id)
    assert final["status"] == "completed"
    assert final["inFlight"] is None
    journal = [entry["path"] for entry in final["steps"]]
    repeated = sorted({p for p in journal if journal.count(p) > 1})
    assert not repeated, f"steps recorded more than once: {repeated}"
    assert set(journal) == CRASH_PATHS, (
        f"missing {sorted(CRASH_PATHS - set(journal))}, unexpected {sorted(set(journal) - CRASH_PATHS)}"
    )
    assert all(entry["status"] == "completed" for entry in final["steps"])

    for name, content in CRASH_FILES.items():
        assert (project / name).read_text(encoding="utf-8") == content, name
    assert json.loads((project / "out/data.json").read_text()) == {"n": 3, "items": ["a", "b"]}
    assert json.loads((project / "out/summary.json").read_text()) == {"greeting": "hello", "done": True}

    lines = (project / "out/log.txt").read_text(encoding="utf-8").split()
    assert set(lines) == set(CRASH_LINES), f"log lines {lines}"
    for line, path in CRASH_LINES.items():
        in_flight_kills = sum(1 for _, flying in kills if flying == path)
        assert 1 <= lines.count(line) <= 1 + in_flight_kills, (
            f"{line} appears {lines.count(line)} times, "
            f"but its step {path} was in flight at {in_flight_kills} kill(s); kills: {kills}"
        )
    return {"kills": kills, "reads": watcher.reads}


def test_crash_after_every_journal_entry_then_resume(tmp_path):
    """SIGKILL right after each new journal entry, so every step boundary is a kill point."""
    result = _crash_scenario(tmp_path, [EntryRule(1) for _ in range(len(CRASH_PATHS) + 2)])
    points = {entries for entries, _ in result["kills"] if entries is not None}
    assert len(points) >= 10, f"only {len(points)} distinct kill points: {result['kills']}"


def test_crash_between_the_final_save_and_the_move_to_history_then_resume(tmp_path):
    """SIGKILL when the live snapshot already says completed but is not archived yet.

    The run did everything; `catalyst resume` must still bring it to its end: exit 0,
    archived in history as completed (not stuck among the live runs forever).
    """
    # The window is a few milliseconds, caught by looking at the snapshot: on a busy
    # machine most attempts miss it, so there are enough of them (the first that lands ends it).
    for attempt in range(12):
        result = _crash_scenario(tmp_path / f"attempt-{attempt}", [StatusRule("completed")])
        if result["kills"] == [(len(CRASH_PATHS), None)]:
            return  # the kill landed in the window, and the run was still brought to its end
    raise AssertionError(f"the kill never landed between the final save and the move to history: {result['kills']}")


def test_crash_at_random_moments_then_resume(tmp_path):
    """SIGKILL at seeded random moments: during start-up, inside steps, between saves."""
    rng = random.Random(20261121)
    rules = []
    for _ in range(6):
        rules.append(EntryRule(rng.choice([0, 1, 2]), delay=rng.uniform(0.0, 0.06)))
        rules.append(TimeRule(rng.uniform(0.05, 0.45)))  # start-up takes about 0.3 s
    result = _crash_scenario(tmp_path, rules)
    assert sum(1 for entries, _ in result["kills"] if entries is not None) >= 4, result["kills"]


def test_crash_inside_bash_steps_then_resume(tmp_path):
    """SIGKILL while a slow `bash` step is in flight: it runs again, its line at most twice."""
    result = _crash_scenario(tmp_path, [EntryRule(1, delay=0.025) for _ in range(len(CRASH_PATHS) + 2)])
    assert any(flying for _, flying in result["kills"]), f"no kill landed inside a step: {result['kills']}"


BRANCHES = """
name: branches
description: Four parallel branches of short programs, each leaving a mark, to be killed anywhere.
owner: Engineer
steps:
  - parallel:
      steps:
{branches}
  - bash: "echo end | tee -a $TMPDIR/marks.txt"
    writes: []
"""

# Each program sleeps a little, so that the run outlives several kills however fast a
# program step becomes (the test needs at least three kills to land mid-run).
BRANCH = """        - for-each: n
          in: [1, 2, 3, 4, 5, 6]
          steps:
            - bash: "sleep 0.3; echo {name}{{{{n}}}} | tee -a $TMPDIR/marks.txt"
              writes: []
"""


def _recorded_marks(data: dict | None) -> set[str]:
    """The marks of the programs the run has recorded as done (each prints its mark)."""
    steps = (data or {}).get("steps") or []
    return {
        str(entry["result"].get("stdout", "")).strip()
        for entry in steps
        if entry.get("action") == "bash" and isinstance(entry.get("result"), dict)
    }


@pytest.mark.slow
def test_kills_during_parallel_branches_never_look_like_edits_nor_run_a_done_step_twice(tmp_path):
    """SIGKILL at seeded random moments while parallel branches save from threads of their
    own, then `catalyst resume`: every resume accepts the run as it was left (a crash is never
    taken for a hand edit), and no program the run had recorded as done runs again."""
    side = _side(tmp_path)
    branches = "".join(BRANCH.format(name=name) for name in "abcd")
    project = make_project(tmp_path / "project", {"branches": BRANCHES.format(branches=branches)})
    rng = random.Random(20261202)
    run_id = None
    allowed: dict[str, int] = {}  # a mark may appear once more for each kill that left it ran but unrecorded
    kills = 0
    for cycle in range(12):
        args = ["run", "branches", "--mode", "autonomous"] if run_id is None else ["resume", run_id]
        log = tmp_path / f"cycle-{cycle}"
        proc = spawn(project, *args, log=log)
        time.sleep(rng.uniform(0.25, 0.9))
        proc.send_signal(signal.SIGKILL)
        code = proc.wait(timeout=30)
        out, err = log.with_suffix(".out").read_text(), log.with_suffix(".err").read_text()
        assert "cannot be trusted" not in out + err, f"`catalyst {' '.join(args)}` refused the run:\n{out}\n{err}"
        assert "Traceback" not in err, err
        if run_id is None:
            found = live_snapshots(project) + list((runs_dir(project) / "history").glob("*/*/*/run-*.json"))
            if not found:
                continue  # killed before its first save: it starts again
            run_id = found[0].name[4:-5]
        if code == 0 or archived_path(project, run_id) is not None:
            break
        kills += 1
        data, problems = folded(project, run_id)
        assert not problems, f"after kill {kills}: {problems}"
        recorded = _recorded_marks(data)
        ran = set((side / "marks.txt").read_text().split()) if (side / "marks.txt").exists() else set()
        for mark in ran - recorded:
            allowed[mark] = allowed.get(mark, 0) + 1
    if archived_path(project, run_id) is None:
        final = catalyst(project, "resume", run_id)
        assert final.returncode == 0, describe(final)
    assert kills >= 3, f"only {kills} kills landed before the run ended"
    done = archived(project, run_id)
    assert done["status"] == "completed"
    marks = (side / "marks.txt").read_text().split()
    expected = {f"{name}{n}" for name in "abcd" for n in range(1, 7)} | {"end"}
    assert set(marks) == expected and _recorded_marks(done) == expected
    for mark in expected:
        assert marks.count(mark) <= 1 + allowed.get(mark, 0), (
            f"{mark} ran {marks.count(mark)} times; it was run but not recorded at {allowed.get(mark, 0)} kill(s)"
        )


# -- 2. concurrent runs on the same paths ------------------------------------------------------------

WRITER = """
name: {name}
description: Waits, then writes {path}.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - bash: sleep 1
  - file-write: {path}
    content: from {name}
"""


def test_concurrent_runs_on_the_same_path_only_one_proceeds(tmp_path):
    names = ["writer-a", "writer-b", "writer-c"]
    project = make_project(tmp_path / "project", {n: WRITER.format(name=n, path="out/shared.txt") for n in names})
    procs = {n: spawn(project, "run", n, log=tmp_path / n) for n in names}
    codes = {n: p.wait(timeout=60) for n, p in procs.items()}
    outs = {n: (tmp_path / f"{n}.out").read_text() for n in names}
    errs = {n: (tmp_path / f"{n}.err").read_text() for n in names}
    report = "\n".join(f"{n}: exit {codes[n]}\n{outs[n]}{errs[n]}" for n in names)

    winners = [n for n in names if codes[n] == 0]
    assert len(winners) == 1, report
    assert sorted(codes.values()) == [0, 2, 2], report
    winner = winners[0]
    winner_id = run_id_of(outs[winner])
    assert (project / "out/shared.txt").read_text() == f"from {winner}"
    for loser in names:
        if loser == winner:
            continue
        assert "Traceback" not in errs[loser], errs[loser]
        assert winner_id in outs[loser] + errs[loser], f"{loser} does not name the lock owner {winner_id}:\n{report}"
        assert "✓" not in outs[loser], f"{loser} ran a step:\n{outs[loser]}"
        # A run refused by a lock never began: it leaves no run behind.
        assert not list((project / ".xe" / "runs").rglob(f"run-*-{loser}-*")), f"{loser} left a run behind"
    assert archived(project, winner_id)["status"] == "completed"
    assert lock_holders(project) == [], "locks left behind"


def resumed_together(project: Path, run_id: str, count: int, tmp_path: Path) -> tuple[list[int], str]:
    """`catalyst resume RUN` started COUNT times at once: their exit codes and all their output,
    which holds no traceback."""
    procs = [spawn(project, "resume", run_id, log=tmp_path / f"resume-{i}") for i in range(count)]
    codes = [p.wait(timeout=60) for p in procs]
    logs = "\n".join(
        (tmp_path / f"resume-{i}.out").read_text() + (tmp_path / f"resume-{i}.err").read_text() for i in range(count)
    )
    assert "Traceback" not in logs, logs
    return codes, logs


PAUSED_THEN_SLOW = """
name: paused-then-slow
description: A checkpoint, then a slow step that appends a line.
owner: Engineer
steps:
  - checkpoint: "go on?"
  - bash: "sleep 0.5; echo once >> {side}/resumed.txt"
    writes: []
"""


def test_concurrent_resumes_of_one_paused_run_only_one_proceeds(tmp_path):
    side = _side(tmp_path)
    project = make_project(tmp_path / "project", {"paused-then-slow": PAUSED_THEN_SLOW.format(side=side)})
    paused = catalyst(project, "run", "paused-then-slow")
    assert paused.returncode == 4, describe(paused)
    run_id = run_id_of(paused.stdout)
    assert catalyst(project, "approve", run_id, "--as", "Engineer").returncode == 0
    codes, logs = resumed_together(project, run_id, 3, tmp_path)
    assert codes.count(0) == 1, logs
    assert (side / "resumed.txt").read_text() == "once\n", logs
    assert archived(project, run_id)["status"] == "completed"


CRASHABLE = """
name: crashable
description: A step that marks its start, then takes a while.
owner: Engineer
steps:
  - bash: "echo started >> {side}/started.txt; sleep 1"
    writes: []
"""


def test_concurrent_resumes_of_one_crashed_run_only_one_proceeds(tmp_path):
    side = _side(tmp_path)
    project = make_project(tmp_path / "project", {"crashable": CRASHABLE.format(side=side)})
    proc = spawn(project, "run", "crashable", log=tmp_path / "first")
    deadline = time.monotonic() + 20
    while not (side / "started.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    [snapshot] = live_snapshots(project)
    run_id = snapshot.name[4:-5]
    codes, logs = resumed_together(project, run_id, 4, tmp_path)
    assert codes.count(0) == 1, logs
    assert (side / "started.txt").read_text() == "started\nstarted\n", logs  # the first run's, and one resume's


CHECKPOINTS_AROUND_A_STEP = """
name: around
description: A step between two checkpoints.
owner: Engineer
steps:
  - checkpoint: "first"
  - bash: "echo once >> {side}/ran.txt"
    writes: []
  - checkpoint: "second"
"""


def test_a_late_resume_never_runs_a_step_another_resume_ran(tmp_path):
    side = _side(tmp_path)
    project = make_project(tmp_path / "project", {"around": CHECKPOINTS_AROUND_A_STEP.format(side=side)})
    paused = catalyst(project, "run", "around")
    run_id = run_id_of(paused.stdout)
    assert catalyst(project, "approve", run_id, "--as", "Engineer").returncode == 0
    codes, logs = resumed_together(project, run_id, 6, tmp_path)
    assert set(codes) <= {3, 4}, logs  # one reached the second checkpoint; the others were refused or found it waiting
    assert (side / "ran.txt").read_text() == "once\n", logs


def test_concurrent_runs_on_disjoint_paths_both_succeed(tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "writer-a": WRITER.format(name="writer-a", path="out/a.txt"),
            "writer-b": WRITER.format(name="writer-b", path="out/b.txt"),
        },
    )
    procs = {n: spawn(project, "run", n, log=tmp_path / n) for n in ("writer-a", "writer-b")}
    codes = {n: p.wait(timeout=60) for n, p in procs.items()}
    report = "\n".join(
        f"{n}: exit {codes[n]}\n{(tmp_path / f'{n}.out').read_text()}{(tmp_path / f'{n}.err').read_text()}"
        for n in procs
    )
    assert codes == {"writer-a": 0, "writer-b": 0}, report
    assert (project / "out/a.txt").read_text() == "from writer-a"
    assert (project / "out/b.txt").read_text() == "from writer-b"
    a = archived(project, run_id_of((tmp_path / "writer-a.out").read_text()))
    b = archived(project, run_id_of((tmp_path / "writer-b.out").read_text()))
    # They really ran at the same time, not one after the other.
    assert a["startedAt"] < b["endedAt"] and b["startedAt"] < a["endedAt"], (
        a["startedAt"],
        a["endedAt"],
        b["startedAt"],
        b["endedAt"],
    )


# -- 3. corrupted snapshots and changed playbooks --------------------------------------------------

REVIEW = """
name: review
description: Writes a file, waits for review, writes another.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - file-write: out/before.txt
    content: before
  - checkpoint: "Review out/before.txt"
  - file-write: out/after.txt
    content: after
"""


def _paused_run(tmp_path: Path) -> tuple[Path, str]:
    project = make_project(tmp_path / "project", {"review": REVIEW})
    result = catalyst(project, "run", "review")
    assert result.returncode == 4, describe(result)
    run_id = run_id_of(result.stdout + result.stderr)
    assert live_path(project, run_id).exists()
    assert json.loads(live_path(project, run_id).read_text())["status"] == "paused"
    return project, run_id


def _truncated(text: str) -> str:
    cut = text[: len(text) // 2]
    return cut.rstrip().rstrip("}")


def _edit(change):
    def apply(text: str) -> str:
        data = json.loads(text)
        change(data)
        return json.dumps(data, indent=1)

    return apply


def _set_in(*keys_and_value):
    *keys, value = keys_and_value

    def change(data):
        target = data
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


def _repeat_first_entry(data):
    data["steps"].append(dict(data["steps"][0]))


def _repeat_first_path_later(data):
    again = dict(data["steps"][0])
    again["startedAt"] = "2030-01-01T00:00:00.000Z"
    data["steps"].append(again)


CORRUPTIONS = {
    # name: (how the text is damaged, what the message must say)
    "truncated": (_truncated, "truncated"),
    "not-json": (lambda text: "this is not JSON {", "not valid JSON"),
    "empty": (lambda text: "", "empty"),
    "number-for-string": (_edit(_set_in("playbook", "file", 42)), "$.playbook.file"),
    "unknown-key": (_edit(_set_in("surprise", True)), "surprise"),
    "status-banana": (_edit(_set_in("status", "banana")), "banana"),
    "repeated-journal-entry": (_edit(_repeat_first_entry), "steps/0"),
    "repeated-journal-path": (_edit(_repeat_first_path_later), "steps/0"),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_resume_refuses_a_corrupted_snapshot(tmp_path, corruption):
    project, run_id = _paused_run(tmp_path)
    approved = catalyst(project, "approve", run_id, "--as", "Engineer")
    assert approved.returncode == 0, describe(approved)
    snapshot = live_path(project, run_id)
    damage, expected = CORRUPTIONS[corruption]
    damaged = damage(snapshot.read_text(encoding="utf-8"))
    snapshot.write_text(damaged, encoding="utf-8")

    result = catalyst(project, "resume", run_id)
    no_traceback(result)
    assert result.returncode == 3, describe(result)
    assert f"run-{run_id}.json" in result.stderr, f"the message does not name the file:\n{result.stderr}"
    assert expected in result.stderr, f"the message does not say {expected!r}:\n{result.stderr}"
    assert "help:" in result.stderr, f"no recovery hint:\n{result.stderr}"
    assert not (project / "out/after.txt").exists(), "steps ran from a damaged snapshot"
    assert snapshot.read_text(encoding="utf-8") == damaged, "the damaged file was not kept as it was"


def test_resume_refuses_a_playbook_changed_in_a_completed_step(tmp_path):
    project, run_id = _paused_run(tmp_path)
    assert catalyst(project, "approve", run_id, "--as", "Engineer").returncode == 0
    write_playbook(project, "review", REVIEW.replace("content: before", "content: changed before"))

    result = catalyst(project, "resume", run_id)
    no_traceback(result)
    assert result.returncode == 3, describe(result)
    assert "changed" in result.stderr and "review.yaml" in result.stderr, result.stderr
    assert "help:" in result.stderr, result.stderr
    assert not (project / "out/after.txt").exists()
    assert (project / "out/before.txt").read_text() == "before"


def test_resume_accepts_a_change_after_the_pause_point(tmp_path):
    project, run_id = _paused_run(tmp_path)
    assert catalyst(project, "approve", run_id, "--as", "Engineer").returncode == 0
    write_playbook(project, "review", REVIEW.replace("content: after", "content: after, edited"))

    result = catalyst(project, "resume", run_id)
    no_traceback(result)
    assert result.returncode == 0, describe(result)
    assert (project / "out/after.txt").read_text() == "after, edited"
    assert archived(project, run_id)["status"] == "completed"


# -- 4. path escapes at run time ---------------------------------------------------------------------

NAMED_WRITE = """
name: named
description: Writes a file named by an input.
owner: Engineer
inputs:
  - string: name
{allowed}steps:
  - file-write: "out/{{{{name}}}}.txt"
    content: should never be written
"""

TARGET_WRITE = """
name: target
description: Writes the file an input names.
owner: Engineer
inputs:
  - string: target
{allowed}steps:
  - file-write: "{{{{target}}}}"
    content: should never be written
"""

REFUSAL = re.compile(r"refused|outside the project|PermissionDenied|cannot write", re.IGNORECASE)


@pytest.mark.parametrize("allowed", [True, False], ids=["allowedWritePaths", "no-allowedWritePaths"])
@pytest.mark.parametrize("escape", ["dotdot", "absolute", "symlink"])
def test_writes_escaping_the_project_are_refused(tmp_path, escape, allowed):
    outside = tmp_path / "outside"
    outside.mkdir()
    grant = "allowedWritePaths: [out/**]\n" if allowed else ""
    project = make_project(
        tmp_path / "project",
        {
            "named": NAMED_WRITE.format(allowed=grant),
            "target": TARGET_WRITE.format(allowed=grant),
        },
    )
    if escape == "dotdot":
        args = ["run", "named", "-i", "name=../../outside/escape"]
    elif escape == "absolute":
        args = ["run", "target", "-i", f"target={outside / 'absolute.txt'}"]
    else:
        (project / "out").mkdir()
        (project / "out" / "link").symlink_to(outside, target_is_directory=True)
        args = ["run", "named", "-i", "name=link/x"]

    result = catalyst(project, *args)
    no_traceback(result)
    assert result.returncode == 2, describe(result)
    assert REFUSAL.search(result.stdout + result.stderr), f"the refusal is not explained:\n{describe(result)}"
    assert list(outside.iterdir()) == [], f"written outside the project: {list(outside.iterdir())}"
    assert not (tmp_path / "escape.txt").exists()
    assert not live_snapshots(project), "the refused run was left unfinished"
    written = [
        p
        for p in project.rglob("*")
        if p.is_file() and ".xe" not in p.parts and p.parent.name != "playbooks" and p.name != "catalyst.toml"
    ]
    assert written == [], f"files written for a refused step: {written}"


# -- 5. secrets ------------------------------------------------------------------------------------

SECRETS = """
name: secrets
description: Uses a secret every way a playbook can.
owner: Engineer
inputs:
  - string: api-token
    secret: true
  - boolean: fail
    default: false
outputs:
  token: string
  copy: string
steps:
  - display: "the token is {{api-token}}"
  - bash: |
      echo "stdout token={{api-token}}"
      echo "stderr token={{api-token}}" >&2
  - var: copy
    value: "copy-{{api-token}}"
  - display: "the copy is {{copy}}"
  - name: broken
    bash: |
      echo "failing with {{api-token}}" >&2
      exit 3
    errorPolicy: {default: {action: Continue}}
  - display: "broken said {{broken.stderr}}"
  - throw: LeakedError
    message: "this error holds {{api-token}}"
    condition: "{{fail}}"
  - return:
      token: "{{api-token}}"
      copy: "{{copy}}"
"""

SECRET_PAUSE = """
name: secret-pause
description: Pauses between two uses of a secret.
owner: Engineer
inputs:
  - string: api-token
    secret: true
steps:
  - display: "before {{api-token}}"
  - checkpoint: "Go on?"
  - bash: echo "after {{api-token}}"
"""


def _assert_nowhere(project: Path, texts: list[str]) -> None:
    leaks = [
        str(p.relative_to(project)) for p in project.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()
    ]
    assert leaks == [], f"the secret was written to {leaks}"
    for text in texts:
        assert SECRET not in text, f"the secret was printed:\n{text}"


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize("source", ["input", "env"])
def test_secret_never_appears_in_files_or_output(tmp_path, source, log_format):
    project = make_project(tmp_path / "project", {"secrets": SECRETS})
    given = ["-i", f"api-token={SECRET}"] if source == "input" else []
    env = _env(CATALYST_SECRET_API_TOKEN=SECRET) if source == "env" else _env()
    format_args = ["--log-format", log_format]

    ok = catalyst(project, "run", "secrets", *given, *format_args, env=env)
    assert ok.returncode == 0, describe(ok)
    failed = catalyst(project, "run", "secrets", *given, "-i", "fail=true", *format_args, env=env)
    assert failed.returncode == 2, describe(failed)

    # The secret was really used (masked), so the test looks where it would have leaked.
    assert "the token is ***" in ok.stdout
    assert "LeakedError" in failed.stdout + failed.stderr
    done = archived(project, run_id_of(ok.stdout))
    assert done["outputs"] == {"token": "***", "copy": "copy-***"}
    if log_format == "json":
        for line in ok.stdout.splitlines():
            json.loads(line)
    _assert_nowhere(project, [ok.stdout, ok.stderr, failed.stdout, failed.stderr])


def test_resume_needs_the_secret_again(tmp_path):
    project = make_project(tmp_path / "project", {"secret-pause": SECRET_PAUSE})
    paused = catalyst(project, "run", "secret-pause", "-i", f"api-token={SECRET}")
    assert paused.returncode == 4, describe(paused)
    run_id = run_id_of(paused.stdout)
    approved = catalyst(project, "approve", run_id, "--as", "Engineer")
    assert approved.returncode == 0, describe(approved)

    without = catalyst(project, "resume", run_id)
    no_traceback(without)
    assert without.returncode == 1, describe(without)
    assert "api-token" in without.stderr and "CATALYST_SECRET_API_TOKEN" in without.stderr, without.stderr
    assert json.loads(live_path(project, run_id).read_text())["status"] == "paused"

    resumed = catalyst(project, "resume", run_id, env=_env(CATALYST_SECRET_API_TOKEN=SECRET))
    assert resumed.returncode == 0, describe(resumed)
    assert "after ***" in resumed.stdout
    assert archived(project, run_id)["status"] == "completed"
    _assert_nowhere(
        project,
        [paused.stdout, paused.stderr, approved.stdout, without.stdout, without.stderr, resumed.stdout, resumed.stderr],
    )


# -- 6. Ctrl-C and SIGTERM ------------------------------------------------------------------------

SLOW = """
name: slow
description: A slow step between two writes.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - file-write: out/first.txt
    content: first
  - bash: |
      echo started >> out/started.txt
      test -f out/fast || sleep 20
      echo done > out/slow.txt
    writes: [out/started.txt, out/slow.txt]
  - file-write: out/last.txt
    content: last
"""

SAME_PATHS = """
name: same-paths
description: Writes what the slow playbook writes.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - file-write: out/slow.txt
    content: other
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_saves_state_releases_locks_and_resumes(tmp_path, signum):
    project = make_project(tmp_path / "project", {"slow": SLOW, "same-paths": SAME_PATHS})
    proc = spawn(project, "run", "slow", "--mode", "autonomous", log=tmp_path / "slow")
    deadline = time.monotonic() + 20
    snapshot = None
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            found = live_snapshots(project)
            if found and (project / "out/started.txt").exists():
                data, _ = folded(project, found[0].name[4:-5])
                if data and data.get("inFlight") == "steps/1":
                    snapshot = found[0]
                    break
            time.sleep(0.02)
        assert snapshot is not None, "the slow step never started"
        time.sleep(0.2)
        proc.send_signal(signum)
        code = proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out, err = (tmp_path / "slow.out").read_text(), (tmp_path / "slow.err").read_text()
    assert code == 130, f"exit {code}\n{out}\n{err}"
    assert "Traceback" not in err, err
    run_id = snapshot.name[4:-5]

    state, problems = folded(project, run_id)
    assert state is not None and not problems, problems
    assert state["status"] == "running"
    assert state["inFlight"] == "steps/1"
    # Its process is gone: shown as interrupted, not as running.
    listed = catalyst(project, "runs", "list")
    assert f"{run_id}  interrupted" in listed.stdout, describe(listed)
    assert "is interrupted" in catalyst(project, "runs", "show", run_id).stdout
    assert [e["path"] for e in state["steps"]] == ["steps/0"]
    assert run_id not in lock_holders(project), "the interrupted run kept its locks"
    time.sleep(0.3)
    assert not (project / "out/slow.txt").exists(), "the interrupted step's program went on running"

    other = catalyst(project, "run", "same-paths")
    assert other.returncode == 0, describe(other)
    assert (project / "out/slow.txt").read_text() == "other"

    (project / "out/fast").write_text("", encoding="utf-8")
    resumed = catalyst(project, "resume", run_id)
    assert resumed.returncode == 0, describe(resumed)
    final = archived(project, run_id)
    assert final["status"] == "completed"
    assert sorted(e["path"] for e in final["steps"]) == ["steps/0", "steps/1", "steps/2"]
    assert (project / "out/slow.txt").read_text() == "done\n"
    assert (project / "out/last.txt").read_text() == "last"
    assert (project / "out/first.txt").read_text() == "first"
    assert lock_holders(project) == []


# -- a reader that leaves ---------------------------------------------------------------------


def test_a_closed_output_never_fails_the_run(tmp_path):
    """`catalyst run … | head -1`: the reader goes after the first line; the run goes on to
    its end, its state says completed, and no error is printed about the state."""
    project = make_project(
        tmp_path / "project",
        {
            "chatty": """
        name: chatty
        description: says a lot, slowly
        owner: Engineer
        steps:
          - log-info: "one"
          - bash: sleep 0.3
            writes: []
          - log-info: "two"
          - log-info: "three"
        """
        },
    )
    run = subprocess.Popen(
        [*CATALYST, "run", "chatty", "--mode", "autonomous"],
        cwd=project,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert run.stdout.readline().startswith(b"running chatty")
    run.stdout.close()  # what `head -1` does once it has its line
    _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err.decode()
    assert b"Broken pipe" not in err and b"state" not in err
    listed = catalyst(project, "runs", "list")
    assert " completed " in listed.stdout, listed.stdout


def test_a_listing_cut_short_by_its_reader_is_not_a_state_error(tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "quiet": """
        name: quiet
        description: does nothing
        owner: Engineer
        steps:
          - log-info: "x"
        """
        },
    )
    for _ in range(3):
        assert catalyst(project, "run", "quiet", "--mode", "autonomous").returncode == 0
    listing = subprocess.Popen(
        [*CATALYST, "runs", "list"],
        cwd=project,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    listing.stdout.close()
    _, err = listing.communicate(timeout=60)
    assert b"cannot be read or written" not in err and b"Traceback" not in err, err.decode()


def test_mistakes_on_the_command_line_exit_2_and_a_missing_run_exits_1(tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "quiet": """
        name: quiet
        description: does nothing
        owner: Engineer
        steps:
          - log-info: "x"
        """
        },
    )
    for wrong in ("who", "=x"):
        given = catalyst(project, "run", "quiet", "-i", wrong)
        assert given.returncode == 2 and "-i" in given.stderr, given.stderr
    assert catalyst(project, "runs", "show", "nosuch").returncode == 1
    assert catalyst(project, "resume", "20260101-000000-quiet-001").returncode == 1


def test_an_input_that_is_not_utf8_is_a_usage_mistake_not_a_failed_step(tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "greet": """
        name: greet
        description: greets
        owner: Engineer
        inputs:
          - name: who
            type: string
        steps:
          - log-info: "hi {{who}}"
        """
        },
    )
    result = subprocess.run(
        [*CATALYST, "run", "greet", "-i", b"who=\xff".decode("utf-8", "surrogateescape"), "--mode", "autonomous"],
        cwd=project,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "not UTF-8" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (project / ".xe" / "runs").exists()
