"""`git-branch` and `git-commit`: git run through the gateway, idempotent on resume.

Every git command goes through `ctx.gateway.run_process`, so a what-if refuses it like
any other program and a timeout stops it. Both actions can run again for the same step
(a resume re-runs the step that was in flight when the run stopped) without doing the
work twice:

- `git-commit` ends its message with the trailer `Catalyst-Run: <run id> <step path>`.
  Before committing it looks for a commit on the current branch carrying that exact
  trailer; when one exists and nothing new is to be committed, it is the result
  (`created: false`). A rebase by `pull` keeps the trailer, so the commit is still found.
- `git-branch` marks a branch it creates with `branch.<name>.catalystrun = <run id> <step
  path>` in the repository's config, written before the branch exists; `requireNew`
  accepts a branch that carries the mark of this very step.

Files are chosen with catalyst's own glob semantics (the ones the permission check
uses), from what `git status` reports as changed inside the project, and handed to git
as literal paths, so what is committed is exactly what the check allowed. The run's
state directory is never committed.
"""

from __future__ import annotations

import fnmatch
import os
from typing import Any, Sequence

from catalyst_dsl.paths.globs import Glob, GlobError
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.performing import ProcessOutcome

#: The trailer that ties a commit to the step that made it.
TRAILER = "Catalyst-Run"

#: The repository config key (under `branch.<name>.`) marking a branch a step created.
BRANCH_MARK = "catalystrun"

#: The environment every git command gets: messages we can read, never a prompt or editor.
_ENV = {"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": ":"}

#: Pathspecs handed over by the action are file names, never patterns or magic.
_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


def _silent(stream: str, line: str) -> None:
    """Output of the questions asked of git (status, log…): not worth the console."""


class Git:
    """The git program, run for one step through the gateway in the project root."""

    def __init__(self, ctx: ActionContext) -> None:
        self.ctx = ctx
        self.program = ctx.program("git")
        self._prefix: str | None = None

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        writes: Sequence[str] = (),
        env: dict[str, str] | None = None,
        show: bool = False,
    ) -> ProcessOutcome:
        """`git ARGS`; its output goes to the log when `show` (commands that change something)."""
        outcome = self.ctx.gateway.run_process(
            [self.program, *args],
            declared_writes=writes,
            cwd=None,
            env={**_ENV, **(env or {})},
            confined=False,  # git itself writes .git/; what it writes is the action's
            timeout=self.ctx.remaining(),
            on_output=self.ctx.output if show else _silent,
            stdin=stdin,
        )
        if outcome.timed_out:
            raise StepError(
                "StepTimeout", f"`git {args[0]}` was stopped after the step's timeout of {self.ctx.timeout:g}s"
            )
        return outcome

    def ask(self, *args: str) -> str | None:
        """The output of a question to git, or None when git says no (exit code not 0)."""
        outcome = self.run(*args)
        return outcome.stdout if outcome.exit_code == 0 else None

    def must(
        self,
        code: str,
        *args: str,
        stdin: str | None = None,
        writes: Sequence[str] = (),
        env: dict[str, str] | None = None,
        show: bool = True,
        guidance: str | None = None,
    ) -> str:
        """Run git; a failure is the step's failure with `code` and git's last words."""
        outcome = self.run(*args, stdin=stdin, writes=writes, env=env, show=show)
        if outcome.exit_code != 0:
            raise StepError(
                code,
                f"`git {args[0]}` failed (exit code {outcome.exit_code}){_said(outcome)}",
                guidance=guidance,
                metadata={"exitCode": outcome.exit_code, "stdout": outcome.stdout, "stderr": outcome.stderr},
            )
        return outcome.stdout

    # -- the repository --------------------------------------------------------------------------

    def prefix(self) -> str:
        """Where the project root sits in the repository's work tree (`` or `sub/dir/`)."""
        if self._prefix is None:
            outcome = self.run("rev-parse", "--is-inside-work-tree", "--show-prefix")
            lines = outcome.stdout.splitlines()
            if outcome.exit_code != 0 and "not a git repository" in outcome.stderr.lower():
                raise StepError(
                    "NotAGitRepository",
                    f"the project ({self.ctx.root}) is not inside a git repository",
                    guidance="run `git init` in the project, or run catalyst from a clone",
                )
            if outcome.exit_code != 0:
                raise StepError("GitFailed", f"git cannot read the repository of the project{_said(outcome)}")
            if not lines or lines[0].strip() != "true":
                raise StepError(
                    "NotAGitRepository",
                    f"the project ({self.ctx.root}) is not inside the work tree of a git repository",
                    guidance="run the playbook from a clone with a work tree, not from a bare repository or .git",
                )
            self._prefix = lines[1].strip() if len(lines) > 1 else ""
        return self._prefix

    def local(self, repo_path: str) -> str:
        """A path git gives relative to the repository's top as a project-relative one
        (a path outside the project stays as git gave it)."""
        prefix = self.prefix()
        return repo_path[len(prefix) :] if prefix and repo_path.startswith(prefix) else repo_path

    def current_branch(self) -> str | None:
        """The branch HEAD is on (it may have no commit yet), or None when HEAD is detached."""
        out = self.ask("symbolic-ref", "--quiet", "--short", "HEAD")
        return out.strip() if out else None

    def head(self) -> str | None:
        out = self.ask("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        return out.strip() if out else None

    def has_ref(self, ref: str) -> bool:
        return self.ask("rev-parse", "--verify", "--quiet", ref) is not None

    def settings(self) -> dict[str, str]:
        """Every git setting in force here (system, global, repository; the last one wins)."""
        found: dict[str, str] = {}
        for item in (self.ask("config", "--list", "-z") or "").split("\0"):
            if item:
                key, _, value = item.partition("\n")
                found[key] = value
        return found


def _said(outcome: ProcessOutcome) -> str:
    """git's last meaningful line, for a failure message."""
    for text in (outcome.stderr, outcome.stdout):
        lines = [line.strip() for line in text.strip().splitlines() if line.strip() and not line.startswith("hint:")]
        if lines:
            return f": {lines[-1]}"
    return ""


def _marker(ctx: ActionContext) -> str:
    return f"{ctx.run_id} {ctx.path}".strip()


# -- git-branch -----------------------------------------------------------------------------------


def git_branch(ctx: ActionContext, config: dict) -> dict:
    git = Git(ctx)
    git.prefix()
    name = str(config["name"])
    require_new = bool(config.get("requireNew", False))
    base = config.get("base")
    if (
        not name
        or name.startswith("-")
        or name == "HEAD"
        or git.run("check-ref-format", f"refs/heads/{name}").exit_code != 0
    ):
        raise StepError(
            "InvalidBranchName",
            f"'{name}' is not a valid branch name",
            guidance=(
                "branch names cannot start with `-` or hold spaces, `..`, `~`, `^`, `:`, `?`, `*`, `[` or `\\` "
                "(see `git check-ref-format`)"
            ),
        )
    mark_key = f"branch.{name}.{BRANCH_MARK}"
    marker = _marker(ctx)
    current = git.current_branch()
    if git.has_ref(f"refs/heads/{name}"):
        # Created by this very step before the run stopped: the same outcome as then.
        ours = (git.ask("config", "--get", mark_key) or "").strip() == marker
        if require_new and not ours:
            raise StepError(
                "BranchExists",
                f"the branch '{name}' already exists",
                guidance="choose another name, or drop `requireNew: true` to switch to the existing branch",
            )
        if current != name:
            _switch(git, name)
        return {"name": name, "created": ours}
    if current == name:
        return {"name": name, "created": False}  # a new repository, on this branch before its first commit
    if base is not None:
        base = str(base)
        if base.startswith("-") or not git.has_ref(f"{base}^{{commit}}"):
            raise StepError(
                "BaseNotFound",
                f"the base '{base}' of the new branch '{name}' is not a branch, tag or commit of this repository",
                guidance="name an existing branch, tag or commit (fetch it first when it lives on a remote)",
            )
        # --no-track: a branch started from origin/main must never push to main.
        start = ["--no-track", "-c", name, base]
    elif git.has_ref(f"refs/remotes/origin/{name}"):
        start = ["--track", "-c", name, f"origin/{name}"]  # the remote has it: continue it
    else:
        start = ["-c", name]
    # The mark goes first, so a run stopped right after the branch appeared still knows it.
    git.must("GitFailed", "config", mark_key, marker, show=False)
    try:
        _switch(git, *start)
    except BaseException:
        git.run("config", "--unset", mark_key)
        raise
    return {"name": name, "created": True}


def _switch(git: Git, *args: str) -> None:
    outcome = git.run("switch", *args, show=True)
    if outcome.exit_code == 0:
        return
    blocking = [
        git.local(line.strip()) for line in outcome.stderr.splitlines() if line.startswith("\t") and line.strip()
    ]
    if "would be overwritten" in outcome.stderr or blocking:
        target = args[-1] if "-c" not in args else args[args.index("-c") + 1]
        raise StepError(
            "DirtyWorkTree",
            (
                f"cannot switch to '{target}': "
                f"uncommitted changes would be overwritten: {', '.join(blocking) or 'see the log'}"
            ),
            guidance="commit the changes first (a git-commit step), or stash or discard them",
            metadata={"files": blocking, "stderr": outcome.stderr},
        )
    raise StepError(
        "GitFailed",
        f"`git switch` failed (exit code {outcome.exit_code}){_said(outcome)}",
        metadata={"exitCode": outcome.exit_code, "stderr": outcome.stderr},
    )


# -- git-commit -----------------------------------------------------------------------------------


def git_commit(ctx: ActionContext, config: dict) -> dict:
    git = Git(ctx)
    git.prefix()
    patterns = _patterns(ctx, config.get("files"))
    branch = git.current_branch()
    if branch is None:
        raise StepError(
            "DetachedHead",
            "HEAD is detached: a commit here would belong to no branch",
            guidance="switch to a branch first (a git-branch step)",
        )
    _refuse_protected(ctx, branch, "commit to")
    _refuse_github_protected(ctx, branch)
    settings = git.settings()
    _require_identity(settings)
    marker = _marker(ctx)

    chosen = [
        path for path in _changed(git) if not _state_file(ctx, path) and any(glob.matches(path) for _, glob in patterns)
    ]
    staged: list[str] = []
    if chosen:
        writes = [text for text, _ in patterns]
        git.must(
            "GitFailed",
            "add",
            "-A",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin="\0".join(chosen),
            writes=writes,
            env=_LITERAL,
        )
        wanted = set(chosen)
        # --relative: project-relative names, and nothing staged outside the project.
        staged = [
            p
            for p in _nul_list(
                git.must("GitFailed", "diff", "--cached", "--name-only", "--no-renames", "--relative", "-z", show=False)
            )
            if p in wanted
        ]

    if staged:
        # --only: what the user staged before, outside these files, stays staged and out of it.
        git.must(
            "GitCommitFailed",
            "commit",
            "--only",
            "-m",
            str(config["message"]),
            "-m",
            f"{TRAILER}: {marker}",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin="\0".join(staged),
            env=_LITERAL,
            guidance="a commit hook may have refused it; the files stay staged",
        )
        created = made = True
    else:
        # Nothing new: this step's commit from before the run stopped is the result, if any.
        created, made = False, _find_commit(git, marker) is not None
        if not made:
            ctx.log(
                "info", "nothing to commit: no changed file matches " + ", ".join(text for text, _ in patterns), None
            )

    _sync(ctx, git, branch, settings, pull=bool(config.get("pull", True)), push=bool(config.get("push", True)))

    ours = _find_commit(git, marker) if made else None  # found again: a rebase by the pull gave it a new sha
    if ours is not None:
        return {"sha": ours, "files": _commit_files(git, ours), "created": created}
    return {"sha": git.head() or "", "files": [], "created": False}


def _patterns(ctx: ActionContext, files: Any) -> list[tuple[str, Glob]]:
    """The `files` patterns, each checked as a write the playbook may make, compiled."""
    if files is None:
        try:
            ctx.gateway.check_pattern("**")
        except StepError as error:
            raise StepError(
                error.code,
                f"committing every changed file is refused: {error.message}",
                guidance="list the files to commit under `files:`, as patterns inside allowedWritePaths",
            ) from None
        return [("**", Glob.compile("**"))]
    texts = [files] if isinstance(files, str) else [str(f) for f in files]
    found = []
    for text in texts:
        placed = place(text)
        if placed.scratch:
            raise StepError(
                "InvalidConfig",
                f"'{text}' names the run's scratch space, which is not in the repository",
                guidance="commit files of the project",
            )
        ctx.gateway.check_pattern(text)
        try:
            found.append((text, Glob.compile(placed.path or text)))
        except GlobError as error:  # check_pattern refuses these first; kept for plugins' gateways
            raise StepError("InvalidConfig", f"'{text}' is not a valid file pattern: {error.message}") from None
    return found


def _changed(git: Git) -> list[str]:
    """Project-relative paths that differ from HEAD (staged or not, new, deleted), ignored files aside."""
    out = git.must(
        "GitFailed",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--",
        ".",
        show=False,
        env={"GIT_OPTIONAL_LOCKS": "0"},
    )
    paths = []
    for entry in _nul_list(out):
        if len(entry) > 3:
            paths.append(git.local(entry[3:]))
    return sorted(set(paths))


def _nul_list(text: str) -> list[str]:
    return [item for item in text.split("\0") if item and item != "\n"]


def _state_file(ctx: ActionContext, path: str) -> bool:
    """Under catalyst's run state (snapshots, locks, the approval key): never committed."""
    return any(
        path == d or path.startswith(d.rstrip("/") + "/") for d in ctx.gateway.protected if d and not d.startswith("..")
    )


def protecting_pattern(settings, branch: str) -> str | None:
    """The `protected-branches` pattern that protects `branch`, or None."""
    for pattern in tuple(getattr(settings, "protected_branches", ()) or ()):
        if fnmatch.fnmatchcase(branch, pattern):
            return pattern
    return None


def _refuse_protected(ctx: ActionContext, branch: str, verb: str) -> None:
    if protecting_pattern(ctx.settings, branch) is not None:
        raise StepError(
            "ProtectedBranch",
            f"'{branch}' is a protected branch; catalyst does not {verb} it directly",
            guidance="switch to a working branch first (a git-branch step) and open a pull request; "
            "protected branches are the `protected-branches` setting",
        )


def _refuse_github_protected(ctx: ActionContext, branch: str) -> None:
    """ProtectedBranch when GitHub protects `branch`. The pre-flight asked already for the
    commits it could follow, but a git-branch step skipped by its condition, one whose name
    is known only at run time, or a called playbook can leave a commit on another branch."""
    from catalyst_dsl.runtime.actions.github import protection_or_warning

    repository = protection_or_warning(ctx, branch, lambda text: ctx.log("warning", text, None))
    if repository is not None:
        raise StepError(
            "ProtectedBranch",
            f"'{branch}' is protected by GitHub's branch protection of {repository}; "
            "catalyst does not commit to it directly",
            guidance="switch to a working branch first (a git-branch step) and open a pull request",
        )


def _require_identity(settings: dict[str, str]) -> None:
    """git needs a name and an e-mail for the author and the committer; we never invent them."""
    missing = []
    for role in ("author", "committer"):
        upper = role.upper()
        if not (os.environ.get(f"GIT_{upper}_NAME") or settings.get(f"{role}.name") or settings.get("user.name")):
            missing.append(f"the {role}'s name")
        if not (
            os.environ.get(f"GIT_{upper}_EMAIL")
            or settings.get(f"{role}.email")
            or settings.get("user.email")
            or os.environ.get("EMAIL")
        ):
            missing.append(f"the {role}'s e-mail")
    if missing:
        raise StepError(
            "GitIdentityMissing",
            f"git does not know who commits: {', '.join(missing)} is not configured",
            guidance='set it: git config user.name "Your Name" && git config user.email you@example.com '
            "(add --global for every repository), or set GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL and "
            "GIT_COMMITTER_NAME/GIT_COMMITTER_EMAIL",
        )


def _find_commit(git: Git, marker: str) -> str | None:
    """The newest commit on the current branch whose `Catalyst-Run` trailer is exactly `marker`."""
    out = git.ask(
        "log", "-F", f"--grep={TRAILER}: {marker}", f"--format=%H%x00%(trailers:key={TRAILER},valueonly)%x1e", "HEAD"
    )
    for record in (out or "").split("\x1e"):
        sha, _, values = record.strip("\n").partition("\0")
        if sha and marker in (value.strip() for value in values.splitlines()):
            return sha.strip()
    return None


def _commit_files(git: Git, sha: str) -> list[str]:
    out = git.must(
        "GitFailed",
        "diff-tree",
        "--no-commit-id",
        "--name-only",
        "-r",
        "-z",
        "--root",
        "--no-renames",
        "--relative",
        sha,
        show=False,
    )
    return _nul_list(out)


def _sync(ctx: ActionContext, git: Git, branch: str, settings: dict[str, str], *, pull: bool, push: bool) -> None:
    """Bring in the upstream's new commits (rebasing ours on them), then push."""
    remote = settings.get(f"branch.{branch}.remote")
    merge = settings.get(f"branch.{branch}.merge")
    tracked = remote is not None and remote != "." and merge is not None
    if pull and tracked:
        outcome = git.run("pull", "--rebase", "--autostash", show=True)
        if outcome.exit_code != 0:
            stopped = [git.ask("rev-parse", "--git-path", d) for d in ("rebase-merge", "rebase-apply")]
            if any(p and os.path.isdir(os.path.join(ctx.root, p.strip())) for p in stopped):
                git.run("rebase", "--abort", show=True)  # leave the branch as it was, our commit on it
            raise StepError(
                "GitPullFailed",
                f"`git pull --rebase` from {remote} failed{_said(outcome)}",
                guidance="the branch is as it was before the pull; resolve by hand (git pull --rebase), then resume",
                metadata={"exitCode": outcome.exit_code, "stderr": outcome.stderr},
            )
    if not push:
        return
    if tracked:
        target = merge[len("refs/heads/") :] if merge.startswith("refs/heads/") else merge
        _refuse_protected(ctx, target, "push to")
        argv = ["push", remote, f"HEAD:{merge}"]
    elif "remote.origin.url" in settings:
        _refuse_protected(ctx, branch, "push to")
        argv = ["push", "-u", "origin", f"refs/heads/{branch}:refs/heads/{branch}"]
    else:
        ctx.log("info", f"not pushed: '{branch}' has no upstream and the repository has no `origin` remote", None)
        return
    outcome = git.run(*argv, show=True)
    if outcome.exit_code != 0:
        rejected = "rejected" in outcome.stderr or "non-fast-forward" in outcome.stderr
        raise StepError(
            "GitPushFailed",
            f"`git push` to {argv[-2]} failed{_said(outcome)}",
            guidance=(
                (
                    "the remote has commits this branch lacks: keep `pull: true` (the default) "
                    "or pull and resolve by hand, then resume"
                )
                if rejected
                else "check the remote, the network and your credentials, then resume"
            ),
            metadata={"exitCode": outcome.exit_code, "stderr": outcome.stderr},
        )


ACTIONS = {"git-branch": git_branch, "git-commit": git_commit}
