"""The check a run or a what-if starts with: the playbook with what it calls, checked as
`catalyst check` checks it, or RunAbort(1) with every error that check would print.

Kept apart from the session so that a what-if of a file can be refused before the
run-time (interpreter, actions, state) is imported: a playbook the check refuses then
costs what `catalyst check` costs.
"""

from __future__ import annotations

import os

from catalyst_dsl.project.config import Project, relative_to_root
from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort


def checked(project: Project, file: str, *, cached: bool = False):
    """The `LibraryCheck` of `file` (its `library.compiled(file).playbook` is runnable), or
    RunAbort. `cached`: files the check cache holds are read from it, and no entry is
    written (a what-if changes nothing)."""
    from catalyst_dsl.project.check import check_project
    from catalyst_dsl.project.cache.store import CheckCache
    from catalyst_dsl.diagnostics.text import render_text, summary_line

    cache = CheckCache.for_project(project, read_only=True) if cached else None
    # The settings' own problems too (C801): a setting the run would silently take at its
    # default (`require-confinement = "true"`, a string) must stop it as it fails `check`.
    result = check_project(project, [file], cache=cache, advice=False, settings=settings_problems(project))
    compiled = result.library.compiled(file)
    if result.has_errors or compiled.playbook is None:
        errors = [d for d in result.diagnostics if d.severity.value == "error"]
        text = render_text(errors, result.sources, relative_to=os.getcwd())
        from catalyst_dsl.diagnostics.ids import BAD_SETTINGS

        shown = relative_to_root(project, file)
        settings = sum(d.code == BAD_SETTINGS for d in errors)
        what = (
            f"{shown} has errors"
            if not settings
            else "the project's settings have errors"
            if settings == len(errors)
            else f"{shown} and the project's settings have errors"
        )
        raise RunAbort(
            EXIT_INVALID,
            f"{what}; nothing was run",
            help="fix them (`catalyst check` shows the same)",
            details=(text, summary_line(errors, 1)),
        )
    if compiled.playbook.unrunnable:
        reasons = "; ".join(compiled.playbook.unrunnable)
        raise RunAbort(
            EXIT_INVALID,
            f"{relative_to_root(project, file)} is a {compiled.playbook.dialect} playbook this version can check but "
            f"not run: {reasons}; nothing was run",
            help="`catalyst check` and `catalyst compile` read it; running it needs a later version of catalyst",
        )
    return result


def settings_problems(project: Project) -> list:
    """What reading the project's settings (and the user's own) found, as `check` reports it."""
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project

    sink = DiagnosticSink()
    load_project(project.root, sink)
    return sink.sorted()
