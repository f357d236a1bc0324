"""Completion in kai playbooks: keys, enum values, condition and trigger names.

Read from kai's own tables (catalyst_dsl.dialects.kai), so that what the editor offers is
what the kai reader accepts; a line being typed rarely parses, so the place is read from
the text above the cursor, by indentation.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalyst_dsl.checks.gates import COMMANDS_DIR
from catalyst_dsl.compiler import Compiled
from catalyst_dsl.dialects import kai
from catalyst_dsl.lsp.completion import Suggestion
from catalyst_dsl.syntax.source import SourceFile

#: A key (or a list item) being written: `  - i`, `    comm`.
_KEY_AT_CURSOR = re.compile(r"^(\s*)(-\s+)?([A-Za-z_][\w-]*)?$")
#: A key with its value being written: `    autonomy: ga` (the value may be quoted).
_KEY_VALUE = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w-]*):\s+['\"]?([\w-]*)$")
#: A `{{` opened before the cursor and not closed yet, with the name begun in it.
_OPEN_TEMPLATE = re.compile(r"\{\{\s*(?!.*\}\})([\w-]*)$")
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


def is_kai(path: str) -> bool:
    from catalyst_dsl.dialects import registry

    dialect = registry.by_place(path)
    return dialect is not None and dialect.name == kai.DIALECT


def kai_completions(source: SourceFile, offset: int, compiled: Compiled | None, root: Path | None) -> list[Suggestion]:
    """Keys where a key goes (top level, step, arg), the values of `autonomy`,
    `error_policy` and `model`, condition names under `preconditions`/`postconditions`,
    trigger names under `escalation_triggers`, the args inside `{{ }}` (from the last
    version that compiled) and after `command: /` the commands of `root`'s
    `.claude/commands/`."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    before = source.text[line_start:offset]
    template = _OPEN_TEMPLATE.search(before)
    if template is not None:
        inputs = compiled.playbook.inputs if compiled is not None and compiled.playbook is not None else ()
        return [Suggestion(i.name, "input", "arg", i.description or "") for i in inputs if i.name.startswith(template.group(1))]
    command = _COMMAND_VALUE.match(before)
    if command is not None:
        return [Suggestion(name, "value", "slash command") for name in _commands(root) if name.startswith(command.group(1))]
    value = _KEY_VALUE.match(before)
    if value is not None:
        choices = _VALUES.get(value.group(1), ())
        return [Suggestion(c, "value", value.group(1)) for c in choices if c.startswith(value.group(2))]
    key = _KEY_AT_CURSOR.match(before)
    if key is None:
        return []
    column = len(key.group(1)) + len(key.group(2) or "")
    parent = _parent_key(source.text[:line_start], column)
    if parent is False:
        return []
    names, kind = _UNDER.get(parent, ((), "key"))
    prefix = key.group(3) or ""
    return [Suggestion(n, kind, parent or "kai playbook") for n in names if n.startswith(prefix)]


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
