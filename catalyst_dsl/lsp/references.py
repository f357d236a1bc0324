"""Find references inside one playbook: where each name is defined and every place it is read.

The names are those the checker resolves (inputs, step names, `var`s, loop variables,
function parameters), found by running its reference pass with a recorder attached, so a
name is matched to the definition the checker would pick, not by its spelling: two loops
with the same item name are two names. Functions are matched by the steps that call
them. What a playbook's callers refer to (calls, inputs passed by key) is the library's
business: see `server.py`, which adds those from the library's call edges.
"""

from __future__ import annotations

import re

from catalyst_dsl._internal.records import record

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.checks.references.checker import ReferenceChecker
from catalyst_dsl.checks.references.scopes import Scope
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.lsp.knowledge import walk
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.source import SourceFile, Span


@record
class Use:
    name: str
    span: Span
    #: Where the name the checker resolved it to is defined (None: defined nowhere).
    definition: Span | None


@record
class Found:
    """A name under the cursor: its definition and the places that read it."""

    name: str
    definition: Span | None
    uses: tuple[Span, ...]
    #: "input" when the name is one of the playbook's inputs (callers pass it by key).
    kind: str = "name"


class _Recorder(ReferenceChecker):
    """The checker's reference pass, noting each name it resolves and where it is written."""

    def __init__(self, playbook: ir.Playbook, catalog: Catalog) -> None:
        super().__init__(playbook, DiagnosticSink(), catalog)
        self.uses: list[Use] = []

    def reference(self, ref, part, scope: Scope):
        if isinstance(ref, ast.PathRef):
            self._note(ref.root, ref.segments, ref.start, part, scope)
        return super().reference(ref, part, scope)

    def expr(self, node, part, scope: Scope):
        if isinstance(node, ast.Name):
            self._note(node.name, (), node.start, part, scope)
        elif isinstance(node, ast.Member) and isinstance(node.target, ast.Name) and node.target.name == "inputs":
            decl = self.inputs.get(node.name)
            if decl is not None and scope.lookup("inputs") is None:
                self._add(node.name, part, node.end - len(node.name), decl.span)
        return super().expr(node, part, scope)

    def step(self, step: ir.Step, scope: Scope) -> None:
        name = step.config.get("name") if step.action == "var" else None
        if isinstance(name, ir.Lit) and isinstance(name.value, str) and name.span is not None:
            earlier = scope.lookup(name.value)
            if earlier is not None and earlier.kind in ("var", "script") and earlier.span != name.span:
                self.uses.append(Use(name.value, name.span, earlier.span))  # a var set again
        super().step(step, scope)

    def _note(self, name: str, segments, start: int, part, scope: Scope) -> None:
        binding = scope.lookup(name)
        if binding is not None:
            self._add(name, part, start, binding.span)
        elif name == "inputs" and segments and segments[0] in self.inputs:
            self._add(segments[0], part, start + len("inputs."), self.inputs[segments[0]].span)
        else:  # used before its definition (C503) or never defined (C501)
            self._add(name, part, start, self.all_definitions.get(name))

    def _add(self, name: str, part, start: int, definition: Span | None) -> None:
        smap = part.tmpl.smap
        if smap is not None:
            self.uses.append(Use(name, smap.span(part.base + start, part.base + start + len(name)), definition))


def find(source: SourceFile, offset: int, playbook: ir.Playbook, catalog: Catalog) -> Found | None:
    """The name at `offset` (where it is defined or where it is read) and all its uses."""
    recorder = _Recorder(playbook, catalog)
    recorder.run()
    functions = _functions(playbook)
    inputs = {decl.span: decl.name for decl in playbook.inputs if decl.span is not None}

    def at(span: Span | None) -> bool:
        return span is not None and span.file == source.path and _contains(source, span, offset)

    use = next((u for u in recorder.uses if at(u.span)), None)
    if use is not None:
        definition, name = use.definition, use.name
    else:
        defined = {u.definition: u.name for u in recorder.uses if u.definition is not None}
        defined.update((span, name) for name, span in recorder.all_definitions.items() if span is not None)
        defined.update(inputs)
        definition = next((span for span in defined if at(span)), None)
        name = defined.get(definition)
    if name is not None and (definition is not None or use is not None):
        uses = tuple(u.span for u in recorder.uses if u.name == name and u.definition == definition)
        return Found(name, definition, uses, "input" if definition in inputs else "name")
    for fname, (span, calls) in functions.items():
        if at(span) or any(at(c) for c in calls):
            return Found(fname, span, tuple(calls), "function")
    return None


def _functions(playbook: ir.Playbook) -> dict[str, tuple[Span | None, list[Span]]]:
    """Each function the playbook defines: where its name is written and the steps calling it."""
    found: dict[str, tuple[Span | None, list[Span]]] = {}
    steps = list(walk(playbook.steps))
    for step in steps:
        name = step.config.get("name") if step.action == "function" else None
        if isinstance(name, ir.Lit) and isinstance(name.value, str):
            found.setdefault(name.value, (name.span, []))
    for step in steps:
        if step.action in found and step.action_span is not None:
            found[step.action][1].append(step.action_span)
    return found


def _contains(source: SourceFile, span: Span, offset: int) -> bool:
    offsets = span.offsets_in(source)
    if offsets is None:
        offsets = (source.offset(span.line, span.col), source.offset(span.end_line, span.end_col))
    return offsets[0] <= offset <= offsets[1]


# -- across the library ------------------------------------------------------------------------


def calls_of(library, callee: str) -> list:
    """Every call edge in the library (a `playbook:` step, a Markdown `@` reference) that
    reaches `callee`."""
    return [
        edge
        for caller in library.files
        for edge in library.edges(caller)
        if edge.callee == callee and edge.span is not None
    ]


def inputs_passed(library, callee: str, name: str) -> list[Span]:
    """Where callers of `callee` pass its input `name`, by key under a call's `inputs:`."""
    found = []
    for edge in calls_of(library, callee):
        passed = edge.site.step.config.get("inputs") if edge.site is not None else None
        if isinstance(passed, ir.MapV):
            found += [entry.span for entry in passed.entries if entry.key == name and entry.span is not None]
    return found


def markdown_reference_at(source: SourceFile, offset: int, playbook: ir.Playbook) -> str | None:
    """The `@` reference under the cursor in a Markdown playbook."""
    return next(
        (ref.target for ref in playbook.calls if ref.span is not None and _contains(source, ref.span, offset)), None
    )


def own_name_at(source: SourceFile, offset: int) -> bool:
    """Whether the cursor is on the playbook's own top-level `name:` line."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    return source.text.startswith("name:", line_start)


def name_span(source: SourceFile) -> Span | None:
    """Where a YAML playbook writes its own name (`name: x` at the top level)."""
    match = _NAME_LINE.search(source.text)
    return source.span(match.start(1), match.end(1)) if match else None


_NAME_LINE = re.compile(r"^name:[ \t]*['\"]?([^'\"\s#]+)", re.MULTILINE)
