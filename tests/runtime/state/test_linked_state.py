"""A state directory, or a folder in it, that a repository committed as a symbolic link is
refused: runs never write their snapshots, keys or locks where a link points."""

from __future__ import annotations

import os


QUICK = "name: quick\ndescription: q\nowner: Engineer\nsteps:\n  - log-info: hi\n"


def test_a_state_directory_linked_out_of_the_project_is_refused(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, project.root / ".xe")
    project.playbook("quick", QUICK)
    result = project.run("quick")
    assert result.exit_code == 1, result.output
    assert ".xe/runs is a link that may lead out of the project" in result.output
    assert list(elsewhere.iterdir()) == [] and "Traceback" not in result.output


def test_a_linked_locks_folder_is_refused_too(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project.playbook("quick", QUICK)
    assert project.run("quick").exit_code == 0
    locks = project.state_dir / "locks"
    if locks.is_dir():
        for leftover in locks.iterdir():
            leftover.unlink()
        locks.rmdir()
    os.symlink(elsewhere, locks)
    result = project.run("quick")
    assert result.exit_code == 1, result.output
    assert ".xe/runs/locks is a link" in result.output
    assert list(elsewhere.iterdir()) == []


def test_a_state_directory_inside_the_project_through_a_link_is_fine(project):
    (project.root / "state").mkdir()
    project.settings('state-dir = "runs-here"\n')
    os.symlink(project.root / "state", project.root / "runs-here")
    project.playbook("quick", QUICK)
    assert project.run("quick").exit_code == 0
