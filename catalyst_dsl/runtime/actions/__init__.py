"""Implementations of the built-in actions the interpreter runs itself.

The catalog (`catalyst_dsl.actions`) declares every action; this package holds the
code of those that act. Control actions (`if`, `for-each`, `playbook`…) and
`checkpoint` are the interpreter's own, because they run other steps or pause the run.

Each module is imported the first time a step uses one of its actions, so a run or a
what-if pays for the actions its playbook uses (git, GitHub and HTTP bring their own
helpers), not for all of them.
"""

from __future__ import annotations

import importlib
from typing import Callable

#: module of this package -> the actions it implements (its `ACTIONS`, which
#: tests/runtime/actions/test_action_modules.py holds equal to this list).
MODULES: dict[str, tuple[str, ...]] = {
    "files": (
        "file-read",
        "file-write",
        "file-delete",
        "file-exists",
        "file-list",
        "gitignore-edit",
        "json-read",
        "json-write",
    ),
    "process": ("bash", "command"),
    "script": ("script", "powershell"),
    "testing": ("test",),
    "console": ("display", "log-error", "log-warning", "log-info", "log-verbose", "log-debug", "log-trace"),
    "ai": ("ai-prompt", "markdown"),
    "git": ("git-branch", "git-commit"),
    "http": ("http-get", "http-post", "http-put", "http-patch", "http-delete"),
    "github": ("github-repo", "github-issue-create", "github-issue-comment", "github-pr-create", "github-pr-comment"),
}

_MODULE_OF = {action: module for module, actions in MODULES.items() for action in actions}


class _Implementations(dict):
    """action name -> run(ctx, config) -> result; a module's actions are added when the
    first of them is asked for (`[]`, `get`; `in` answers without loading). Iterating
    lists only the actions loaded so far. An entry put here (a test's stand-in) is kept:
    loading its module later does not replace it."""

    def __missing__(self, action: str) -> Callable:
        module = _MODULE_OF.get(action)
        if module is None:
            raise KeyError(action)
        for name, run in importlib.import_module(f"{__name__}.{module}").ACTIONS.items():
            self.setdefault(name, run)
        return dict.__getitem__(self, action)

    def get(self, action: str, default: Callable | None = None) -> Callable | None:
        try:
            return self[action]
        except KeyError:
            return default

    def __contains__(self, action: object) -> bool:
        return dict.__contains__(self, action) or action in _MODULE_OF


IMPLEMENTATIONS: dict[str, Callable] = _Implementations()
