"""The run state's `.gitignore`: into a folder of run state only, never over one that is there."""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl.runtime.state.git_ignored import IGNORE_TEXT, keep_out_of_git


def test_a_new_state_folder_ignores_itself(tmp_path: Path) -> None:
    keep_out_of_git(tmp_path / ".xe" / "runs")
    assert (tmp_path / ".xe" / "runs" / ".gitignore").read_bytes() == IGNORE_TEXT


def test_a_folder_of_run_state_from_before_gets_one(tmp_path: Path) -> None:
    for name in ("run-20261121-143012-a-001.json", "snapshot-ledger", ".lock", "locks", "views"):
        (tmp_path / name).mkdir() if "." not in name else (tmp_path / name).write_text("")
    keep_out_of_git(tmp_path)
    assert (tmp_path / ".gitignore").read_bytes() == IGNORE_TEXT


def test_a_shared_folder_or_a_gitignore_of_the_project_is_left_alone(tmp_path: Path) -> None:
    shared, own = tmp_path / "shared", tmp_path / "own"
    shared.mkdir()
    (shared / "notes.md").write_text("kept in git\n")
    own.mkdir()
    (own / ".gitignore").write_text("history/\n")
    keep_out_of_git(shared)
    keep_out_of_git(own)
    assert not (shared / ".gitignore").exists()
    assert (own / ".gitignore").read_text() == "history/\n"
