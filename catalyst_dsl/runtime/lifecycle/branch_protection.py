"""Branch protection, checked before a run's first step: a run that would commit to a
protected branch is refused before it changes anything, instead of failing at the commit
after its steps have written their files.

Which branch each `git-commit` commits to is read from the playbook in document order:
the branch checked out when the run starts, or the one the last `git-branch` step before
it switches to, its name rendered with the inputs. From a `git-branch` whose name is
known only at run time (it needs a step's result), the branch is unknown, and the
commits after it are checked when they run, as every commit is (by the setting and by
GitHub: actions/git.py). So are commits in called playbooks, and a commit left on another
branch because a `git-branch` step's condition skipped it.

A branch is protected when the `protected-branches` setting matches it, or when GitHub
says so: with a GitHub token and an `origin` on GitHub, one request a branch reads its
protection (`GET /repos/O/R/branches/B`). When GitHub cannot be asked (no answer, no
access), the run is told and goes on: GitHub still refuses the push.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.errors import EXIT_FAILED, RunAbort, StepError


def commits(playbook: ir.Playbook, start: str | None, env) -> Iterator[tuple[ir.Step, str]]:
    """Each `git-commit` step whose branch is known before the run, with that branch."""
    from catalyst_dsl.runtime.values.evaluate import materialize, to_text

    branch = start
    for step in ir.all_steps(playbook):
        if step.action == "git-branch":
            try:
                branch = to_text(materialize(step.config.get("name"), env))
            except StepError:
                branch = None
        elif step.action == "git-commit" and branch:
            yield step, branch


def refuse_protected_commits(
    playbook: ir.Playbook,
    env,
    ctx: ActionContext,
    warn: Callable[[str], None],
) -> None:
    """RunAbort(2) naming the first commit that would land on a protected branch: by the
    setting, or by GitHub when it can be asked."""
    from catalyst_dsl.runtime.actions.git import Git
    from catalyst_dsl.runtime.actions.github import protection_or_warning

    asked: dict[str, str | None] = {}

    def github(branch: str) -> str | None:
        if branch not in asked:
            asked[branch] = protection_or_warning(ctx, branch, warn)
        return asked[branch]

    refusal = protected_commit(playbook, env, Git(ctx).current_branch(), ctx.settings, github)
    if refusal is not None:
        raise RunAbort(
            EXIT_FAILED,
            refusal + "; nothing was run",
            help=REFUSAL_HELP,
        )


REFUSAL_HELP = (
    "commit on a working branch: add a git-branch step before it (or switch branches), and open a pull request"
)


def protected_commit(
    playbook: ir.Playbook,
    env,
    start: str | None,
    settings,
    github: Callable[[str], str | None] = lambda branch: None,
) -> str | None:
    """What is wrong with the first commit that would land on a protected branch, or None.
    `start`: the branch checked out; `github(branch)`: the repository whose GitHub
    protection covers it, or None."""
    from catalyst_dsl.runtime.actions.git import protecting_pattern

    for step, branch in commits(playbook, start, env):
        pattern = protecting_pattern(settings, branch)
        if pattern is not None:
            why = f"the protected-branches setting ('{pattern}')"
        else:
            repository = github(branch)
            if repository is None:
                continue
            why = f"GitHub's branch protection of {repository}"
        how = "is checked out" if branch == start else "a git-branch step before it switches to"
        return f"step {_named(step)} would commit to '{branch}' (the branch {how}), protected by {why}"
    return None


def _named(step: ir.Step) -> str:
    if step.name:
        return f"'{step.name}'"
    return f"{step.action} at line {step.span.line}" if step.span is not None else step.action


def preflight_context(run_id: str, gateway, settings, secret: Callable[[str], Any], log) -> ActionContext:
    """What the pre-flight's git and GitHub queries see: the run's gateway, no step."""
    return ActionContext(
        run_id=run_id,
        step_id="pre-flight",
        action="git-commit",
        gateway=gateway,
        writes=(),
        timeout=30.0,
        log=log,
        output=lambda stream, line: None,
        adapter=lambda name: None,
        settings=settings,
        secret=secret,
    )
