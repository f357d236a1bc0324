"""Library checks on playbook names: each in a file of its name (C803), none used twice (C802).

Calls by name reach the first playbook of a name, found by location: a file named unlike
its playbook, or two playbooks of one name, make a call reach a playbook not meant.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalyst_dsl.diagnostics.ids import DUPLICATE_PLAYBOOK, FILE_NAME_MISMATCH
from catalyst_dsl.dialects.native.vocabulary import KEBAB
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.checks.library_view import LibraryView, twins


def check_names(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    """C803 for a file stem that is not the playbook's name; C802 for a name used twice."""
    files = set(files)
    first_of: dict[str, str] = {}
    loaded = library.loaded()
    for path in library.files:
        if path not in loaded:
            continue
        pb = loaded[path].playbook
        if pb is None:
            continue
        stem = Path(path).stem
        if path in files and pb.name != stem and pb.dialect != "markdown":
            sink.report(
                FILE_NAME_MISMATCH,
                f"the playbook '{pb.name}' is in the file '{Path(path).name}'",
                pb.span,
                help=_renaming(pb.name, stem, Path(path).suffix),
            )
        first = first_of.setdefault(pb.name, path)
        if first != path and (path in files or first in files) and not twins(first, path):
            other = library.compiled(first).playbook
            sink.report(
                DUPLICATE_PLAYBOOK,
                f"two playbooks are named '{pb.name}'",
                pb.span,
                labels=[Label(other.span, "this one is found first and wins")]
                if other is not None and other.span
                else (),
                help="rename one of them: calls by name reach only the first",
            )


def _renaming(name: str, stem: str, suffix: str) -> str:
    """The fix of a file named unlike its playbook, offering only names C206 accepts: a
    file stem that is not kebab-case is no name for the playbook, and a playbook name that
    is not kebab-case is no name for the file."""
    name_ok, stem_ok = bool(KEBAB.match(name)), bool(KEBAB.match(stem))
    if name_ok and stem_ok:
        return f"rename the file to {name}{suffix}, or the playbook to '{stem}'"
    if name_ok:
        return f"rename the file to {name}{suffix} ('{stem}' is not kebab-case, so it cannot be the playbook's name)"
    if stem_ok:
        return f"rename the playbook to '{stem}'"
    fixed = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "my-playbook"
    return f"rename the playbook to a kebab-case name, such as '{fixed}', and the file to {fixed}{suffix}"
