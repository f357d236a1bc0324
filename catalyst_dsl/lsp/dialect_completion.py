"""Completion in kai playbooks: keys, enum values, condition and trigger names.

Read from kai's own tables (catalyst_dsl.dialects.kai), so that what the editor offers is
what the kai reader accepts; a line being typed rarely parses, so the place is read from
the text above the cursor, by indentation.
"""

from __future__ import annotations

import re

from catalyst_dsl.dialects import kai
from catalyst_dsl.lsp.completion import Suggestion
from catalyst_dsl.syntax.source import SourceFile

#: A key (or a list item) being written: `  - i`, `    comm`.
_KEY_AT_CURSOR = re.compile(r"^(\s*)(-\s+)?([A-Za-z_][\w-]*)?$")
#: A key with its value being written: `    autonomy: ga` (the value may be quoted).
_KEY_VALUE = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w-]*):\s+['\"]?([\w-]*)$")
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


def kai_completions(source: SourceFile, offset: int) -> list[Suggestion]:
    """Keys where a key goes (top level, step, arg), the values of `autonomy`,
    `error_policy` and `model`, condition names under `preconditions`/`postconditions`
    and trigger names under `escalation_triggers`."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    before = source.text[line_start:offset]
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
