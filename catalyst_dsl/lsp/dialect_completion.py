"""Completion in kai playbooks and cleo cantbooks: keys, enum values, condition and
trigger names, node ids.

Read from each dialect's own tables (catalyst_dsl.dialects.kai.model and .cleo.vocabulary), so that what
the editor offers is what the dialect's reader accepts; a line being typed rarely parses, so the place is read from
the text above the cursor, by indentation.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalyst_dsl._internal.markdown_text import author_markdown
from catalyst_dsl.checks.rules.slash_commands import COMMANDS_DIR
from catalyst_dsl.compiler import Compiled
from catalyst_dsl.dialects.cleo import vocabulary as cleo
from catalyst_dsl.dialects.kai import model as kai
from catalyst_dsl.lsp.completion import Suggestion
from catalyst_dsl.syntax.source import SourceFile

#: A key (or a list item) being written: `  - i`, `    comm`.
_KEY_AT_CURSOR = re.compile(r"^(\s*)(-\s+)?([A-Za-z_][\w-]*)?$")
#: A key with its value being written: `    autonomy: ga` (the value may be quoted).
_KEY_VALUE = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w-]*):\s+['\"]?([\w-]*)$")
#: A `{{` opened before the cursor and not closed yet, with the name begun in it.
_OPEN_TEMPLATE = re.compile(r"\{\{\s*(?!.*\}\})([\w-]*)$")
#: An item being written in a flow list on its key's line: `preconditions: [spec_exists, pl`.
_FLOW_ITEM = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w-]*):\s*\[([^\]\[{}]*,)?\s*['\"]?([\w-]*)$")
#: A slash command being written after `command:`.
_COMMAND_VALUE = re.compile(r"^\s*(?:-\s+)?command:\s+['\"]?/([\w.:-]*)$")
#: A line holding a key: its indentation, list dash and key.
_KEY_LINE = re.compile(r"^(\s*)(-\s+)?([A-Za-z_][\w-]*)\s*:(?:\s|$)")

#: What may be written under each key of a kai file (None: the top level).
_UNDER = {
    None: (kai.TOP_KEYS, "key"),
    "steps": (kai.STEP_KEYS, "key"),
    "args": (kai.ARG_KEYS, "key"),
    "preconditions": (kai.CONDITIONS, "value"),
    "postconditions": (kai.CONDITIONS, "value"),
    "escalation_triggers": (kai.TRIGGERS, "value"),
}
#: The values a key takes.
_VALUES = {"autonomy": kai.AUTONOMY, "error_policy": kai.ERROR_POLICIES, "model": kai.MODELS}

#: Where a node id is what is written: a key whose value names a node, a list of them.
_NODE_ID = "node id"
_CLEO_UNDER = {
    None: (cleo.TOP_KEYS, "key"),
    "inputs": (cleo.INPUT_KEYS, "key"),
    "nodes": (None, "key"),  # the common keys and those of the node's type
    "edges": (cleo.EDGE_KEYS, "key"),
    "on_failure": (cleo.ON_FAILURE_KEYS, "key"),
    "error_handlers": (cleo.HANDLER_KEYS, "key"),
    "requires": (cleo.REQUIRES_KEYS, "key"),
    "ensures": (cleo.ENSURES_KEYS, "key"),
    "contract": (cleo.CONTRACT_KEYS, "key"),
    "when": (cleo.WHEN_OPERATORS, "key"),
    "depends": (_NODE_ID, "value"),
}
_CLEO_VALUES = {
    "type": cleo.NODE_TYPES,
    "on": cleo.HANDLER_ON,
    "action": cleo.HANDLER_ACTIONS,
    "role": cleo.ROLES,
    "policy": cleo.POLICIES,
    "schema": cleo.SCHEMAS,
    "from": _NODE_ID,
    "to": _NODE_ID,
    "inject_into": _NODE_ID,
}
#: A node's id where it is declared: `  - id: implement`.
_DECLARED_ID = re.compile(r"^\s*(?:-\s+)?id:[ \t]*['\"]?([A-Za-z_][\w-]*)", re.MULTILINE)
#: A node's type line: `    type: agentic`.
_TYPE_LINE = re.compile(r"^\s*(?:-\s+)?type:[ \t]*['\"]?(\w+)")


def dialect_of(path: str) -> str | None:
    """`kai` or `cleo` when `path` is in that dialect's place, else None."""
    from catalyst_dsl.dialects import registry

    dialect = registry.by_place(path)
    return dialect.name if dialect is not None and dialect.name in (kai.DIALECT, cleo.NAME) else None


def cleo_completions(source: SourceFile, offset: int, compiled: Compiled | None) -> list[Suggestion]:
    """Keys where a key goes (top level, input, node by its type, edge, `on_failure`,
    handler, contract), node types, handler events and actions, roles, policies and
    schemas after their key, node ids after `from`/`to`/`inject_into` and under
    `depends`, and input names inside `{{ }}`."""
    ids = lambda: list(dict.fromkeys(_DECLARED_ID.findall(source.text)))  # noqa: E731 - read only when asked

    def values(key: str) -> tuple[str, ...] | list[str]:
        choices = _CLEO_VALUES.get(key, ())
        return ids() if choices == _NODE_ID else choices

    def keys(parent: str | None, above: str, column: int) -> tuple[tuple[str, ...] | list[str], str]:
        names, kind = _CLEO_UNDER.get(parent, ((), "key"))
        if names == _NODE_ID:  # a node depending on itself is a cycle: its own id is left out
            own = {m.group(1) for line in _item_above(above, column) if (m := _DECLARED_ID.match(line))}
            return [i for i in ids() if i not in own], kind
        if parent == "nodes":
            return cleo.COMMON_KEYS + _type_keys(above, source.text[offset:], column), kind
        return names, kind

    return _completions(source, offset, compiled, values, keys, "cleo cantbook")


def _completions(
    source: SourceFile, offset: int, compiled: Compiled | None, values, keys, where: str
) -> list[Suggestion]:
    """What both dialects complete alike: input names inside `{{ }}`, a key's value
    (`values(key)`), and a key where a key goes (`keys(parent key, text above the line,
    column)` gives the names and their kind)."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    before = source.text[line_start:offset]
    template = _OPEN_TEMPLATE.search(before)
    if template is not None:
        return _input_names(compiled, template.group(1))
    flow = _FLOW_ITEM.match(before)
    if flow is not None:  # a list's items are what goes under its key, less those listed
        names, kind = keys(flow.group(1), source.text[:line_start], len(before) - len(before.lstrip()))
        listed = {item.strip().strip("'\"") for item in (flow.group(2) or "").split(",")}
        return [
            Suggestion(n, kind, flow.group(1))
            for n in names
            if kind == "value" and n.startswith(flow.group(3)) and n not in listed
        ]
    value = _KEY_VALUE.match(before)
    if value is not None:
        return [Suggestion(c, "value", value.group(1)) for c in values(value.group(1)) if c.startswith(value.group(2))]
    key = _KEY_AT_CURSOR.match(before)
    if key is None:
        return []
    column = len(key.group(1)) + len(key.group(2) or "")
    above = source.text[:line_start]
    parent = _parent_key(above, column)
    if parent is False:
        return []
    names, kind = keys(parent, above, column)
    prefix = key.group(3) or ""
    written = (
        _written_keys(above, source.text[offset:], column, starts_item=key.group(2) is not None)
        if kind == "key"
        else set()
    )
    return [Suggestion(n, kind, parent or where) for n in names if n.startswith(prefix) and n not in written]


def _written_keys(above: str, below: str, column: int, starts_item: bool) -> set[str]:
    """The keys already written in the mapping whose keys are at `column`, on the lines
    above and below the cursor's (a key is written once in a mapping)."""
    written: set[str] = set()
    for line in reversed(above.split("\n")[:-1]) if not starts_item else ():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _KEY_LINE.match(line)
        key_column = len(found.group(1)) + len(found.group(2) or "") if found else -1
        if key_column == column:
            written.add(found.group(3))
            if found.group(2):
                break  # the list item's first line: the mapping starts here
            continue
        if len(line) - len(line.lstrip()) < column:
            break
    for line in below.split("\n")[1:]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if len(line) - len(line.lstrip()) < column:
            break
        found = _KEY_LINE.match(line)
        if found is not None and not found.group(2) and len(found.group(1)) == column:
            written.add(found.group(3))
    return written


def _type_keys(above: str, below: str, column: int) -> tuple[str, ...]:
    """The keys of the node's type when its `type:` is written (above or below the
    cursor, within the node), else the keys of every type."""
    item = _item_above(above, column)
    for line in below.split("\n")[1:]:  # down to the next node
        if line.strip() and len(line) - len(line.lstrip()) < column:
            break
        item.append(line)
    for line in item:
        found = _TYPE_LINE.match(line)
        if found is not None and found.group(1) in cleo.TYPE_KEYS:
            return cleo.TYPE_KEYS[found.group(1)]
    return tuple(dict.fromkeys(k for keys in cleo.TYPE_KEYS.values() for k in keys))


def _item_above(above: str, column: int) -> list[str]:
    """The lines above the cursor's of the list item holding a key at `column`, up to the
    item's dash line."""
    item: list[str] = []
    for line in reversed(above.split("\n")[:-1]):
        item.append(line)
        if line.strip().startswith("-") and len(line) - len(line.lstrip()) < column:
            break
    return item


def _input_names(compiled: Compiled | None, prefix: str) -> list[Suggestion]:
    inputs = compiled.playbook.inputs if compiled is not None and compiled.playbook is not None else ()
    return [
        Suggestion(i.name, "input", "input", author_markdown(i.description))
        for i in inputs
        if i.name.startswith(prefix)
    ]


def kai_completions(source: SourceFile, offset: int, compiled: Compiled | None, root: Path | None) -> list[Suggestion]:
    """Keys where a key goes (top level, step, arg), the values of `autonomy`,
    `error_policy` and `model`, condition names under `preconditions`/`postconditions`,
    trigger names under `escalation_triggers`, the args inside `{{ }}` (from the last
    version that compiled) and after `command: /` the commands of `root`'s
    `.claude/commands/`."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    command = _COMMAND_VALUE.match(source.text[line_start:offset])
    if command is not None:
        return [
            Suggestion(name, "value", "slash command") for name in _commands(root) if name.startswith(command.group(1))
        ]
    return _completions(
        source,
        offset,
        compiled,
        lambda key: _VALUES.get(key, ()),
        lambda parent, above, column: _UNDER.get(parent, ((), "key")),
        "kai playbook",
    )


def _parent_key(above: str, column: int) -> str | None | bool:
    """The key whose block holds a key written at `column`: the nearest line above with
    its key left of it (a list item's dash line whose key is at `column` is a sibling).
    None at the top level; False when the place is not a key's block."""
    if column == 0:
        return None
    for line in reversed(above.split("\n")):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _KEY_LINE.match(line)
        indent = len(line) - len(line.lstrip())
        if found is None:
            if indent < column:
                return False
            continue
        key_column = len(found.group(1)) + len(found.group(2) or "")
        if key_column < column:
            return found.group(3)
    return False


def _commands(root: Path | None) -> list[str]:
    """The slash commands the project keeps: `/speckit.plan` for `speckit.plan.md`.
    Nothing when the folder is missing or unreadable (the user's own commands are not
    the project's to list)."""
    if root is None:
        return []
    try:
        files = sorted((root / COMMANDS_DIR).glob("*.md"))
    except OSError:
        return []
    return [f.stem for f in files if f.is_file() and kai.COMMAND.match("/" + f.stem)]
