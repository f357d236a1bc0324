"""`catalyst init`: settings, the first playbook of docs/getting-started.md and a run state
that keeps itself out of git; never a file replaced."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.integrations.project_init import FIRST_PLAYBOOK, SETTINGS

ROOT = Path(__file__).parents[2]


def _catalyst(folder: Path, monkeypatch, *args: str):
    monkeypatch.chdir(folder)
    return CliRunner().invoke(cli, list(args))


def test_init_starts_a_project_that_checks_clean(tmp_path: Path, monkeypatch) -> None:
    made = _catalyst(tmp_path, monkeypatch, "init")
    assert made.exit_code == 0, made.output
    assert made.output.splitlines()[:3] == [
        "created catalyst.toml",
        "created playbooks/first.yaml",
        "created .xe/runs/.gitignore",
    ]
    assert (tmp_path / "catalyst.toml").read_text(encoding="utf-8") == SETTINGS
    assert (tmp_path / ".xe" / "runs" / ".gitignore").read_text(encoding="utf-8").endswith("\n*\n")
    checked = _catalyst(tmp_path, monkeypatch, "check", "--strict")
    assert checked.exit_code == 0, checked.output


def test_the_first_playbook_is_the_one_getting_started_explains() -> None:
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    shown = re.search(r"```yaml\n(# playbooks/first\.yaml\n.*?)```", page, re.DOTALL)
    assert shown is not None
    assert shown.group(1) == FIRST_PLAYBOOK


@pytest.mark.parametrize("there", ["catalyst.toml", "playbooks/first.yaml"])
def test_init_never_replaces_a_file_and_writes_nothing_then(tmp_path: Path, monkeypatch, there: str) -> None:
    (tmp_path / there).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / there).write_text("mine\n", encoding="utf-8")
    refused = _catalyst(tmp_path, monkeypatch, "init")
    assert refused.exit_code == 1
    assert f"{there} already exists" in refused.output and "wrote nothing" in refused.output
    assert (tmp_path / there).read_text(encoding="utf-8") == "mine\n"
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {there}


def test_init_leaves_settings_in_pyproject_alone(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.catalyst]\nroles = ["Engineer"]\n', encoding="utf-8")
    refused = _catalyst(tmp_path, monkeypatch, "init")
    assert refused.exit_code == 1
    assert "pyproject.toml [tool.catalyst] already exists" in refused.output
    assert not (tmp_path / "catalyst.toml").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("initialised", [True, False], ids=["after init", "without init"])
def test_run_state_is_never_untracked_in_git(tmp_path: Path, monkeypatch, initialised: bool) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    if initialised:
        assert _catalyst(tmp_path, monkeypatch, "init").exit_code == 0
    else:
        (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
        (tmp_path / "playbooks").mkdir()
        (tmp_path / "playbooks" / "first.yaml").write_text(FIRST_PLAYBOOK, encoding="utf-8")
    paused = _catalyst(tmp_path, monkeypatch, "run", "first")  # paused at its checkpoint: live state, locks
    assert paused.exit_code == 4, paused.output
    untracked = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.splitlines()
    assert sorted(line[3:] for line in untracked) == ["catalyst.toml", "playbooks/first.yaml"]


def test_a_state_dir_the_project_shares_gets_no_gitignore(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "catalyst.toml").write_text('state-dir = "records"\n', encoding="utf-8")
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "notes.md").write_text("the team's notes\n", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "first.yaml").write_text(FIRST_PLAYBOOK, encoding="utf-8")
    assert _catalyst(tmp_path, monkeypatch, "run", "first").exit_code == 4
    assert not (tmp_path / "records" / ".gitignore").exists()


def test_a_file_where_a_folder_should_be_stops_init_before_it_writes(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "playbooks").write_text("not a folder\n", encoding="utf-8")
    refused = _catalyst(tmp_path, monkeypatch, "init")
    assert refused.exit_code == 1 and "playbooks already exists" in refused.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["playbooks"]


def test_a_write_the_file_system_refuses_leaves_nothing_behind(tmp_path: Path, monkeypatch) -> None:
    from catalyst_dsl.integrations import project_init

    real = project_init.durable.create

    def refuse_the_playbook(target, data, **how):
        if target.name == "first.yaml":
            raise OSError(28, "No space left on device")
        return real(target, data, **how)

    monkeypatch.setattr(project_init.durable, "create", refuse_the_playbook)
    refused = _catalyst(tmp_path, monkeypatch, "init")
    assert refused.exit_code == 1, refused.output
    assert "could not write playbooks/first.yaml: No space left on device; it wrote nothing" in refused.output
    assert "Traceback" not in refused.output
    assert list(tmp_path.iterdir()) == []
