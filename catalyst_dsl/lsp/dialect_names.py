"""Go to definition and find references in kai playbooks and cleo cantbooks.

Each file is read by its dialect's own reader (`kai.reader.read`, `cleo.reader.Reader`), so a name is
found where the dialect reads it, with the spans the reader gives: kai's `{{ arg }}` in a
step's `args` (kai's own `references`) and the arg's declaration; cleo's node ids after
`from:`, `to:`, `depends:`, `inject_into:` and `requires.from:` and the node's `id`;
cleo's `{{ name }}` and `{{ inputs.name }}` in the values cleo renders
(`template_scalars`) and the input's declaration. A file that does not read answers
nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Optional

from catalyst_dsl._internal.records import record

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.cleo import vocabulary as cleo
from catalyst_dsl.dialects.cleo.model import PLACEHOLDER, Cantbook
from catalyst_dsl.dialects.cleo.reader import Reader as CleoReader
from catalyst_dsl.dialects.cleo.rules import template_scalars
from catalyst_dsl.dialects.kai import model as kai
from catalyst_dsl.dialects.kai import reader as kai_reader
from catalyst_dsl.dialects.kai import templates as kai_templates
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.source import SourceFile, Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YScalar, YSeq


@record
class Name:
    """A name of a dialect file: where it is declared and every place that names it."""

    #: "arg" (kai), "group" (kai's parallel_group), "node" or "input" (cleo).
    kind: str
    name: str
    #: None when nothing declares it: kai's implicit `feature`, a parallel group.
    definition: Optional[Span]
    uses: tuple[Span, ...]

    def spans(self, include_declaration: bool = True) -> list[Span]:
        return [*([self.definition] if include_declaration and self.definition is not None else []), *self.uses]


def name_at(source: SourceFile, offset: int, dialect: str) -> Name | None:
    """The name whose declaration or use holds `offset`, in a file of `dialect`."""
    found = kai_names(source) if dialect == kai.DIALECT else cleo_names(source) if dialect == cleo.NAME else []
    return next((n for n in found if any(contains(source, s, offset) for s in n.spans())), None)


def definition(source: SourceFile, offset: int, dialect: str, root: Path | None) -> tuple[str, Optional[Span]] | None:
    """Where what is under the cursor is declared: (file, span), the span None for a whole
    file (a kai step's command file)."""
    name = name_at(source, offset, dialect)
    if name is not None:
        return (source.path, name.definition) if name.definition is not None else None
    document = kai_reader.read(source) if dialect == kai.DIALECT else None
    for step in document.steps if document is not None else ():
        if step.command is not None and contains(source, step.command.span, offset):
            path = command_file(step.command.text, root)
            return (str(path), None) if path is not None else None
    return None


def references(source: SourceFile, offset: int, dialect: str, include_declaration: bool) -> list[Span]:
    name = name_at(source, offset, dialect)
    return name.spans(include_declaration) if name is not None else []


def contains(source: SourceFile, span: Span, offset: int) -> bool:
    """Whether `offset` is on `span`, its end included (a cursor right after a name is on it)."""
    if span.file != source.path:
        return False
    return source.offset(span.line, span.col) <= offset <= source.offset(span.end_line, span.end_col)


# -- kai ----------------------------------------------------------------------------------------


def kai_names(source: SourceFile) -> list[Name]:
    document = kai_reader.read(source)
    if document is None:
        return []
    uses: dict[str, list[Span]] = {}
    for step in document.steps:
        for ref in kai_templates.references(step.args, None) if step.args is not None else ():
            if ref.name:
                uses.setdefault(ref.name, []).append(ref.span)
    names = [Name("arg", arg.name, arg.span, tuple(uses.pop(arg.name, ()))) for arg in document.args]
    # kai's implicit `feature`, and names no arg declares (C501), are named all the same.
    names += [Name("arg", name, None, tuple(spans)) for name, spans in uses.items()]
    groups: dict[str, list[Span]] = {}
    for step in document.steps:
        if step.group is not None:
            groups.setdefault(step.group.text, []).append(step.group.span)
    names += [Name("group", group, None, tuple(spans)) for group, spans in groups.items()]
    return names


# -- cleo ---------------------------------------------------------------------------------------


def read_cantbook(source: SourceFile) -> Cantbook | None:
    """The cantbook as cleo's reader reads it, its findings dropped; None when it does not read."""
    from catalyst_dsl.syntax.yaml_loader import load_yaml

    sink = DiagnosticSink()
    root = load_yaml(source, sink)
    return CleoReader(source, sink).read(root) if isinstance(root, YMap) else None


def cleo_names(source: SourceFile) -> list[Name]:
    book = read_cantbook(source)
    if book is None:
        return []
    ids: dict[str, list[Span]] = {}
    for scalar in node_references(book):
        ids.setdefault(str(scalar.value), []).append(scalar.span)
    declared: set[str] = set()
    names = []
    for node in book.nodes:
        if node.id not in declared:  # a second node of one id is C-reported; the first is the one named
            declared.add(node.id)
            names.append(
                Name("node", node.id, node.id_span, tuple(sorted(ids.get(node.id, ()), key=lambda s: (s.line, s.col))))
            )
    placeholders: dict[str, list[Span]] = {}
    for name, span in input_placeholders(book):
        placeholders.setdefault(name, []).append(span)
    names += [Name("input", i.name, i.span, tuple(placeholders.get(i.name, ()))) for i in book.inputs]
    return names


def node_references(book: Cantbook) -> Iterator[YScalar]:
    """Every scalar that names a node: edges' `from`/`to`, `depends`, `inject_into`, `requires.from`."""
    edges = book.root.get("edges")
    for edge in edges.items if isinstance(edges, YSeq) else ():
        if isinstance(edge, YMap):
            for end in ("from", "to"):
                value = edge.get(end)
                if isinstance(value, YScalar) and isinstance(value.value, str):
                    yield value
    for node in book.nodes:
        yield from (scalar for _, scalar in node.depends)
        for scalar in (node.inject_into, node.requires_from):
            if isinstance(scalar, YScalar) and isinstance(scalar.value, str):
                yield scalar


def input_placeholders(book: Cantbook) -> Iterator[tuple[str, Span]]:
    """Each `{{ name }}` or `{{ inputs.name }}` in what cleo renders, with where the name is
    written; names that are not inputs (a node's output keys) are left to the checker."""
    inputs = {i.name for i in book.inputs}
    for node in book.nodes:
        for scalar in template_scalars(node):
            smap = None
            for match in PLACEHOLDER.finditer(scalar.value):
                root, _, rest = match.group(1).partition(".")
                name, start = (
                    (rest.split(".")[0], match.start(1) + len("inputs."))
                    if root == "inputs" and rest
                    else (root, match.start(1))
                )
                if name in inputs:
                    smap = smap or ScalarMap(scalar)
                    yield name, smap.span(start, start + len(name))


def node_of(book: Cantbook, node_id: str):
    return next((n for n in book.nodes if n.id == node_id), None)


def command_file(command: str, root: Path | None) -> Path | None:
    """The file a kai step's slash command names, `.claude/commands/<name>.md` in the
    project at `root`, when it is a file there (a link out of the project is not followed)."""
    from catalyst_dsl.checks.rules.slash_commands import COMMANDS_DIR, slash_command_name

    name = slash_command_name(command) if root is not None else None
    if name is None:
        return None
    try:
        path = (root / COMMANDS_DIR / f"{name}.md").resolve()
        return path if path.is_file() and root.resolve() in path.parents else None
    except (OSError, ValueError):
        return None
