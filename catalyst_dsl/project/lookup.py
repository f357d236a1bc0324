"""A playbook named on the command line (`catalyst run NAME`, `catalyst compile NAME`):
a file, or a name looked up in the project's playbook folders as calls look it up."""

from __future__ import annotations

import os
from pathlib import Path

from catalyst_dsl.project.library import Library


class PlaybookNotFound(Exception):
    """No file and no playbook of that name: the message, and the fix to offer."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


def locate(library: Library, name: str) -> str:
    """The absolute path of the playbook `name` (a file, or a playbook name); a file whose
    stem is the name but that does not compile is returned too, for its errors to be shown."""
    if os.path.isfile(name):
        return os.path.abspath(name)
    found = library.named(name)
    if found:
        return found[0]
    broken = [f for f in library.files if Path(f).stem == name]
    if broken:
        return broken[0]
    from catalyst_dsl.dialects.values import suggest

    hint = suggest(name, library.names())
    project = library.project
    root = project.root
    marker = (
        ""
        if project.config_file is not None or (root / ".git").exists() or (root / "pyproject.toml").exists()
        else "; no catalyst.toml, pyproject.toml or .git was found above it, so the working directory is the root"
    )
    raise PlaybookNotFound(
        f"no playbook named `{name}` in {library.searched_folders()} (project root {root}{marker})",
        hint or "`catalyst list` shows the playbooks; a path to a playbook file works too",
    )
