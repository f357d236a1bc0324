"""A save that cannot be written: the error says why (by errno) and what to do, every save
before it stays on disk, the run resumes from them once the cause is gone, and a step is
shown done only when its record was saved."""

from __future__ import annotations

import errno
import os
import re

import pytest

from catalyst_dsl.runtime.state import durable
from catalyst_dsl.runtime.state.journal import files
from catalyst_dsl.runtime.state.store import StateStore
from catalyst_dsl.runtime.errors import EXIT_STATE
from catalyst_dsl.runtime.state.errors import state_abort

STEPS = """
    name: five-steps
    description: five logged steps, one save after each
    owner: Engineer
    steps:
      - log-info: "one"
      - log-info: "two"
      - log-info: "three"
      - log-info: "four"
      - log-info: "five"
"""


class FailingDisk:
    """Saves of runs that fail with `code` from the `nth` (1-based) on, until `free`: a
    journal record appended, or a snapshot written (`once`: only the nth)."""

    def __init__(self, monkeypatch, code: int, nth: int, once: bool = False) -> None:
        self.code, self.nth, self.once = code, nth, once
        self.saves = 0
        self.failed = False
        real_write, real_append = durable._write_new, files.append

        def write(path, data, mode, *more, **options):
            if str(getattr(path, "name", path)).startswith(".run-") and ".json." in str(path):
                self._save(path)
            real_write(path, data, mode, *more, **options)

        def append(fd, data, *more, **options):
            self._save(f"fd {fd}")
            real_append(fd, data, *more, **options)

        monkeypatch.setattr(durable, "_write_new", write)
        monkeypatch.setattr(files, "append", append)

        def free():
            monkeypatch.setattr(durable, "_write_new", real_write)
            monkeypatch.setattr(files, "append", real_append)

        self.free = free

    def _save(self, what) -> None:
        self.saves += 1
        if self.saves == self.nth or (self.saves > self.nth and not self.once):
            self.failed = True
            raise OSError(self.code, os.strerror(self.code), str(what))


def folded(project, run_id: str):
    """The run as a resume reads it: its snapshot with its journal's records."""
    return StateStore(project.state_dir).load(run_id)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_keeps_every_save_before_it_and_the_run_resumes_from_them(project, monkeypatch, code):
    project.playbook("five-steps", STEPS)
    disk = FailingDisk(monkeypatch, code, nth=4)
    result = project.run("five-steps")
    assert result.exit_code == EXIT_STATE, result.output
    [live] = project.live_snapshots()
    run_id = live.name[len("run-") : -len(".json")]
    assert "Traceback" not in result.output
    said = result.output
    assert f"the run state cannot be written: .xe/runs/run-{run_id}.journal: " in said
    assert ("the disk is full" if code == errno.ENOSPC else "the disk quota is used up") in said
    assert "::" not in said and "permission" not in said
    assert re.search(r"; the save needed \d+(\.\d)? (bytes|KiB)\n", said), said
    assert f"the last good save is kept in .xe/runs/run-{run_id}.json and .xe/runs/run-{run_id}.journal" in said
    assert f"free space on that disk, then `catalyst resume {run_id}`" in said
    disk.free()  # space freed (only the disk: the test's run key stays where the suite keeps it)
    kept = folded(project, run_id)
    assert kept.status == "running" and len(kept.steps) < 5
    assert said.count("✓") == len(kept.steps), said  # what the run showed done is what it recorded

    project.monkeypatch.chdir(project.root)
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    final = project.snapshot(run_id)
    assert final["status"] == "completed"
    assert [s["status"] for s in final["steps"]] == ["completed"] * 5


ONCE_EACH = """
    name: once-each
    description: four programs, each leaving a mark when it runs
    owner: Engineer
    steps:
      - name: one
        bash: echo one >> "$TMPDIR/ran.txt"
        writes: []
      - name: two
        bash: echo two >> "$TMPDIR/ran.txt"
        writes: []
      - name: three
        bash: echo three >> "$TMPDIR/ran.txt"
        writes: []
      - name: four
        bash: echo four >> "$TMPDIR/ran.txt"
        writes: []
"""


@pytest.mark.parametrize("nth", range(2, 11))
def test_a_step_shown_done_is_never_run_again_after_a_failed_save(project, monkeypatch, nth):
    # Whichever save the disk fails at, what the run showed done is what its resume does
    # not do again: a step shown done had its record saved first.
    project.playbook("once-each", ONCE_EACH)
    disk = FailingDisk(monkeypatch, errno.ENOSPC, nth=nth, once=True)
    first = project.run("once-each", "--mode", "autonomous")
    disk.free()
    if not disk.failed:
        assert first.exit_code == 0, first.output
        return
    assert first.exit_code == EXIT_STATE, first.output
    shown = {name for name in ("one", "two", "three", "four") if f"✓ {name} (bash)" in first.output}
    [live] = project.live_snapshots()
    resumed = project.cli("resume", live.name[len("run-") : -len(".json")])
    assert resumed.exit_code == 0, resumed.output
    ran = project.read_temp("ran.txt").split()
    for name in ("one", "two", "three", "four"):
        if name in shown:
            assert ran.count(name) == 1, f"{name} was shown done, then ran again: {ran}\n{first.output}"
        else:
            assert 1 <= ran.count(name) <= 2, ran


@pytest.mark.parametrize(
    "code, says, advice",
    [
        (errno.EACCES, "Permission denied", "check the permissions of the state directory"),
        (errno.EPERM, "Operation not permitted", "check the permissions of the state directory"),
        (errno.EROFS, "the file system is read-only", "remount it read-write"),
        (errno.EIO, "the disk reported an input/output error", "check the disk and its connection"),
        (errno.ENAMETOOLONG, "File name too long", "fix the cause, then `catalyst resume r-1`"),
    ],
)
def test_each_errno_gets_its_own_words_and_advice(code, says, advice):
    abort = state_abort(
        OSError(code, os.strerror(code), "/tmp/x/.run-r-1.json.abc.tmp"),
        path=".xe/runs/run-r-1.json",
        snapshot_bytes=2048,
        kept=".xe/runs/run-r-1.json",
        run_id="r-1",
    )
    assert abort.exit_code == EXIT_STATE
    assert abort.message.startswith("the run state cannot be ") and ": .xe/runs/run-r-1.json: " in abort.message
    assert says in abort.message and advice in abort.help
    assert ".tmp" not in abort.message and "disk is full" not in abort.message
    if code not in (errno.EACCES, errno.EPERM):
        assert "the last good save is kept in .xe/runs/run-r-1.json" in abort.help


def test_an_error_without_a_file_name_has_one_colon():
    abort = state_abort(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    assert abort.message == "the run state cannot be written: the disk is full (No space left on device)"
    assert abort.help == "free space on that disk, then `catalyst resume RUN`"


def test_the_size_needed_is_readable():
    message = lambda size: state_abort(OSError(errno.ENOSPC, "No space"), snapshot_bytes=size).message  # noqa: E731
    assert message(1).endswith("the snapshot needed 1 byte")
    assert message(900).endswith("the snapshot needed 900 bytes")
    assert message(3 * 1024 * 1024 + 200 * 1024).endswith("the snapshot needed 3.2 MiB")


def test_a_full_disk_when_a_run_starts_says_nothing_ran(project, monkeypatch):
    project.playbook("five-steps", STEPS)
    FailingDisk(monkeypatch, errno.ENOSPC, nth=1)
    result = project.run("five-steps")
    assert result.exit_code == EXIT_STATE, result.output
    assert (
        "error: the run state cannot be written: .xe/runs: the disk is full (No space left on device); "
        "the snapshot needed "
    ) in result.output
    assert "help: free space on that disk, then start the run again (nothing of it ran)" in result.output
    assert "[info] one" not in result.output and not project.snapshot_files()


def test_a_full_disk_met_after_a_step_stops_the_run_before_the_next_one(project, monkeypatch):
    # The room kept in reserve takes the save that met the full disk: the step it records is
    # shown done and never runs again; the run stops before the next step starts.
    project.playbook("once-each", ONCE_EACH)
    disk = FailingDisk(monkeypatch, errno.ENOSPC, nth=4, once=True)  # the save that records `one`
    first = project.run("once-each", "--mode", "autonomous")
    disk.free()
    assert first.exit_code == EXIT_STATE, first.output
    assert "✓ one (bash)" in first.output and "the disk is full" in first.output
    assert "used the room kept for it" in first.output
    assert project.read_temp("ran.txt").split() == ["one"]
    assert not (project.state_dir / "journal-reserve").exists()
    [live] = project.live_snapshots()
    resumed = project.cli("resume", live.name[len("run-") : -len(".json")])
    assert resumed.exit_code == 0, resumed.output
    assert project.read_temp("ran.txt").split() == ["one", "two", "three", "four"]
    assert (project.state_dir / "journal-reserve").exists()


def test_a_disk_too_full_for_the_reserve_runs_nothing(project, monkeypatch):
    from catalyst_dsl.runtime.state.journal import reserve

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(reserve, "_allocate", full)
    project.playbook("once-each", ONCE_EACH)
    result = project.run("once-each")
    assert result.exit_code == EXIT_STATE, result.output
    assert "the disk is full" in result.output and "start the run again (nothing of it ran)" in result.output
    assert not project.snapshot_files() and not (project.temp / "ran.txt").exists()
