"""Library checks of kai playbooks: the catalogue `.playbooks/_index.yaml` (KAI-20), which
is checked, never read as a playbook. The command files their steps run (KAI-13) are
C635, the rule of every `ai-prompt` naming a slash command (checks/rules/slash_commands.py).

kai's reader is loaded only when a kai playbook is among the files checked."""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl.diagnostics.ids import KAI_INDEX_MISMATCH, KAI_INDEX_MISSING_ENTRY, UNREADABLE_FILE
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.checks.library_view import LibraryView
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_nodes import YMap, YScalar, YSeq, head_span

INDEX = "_index.yaml"
TEMPLATE = "playbook.tpl.yaml"


def check_kai(library: LibraryView, files: list[str], sink: DiagnosticSink) -> dict[str, SourceFile]:
    """Report on the kai playbooks among `files`; returns the index files read (for rendering)."""
    if not any((pb := library.compiled(f).playbook) is not None and pb.dialect == "kai" for f in files):
        return {}
    from catalyst_dsl.dialects.kai import model as kai

    read: dict[str, SourceFile] = {}
    folders: list[Path] = []
    for path in files:
        compiled = library.compiled(path)
        if compiled.playbook is None or compiled.playbook.dialect != kai.DIALECT or compiled.source is None:
            continue
        folder = _kai_folder(path)
        if folder is None:
            continue  # kai runs only the playbooks in its folder: its commands and index are for those
        if folder not in folders:
            folders.append(folder)
    for folder in folders:
        index = folder / INDEX
        if library.facts.is_file(index):
            source = _index(index, library, {library.facts.resolved(f) for f in files}, sink)
            if source is not None:
                read[str(index)] = source
    return read


def _kai_folder(path: str) -> Path | None:
    """`<root>/.playbooks` when `path` is a playbook in `<root>/.playbooks/playbooks/`."""
    p = Path(path)
    if p.parent.name == "playbooks" and p.parent.parent.name == ".playbooks":
        return p.parent.parent
    return None


def _index(index: Path, library: LibraryView, checked: set[str], sink: DiagnosticSink) -> SourceFile | None:
    from catalyst_dsl.syntax.yaml_loader import decode, load_yaml

    try:
        data = library.facts.read_bytes(index)
    except OSError as exc:
        sink.report(
            UNREADABLE_FILE,
            f"cannot read the kai index: {exc.strerror or exc}",
            SourceFile(str(index), "").span(0),
            help="check that it is readable",
        )
        return None
    source = decode(data, str(index), sink)
    if source is None:
        return None
    root = load_yaml(source, sink)
    if root is None:
        return source
    entries = root.get("playbooks") if isinstance(root, YMap) else None
    if not isinstance(entries, YSeq):
        sink.report(
            KAI_INDEX_MISMATCH,
            "the kai index has no `playbooks:` list",
            head_span(root),
            help="write `playbooks:` with one entry (name, file, description, steps) per playbook",
        )
        return source
    folder = index.parent
    listed: set[str] = set()
    for entry in entries.items:
        if not isinstance(entry, YMap):
            sink.report(
                KAI_INDEX_MISMATCH,
                "an entry of the kai index is a mapping with name, file, description and steps",
                head_span(entry),
            )
            continue
        file_node = entry.get("file")
        if not isinstance(file_node, YScalar) or not file_node.text:
            sink.report(
                KAI_INDEX_MISMATCH,
                "this entry of the kai index names no `file`",
                head_span(entry),
                help="add `file: playbooks/<name>.yaml`",
            )
            continue
        target = Path(library.facts.resolved(folder / file_node.text))
        listed.add(str(target))
        if not library.facts.is_file(target):
            sink.report(
                KAI_INDEX_MISMATCH,
                f"the kai index lists {file_node.text}, which does not exist",
                file_node.span,
                help="remove the entry, or restore the playbook",
            )
            continue
        _compare(entry, target, library, sink)
    playbooks = folder / "playbooks"
    for name in library.facts.listdir(playbooks) or ():
        candidate = library.facts.resolved(playbooks / name)
        if name.endswith(".yaml") and name != TEMPLATE and candidate in checked and candidate not in listed:
            sink.report(
                KAI_INDEX_MISSING_ENTRY,
                f"the kai index does not list playbooks/{name}",
                head_span(entries) if entries.items else head_span(root),
                help="add an entry for it (kai's /playbook.create does), so kai's catalogue shows it",
            )
    return source


def _compare(entry: YMap, target: Path, library: LibraryView, sink: DiagnosticSink) -> None:
    # loaded by check_kai already
    from catalyst_dsl.dialects.kai import model as kai
    from catalyst_dsl.dialects.kai import reader as kai_reader

    compiled = library.compiled(str(target))
    if compiled.source is None or compiled.playbook is None or compiled.playbook.dialect != kai.DIALECT:
        return
    document = kai_reader.read(compiled.source)
    if document is None:
        return
    actual = {
        "name": document.name.text if document.name else "",
        "description": document.description,
        "steps": str(len(document.steps)),
    }
    for key, value in actual.items():
        node = entry.get(key)
        written = node.text if isinstance(node, YScalar) else None
        if written is not None and written.strip() != value.strip():
            sink.report(
                KAI_INDEX_MISMATCH,
                f"the kai index says {key} '{written}', but {target.name} has '{value}'",
                node.span,
                labels=[Label(compiled.playbook.span, "the playbook")] if compiled.playbook.span else (),
                help=f"write {key}: \"{value}\" in the index",
            )
