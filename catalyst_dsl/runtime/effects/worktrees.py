"""`catalyst run … --worktree`: a run in a git worktree of its own, beside the project.

The worktree gets a new branch made at the current commit, so it works whichever branch is
checked out (git refuses to check out one branch in two worktrees, which is why kai's
`start` always fails on a branch, DIALECTS K-D8). git is run with an argument list, never
through a shell: a branch or playbook name is never read as shell syntax. The tree must be
clean: the worktree starts from the last commit, and what is not committed would silently
be missing from it.
"""

from __future__ import annotations

import datetime
import shutil
import subprocess
from pathlib import Path

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort

#: git's own time limit for each command (a worktree of a large repository takes a while).
GIT_TIMEOUT = 300


@record
class Worktree:
    path: Path  # the new worktree's top folder
    branch: str
    #: The project root inside it (the project may be a folder of the repository).
    project_root: Path


def new_worktree(project_root: Path, playbook: str, now: datetime.datetime | None = None) -> Worktree:
    """Make the run's worktree: `<repo>-<playbook>-<time>` beside the repository, on the
    new branch `catalyst/<playbook>-<time>` at HEAD."""
    from catalyst_dsl.runtime.state.layout import slug

    if shutil.which("git") is None:
        raise RunAbort(
            EXIT_INVALID,
            "--worktree needs git, which is not installed or not on PATH",
            help="install git, or run without --worktree",
        )
    top = Path(_git(project_root, "rev-parse", "--show-toplevel", what="find the repository").strip())
    if _git(top, "status", "--porcelain", what="read the working tree's status").strip():
        raise RunAbort(
            EXIT_INVALID,
            f"--worktree: {top} has changes that are not committed; nothing was run",
            help="commit or stash them first: the worktree starts from the last commit, without them",
        )
    try:
        inside = Path(project_root).resolve().relative_to(top.resolve())
    except ValueError:
        raise RunAbort(
            EXIT_INVALID,
            f"--worktree: the project {project_root}"
            f" is not inside its repository {top} as git sees it; nothing was run",
            help="run from the repository's own checkout (not through a link to it)",
        ) from None
    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    name = f"{slug(playbook)}-{stamp}"
    path = top.parent / f"{top.name}-{name}"
    branch = f"catalyst/{name}"
    suffix = 1
    while path.exists() or _branch_exists(top, branch):
        suffix += 1
        path, branch = top.parent / f"{top.name}-{name}-{suffix}", f"catalyst/{name}-{suffix}"
    _git(top, "worktree", "add", "-b", branch, "--", str(path), "HEAD", what=f"make the worktree {path}")
    return Worktree(path, branch, path / inside)


def _branch_exists(top: Path, branch: str) -> bool:
    result = subprocess.run(
        ["git", "-C", str(top), "show-ref", "--verify", "--quiet", f"refs/heads/{branch}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=GIT_TIMEOUT,
    )
    return result.returncode == 0


def _git(where: Path, *args: str, what: str) -> str:
    try:
        result = subprocess.run(
            ["git", "-C", str(where), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise RunAbort(
            EXIT_INVALID, f"--worktree: git took longer than {GIT_TIMEOUT}s to {what}; nothing was run"
        ) from None
    if result.returncode != 0:
        said = (result.stderr or result.stdout).strip().splitlines()
        raise RunAbort(
            EXIT_INVALID,
            f"--worktree: git could not {what}:"
            f" {said[-1] if said else f'exit code {result.returncode}'}; nothing was run",
            help="--worktree runs the playbook in a new git worktree of the project's repository",
        )
    return result.stdout
