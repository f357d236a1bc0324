"""`catalyst worker` with a real PostgreSQL server: it takes a run that was approved
elsewhere and runs it to its end; two workers racing for one run, exactly one runs it; a
run whose process was killed with SIGKILL mid-step is taken over once its lease has run
out, and no step it completed runs again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.run_helpers import GATE

#: The checkout under test, first on the children's path.
_ROOT = Path(__file__).resolve().parents[3]


# Each step appends to out/log; the second one sleeps the first time it runs.
SLOW = """
name: slow
description: A step, a slow step, a step.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - name: one
    bash: mkdir -p out && echo one >> out/log
    writes: [out/**]
  - name: two
    bash: if [ -e out/started ]; then echo two-again >> out/log; else touch out/started; sleep 60; fi
    writes: [out/**]
  - name: three
    bash: echo three >> out/log
    writes: [out/**]
"""


def catalyst(project, *args: str, **options) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", *args],
        cwd=project.root,
        env={**env, **options.pop("env", {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **options,
    )


def test_a_worker_runs_an_approved_run_to_its_end(project, shared_store):
    project.playbook("gate", GATE)
    assert project.run("gate").exit_code == 4
    [run_id] = project.listed()
    idle = project.cli("worker", "--once")
    assert idle.exit_code == 0 and "no run is ready" in idle.output  # waiting for its approval
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    worked = project.cli("worker", "--once")
    assert worked.exit_code == 0, worked.output
    assert f"worker: took run {run_id}" in worked.output and f"run {run_id} stopped with exit 0" in worked.output
    assert project.listed()[run_id]["status"] == "completed"
    assert "no run is ready" in project.cli("worker", "--once").output


def test_a_worker_needs_the_shared_store(project):
    result = project.cli("worker", "--once")
    assert result.exit_code == 1, result.output
    assert "CATALYST_STATE_URL" in result.output


def test_two_workers_racing_for_one_run_exactly_one_runs_it(project, shared_store):
    project.playbook("gate", GATE)
    started = catalyst(project, "run", "gate")  # its own process, gone once paused
    assert started.wait(timeout=120) == 4, started.communicate()[0]
    [run_id] = project.listed()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    workers = [catalyst(project, "worker", "--once") for _ in range(2)]
    outputs = [worker.communicate(timeout=120)[0] for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0], outputs
    took = [output for output in outputs if f"took run {run_id}" in output]
    assert len(took) == 1, outputs
    assert project.listed()[run_id]["status"] == "completed"


@pytest.mark.slow
def test_a_run_killed_mid_step_is_taken_over_after_its_lease_and_no_completed_step_runs_again(project, shared_store):
    project.playbook("slow", SLOW)
    lease = {"CATALYST_LEASE_SECONDS": "2"}
    running = catalyst(project, "run", "slow", "--mode", "autonomous", env=lease)
    started = project.root / "out" / "started"
    deadline = time.monotonic() + 60
    while not started.exists():
        assert running.poll() is None, running.communicate()[0]
        assert time.monotonic() < deadline, "the slow step never started"
        time.sleep(0.05)
    running.send_signal(signal.SIGKILL)
    running.wait(timeout=30)
    [run_id] = project.listed()
    assert project.listed()[run_id]["status"] == "interrupted"  # its process is gone from this host
    early = catalyst(project, "worker", "--once", env=lease)
    assert "no run is ready" in early.communicate(timeout=60)[0]  # its lease has not run out yet
    time.sleep(2.5)
    late = catalyst(project, "worker", "--once", "--lease", "2")
    output = late.communicate(timeout=120)[0]
    assert late.returncode == 0, output
    assert f"took run {run_id}" in output
    assert (project.root / "out" / "log").read_text().splitlines() == ["one", "two-again", "three"]
    assert project.listed()[run_id]["status"] == "completed"


def test_a_run_that_cannot_go_on_is_said_and_does_not_stop_the_worker(project, shared_store):
    project.playbook("gate", GATE)
    assert project.run("gate").exit_code == 4
    [run_id] = project.listed()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    (project.root / "playbooks" / "gate.yaml").unlink()
    worked = project.cli("worker", "--once")
    assert worked.exit_code == 3, worked.output
    assert f"worker: run {run_id} cannot go on: the playbook of run {run_id}" in worked.output
    assert "Traceback" not in worked.output
