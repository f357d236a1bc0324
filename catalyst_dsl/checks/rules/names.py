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
from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.source import Span


def check_names(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    """C803 for a file stem that is not the playbook's name; C802 for a name used twice."""
    check_file_names(library, files, sink)
    report_duplicates(name_cards(library, library.files), files, sink)


def check_file_names(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    """C803: each file checked is named as its playbook (a Markdown playbook's name is its stem)."""
    loaded = library.loaded()
    for path in files:
        pb = loaded[path].playbook if path in loaded else None
        if pb is None:
            continue
        stem = Path(path).stem
        if pb.name != stem and pb.dialect != "markdown":
            sink.report(
                FILE_NAME_MISMATCH,
                f"the playbook '{pb.name}' is in the file '{Path(path).name}'",
                pb.span,
                help=_renaming(pb.name, stem, Path(path).suffix),
            )


@record
class NameCard:
    """What C802 needs of one playbook: its file, its name and where the name is written
    (a check split across processes, `project.shards`, sends these back, not playbooks)."""

    path: str
    name: str
    span: Span | None


def name_cards(library: LibraryView, paths: list[str]) -> list[NameCard]:
    """The cards of the loaded playbooks among `paths`, in the order of `paths`."""
    loaded = library.loaded()
    return [NameCard(path, pb.name, pb.span) for path in paths if path in loaded and (pb := loaded[path].playbook)]


def report_duplicates(cards: list[NameCard], files: list[str], sink: DiagnosticSink) -> None:
    """C802 for each playbook named as one before it in the library's order (`cards` are in
    that order), when one of the two is checked."""
    files = set(files)
    first_of: dict[str, NameCard] = {}
    for card in cards:
        first = first_of.setdefault(card.name, card)
        if first is not card and (card.path in files or first.path in files) and not twins(first.path, card.path):
            sink.report(
                DUPLICATE_PLAYBOOK,
                f"two playbooks are named '{card.name}'",
                card.span,
                labels=[Label(first.span, "this one is found first and wins")] if first.span else (),
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
