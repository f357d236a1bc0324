"""Library checks on playbook names: each in a file of its name (C803), none used twice (C802).

Calls by name reach the first playbook of a name, found by location: a file named unlike
its playbook, or two playbooks of one name, make a call reach a playbook not meant.
"""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl.diagnostics.ids import DUPLICATE_PLAYBOOK, FILE_NAME_MISMATCH
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
                help=f"rename the file to {pb.name}{Path(path).suffix}, or the playbook to '{stem}'",
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
