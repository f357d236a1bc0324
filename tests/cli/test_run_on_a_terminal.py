"""`catalyst run` on a real terminal (a pseudo-terminal): the live status line of a silent
step, drawn in place and cleared before the next line, held back while a person is asked;
colour unless NO_COLOR; neither status line nor colour in a pipe."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

SLOW = """\
name: slow
description: a silent step that takes a while, then a question
owner: Engineer
steps:
  - name: quick
    bash: "echo hello"
    writes: []
  - name: wait
    bash: "sleep 2.5"
    writes: []
  - checkpoint: "Go on?"
  - display: after
"""

pytestmark = pytest.mark.slow  # a step sleeps long enough for the status line to show


def _project(root: Path) -> Path:
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    (root / "playbooks" / "slow.yaml").write_text(SLOW, encoding="utf-8")
    return root


def _env(**extra: str) -> dict[str, str]:
    skipped = ("CATALYST_", "CI", "NO_COLOR", "FORCE_COLOR", "GITHUB_ACTIONS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    return {**env, "PYTHONPATH": str(ROOT), "TERM": "xterm", "PYTHONDONTWRITEBYTECODE": "1", **extra}


def _read(fd: int, until: bytes | None, seconds: float) -> bytes:
    seen, deadline = b"", time.monotonic() + seconds
    while (until is None or until not in seen) and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def _run_on_a_terminal(project: Path, **env: str) -> tuple[str, str, int]:
    """The run's output up to its question, what it wrote while the question waited, and
    (after ENTER) the rest; its exit code."""
    terminal, its_end = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "run", "slow"],
        cwd=project,
        env=_env(**env),
        stdin=its_end,
        stdout=its_end,
        stderr=its_end,
    )
    os.close(its_end)
    try:
        before = _read(terminal, b"press ENTER to approve: ", 60)
        waiting = _read(terminal, None, 1.6)  # longer than the status line's second of silence
        os.write(terminal, b"\n")
        after = _read(terminal, b"completed in", 30)
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(terminal)
    return (before + b"\x00" + waiting).decode(errors="replace"), after.decode(errors="replace"), code


def test_a_silent_step_shows_what_runs_and_for_how_long(tmp_path: Path) -> None:
    before, after, code = _run_on_a_terminal(_project(tmp_path / "p"))
    assert code == 0, before + after
    assert "running wait (bash) · 1s" in before
    assert "running quick" not in before  # a step that ends within the second never shows one
    # Each draw starts by erasing the line; the step's own line comes after the last erase.
    assert "\r\x1b[2K\x1b[32m✓\x1b[0m wait (bash)" in before
    asked, waited = before.split("\x00")
    assert asked.endswith("press ENTER to approve: ")
    assert waited == ""  # nothing drawn over the question while it waits
    assert "\x1b[1m\x1b[32mcompleted\x1b[0m in" in after


def test_no_color_keeps_the_status_line_without_colour(tmp_path: Path) -> None:
    before, after, code = _run_on_a_terminal(_project(tmp_path / "p"), NO_COLOR="1")
    assert code == 0
    assert "running wait (bash) · 1s" in before
    assert "\x1b[3" not in before + after and "\x1b[1m" not in before + after  # erase, but no colour


def test_a_pipe_gets_neither_status_line_nor_colour(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    done = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "run", "slow", "--mode", "autonomous"],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stdout and "\x1b" not in done.stdout
    assert "✓ wait (bash)" in done.stdout
    forced = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "run", "slow", "--mode", "autonomous"],
        cwd=project,
        env=_env(FORCE_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "\x1b[32m✓\x1b[0m wait (bash)" in forced.stdout
    assert "\r" not in forced.stdout and "running wait" not in forced.stdout


def test_ci_logs_never_get_a_status_line(tmp_path: Path) -> None:
    before, after, code = _run_on_a_terminal(_project(tmp_path / "p"), CI="true")
    assert code == 0
    assert "running wait" not in before and "\x1b[2K" not in before
