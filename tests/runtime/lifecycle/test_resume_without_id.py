"""`catalyst resume` without a run id (kai's argumentless resume): the one paused or
interrupted run continues; none is exit 1, several exit 2 with the list."""

from __future__ import annotations

from tests.helpers.run_helpers import REVIEWED


def test_the_one_paused_run_is_resumed(project):
    project.playbook("reviewed", REVIEWED)
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Architect", "--by", "alice").exit_code == 0
    result = project.cli("resume")
    assert result.exit_code == 0, result.output
    assert f"resuming run {run_id} (reviewed, paused)" in result.output
    assert "after the review" in result.output


def test_nothing_to_resume_is_exit_1_with_the_way_on(project):
    result = project.cli("resume")
    assert result.exit_code == 1
    assert "no run is paused or interrupted here" in result.output
    assert "catalyst runs list" in result.output and "Traceback" not in result.output


def test_several_waiting_runs_are_listed_and_none_is_chosen(project):
    project.playbook("reviewed", REVIEWED)
    assert project.run("reviewed").exit_code == 4
    assert project.run("reviewed").exit_code == 4
    ids = [run_id for run_id, run in project.listed().items() if run["status"] == "paused"]
    result = project.cli("resume")
    assert result.exit_code == 2, result.output
    assert "2 runs are paused or interrupted; say which to resume" in result.output
    assert len(ids) == 2 and all(run_id in result.output for run_id in ids)
    assert "after the review" not in result.output
