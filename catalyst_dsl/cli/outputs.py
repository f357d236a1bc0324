"""The files a command writes where the user says (`check --output-file`, `graph -o`,
`run --what-if-report`): never a playbook, which the report or picture would replace."""

from __future__ import annotations

import os
from typing import Iterable

import click


def refuse_replacing(output: str | None, files: Iterable[str], option: str, what: str, whose: str) -> None:
    """A usage error when `output` is one of `files` (through a link or another name too):
    `what` ("the report") would take the place of a playbook `whose` names ("this check
    reads")."""
    if output is None or not os.path.exists(output):
        return
    for path in files:
        try:
            same = os.path.samefile(output, path)
        except OSError:
            continue
        if same:
            raise click.BadParameter(
                f"'{output}' is a playbook {whose}: {what} would replace it; name another file", param_hint=option
            )


def project_playbooks() -> list[str]:
    """The playbooks of the project the working directory is in (none are compiled)."""
    from pathlib import Path

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.project.library import Library

    return Library(load_project(Path.cwd(), DiagnosticSink())).files


def refuse_nowhere(output: str | None, option: str) -> None:
    """A usage error (exit 2) for an output path that names no place a file can be made:
    empty, or in a folder that does not exist. Found before any work, and never taken for
    the exit status of the work (a check's 1 means findings)."""
    if output is None:
        return
    if not output:
        raise click.BadParameter("an empty path names no file", param_hint=option)
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise click.BadParameter(f"'{output}': there is no folder {folder} to write it in", param_hint=option)
