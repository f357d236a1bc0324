"""Completion: what may be written where the cursor is, in a playbook being typed.

Read from the text before the cursor and the lines above it, since a line being typed
often does not parse; the names and types come from the compiled playbook (the last one
that parsed) and the action catalog, as the checker sees them.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Callable

from catalyst_dsl._internal.markdown_text import author_markdown
from catalyst_dsl._internal.records import record

from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS, ActionSpec, Catalog
from catalyst_dsl.compiler import Compiled
from catalyst_dsl.lsp.knowledge import describe_action, known_types
from catalyst_dsl.syntax.source import SourceFile

if TYPE_CHECKING:
    from catalyst_dsl.project.library import Library

#: A `{{` or `${{` opened before the cursor on its line and not closed yet: no brace after
#: it (a lookahead for `}}` at each `{{` had made a line of many of them quadratic).
_OPEN_TEMPLATE = re.compile(r"\$?\{\{([^{}]*)$")
#: The name being written where a step's action key goes: `  - na` or `    na`.
_KEY_AT_CURSOR = re.compile(r"^(\s*)(-\s+)?([A-Za-z][\w-]*)?$")
_PLAYBOOK_VALUE = re.compile(r"^\s*(?:-\s+)?playbook:\s*['\"]?([\w./@-]*)$")
#: A key with its value being written: `    method: PO` (the value may be quoted).
_KEY_VALUE = re.compile(r"^(\s*)(-\s+)?([A-Za-z][\w-]*):\s+['\"]?([\w-]*)$")
#: A line holding a key, with its indentation and list dash: `  - name: x`, `    url:`.
_KEY_LINE = re.compile(r"^(\s*)(-\s+)?([A-Za-z$][\w$-]*)\s*:(?:\s|$)")
#: An `@` path being written in Markdown.
_MENTION = re.compile(r"(?:^|(?<=[\s(]))@([\w./-]*)$")


@record
class Suggestion:
    label: str
    kind: str  # "action" | "name" | "member" | "playbook" | "key" | "value" | "file" | "input"
    detail: str = ""
    documentation: str = ""


def completions(
    source: SourceFile, offset: int, compiled: Compiled | None, catalog: Catalog, library: Callable[[], Library]
) -> list[Suggestion]:
    """What may be written at `offset`: names inside `{{ }}`, playbook names after
    `playbook:`, `@` paths in Markdown, and in a step: action names where its action key
    goes, the action's config keys where a key goes, a key's enum values after it, the
    called playbook's inputs under a call's `inputs:`. `library` gives the playbook
    library, asked for only when needed."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    before = source.text[line_start:offset]
    template = _OPEN_TEMPLATE.search(before)
    if template is not None:
        return _names_in_template(template.group(1), compiled)
    if source.path.endswith(".md"):
        mention = _MENTION.search(before)
        return _mention_paths(library(), mention.group(1)) if mention is not None else []
    called = _PLAYBOOK_VALUE.match(before)
    if called is not None:
        return [
            Suggestion(name, "playbook", "playbook") for name in library().names() if name.startswith(called.group(1))
        ]
    value = _KEY_VALUE.match(before)
    if value is not None:
        column = len(value.group(1)) + len(value.group(2) or "")
        spec = _step_action(source, line_start, column, catalog, value.group(3) if value.group(2) else None)
        return _values(spec, value.group(3), value.group(4)) if spec is not None else []
    key = _KEY_AT_CURSOR.match(before)
    if key is None:
        return []
    prefix = key.group(3) or ""
    column = len(key.group(1)) + len(key.group(2) or "")
    block = _block(source, line_start, column)
    actions = [spec for spec in catalog.specs() if spec.name.startswith(prefix)]
    if key.group(2):  # a new step: its action first
        return [Suggestion(spec.name, "action", spec.group, describe_action(spec)) for spec in actions]
    spec = next(
        (
            catalog.get(k)
            for k in [*block.siblings, block.parent]
            if k and catalog.declares(k) and k not in RESERVED_STEP_KEYS
        ),
        None,
    )
    if spec is not None:
        written = set(block.siblings)
        if spec.name in written:  # `- action: value` fills its primary property
            written.add(spec.primary)
        return [
            Suggestion(name, "key", field.type.describe(), field.doc)
            for name, field in spec.config.fields
            if name.startswith(prefix) and name not in written and name != spec.name
        ]
    passed = _call_inputs(source, block, library, prefix)
    if passed:
        return passed
    if block.in_step or _inside_steps(source, line_start):
        return [Suggestion(spec.name, "action", spec.group, describe_action(spec)) for spec in actions]
    return []


def _inside_steps(source: SourceFile, line_start: int) -> bool:
    """Whether a line continues a step (a key under `- action:`), where an action key may go."""
    previous = source.text.rfind("\n", 0, max(line_start - 1, 0)) + 1
    return source.text[previous:line_start].lstrip().startswith("- ")


@record
class _Block:
    """The keys around a line: those beside it in its mapping (with the text after each
    one's colon), and the key it is under."""

    siblings: tuple[str, ...]
    parent: str | None
    #: Whether the mapping is a list item (a step, when the list is a step list).
    in_step: bool
    values: tuple[tuple[str, str], ...] = ()
    #: Where the parent key's line starts, and the column of its key.
    parent_at: tuple[int, int] | None = None


def _block(source: SourceFile, line_start: int, column: int) -> _Block:
    """The mapping a key at `column` on the line starting at `line_start` belongs to, read
    from the text above it (which may not parse while the line is being typed)."""
    siblings: list[tuple[str, str]] = []

    def block(parent: str | None, in_step: bool, parent_at: tuple[int, int] | None = None) -> _Block:
        return _Block(tuple(k for k, _ in siblings), parent, in_step, tuple(siblings), parent_at)

    end = line_start - 1
    while end > 0:
        start = source.text.rfind("\n", 0, end) + 1
        line = source.text[start:end]
        end = start - 1
        found = _KEY_LINE.match(line)
        if found is None:
            if line.strip() and not line.lstrip().startswith("#") and len(line) - len(line.lstrip()) <= column:
                break  # a line that is not a key (a block scalar's text is deeper and skipped)
            continue
        at = len(found.group(1)) + len(found.group(2) or "")
        if at == column:
            siblings.append((found.group(3), line[found.end() :].strip()))
            if found.group(2):
                return block(None, True)
        elif at < column:
            return block(found.group(3), False, (start, at))
    return block(None, False)


def _call_inputs(source: SourceFile, block: _Block, library: Callable[[], Library], prefix: str) -> list[Suggestion]:
    """Under a call's `inputs:`, the inputs the called playbook declares and the call does
    not pass yet."""
    if block.parent != "inputs" or block.parent_at is None:
        return []
    outer = _block(source, *block.parent_at)
    target = dict(outer.values).get("playbook", "").split("#")[0].strip().strip("'\"")
    if not target or "{{" in target:
        return []
    found = library()
    callee = found.resolve_call(target, source.path)
    playbook = found.compiled(callee).playbook if callee is not None else None
    if playbook is None:
        return []
    return [
        Suggestion(
            decl.name,
            "input",
            f"{decl.type}{' (required)' if decl.required else ''}",
            author_markdown(decl.description),
        )
        for decl in playbook.inputs
        if decl.name.startswith(prefix) and decl.name not in block.siblings
    ]


def _step_action(
    source: SourceFile, line_start: int, column: int, catalog: Catalog, own: str | None
) -> ActionSpec | None:
    """The action of the step whose key at `column` is on this line: a key beside it, or the
    key its mapping is under. `own`: the key on this line when it starts the step."""
    block = _block(source, line_start, column)
    keys = [*([own] if own else []), *block.siblings, *([] if block.in_step or own else [block.parent])]
    return next((catalog.get(k) for k in keys if k and catalog.declares(k) and k not in RESERVED_STEP_KEYS), None)


def _values(spec: ActionSpec, key: str, prefix: str) -> list[Suggestion]:
    """The values a config key takes when they are few: an enum's, or true and false."""
    from catalyst_dsl.ir import types as t

    field = next((f for name, f in spec.config.fields if name == key), None)
    if field is None:
        return []
    values: list[str] = []
    for option in t.options_of(field.type):
        if isinstance(option, t.EnumT):
            values += option.values
        elif isinstance(option, t.BooleanT):
            values += ["true", "false"]
    return [Suggestion(v, "value", f"{spec.name}.{key}") for v in dict.fromkeys(values) if v.startswith(prefix)]


def _mention_paths(library: Library, prefix: str) -> list[Suggestion]:
    """`@` paths to the library's playbooks: from the project root, and through each alias
    whose folder holds them."""
    root = str(library.project.root)
    found: dict[str, str] = {}
    for path in library.files:
        relative = os.path.relpath(path, root).replace(os.sep, "/")
        if relative.startswith("../"):
            continue  # a file outside the project is never offered
        found.setdefault(relative, path)
        for alias, folder in library.project.config.aliases.items():
            folder = folder.rstrip("/") + "/"
            if relative.startswith(folder):
                found.setdefault(alias + relative[len(folder) :], path)
    return [Suggestion(text, "file", "playbook") for text in sorted(found) if text.startswith(prefix)]


def _names_in_template(written: str, compiled: Compiled | None) -> list[Suggestion]:
    if compiled is None or compiled.playbook is None:
        return []
    types = known_types(compiled.playbook)
    path = written.strip().split(".")
    if len(path) > 1:
        current = types.get(path[0])
        for member in path[1:-1]:
            current = _member_type(current, member)
        return [
            Suggestion(name, "member", field.type.describe())
            for name, field in _fields(current)
            if name.startswith(path[-1])
        ]
    return [
        Suggestion(name, "name", kind.describe()) for name, kind in sorted(types.items()) if name.startswith(path[0])
    ]


def _fields(type_) -> list:
    from catalyst_dsl.ir import types as t

    return list(type_.fields) if isinstance(type_, t.ObjectT) else []


def _member_type(type_, member: str):
    return next((field.type for name, field in _fields(type_) if name == member), None)
