"""Which codes a rule selection names: `select` and `ignore` entries are codes or their
prefixes, as in ruff (`C4` is every C4xx code, `C501` one code).

The settings (`select`, `ignore` in catalyst.toml) and `catalyst check --select/--ignore`
read them the same way.
"""

from __future__ import annotations

from typing import Iterable


def codes_named(entry: str) -> list[str]:
    """The codes an entry names: those it is a prefix of (itself included)."""
    from catalyst_dsl.diagnostics.codes import CODES  # at the first selection, not at start-up

    wanted = entry.strip().upper()
    if len(wanted) < 2:  # "C" alone would name everything: say nothing instead, and let it be a mistake
        return []
    return [code for code in CODES if code.startswith(wanted)]


def unknown_entry_help(entry: str) -> str:
    """The fix for an entry that names no code: the closest code, or where they are listed."""
    from catalyst_dsl.diagnostics.codes import CODES
    from catalyst_dsl.diagnostics.suggest import suggest

    wanted = entry.strip().upper()
    # A letter O typed for a zero: the code it was meant to be, before the nearest by spelling.
    zeroed = wanted[:1] + wanted[1:].replace("O", "0")
    if zeroed != wanted and codes_named(zeroed):
        return f"did you mean '{zeroed}'?"
    return suggest(wanted, CODES) or "codes are listed by `catalyst explain --list`"


def is_selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """Whether `code` is reported: named by `select` (or `select` is empty) and not by `ignore`."""
    select = tuple(select)
    if select and not any(_names(entry, code) for entry in select):
        return False
    return not any(_names(entry, code) for entry in ignore)


def _names(entry: str, code: str) -> bool:
    wanted = entry.strip().upper()
    return len(wanted) >= 2 and code.startswith(wanted)
