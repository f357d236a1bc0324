"""Branch protection before the first step: a run that would commit to a protected
branch (the `protected-branches` setting, or GitHub's own protection when a token lets
catalyst read it) is refused before it writes anything, and leaves no run behind."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers.fake_github import TOKEN

SHIP = """
name: ship
description: writes a spec and commits it
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - file-write: out/spec.md
    content: the spec
  - name: commit
    git-commit: add the spec
    files: [out/**]
    push: false
"""

SHIP_ON_A_BRANCH = """
name: ship
description: writes a spec on its own branch and commits it
owner: Engineer
allowedWritePaths: [out/**]
inputs:
  - string: topic
    required: true
steps:
  - git-branch: "{{topic}}"
  - file-write: out/spec.md
    content: the spec
  - name: commit
    git-commit: add the spec
    files: [out/**]
    push: false
"""


def git(cwd, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(project, tmp_path, monkeypatch):
    """The project as a git repository on `main`, with an identity and one commit."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    git(project.root, "init", "-q", "-b", "main")
    git(project.root, "config", "user.name", "Ana")
    git(project.root, "config", "user.email", "ana@example.com")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "start")
    return project


def test_a_commit_to_a_protected_branch_is_refused_before_anything_is_written(repo):
    repo.settings('protected-branches = ["main", "release/*"]\n')
    repo.playbook("ship", SHIP)
    result = repo.run("ship")
    assert result.exit_code == 2, result.output
    assert (
        "step 'commit' would commit to 'main' (the branch is checked out), protected by the "
        "protected-branches setting ('main'); nothing was run" in result.output
    )
    assert "add a git-branch step" in result.output and "running ship" not in result.output
    assert not (repo.root / "out").exists()
    assert repo.listed() == {}
    locks = repo.state_dir / "locks"
    assert not [p for p in locks.iterdir() if not p.name.startswith(".")], "the refused run kept its locks"


def test_a_git_branch_step_before_the_commit_is_followed(repo):
    repo.settings('protected-branches = ["main", "release/*"]\n')
    repo.playbook("ship", SHIP_ON_A_BRANCH)
    refused = repo.run("ship", topic="release/1.2")
    assert refused.exit_code == 2, refused.output
    assert "would commit to 'release/1.2' (the branch a git-branch step before it switches to)" in refused.output
    assert "('release/*')" in refused.output and not (repo.root / "out").exists()
    done = repo.run("ship", topic="feature/spec")
    assert done.exit_code == 0, done.output
    assert git(repo.root, "log", "-1", "--format=%s", "feature/spec").strip() == "add the spec"


def test_a_run_without_commits_is_not_refused_on_a_protected_branch(repo):
    repo.settings('protected-branches = ["main"]\n')
    repo.playbook("note", "name: note\ndescription: a note\nowner: Engineer\nsteps:\n  - log-info: hi\n")
    assert repo.run("note").exit_code == 0


@pytest.fixture
def on_github(repo, fake, monkeypatch):
    """The repository's origin is acme/widgets on the fake GitHub, and a token reads it."""
    repo.user_settings(f'github-api-url = "{fake.url}"\n')
    git(repo.root, "remote", "add", "origin", f"{fake.url}/acme/widgets.git")
    monkeypatch.setenv("CATALYST_SECRET_GITHUB_TOKEN", TOKEN)
    return fake


def test_githubs_own_protection_refuses_the_run(repo, on_github):
    on_github.protected["acme/widgets"].add("main")
    repo.playbook("ship", SHIP)
    result = repo.run("ship")
    assert result.exit_code == 2, result.output
    assert "protected by GitHub's branch protection of acme/widgets; nothing was run" in result.output
    assert not (repo.root / "out").exists()
    asked = [r["path"] for r in on_github.requests]
    assert asked == ["/repos/acme/widgets/branches/main"]


def test_a_branch_github_does_not_protect_runs(repo, on_github):
    repo.playbook("ship", SHIP)
    result = repo.run("ship")
    assert result.exit_code == 0, result.output


def test_github_that_cannot_be_asked_is_a_warning_and_the_setting_still_holds(repo, on_github):
    on_github.unauthorized = True
    repo.playbook("ship", SHIP)
    result = repo.run("ship")
    assert result.exit_code == 0, result.output
    assert "could not read GitHub's protection of 'main' (GitHubAuthError" in result.output
    repo.settings('protected-branches = ["main"]\n')
    assert repo.run("ship").exit_code == 2


def test_without_a_token_github_is_not_asked(repo, on_github, monkeypatch):
    monkeypatch.delenv("CATALYST_SECRET_GITHUB_TOKEN")
    on_github.protected["acme/widgets"].add("main")
    repo.playbook("ship", SHIP)
    assert repo.run("ship").exit_code == 0
    assert on_github.requests == []


def test_the_what_if_says_the_run_would_be_refused_and_exits_2(repo):
    repo.settings('protected-branches = ["main"]\n')
    repo.playbook("ship", SHIP)
    result = repo.run("ship", "--what-if")
    assert result.exit_code == 2, result.output
    assert "the run would be refused: step 'commit' would commit to 'main'" in result.output
    assert "nothing was planned" in result.output


def test_a_commit_the_pre_flight_could_not_follow_is_refused_when_it_runs(repo, on_github):
    # The pre-flight follows the git-branch step, which its condition skips: the commit
    # would land on main, which GitHub protects.
    on_github.protected["acme/widgets"].add("main")
    skipped = SHIP_ON_A_BRANCH.replace(
        '  - git-branch: "{{topic}}"\n', '  - git-branch: "{{topic}}"\n    condition: "${{ false }}"\n'
    )
    repo.playbook("ship", skipped)
    result = repo.run("ship", topic="work")
    assert result.exit_code == 2, result.output
    assert "'main' is protected by GitHub's branch protection of acme/widgets" in result.output
    assert git(repo.root, "log", "-1", "--format=%s", "main").strip() == "start"
