"""What the editor asks about a playbook: hovers, definitions, outlines (completion.py
completes, references.py finds references).

Pure functions over the compiled playbook, its source and the action catalog, the same
data `catalyst check` works from, so the editor and the checker never disagree. The
server (`server.py`) turns their answers into protocol messages.
"""

from __future__ import annotations

import re
from typing import Iterator

from catalyst_dsl._internal.markdown_text import author_markdown, strong_name
from catalyst_dsl._internal.records import record

from catalyst_dsl.actions.catalog import ActionSpec, Catalog
from catalyst_dsl.compiler import Compiled
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.source import SourceFile, Span

_WORD = re.compile(r"[A-Za-z_$][\w$-]*")


def known_types(playbook: ir.Playbook) -> dict:
    """Every input, step and variable name of the playbook with its type, as the checker
    works them out (one run of its reference pass, without reporting)."""
    from catalyst_dsl.actions.installed import builtin_catalog
    from catalyst_dsl.checks.references.checker import ReferenceChecker
    from catalyst_dsl.ir.types import input_type
    from catalyst_dsl.diagnostics.model import DiagnosticSink

    checker = ReferenceChecker(playbook, DiagnosticSink(), builtin_catalog())
    checker.suggestions_left = 0  # its findings are dropped: no "did you mean" to work out
    checker.run()
    types = {i.name: input_type(i) for i in playbook.inputs}
    types.update(checker.defined_types)
    return types


def describe_action(spec: ActionSpec) -> str:
    """An action as Markdown: what it does, its config keys, its result."""
    keys = ", ".join(f"`{name}`{' (required)' if field.required else ''}" for name, field in spec.config.fields)
    lines = [
        f"**{spec.name}** ({spec.group})",
        "",
        spec.summary,
        "",
        f"config: {keys or 'none'}",
        "",
        f"result: `{spec.result.describe()}`",
    ]
    if spec.primary:
        lines += ["", f"`- {spec.name}: <{spec.primary}>`"]
    return "\n".join(lines)


def word_at(source: SourceFile, offset: int) -> tuple[str, int] | None:
    """The name under the cursor and where it starts."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    line_end = source.text.find("\n", offset)
    line = source.text[line_start : line_end if line_end != -1 else len(source.text)]
    for match in _WORD.finditer(line):
        if match.start() <= offset - line_start <= match.end():
            return match.group(0), line_start + match.start()
    return None


def hover(source: SourceFile, offset: int, compiled: Compiled | None, catalog: Catalog) -> str | None:
    found = word_at(source, offset)
    if found is None:
        return None
    word, _ = found
    spec = catalog.get(word) if catalog.declares(word) else None
    if spec is not None:
        return describe_action(spec)
    if compiled is not None and compiled.playbook is not None:
        for decl in compiled.playbook.inputs:
            if decl.name == word:
                default = f", default `{decl.default.value!r}`" if isinstance(decl.default, ir.Lit) else ""
                text = f"input {strong_name(decl.name)}: `{decl.type}`{' (required)' if decl.required else ''}{default}"
                return text + (f"\n\n{author_markdown(decl.description)}" if decl.description else "")
        kind = known_types(compiled.playbook).get(word)
        if kind is not None:
            return f"**{word}**: `{kind.describe()}`"
    return None


def called_playbook(source: SourceFile, offset: int) -> str | None:
    """The playbook a `playbook:` line under the cursor calls."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    line_end = source.text.find("\n", offset)
    line = source.text[line_start : line_end if line_end != -1 else len(source.text)]
    match = re.match(r"^\s*(?:-\s+)?playbook:\s*['\"]?([\w./@-]+)", line)
    return match.group(1) if match else None


def definition_of(source: SourceFile, offset: int, compiled: Compiled | None) -> Span | None:
    """Where the input, step or variable under the cursor is defined."""
    found = word_at(source, offset)
    if found is None or compiled is None or compiled.playbook is None:
        return None
    word, _ = found
    for decl in compiled.playbook.inputs:
        if decl.name == word and decl.span is not None:
            return decl.span
    for step in walk(compiled.playbook.steps):
        if step.name == word and step.name_span is not None:
            return step.name_span
        if step.action == "var":
            name = step.config.get("name")
            if isinstance(name, ir.Lit) and name.value == word and name.span is not None:
                return name.span
    return None


def walk(steps) -> Iterator[ir.Step]:
    for step in steps:
        yield step
        for entry in step.config.entries:
            for nested in ir.nested_steps(entry.value):
                yield from walk(nested)


@record
class Symbol:
    name: str
    detail: str
    span: Span
    children: tuple["Symbol", ...] = ()


def outline(playbook: ir.Playbook) -> list[Symbol]:
    """The steps as an outline: named steps by name, others by action and line."""

    def symbols(steps) -> list[Symbol]:
        found = []
        for step in steps:
            if step.span is None:
                continue
            children = tuple(
                s for entry in step.config.entries for nested in ir.nested_steps(entry.value) for s in symbols(nested)
            )
            name = step.name or f"{step.action}@{step.span.line}"
            found.append(Symbol(name, step.action, step.span, children))
        return found

    return symbols(playbook.steps)


def cleo_outline(source: SourceFile) -> list[Symbol]:
    """A cantbook's nodes as an outline, by id with their type, read from the cantbook
    itself: its lowered playbook has no steps when the graph cannot run (C945), and an
    outline still helps most then."""
    from catalyst_dsl.dialects.cleo.reader import Reader
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.syntax.yaml_loader import load_yaml

    sink = DiagnosticSink()
    root = load_yaml(source, sink)
    book = Reader(source, sink).read(root) if root is not None else None
    if book is None:
        return []
    return [Symbol(node.id, node.type or "node", node.map.span) for node in book.nodes if node.map.span is not None]
