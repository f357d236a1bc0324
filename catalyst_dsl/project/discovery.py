"""Playbook files: where a scan finds them, and how much of one is ever read.

Apart from the compiler so that a check answered from the check cache can list the
playbook folders again without loading the compiler.
"""

from __future__ import annotations

import os
from typing import Callable

#: A playbook is hand-written; a file this large is something else, and reading it
#: would cost time and memory for nothing.
MAX_FILE_BYTES = 5 * 1024 * 1024
PLAYBOOK_SUFFIXES = (".yaml", ".yml", ".md")


def discover(paths: list[str], skip: Callable[[str, bool], bool] | None = None) -> list[str]:
    """Playbook files under the given files and directories, in a stable order.

    Hidden folders are skipped, except those a dialect keeps its playbooks in (and only the
    playbooks there: kai's session files beside them are not playbooks). `skip(path,
    is_dir)` says what else a directory scan passes over (project/scan.py: what
    `.gitignore` ignores, the `exclude` settings); files named in `paths` are not asked.
    """
    from catalyst_dsl.dialects import registry

    suffixes = PLAYBOOK_SUFFIXES + registry.scanned_suffixes()
    hidden = registry.hidden_folders()
    found: dict[str, None] = {}  # a file once, though two of `paths` hold it (nested playbook folders)
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                hidden_part = _from_first_hidden(os.path.relpath(root, path))
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if _may_enter((*hidden_part, d), hidden) and not (skip and skip(os.path.join(root, d), True))
                )
                for name in sorted(files):
                    candidate = os.path.join(root, name)
                    if hidden_part and registry.by_place(candidate) is None:
                        continue
                    if (
                        name.endswith(suffixes)
                        and name.lower() not in ("readme.md", "changelog.md")
                        and not registry.not_playbook(candidate)
                        and not (skip and skip(candidate, False))
                    ):
                        found[candidate] = None
        else:
            found[path] = None
    return list(found)


def discover_folders(folders: list[str]) -> list[str]:
    """The playbooks in the playbook folders that exist (a library's every file)."""
    return discover([d for d in folders if os.path.isdir(d)])


def _from_first_hidden(relative: str) -> tuple[str, ...]:
    """The components of `relative` from its first hidden one on (empty when none is hidden)."""
    parts = [p for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    first = next((i for i, p in enumerate(parts) if p.startswith(".") and p != ".xe"), None)
    return () if first is None else tuple(parts[first:])


def _may_enter(parts: tuple[str, ...], hidden: tuple[tuple[str, ...], ...]) -> bool:
    """Whether a scan enters a folder: `parts` are its components from the first hidden one."""
    if len(parts) == 1 and (not parts[0].startswith(".") or parts[0] == ".xe"):
        return True
    return any(folder[: len(parts)] == parts for folder in hidden)
