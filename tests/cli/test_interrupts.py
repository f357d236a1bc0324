"""A person stopping a run (Ctrl-C, Ctrl-D at a prompt, SIGTERM) gets exit 130 and a run
that `catalyst resume` continues, wherever the run was: at an approval prompt on a
terminal, or still taking its locks (docs/running.md, exit codes)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

GATE = """\
name: gate
description: asks a person before going on
owner: Engineer
steps:
  - display: before
  - checkpoint: "Go on?"
  - display: after
"""

CHOICE = """\
name: choice
description: asks a person to choose
owner: Engineer
steps:
  - checkpoint: "Which one?"
    options:
      - key: small
      - key: large
"""

WRITER = """\
name: writer
description: writes one file, so its run takes a lock
owner: Engineer
steps:
  - file-write: out.txt
    content: hi
"""


def _project(root: Path) -> Path:
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    for name, text in (("gate", GATE), ("choice", CHOICE), ("writer", WRITER)):
        (root / "playbooks" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return root


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALYST_")}
    return {**env, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _catalyst(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", *args],
        cwd=project,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _read_until(fd: int, marker: bytes, seconds: float = 30) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the other end closed
                break
    return seen


def _only_run(project: Path) -> str:
    (snapshot,) = (project / ".xe" / "runs").glob("run-*.json")
    return json.loads(snapshot.read_text(encoding="utf-8"))["runId"]


@pytest.mark.parametrize(
    ("playbook", "prompt", "stop"),
    [
        ("gate", b"press ENTER", "ctrl-d"),
        ("gate", b"press ENTER", "ctrl-c"),
        ("choice", b"choose", "ctrl-d"),
    ],
)
def test_stopping_at_an_approval_prompt_interrupts_the_run(tmp_path: Path, playbook: str, prompt: bytes, stop: str):
    project = _project(tmp_path / "project")
    terminal, its_end = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "run", playbook],
        cwd=project,
        env=_env(),
        stdin=its_end,
        stdout=its_end,
        stderr=its_end,
        # As a terminal starts it: Ctrl-C's default action even under a background job.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(its_end)
    try:
        shown = _read_until(terminal, prompt)
        assert prompt in shown, shown.decode(errors="replace")
        if stop == "ctrl-d":
            os.write(terminal, b"\x04")  # the terminal's end of input
        else:
            process.send_signal(signal.SIGINT)  # what the terminal sends for Ctrl-C
        # The terminal is read while the run stops: a terminal nobody reads fills up, and a
        # process writing to it then waits for ever.
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            shown += _read_until(terminal, b"\x00", seconds=0.2)
        code = process.wait(timeout=5)
        shown += _read_until(terminal, b"\x00", seconds=0.5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(terminal)
    said = shown.decode(errors="replace")
    assert code == 130, said
    assert "internal error" not in said and "Traceback" not in said and "Aborted" not in said, said
    run_id = _only_run(project)
    assert f"resume with: catalyst resume {run_id}" in said
    listed = _catalyst(project, "runs", "list")
    assert f"{run_id}  interrupted" in listed.stdout, listed.stdout
    # Resumable: it comes back to the same checkpoint (no terminal now: paused, exit 4).
    resumed = _catalyst(project, "resume", run_id)
    assert resumed.returncode == 4, resumed.stdout + resumed.stderr
    assert "paused at" in resumed.stdout


def test_sigterm_while_the_run_takes_its_locks_exits_130_and_the_run_resumes(tmp_path: Path):
    project = _project(tmp_path / "project")
    locks = project / ".xe" / "runs" / "locks"
    locks.mkdir(parents=True)
    # Holding the lock directory's guard keeps the run waiting in the middle of taking its
    # locks: created, not yet running its steps (before, SIGTERM there said "Aborted!", 1).
    guard = os.open(locks / ".guard", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(guard, fcntl.LOCK_EX)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "catalyst_dsl", "run", "writer"],
            cwd=project,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not list((project / ".xe" / "runs").glob("run-*.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        os.close(guard)
    assert process.returncode == 130, out + err
    assert "Aborted" not in err and "Traceback" not in err, err
    assert "interrupted" in err and "`catalyst resume RUN` continues it" in err
    run_id = _only_run(project)
    assert f"{run_id}  interrupted" in _catalyst(project, "runs", "list").stdout
    resumed = _catalyst(project, "resume", run_id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (project / "out.txt").read_text(encoding="utf-8") == "hi"
