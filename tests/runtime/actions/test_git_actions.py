"""`git-branch` and `git-commit` against real git repositories in tmp_path.

Most tests call the actions directly with an ActionContext built here (the gateway, the
settings, a run id and a step path), so they need nothing registered. The tests under
"through the command line" run `catalyst run` in a project that is a git repository;
all but the crash test need the actions registered in
`catalyst_dsl.runtime.actions.IMPLEMENTATIONS`.

Every test runs with a git configuration of its own (HOME, no global or system config,
no identity from the environment): the identity is set in each test repository.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from catalyst_dsl.project.config import ProjectConfig
from catalyst_dsl.runtime.actions import git as git_actions
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.gateway import EffectsGateway, RealPerformer
from catalyst_dsl.runtime.effects.grants import Grants
from catalyst_dsl.runtime.simulation.recording import RecordingPerformer, Unknowable

RUN_ID = "20260101-120000-ship-001"


# =====================================================================================
# repositories
# =====================================================================================


@pytest.fixture(autouse=True)
def isolated_git(tmp_path, monkeypatch):
    """No git settings or identity from the machine: each test repository sets its own."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "EMAIL",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_CONFIG",
        "GIT_CEILING_DIRECTORIES",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def git(cwd: Path, *args: str) -> str:
    """Run git as a user would; a failure fails the test with git's words."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr}"
    return done.stdout


def identity(repo: Path, name: str = "Test Author") -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", "author@example.com")
    git(repo, "config", "commit.gpgsign", "false")


def write(repo: Path, relative: str, text: str) -> Path:
    path = repo / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_repo(path: Path, *, with_identity: bool = True) -> Path:
    """A repository on `main` with one commit holding README.md."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if with_identity:
        identity(path)
    else:
        # The first commit needs someone; the repository itself keeps no identity.
        write(path, "README.md", "hello\n")
        git(path, "add", "README.md")
        git(
            path,
            "-c",
            "user.name=Setup",
            "-c",
            "user.email=setup@example.com",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            "initial",
        )
        return path
    write(path, "README.md", "hello\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


def with_origin(tmp_path: Path, repo: Path) -> Path:
    """A bare `origin` for `repo`, holding its main branch (tracked)."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "-u", "origin", "main")
    return bare


def clone(tmp_path: Path, bare: Path, name: str) -> Path:
    target = tmp_path / name
    git(tmp_path, "clone", "-q", str(bare), str(target))
    identity(target, f"Author of {name}")
    return target


def head(repo: Path, ref: str = "HEAD") -> str:
    return git(repo, "rev-parse", ref).strip()


def commit_count(repo: Path, ref: str = "HEAD") -> int:
    return int(git(repo, "rev-list", "--count", ref).strip())


def branch(repo: Path) -> str:
    return git(repo, "symbolic-ref", "--short", "HEAD").strip()


def status(repo: Path) -> list[str]:
    return sorted(line for line in git(repo, "status", "--porcelain=v1", "--untracked-files=all").splitlines() if line)


def files_in(repo: Path, sha: str) -> list[str]:
    return sorted(git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha).split())


def message(repo: Path, sha: str) -> str:
    return git(repo, "log", "-1", "--format=%B", sha)


# =====================================================================================
# the context an action gets
# =====================================================================================


class Recorder:
    def __init__(self) -> None:
        self.logs: list[tuple[str, str]] = []
        self.lines: list[tuple[str, str]] = []


def context(
    root: Path,
    action: str = "git-commit",
    *,
    run_id: str = RUN_ID,
    path: str = "steps/2",
    protected: tuple[str, ...] = ("main",),
    grants: list[str] | None = None,
    performer=None,
    recorder: Recorder | None = None,
    timeout: float | None = None,
) -> ActionContext:
    recorder = recorder or Recorder()
    scratch = root.parent / f"{root.name}-scratch"
    gateway = EffectsGateway(
        root, scratch, (Grants.of("ship", grants),), performer or RealPerformer(), protected=(".xe/runs",)
    )
    return ActionContext(
        run_id,
        action,
        action,
        gateway,
        (),
        timeout,
        lambda level, text, data: recorder.logs.append((level, text)),
        lambda stream, line: recorder.lines.append((stream, line)),
        lambda name: None,
        settings=ProjectConfig(protected_branches=protected),
        path=path,
    )


def commit(root: Path, **config):
    options = {
        k: config.pop(k)
        for k in ("run_id", "path", "protected", "grants", "recorder", "performer", "timeout")
        if k in config
    }
    config.setdefault("message", "a change")
    return git_actions.git_commit(context(root, **options), config)


def switch(root: Path, **config):
    options = {k: config.pop(k) for k in ("run_id", "path", "protected", "grants") if k in config}
    return git_actions.git_branch(context(root, "git-branch", **options), config)


def fails(code: str, action, *args, **kwargs) -> StepError:
    with pytest.raises(StepError) as caught:
        action(*args, **kwargs)
    assert caught.value.code == code, f"{caught.value.code}: {caught.value.message}"
    return caught.value


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


# =====================================================================================
# git-branch
# =====================================================================================


def test_branch_is_created_from_head_and_switched_to(repo):
    start = head(repo)
    assert switch(repo, name="feature/login") == {"name": "feature/login", "created": True}
    assert branch(repo) == "feature/login"
    assert head(repo) == start


def test_an_existing_branch_is_switched_to_not_created(repo):
    git(repo, "branch", "feature/old")
    assert switch(repo, name="feature/old") == {"name": "feature/old", "created": False}
    assert branch(repo) == "feature/old"


def test_switching_to_the_current_branch_changes_nothing(repo):
    assert switch(repo, name="main") == {"name": "main", "created": False}
    assert branch(repo) == "main"


def test_a_new_branch_starts_at_base(repo):
    first = head(repo)
    write(repo, "later.txt", "x\n")
    git(repo, "add", "later.txt")
    git(repo, "commit", "-q", "-m", "later")
    git(repo, "tag", "v1", first)
    assert switch(repo, name="hotfix", base="v1") == {"name": "hotfix", "created": True}
    assert head(repo) == first
    assert not (repo / "later.txt").exists()


def test_a_branch_based_on_a_remote_branch_does_not_track_it(tmp_path, repo):
    with_origin(tmp_path, repo)
    switch(repo, name="feature/x", base="origin/main")
    # Tracking origin/main would make git-commit push the feature onto main.
    done = subprocess.run(
        ["git", "config", "--get", "branch.feature/x.merge"], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode == 1 and done.stdout == ""


def test_an_unknown_base_is_refused(repo):
    error = fails("BaseNotFound", switch, repo, name="feature/x", base="no-such-branch")
    assert "no-such-branch" in error.message
    assert branch(repo) == "main"


def test_require_new_refuses_an_existing_branch(repo):
    git(repo, "branch", "feature/taken")
    error = fails("BranchExists", switch, repo, name="feature/taken", requireNew=True)
    assert "feature/taken" in error.message
    assert branch(repo) == "main"


def test_require_new_run_again_by_the_same_step_accepts_the_branch_it_created(repo):
    """A run stopped after the branch appeared, before its state was saved: resume re-runs the step."""
    assert switch(repo, name="feature/new", requireNew=True, path="steps/0")["created"] is True
    git(repo, "switch", "-q", "main")
    assert switch(repo, name="feature/new", requireNew=True, path="steps/0") == {"name": "feature/new", "created": True}
    assert branch(repo) == "feature/new"
    # Another step, or another run, did not create it.
    fails("BranchExists", switch, repo, name="feature/new", requireNew=True, path="steps/5")
    fails(
        "BranchExists",
        switch,
        repo,
        name="feature/new",
        requireNew=True,
        path="steps/0",
        run_id="20260102-090000-ship-001",
    )


def test_a_dirty_work_tree_that_blocks_the_switch_fails_listing_the_files(repo):
    git(repo, "switch", "-q", "-c", "other")
    write(repo, "README.md", "changed on other\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "switch", "-q", "main")
    write(repo, "README.md", "uncommitted\n")
    error = fails("DirtyWorkTree", switch, repo, name="other")
    assert error.metadata["files"] == ["README.md"]
    assert "README.md" in error.message
    assert branch(repo) == "main"
    assert (repo / "README.md").read_text() == "uncommitted\n"


def test_an_untracked_file_the_switch_would_overwrite_is_listed_too(repo):
    git(repo, "switch", "-q", "-c", "other")
    write(repo, "new.txt", "on other\n")
    git(repo, "add", "new.txt")
    git(repo, "commit", "-q", "-m", "other")
    git(repo, "switch", "-q", "main")
    write(repo, "new.txt", "mine, untracked\n")
    error = fails("DirtyWorkTree", switch, repo, name="other")
    assert error.metadata["files"] == ["new.txt"]
    assert (repo / "new.txt").read_text() == "mine, untracked\n"


def test_changes_that_do_not_block_the_switch_come_along(repo):
    write(repo, "notes.txt", "draft\n")
    assert switch(repo, name="feature/notes")["created"] is True
    assert (repo / "notes.txt").read_text() == "draft\n"


def test_an_invalid_branch_name_is_refused(repo):
    for name in ("bad..name", "-x", "with space", "HEAD"):
        fails("InvalidBranchName", switch, repo, name=name)
    assert branch(repo) == "main"


# =====================================================================================
# git-commit: what is committed
# =====================================================================================


@pytest.fixture
def feature(repo) -> Path:
    git(repo, "switch", "-q", "-c", "feature/work")
    return repo


def test_only_files_matching_the_patterns_are_committed(feature):
    write(feature, "src/app.py", "print(1)\n")
    write(feature, "src/lib/util.py", "x = 1\n")
    write(feature, "docs/notes.md", "draft\n")
    write(feature, "README.md", "changed\n")
    before = head(feature)
    result = commit(feature, message="Add the app", files=["src/**"])
    assert result["created"] is True
    assert result["files"] == ["src/app.py", "src/lib/util.py"]
    assert result["sha"] == head(feature) != before
    assert files_in(feature, result["sha"]) == ["src/app.py", "src/lib/util.py"]
    # The others stay as they were: unstaged, uncommitted.
    assert status(feature) == [" M README.md", "?? docs/notes.md"]


def test_the_message_ends_with_the_run_trailer(feature):
    write(feature, "a.txt", "a\n")
    result = commit(feature, message="Add a\n\nBecause.", files=["a.txt"], path="steps/3/each/1/0")
    text = message(feature, result["sha"])
    assert text.startswith("Add a\n\nBecause.\n")
    assert f"Catalyst-Run: {RUN_ID} steps/3/each/1/0" in text.splitlines()
    trailers = git(feature, "log", "-1", "--format=%(trailers:key=Catalyst-Run,valueonly)").strip()
    assert trailers == f"{RUN_ID} steps/3/each/1/0"


def test_by_default_everything_changed_is_committed_but_the_run_state(feature):
    write(feature, "src/app.py", "print(1)\n")
    write(feature, "README.md", "changed\n")
    (feature / "gone.txt").write_text("x\n")
    git(feature, "add", "gone.txt")
    git(feature, "commit", "-q", "-m", "to delete")
    (feature / "gone.txt").unlink()
    write(feature, ".xe/runs/run-x.json", "{}\n")
    write(feature, ".xe/runs/locks/path.lock", "x\n")
    result = commit(feature)
    assert result["created"] is True
    assert sorted(result["files"]) == ["README.md", "gone.txt", "src/app.py"]
    assert status(feature) == ["?? .xe/runs/locks/path.lock", "?? .xe/runs/run-x.json"]


def test_ignored_files_are_not_committed(feature):
    write(feature, ".gitignore", "build/\n")
    write(feature, "build/out.bin", "x\n")
    result = commit(feature, files=["**"])
    assert result["files"] == [".gitignore"]


def test_files_the_user_staged_elsewhere_stay_staged_and_out_of_the_commit(feature):
    write(feature, "mine.txt", "staged by hand\n")
    git(feature, "add", "mine.txt")
    write(feature, "src/app.py", "print(1)\n")
    result = commit(feature, files=["src/*.py"])
    assert files_in(feature, result["sha"]) == ["src/app.py"]
    assert status(feature) == ["A  mine.txt"]


def test_a_deleted_file_matching_a_pattern_is_committed_as_deleted(feature):
    (feature / "README.md").unlink()
    result = commit(feature, files=["README.md"])
    assert result["files"] == ["README.md"]
    assert "README.md" not in git(feature, "ls-tree", "--name-only", "HEAD").split()


def test_a_pattern_with_special_characters_is_matched_literally_by_git(feature):
    write(feature, "weird [1].txt", "x\n")
    write(feature, "weird 1.txt", "y\n")
    result = commit(feature, files=["weird*"])
    assert sorted(result["files"]) == ["weird 1.txt", "weird [1].txt"]


def test_nothing_to_commit_makes_no_empty_commit(feature):
    write(feature, "docs/notes.md", "draft\n")
    before = head(feature)
    recorder = Recorder()
    result = commit(feature, files=["src/**"], recorder=recorder)
    assert result == {"sha": before, "files": [], "created": False}
    assert head(feature) == before
    assert any("nothing to commit" in text for _, text in recorder.logs)


def test_a_project_in_a_subdirectory_commits_its_own_files_named_from_its_root(tmp_path):
    repo = make_repo(tmp_path / "mono")
    git(repo, "switch", "-q", "-c", "feature/sub")
    project = repo / "services" / "api"
    write(project, "src/app.py", "print(1)\n")
    write(repo, "services/web/index.html", "<p>\n")
    write(repo, "src/app.py", "staged by hand at the top\n")
    git(repo, "add", "src/app.py")
    result = commit(project)
    assert result["files"] == ["src/app.py"]
    assert files_in(repo, result["sha"]) == ["services/api/src/app.py"]
    assert status(repo) == ["?? services/web/index.html", "A  src/app.py"]
    assert commit(project)["files"] == ["src/app.py"]  # the same step again: found, named from the project


def test_a_first_commit_in_a_new_repository(tmp_path):
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "feature/start")
    identity(repo)
    write(repo, "a.txt", "a\n")
    result = commit(repo)
    assert result["created"] is True and result["files"] == ["a.txt"]
    assert commit_count(repo) == 1


# =====================================================================================
# git-commit: idempotent
# =====================================================================================


def test_the_same_step_of_the_same_run_commits_once(feature):
    write(feature, "src/app.py", "print(1)\n")
    first = commit(feature, files=["src/**"])
    count = commit_count(feature)
    again = commit(feature, files=["src/**"])
    assert again == {"sha": first["sha"], "files": ["src/app.py"], "created": False}
    assert commit_count(feature) == count


def test_a_resume_after_a_crash_between_commit_and_state_save_makes_no_second_commit(feature):
    """The commit was made, the process died before the snapshot recorded the step; resume runs it again."""
    write(feature, "src/app.py", "print(1)\n")
    write(feature, "docs/later.md", "not part of it\n")
    first = commit(feature, files=["src/**"], path="steps/4")
    # Meanwhile another run's commit landed on the branch, and the tree still has other changes.
    write(feature, "other.txt", "x\n")
    git(feature, "add", "other.txt")
    git(feature, "commit", "-q", "-m", "someone else", "-m", "Catalyst-Run: 20260101-120000-ship-002 steps/4")
    resumed = commit(feature, files=["src/**"], path="steps/4")
    assert resumed == {"sha": first["sha"], "files": ["src/app.py"], "created": False}
    assert commit_count(feature) == 3


def test_a_trailer_that_only_starts_with_the_step_path_is_not_a_match(feature):
    write(feature, "a.txt", "a\n")
    commit(feature, files=["a.txt"], path="steps/10")
    write(feature, "b.txt", "b\n")
    result = commit(feature, files=["b.txt"], path="steps/1")
    assert result["created"] is True and result["files"] == ["b.txt"]


def test_another_step_of_the_same_run_commits_its_own_changes(feature):
    write(feature, "a.txt", "a\n")
    first = commit(feature, files=["a.txt"], path="steps/1")
    write(feature, "b.txt", "b\n")
    second = commit(feature, files=["b.txt"], path="steps/2")
    assert second["created"] is True and second["sha"] != first["sha"]
    assert second["files"] == ["b.txt"]


def test_new_changes_on_a_rerun_are_committed_again(feature):
    write(feature, "a.txt", "a\n")
    first = commit(feature, files=["a.txt"])
    write(feature, "a.txt", "a, changed since\n")
    again = commit(feature, files=["a.txt"])
    assert again["created"] is True and again["sha"] != first["sha"]
    assert git(feature, "rev-parse", f"{again['sha']}~1").strip() == first["sha"]


# =====================================================================================
# git-commit: refusals
# =====================================================================================


def test_a_protected_branch_refuses_direct_commits(repo):
    write(repo, "a.txt", "a\n")
    before = head(repo)
    error = fails("ProtectedBranch", commit, repo, files=["a.txt"])
    assert "main" in error.message and "git-branch" in error.guidance
    assert head(repo) == before
    assert status(repo) == ["?? a.txt"]


def test_protected_branches_may_be_patterns(repo):
    git(repo, "switch", "-q", "-c", "release/1.0")
    write(repo, "a.txt", "a\n")
    fails("ProtectedBranch", commit, repo, files=["a.txt"], protected=("main", "release/*"))
    assert commit(repo, files=["a.txt"], protected=())["created"] is True


def test_patterns_outside_the_granted_paths_are_refused_before_anything_is_staged(feature):
    write(feature, "docs/a.md", "a\n")
    error = fails("PermissionDenied", commit, feature, files=["docs/**"], grants=["src/**"])
    assert "docs/**" in error.message
    assert status(feature) == ["?? docs/a.md"]


def test_committing_everything_needs_a_playbook_that_may_write_everywhere(feature):
    write(feature, "src/a.py", "a\n")
    error = fails("PermissionDenied", commit, feature, grants=["src/**"])
    assert "files:" in error.guidance
    assert commit(feature, files=["src/**"], grants=["src/**"])["files"] == ["src/a.py"]


def test_scratch_and_outside_patterns_are_refused(feature):
    fails("InvalidConfig", commit, feature, files=["temp://x.txt"])
    fails("PermissionDenied", commit, feature, files=["../elsewhere/*"])
    fails("PermissionDenied", commit, feature, files=["/etc/passwd"])


def test_a_missing_identity_fails_with_the_fix_and_invents_none(tmp_path):
    repo = make_repo(tmp_path / "anon", with_identity=False)
    git(repo, "switch", "-q", "-c", "feature/x")
    write(repo, "a.txt", "a\n")
    error = fails("GitIdentityMissing", commit, repo, files=["a.txt"])
    assert "git config user.name" in error.guidance and "user.email" in error.guidance
    assert commit_count(repo) == 1
    assert status(repo) == ["?? a.txt"]


def test_an_identity_from_the_environment_is_enough(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "anon", with_identity=False)
    git(repo, "switch", "-q", "-c", "feature/x")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Env Person")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "env@example.com")
    write(repo, "a.txt", "a\n")
    result = commit(repo, files=["a.txt"])
    assert git(repo, "log", "-1", "--format=%an <%ae>", result["sha"]).strip() == "Env Person <env@example.com>"


def test_a_detached_head_is_refused(repo):
    git(repo, "switch", "-q", "--detach", "HEAD")
    write(repo, "a.txt", "a\n")
    fails("DetachedHead", commit, repo, files=["a.txt"])


def test_not_a_git_repository(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    write(plain, "a.txt", "a\n")
    error = fails("NotAGitRepository", commit, plain)
    assert "git init" in error.guidance
    fails("NotAGitRepository", switch, plain, name="feature/x")


def test_git_missing_is_action_unavailable_naming_git(repo, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    error = fails("ActionUnavailable", commit, repo)
    assert "git" in error.message and "install git" in error.guidance
    fails("ActionUnavailable", switch, repo, name="x")


def test_git_runs_only_through_the_gateway_so_a_what_if_refuses_it(feature):
    write(feature, "a.txt", "a\n")
    with pytest.raises(Unknowable) as caught:
        commit(feature, files=["a.txt"], performer=RecordingPerformer())
    assert "git" in caught.value.reason
    assert status(feature) == ["?? a.txt"]


def test_a_step_out_of_time_stops_git_with_step_timeout(feature):
    write(feature, "a.txt", "a\n")
    fails("StepTimeout", commit, feature, files=["a.txt"], timeout=0.0)
    assert status(feature) == ["?? a.txt"]


def test_commands_that_change_the_repository_stream_their_output(tmp_path, repo):
    with_origin(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature/log")
    write(repo, "a.txt", "a\n")
    recorder = Recorder()
    commit(repo, files=["a.txt"], recorder=recorder)
    shown = "\n".join(line for _, line in recorder.lines)
    assert "feature/log" in shown  # the commit summary and the push both name the branch


# =====================================================================================
# git-commit: pull and push
# =====================================================================================


def test_a_branch_without_upstream_is_pushed_to_origin_and_tracks_it(tmp_path, repo):
    bare = with_origin(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature/push")
    write(repo, "a.txt", "a\n")
    result = commit(repo, files=["a.txt"])
    assert head(bare, "refs/heads/feature/push") == result["sha"]
    assert git(repo, "rev-parse", "--abbrev-ref", "feature/push@{upstream}").strip() == "origin/feature/push"


def test_a_commit_is_rebased_on_what_another_clone_pushed_then_pushed(tmp_path, repo):
    bare = with_origin(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature/shared")
    git(repo, "push", "-q", "-u", "origin", "feature/shared")
    other = clone(tmp_path, bare, "other")
    git(other, "switch", "-q", "feature/shared")
    write(other, "theirs.txt", "from the other clone\n")
    git(other, "add", "theirs.txt")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q")
    theirs = head(other)

    write(repo, "ours.txt", "from the run\n")
    result = commit(repo, message="ours", files=["ours.txt"])
    assert result["created"] is True and result["files"] == ["ours.txt"]
    assert result["sha"] == head(repo) == head(bare, "refs/heads/feature/shared")
    assert git(repo, "rev-parse", f"{result['sha']}~1").strip() == theirs
    assert (repo / "theirs.txt").read_text() == "from the other clone\n"
    # Run again after the rebase: the trailer still finds it.
    assert commit(repo, message="ours", files=["ours.txt"]) == {**result, "created": False}


def test_a_rejected_push_is_git_push_failed_and_a_resume_pushes_the_same_commit(tmp_path, repo):
    bare = with_origin(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature/race")
    git(repo, "push", "-q", "-u", "origin", "feature/race")
    other = clone(tmp_path, bare, "other")
    git(other, "switch", "-q", "feature/race")
    write(other, "theirs.txt", "x\n")
    git(other, "add", "theirs.txt")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q")

    write(repo, "ours.txt", "y\n")
    error = fails("GitPushFailed", commit, repo, files=["ours.txt"], pull=False)
    assert "pull" in error.guidance
    local = head(repo)
    assert "ours.txt" in files_in(repo, local)
    assert head(bare, "refs/heads/feature/race") == head(other)
    # The step runs again (retry or resume), pulling this time: no second commit.
    result = commit(repo, files=["ours.txt"])
    assert result["created"] is False and result["files"] == ["ours.txt"]
    assert head(bare, "refs/heads/feature/race") == result["sha"] == head(repo)
    assert git(repo, "log", "--format=%s", "origin/main..HEAD").splitlines() == ["a change", "theirs"]


def test_a_conflicting_pull_is_git_pull_failed_and_leaves_the_branch_as_it_was(tmp_path, repo):
    bare = with_origin(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature/clash")
    git(repo, "push", "-q", "-u", "origin", "feature/clash")
    other = clone(tmp_path, bare, "other")
    git(other, "switch", "-q", "feature/clash")
    write(other, "README.md", "theirs\n")
    git(other, "commit", "-q", "-am", "theirs")
    git(other, "push", "-q")

    write(repo, "README.md", "ours\n")
    write(repo, "unrelated.txt", "kept\n")
    error = fails("GitPullFailed", commit, repo, files=["README.md"])
    assert "resume" in error.guidance
    assert branch(repo) == "feature/clash"
    assert not (repo / ".git" / "rebase-merge").exists() and not (repo / ".git" / "rebase-apply").exists()
    assert (repo / "README.md").read_text() == "ours\n"
    assert (repo / "unrelated.txt").read_text() == "kept\n"
    assert "Catalyst-Run" in message(repo, head(repo))


def test_push_and_pull_false_leave_the_remote_alone(tmp_path, repo):
    bare = with_origin(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature/local")
    write(repo, "a.txt", "a\n")
    commit(repo, files=["a.txt"], push=False, pull=False)
    assert "feature/local" not in git(bare, "branch", "--list")


def test_without_any_remote_the_commit_is_kept_local_and_said_so(feature):
    write(feature, "a.txt", "a\n")
    recorder = Recorder()
    result = commit(feature, files=["a.txt"], recorder=recorder)
    assert result["created"] is True
    assert any("not pushed" in text for _, text in recorder.logs)


def test_an_upstream_that_is_a_protected_branch_is_never_pushed_to(tmp_path, repo):
    bare = with_origin(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature/sneaky", "--track", "origin/main")
    write(repo, "a.txt", "a\n")
    before = head(bare, "refs/heads/main")
    fails("ProtectedBranch", commit, repo, files=["a.txt"], pull=False)
    assert head(bare, "refs/heads/main") == before


# =====================================================================================
# through the command line
# =====================================================================================


def git_project(project, tmp_path: Path, settings: str = "") -> Path:
    """The test project as a git repository on main with a bare origin; settings added."""
    if settings:
        project.settings(settings)
    root = project.root
    git(root, "init", "-q", "-b", "main")
    identity(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the project")
    return with_origin(tmp_path, root)


SHIP = """
    name: ship
    description: branch, write, commit
    owner: Engineer
    steps:
      - name: branch
        git-branch: feature/ship
        requireNew: true
      - file-write:
          path: src/shipped.txt
          content: shipped
      - name: commit
        git-commit: Ship it
        files: ["src/**"]
      - return:
          sha: "{{commit.sha}}"
          files: "{{commit.files}}"
          created: "{{commit.created}}"
          branch: "{{branch.name}}"
"""


def test_cli_a_run_branches_commits_and_pushes(project, tmp_path):
    """Needs git-branch and git-commit registered."""
    bare = git_project(project, tmp_path)
    project.playbook("ship", SHIP)
    result = project.run("ship")
    assert result.exit_code == 0, result.output
    snap = project.snapshot()
    outputs = snap["outputs"]
    assert (
        outputs["files"] == ["src/shipped.txt"] and outputs["created"] is True and outputs["branch"] == "feature/ship"
    )
    assert head(bare, "refs/heads/feature/ship") == outputs["sha"] == head(project.root)
    assert f"Catalyst-Run: {snap['runId']} steps/2" in message(project.root, outputs["sha"])
    assert files_in(project.root, outputs["sha"]) == ["src/shipped.txt"]  # never the run's state


def test_cli_a_protected_branch_fails_the_run(project, tmp_path):
    """Needs git-commit registered."""
    git_project(project, tmp_path, 'protected-branches = ["main"]\n')
    project.playbook(
        "direct",
        """
        name: direct
        description: commit straight to main
        owner: Engineer
        steps:
          - file-write: {path: a.txt, content: a}
          - git-commit: Straight in
    """,
    )
    before = head(project.root)
    result = project.run("direct")
    assert result.exit_code == 2, result.output
    assert "would commit to 'main'" in result.output and "nothing was run" in result.output
    assert head(project.root) == before and not (project.root / "a.txt").exists()


def test_cli_a_protected_branch_known_only_at_run_time_fails_at_the_commit(project, tmp_path):
    """Needs git-commit registered: the branch comes from a step, so only the commit can see it."""
    git_project(project, tmp_path, 'protected-branches = ["main"]\n')
    project.playbook(
        "late",
        """
        name: late
        description: commit to a branch a step chooses
        owner: Engineer
        steps:
          - var: target
            value: main
          - git-branch: "{{target}}"
          - file-write: {path: a.txt, content: a}
          - git-commit: Straight in
    """,
    )
    before = head(project.root)
    result = project.run("late")
    assert result.exit_code == 2, result.output
    assert "ProtectedBranch" in result.output
    assert head(project.root) == before


def test_cli_resume_after_a_crash_between_commit_and_state_save_commits_once(project, tmp_path, monkeypatch):
    """The process dies right after git committed, before the snapshot recorded the step.

    Works registered or not: the test puts its own git-commit (the real one, then a crash
    the first time) into the table of implementations.
    """
    from catalyst_dsl.runtime.actions import IMPLEMENTATIONS

    calls = []

    def crash_once(ctx, config):
        result = git_actions.git_commit(ctx, config)
        calls.append(result)
        if len(calls) == 1:
            raise KeyboardInterrupt  # as a kill would: the state still says the step is in flight
        return result

    monkeypatch.setitem(IMPLEMENTATIONS, "git-commit", crash_once)
    git_project(project, tmp_path)
    project.playbook(
        "once",
        """
        name: once
        description: commit, then crash
        owner: Engineer
        steps:
          - git-branch: feature/once
          - file-write: {path: src/a.txt, content: a}
          - name: commit
            git-commit: Once
            files: ["src/**"]
          - return: {sha: "{{commit.sha}}", created: "{{commit.created}}"}
    """,
    )
    monkeypatch.setitem(IMPLEMENTATIONS, "git-branch", git_actions.git_branch)
    first = project.run("once")
    assert first.exit_code == 130, first.output
    run_id = project.run_id()
    count = commit_count(project.root)
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert len(calls) == 2
    assert commit_count(project.root) == count
    outputs = project.snapshot(run_id)["outputs"]
    assert outputs == {"sha": calls[0]["sha"], "created": False}
    assert calls[0]["created"] is True
