"""Locks between runs: all or nothing, owners named, overlapping globs, stale locks, races."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import catalyst_dsl
from catalyst_dsl.runtime.state.locks import DamagedLock, LockConflict, LockManager
from catalyst_dsl.runtime.state.store import Pause, PlaybookRef, StateStore, new_run_state

REPO = Path(catalyst_dsl.__file__).resolve().parents[1]


@pytest.fixture
def locks(tmp_path):
    return LockManager(tmp_path / "runs" / "locks")


def dead_pid():
    """The id of a process that has exited (and been waited for)."""
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def plant(locks, resource, run_id, pid, host=None):
    """A lock file as another process would have left it."""
    locks.locks_dir.mkdir(parents=True, exist_ok=True)
    body = {
        "resource": resource,
        "runId": run_id,
        "pid": pid,
        "host": host or socket.gethostname(),
        "since": "2026-01-01T00:00:00.000Z",
    }
    locks.path_for(resource).write_text(json.dumps(body))


def owners(locks):
    return sorted((info.resource, info.run_id) for info in locks.held())


def test_acquire_and_release(locks):
    locks.acquire("run-a", ["path:src/**", "branch:feature/x"])
    assert owners(locks) == [("branch:feature/x", "run-a"), ("path:src/**", "run-a")]
    data = json.loads(locks.path_for("branch:feature/x").read_text())
    assert data.keys() == {"resource", "runId", "pid", "host", "since"}
    assert data["pid"] == os.getpid()
    locks.release("run-a")
    assert locks.held() == []


def test_acquire_again_is_a_no_op(locks):
    locks.acquire("run-a", ["branch:main"])
    locks.acquire("run-a", ["branch:main", "branch:dev"])
    assert owners(locks) == [("branch:dev", "run-a"), ("branch:main", "run-a")]


def test_conflict_names_the_owner(locks):
    locks.acquire("run-a", ["branch:main"])
    with pytest.raises(LockConflict) as caught:
        locks.acquire("run-b", ["branch:main"])
    conflict = caught.value
    assert conflict.resource == "branch:main"
    assert (conflict.owner.run_id, conflict.owner.pid, conflict.owner.host) == (
        "run-a",
        os.getpid(),
        socket.gethostname(),
    )
    assert conflict.owner.since
    assert "run run-a" in str(conflict) and str(os.getpid()) in str(conflict)


def test_all_or_nothing(locks):
    locks.acquire("run-a", ["branch:main"])
    with pytest.raises(LockConflict):
        locks.acquire("run-b", ["path:docs/**", "branch:dev", "branch:main"])
    assert owners(locks) == [("branch:main", "run-a")]


def test_release_leaves_other_runs_locks(locks):
    locks.acquire("run-a", ["branch:main"])
    locks.acquire("run-b", ["branch:dev"])
    locks.release("run-b", ["branch:main", "branch:dev"])
    assert owners(locks) == [("branch:main", "run-a")]


@pytest.mark.parametrize(
    "held, wanted",
    [
        ("path:src/**", "path:src/app/*.py"),
        ("path:src/*/x.py", "path:src/**"),
        ("path:docs/*.md", "path:docs/README.md"),
        ("path:src/**", "path:./src//**"),  # the same glob written differently
    ],
)
def test_overlapping_globs_conflict(locks, held, wanted):
    locks.acquire("run-a", [held])
    with pytest.raises(LockConflict) as caught:
        locks.acquire("run-b", [wanted])
    assert caught.value.owner.run_id == "run-a"
    assert caught.value.owner.resource == held
    assert owners(locks) == [(held, "run-a")]


def test_overlap_conflict_shows_a_path_both_match(locks):
    locks.acquire("run-a", ["path:src/**"])
    with pytest.raises(LockConflict) as caught:
        locks.acquire("run-b", ["path:src/*/*.py"])
    assert caught.value.example and caught.value.example.startswith("src/")
    assert caught.value.example in str(caught.value)


@pytest.mark.parametrize(
    "held, wanted",
    [
        ("path:src/**", "path:docs/**"),
        ("path:src/*.py", "path:src/*.md"),
        ("path:src/a/*", "path:src/b/**"),
        ("branch:main", "branch:dev"),
        ("branch:src", "path:src"),
    ],
)
def test_disjoint_resources_do_not_conflict(locks, held, wanted):
    locks.acquire("run-a", [held])
    locks.acquire("run-b", [wanted])
    assert len(locks.held()) == 2


def test_bad_resource_takes_nothing(locks):
    with pytest.raises(ValueError):
        locks.acquire("run-a", ["branch:main", "src/**"])
    with pytest.raises(ValueError):
        locks.acquire("run-a", ["branch:main", "path:../outside"])
    assert locks.held() == []


def test_lock_of_a_dead_process_is_recovered(locks):
    plant(locks, "branch:main", "run-old", dead_pid())
    locks.acquire("run-b", ["branch:main"])
    assert owners(locks) == [("branch:main", "run-b")]
    assert not [p for p in locks.locks_dir.iterdir() if p.name.endswith((".tomb", ".tmp"))]  # no tombstone left


def test_overlapping_lock_of_a_dead_process_is_recovered(locks):
    plant(locks, "path:src/**", "run-old", dead_pid())
    locks.acquire("run-b", ["path:src/app/**"])
    assert owners(locks) == [("path:src/app/**", "run-b")]


def test_lock_of_a_finished_run_is_stale_even_if_its_pid_lives(tmp_path):
    store = StateStore(tmp_path / "runs")
    state = store.create(new_run_state(PlaybookRef(name="done", file="done.yaml", fingerprint="x")))
    state.status, state.ended_at = "completed", state.started_at
    store.archive(state)
    locks = LockManager(store.locks_dir)
    plant(locks, "branch:main", state.run_id, os.getpid())  # a reused pid: alive, but not that run
    locks.acquire("run-b", ["branch:main"])
    assert owners(locks) == [("branch:main", "run-b")]


def test_paused_run_keeps_its_locks_without_a_process(tmp_path):
    store = StateStore(tmp_path / "runs")
    state = store.create(new_run_state(PlaybookRef(name="wait", file="wait.yaml", fingerprint="x")))
    state.status = "paused"
    state.pause = Pause(path="steps/0", message="review", roles=[], options=[], since=state.started_at)
    store.save(state)
    locks = LockManager(store.locks_dir)
    plant(locks, "branch:main", state.run_id, dead_pid())
    with pytest.raises(LockConflict):
        locks.acquire("run-b", ["branch:main"])


def test_resumed_run_takes_its_locks_back_under_its_new_pid(locks):
    plant(locks, "branch:main", "run-a", dead_pid())
    locks.acquire("run-a", ["branch:main"])
    assert json.loads(locks.path_for("branch:main").read_text())["pid"] == os.getpid()


def test_lock_on_another_host_is_not_judged_by_pid(locks):
    plant(locks, "branch:main", "run-old", dead_pid(), host="some-other-host")
    with pytest.raises(LockConflict):
        locks.acquire("run-b", ["branch:main"])


def test_damaged_lock_file_blocks_and_is_named(locks):
    locks.locks_dir.mkdir(parents=True)
    locks.path_for("branch:main").write_text("{not json")
    with pytest.raises(DamagedLock) as caught:
        locks.acquire("run-b", ["branch:main"])
    assert locks.path_for("branch:main").name in str(caught.value)


def test_without_os_locks_the_files_still_exclude(locks, monkeypatch):
    fcntl = pytest.importorskip("fcntl")

    def unsupported(fd, operation):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(fcntl, "flock", unsupported)
    locks.acquire("run-a", ["path:src/**"])
    with pytest.raises(LockConflict):
        locks.acquire("run-b", ["path:src/a.py"])
    locks.release("run-a")
    locks.acquire("run-b", ["path:src/a.py"])


def test_conflicts_reports_without_taking(locks):
    locks.acquire("run-a", ["path:src/**"])
    plant(locks, "branch:main", "run-old", dead_pid())
    found = locks.conflicts("run-b", ["path:src/x.py", "branch:main", "branch:dev"])
    assert [(f.resource, f.run_id) for f in found] == [("path:src/**", "run-a")]
    assert owners(locks) == [("branch:main", "run-old"), ("path:src/**", "run-a")]  # stale one left alone


# -- races between processes -------------------------------------------------------------------


RACER = """
import sys, time
from pathlib import Path
from catalyst_dsl.runtime.state.locks import LockManager, LockConflict
locks_dir, go, run_id, *resources = sys.argv[1:]
manager = LockManager(Path(locks_dir))
while not Path(go).exists():
    time.sleep(0.0005)
try:
    manager.acquire(run_id, resources)
    print("won", flush=True)
except LockConflict:
    print("lost", flush=True)
sys.stdin.read()  # the winner holds on (alive) until every racer has answered
"""


def race(tmp_path, resources_of):
    locks_dir, go = tmp_path / "runs" / "locks", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(locks_dir), str(go), f"run-{i}", *resources_of(i)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(8)
    ]
    try:
        go.touch()
        results = [racer.stdout.readline().strip() for racer in racers]
    finally:
        for racer in racers:
            racer.stdin.close()
            racer.wait(timeout=60)
    assert set(results) <= {"won", "lost"}, results
    return results, LockManager(locks_dir)


def test_race_for_one_resource_has_exactly_one_winner(tmp_path):
    results, locks = race(tmp_path, lambda i: ["branch:main"])
    assert results.count("won") == 1
    assert owners(locks) == [("branch:main", f"run-{results.index('won')}")]


def test_race_for_overlapping_resources_has_exactly_one_winner(tmp_path):
    # Exactly one thanks to the guard; the lock files alone promise at most one.
    globs = ["src/**", "src/a/**", "src/*/x.py", "src/a/x.py", "**/x.py", "src/a/*", "*/a/x.py", "src/**/*.py"]
    results, locks = race(tmp_path, lambda i: [f"path:{globs[i]}"])
    assert results.count("won") == 1
    assert owners(locks) == [(f"path:{globs[results.index('won')]}", f"run-{results.index('won')}")]


def test_race_to_recover_a_stale_lock_has_exactly_one_winner(tmp_path):
    plant(LockManager(tmp_path / "runs" / "locks"), "branch:main", "run-old", dead_pid())
    results, locks = race(tmp_path, lambda i: ["branch:main"])
    assert results.count("won") == 1
    assert owners(locks) == [("branch:main", f"run-{results.index('won')}")]
