"""Implementations of the built-in actions the interpreter runs itself.

The catalog (`catalyst_dsl.actions`) declares every action; this package holds the
code of those that act. Control actions (`if`, `for-each`, `playbook`…) and
`checkpoint` are the interpreter's own, because they run other steps or pause the run.
"""

from __future__ import annotations

from typing import Callable

from catalyst_dsl.runtime.actions import ai, console, files, git, github, http, process, script, testing

#: action name -> run(ctx, config) -> result
IMPLEMENTATIONS: dict[str, Callable] = {
    **files.ACTIONS, **process.ACTIONS, **console.ACTIONS, **ai.ACTIONS, **git.ACTIONS, **testing.ACTIONS, **script.ACTIONS,
    **http.ACTIONS, **github.ACTIONS,
}
