"""Telling a confined program's failure from a write the kernel refused it.

Landlock refuses with EACCES, which programs report as "Permission denied" (or node's
"EACCES: permission denied") next to the path. A failed program whose stderr says so
about a path outside its confinement failed because of the confinement: the step's
error is PermissionDenied naming that path. When the words are there but no path can
be read from them, the error still says a write may have been refused.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.performing import ProcessOutcome

#: Landlock refuses with EACCES; a read-only mount (`.git/`, the state directory) with EROFS.
from catalyst_dsl.runtime.effects.beneath import is_within

_DENIED = re.compile(r"permission denied|operation not permitted|read-only file system", re.IGNORECASE)
#: A quoted path on the line: '…', "…", ‘…’ or `…'.
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"|‘([^’]+)’|`([^']+)'")
#: The words before ": Permission denied" (bash, sh, git): the path is their last word.
_BEFORE = re.compile(
    r"(?:^|: )([^:]+): (?:permission denied|operation not permitted|read-only file system)", re.IGNORECASE
)


def explain_refusal(outcome: ProcessOutcome, confinement, cwd: Path) -> None:
    """Raise PermissionDenied when the failure reads as a refused write; else return."""
    lines = [line for line in outcome.stderr.splitlines() if _DENIED.search(line)]
    if not lines:
        return
    writable = confinement.writable_paths()
    metadata = {"stdout": outcome.stdout, "stderr": outcome.stderr, "exitCode": outcome.exit_code}
    may = ", ".join(confinement.shown()["mayWrite"])
    help = (
        "declare what it writes under the step's writes: (inside allowedWritePaths), or write to temp://; "
        ".git/ and the state directory are never writable to programs"
    )
    for line in lines:
        for written in _paths_on(line):
            path = Path(os.path.abspath(os.path.join(cwd, written)))
            if not any(
                is_within(path, Path(os.path.abspath(w)))
                or is_within(Path(os.path.realpath(path)), Path(os.path.realpath(w)))
                for w in writable
            ):
                _refuse_new_entry(confinement, path, written, metadata)
                raise StepError(
                    "PermissionDenied",
                    f"the program was refused a write to '{written}' by its confinement: it may write only "
                    f"beneath {may}",
                    guidance=help,
                    metadata={**metadata, "path": written},
                )
    raise StepError(
        "PermissionDenied",
        f"the program exited with code {outcome.exit_code} after 'Permission denied' "
        f"({lines[-1].strip()}): its confinement may have refused a write; it may write only beneath {may}",
        guidance=help,
        metadata=metadata,
    )


def _refuse_new_entry(confinement, path: Path, written: str, metadata: dict) -> None:
    """PermissionDenied saying why, when `path` would be a new entry of a declared directory
    that holds `.git/` or the state directory (the project root, for `writes: [report.md]`):
    such a directory is granted entry by entry around what no program writes, so only the
    entries it had when the program started are writable. Else nothing."""
    root = Path(os.path.realpath(confinement.root))
    parent = Path(os.path.realpath(path.parent))
    if os.path.lexists(path) or not is_within(parent, root):
        return
    relative = "" if parent == root else parent.relative_to(root).as_posix()
    if not confinement.closed_to_new_entries(relative):
        return
    where = "the project root" if relative == "" else f"'{relative}/'"
    raise StepError(
        "PermissionDenied",
        f"the program was refused creating '{written}': {where} holds .git/ or the state directory, which no "
        f"program writes, so a program may write only the entries it already had there, not add one",
        # The name as a YAML string (JSON's quoting is YAML's): one holding a quote or a
        # backslash must not make the suggested line break the playbook it is pasted into.
        guidance=f"write it in a folder of its own (writes: [{json.dumps('out/' + path.name)}]), or create it"
        " with a file-write step before the program runs",
        metadata={**metadata, "path": written},
    )


def _paths_on(line: str) -> list[str]:
    found = [next(g for g in match.groups() if g) for match in _QUOTED.finditer(line)]
    match = _BEFORE.search(line)
    if match:
        words = match.group(1).strip().split()
        if words:
            found.append(words[-1])
    return [path for path in found if path and "\0" not in path]
