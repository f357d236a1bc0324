"""Implementations of the built-in actions the interpreter runs itself.

The catalog (`catalyst_dsl.actions`) declares every action; this package holds the
code of those that act. Control actions (`if`, `for-each`, `playbook`…) and
`checkpoint` are the interpreter's own, because they run other steps or pause the run.
"""

from __future__ import annotations

from typing import Callable

from catalyst_dsl.runtime.actions import ai, console, files, git, process, script, testing

#: action name -> run(ctx, config) -> result
IMPLEMENTATIONS: dict[str, Callable] = {
    **files.ACTIONS, **process.ACTIONS, **console.ACTIONS, **ai.ACTIONS, **git.ACTIONS, **testing.ACTIONS, **script.ACTIONS,
}

#: Catalog actions that reach systems outside the project; they arrive with the issue
#: "Actions that reach the outside world" and are refused until then, never faked.
OUTSIDE_WORLD = (
    "http-get", "http-post", "http-put", "http-patch", "http-delete",
    "github-issue-create", "github-issue-comment", "github-pr-create", "github-pr-comment", "github-repo",
)
