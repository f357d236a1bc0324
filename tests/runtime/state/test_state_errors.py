"""A snapshot that cannot be written: the error says why (by errno) and what to do, the
last good snapshot stays on disk, and the run resumes from it once the cause is gone."""

from __future__ import annotations

import errno
import json
import os
import re

import pytest

from catalyst_dsl.runtime.state import durable
from catalyst_dsl.runtime.errors import EXIT_STATE
from catalyst_dsl.runtime.state.errors import state_abort

STEPS = """
    name: five-steps
    description: five logged steps, one snapshot save after each
    owner: Engineer
    steps:
      - log-info: "one"
      - log-info: "two"
      - log-info: "three"
      - log-info: "four"
      - log-info: "five"
"""


class FailingDisk:
    """`durable._write_new` that fails with `code` at the `nth` snapshot write (1-based),
    keeping the bytes of every snapshot written before it."""

    def __init__(self, monkeypatch, code: int, nth: int) -> None:
        self.code, self.nth = code, nth
        self.written: list[bytes] = []
        real = durable._write_new

        def write(path, data, mode, *more, **options):
            if path.name.startswith(".run-") and ".json." in path.name:
                if len(self.written) + 1 == self.nth:
                    raise OSError(self.code, os.strerror(self.code), str(path))
                real(path, data, mode, *more, **options)
                self.written.append(data)
                return
            real(path, data, mode, *more, **options)

        monkeypatch.setattr(durable, "_write_new", write)
        self.free = lambda: monkeypatch.setattr(durable, "_write_new", real)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_keeps_the_last_good_snapshot_and_the_run_resumes_from_it(project, monkeypatch, code):
    project.playbook("five-steps", STEPS)
    disk = FailingDisk(monkeypatch, code, nth=4)
    result = project.run("five-steps")
    assert result.exit_code == EXIT_STATE, result.output
    [live] = project.live_snapshots()
    run_id = live.name[len("run-") : -len(".json")]
    # The snapshot on disk is byte for byte the last one written whole before the failure.
    assert live.read_bytes() == disk.written[-1]
    assert "Traceback" not in result.output
    said = result.output
    assert f"the run state cannot be written: .xe/runs/run-{run_id}.json: " in said
    assert ("the disk is full" if code == errno.ENOSPC else "the disk quota is used up") in said
    assert "::" not in said and "permission" not in said
    assert re.search(r"; the snapshot needed \d+(\.\d)? (bytes|KiB)\n", said), said
    assert f"the last good snapshot is kept at .xe/runs/run-{run_id}.json" in said
    assert f"free space on that disk, then `catalyst resume {run_id}`" in said
    kept = json.loads(live.read_text(encoding="utf-8"))
    assert kept["status"] == "running" and len(kept["steps"]) < 5

    disk.free()  # space freed (only the disk: the test's run key stays where the suite keeps it)
    project.monkeypatch.chdir(project.root)
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    final = project.snapshot(run_id)
    assert final["status"] == "completed"
    assert [s["status"] for s in final["steps"]] == ["completed"] * 5


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
        assert "the last good snapshot is kept at .xe/runs/run-r-1.json" in abort.help


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
