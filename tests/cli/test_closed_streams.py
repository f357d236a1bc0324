"""Commands started with a standard stream closed (`0<&-`, `1>&-`): Python then has no
sys.stdin or sys.stdout at all, and catalyst must go on as it would without a terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import catalyst_dsl

CHECKOUT = Path(catalyst_dsl.__file__).resolve().parents[1]

PAUSING = """\
name: pausing
description: A playbook that stops at a checkpoint
owner: docs
steps:
  - checkpoint: "go on?"
  - var: done
    value: true
"""

FINDING = """\
name: finding
description: A playbook with one finding
owner: docs
steps:
  - var: out
    value: "${{ missing }}"
"""


def _catalyst(project: Path, closing: str, *argv: str) -> subprocess.CompletedProcess:
    """`python -m catalyst_dsl ARGV` with the shell's redirection `closing` (`0<&-`, ...)."""
    command = " ".join([f'"{sys.executable}"', "-m", "catalyst_dsl", *argv, closing])
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    return subprocess.run(["sh", "-c", f"exec {command}"], cwd=project, env=env, capture_output=True, text=True)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "pausing.yaml").write_text(PAUSING, encoding="utf-8")
    (tmp_path / "finding.yaml").write_text(FINDING, encoding="utf-8")
    return tmp_path


def test_a_run_without_standard_input_pauses_at_its_checkpoint_as_without_a_terminal(tmp_path: Path) -> None:
    done = _catalyst(_project(tmp_path), "0<&-", "run", "pausing.yaml")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "paused at" in done.stdout


def test_a_check_without_standard_output_still_says_how_it_went(tmp_path: Path) -> None:
    done = _catalyst(_project(tmp_path), "1>&-", "check", "finding.yaml")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr


def test_a_run_with_every_stream_closed_ends_as_paused(tmp_path: Path) -> None:
    done = _catalyst(_project(tmp_path), "0<&- 1>&- 2>&-", "run", "pausing.yaml")
    assert done.returncode == 4
