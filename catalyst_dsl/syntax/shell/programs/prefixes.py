"""Reading a prefix's arguments (prefix_tables.py): every way its options may be read, and
so every place the program it runs may stand.
"""

from __future__ import annotations

import re

from catalyst_dsl.syntax.shell.programs.prefix_tables import (
    ASSIGNS,
    FLAGS,
    OPERANDS_BEFORE_PROGRAM,
    OPTIONAL_OPERANDS,
    RUNS_PROGRAM,
    SHELL_OPTIONS,
)
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, is_option, long_option_matches


def _prefix_option(name: str, word: str) -> tuple[str, tuple[int, ...]]:
    """How a prefix reads the option `word`: ("shell", ()) when it makes the rest a shell
    command, else ("option", counts) with the numbers of following words it may take as
    its argument (both 0 and 1 when the tables do not know the option)."""
    takes, flags, shell = RUNS_PROGRAM[name], FLAGS.get(name, frozenset()), SHELL_OPTIONS.get(name, frozenset())
    if UNKNOWN in word.split("=", 1)[0]:
        return ("shell", ()) if shell else ("option", (0, 1))  # a value may make it any option
    if word.startswith("--"):
        option = word.split("=", 1)[0]
        if long_option_matches(option, shell):
            return "shell", ()
        if "=" in word:
            return "option", (0,)
        if option in takes:
            return "option", (1,)
        return "option", (0,) if option in flags else (0, 1)
    if word[1:].isdigit():
        return "option", (0,)  # `nice -5`, `xargs -0`
    for at, letter in enumerate(word[1:], 1):
        option = "-" + letter
        if option in shell:
            return "shell", ()
        if option in takes:
            return "option", (0,) if at + 1 < len(word) else (1,)
        if option not in flags:
            return "option", (0, 1)  # unknown: it may take the rest, or the next word
    return "option", (0,)


def readings(name: str, argv: list[str | None], at: int) -> tuple[set[tuple[str, int]], set[int]]:
    """Every way the prefix `name` at `at` may read its arguments: the ends it may reach,
    ("program", index) (index may be past the end) or ("shell", index of the option that
    makes the rest a shell command), and the words some reading takes before the program."""
    ends: set[tuple[str, int]] = set()
    before: set[int] = set()
    start = (at + 1, OPERANDS_BEFORE_PROGRAM.get(name, 0), OPTIONAL_OPERANDS.get(name, 0), True)
    todo, seen = [start], {start}

    def then(state):
        if state not in seen:
            seen.add(state)
            todo.append(state)

    while todo:
        i, operands, optional, options = todo.pop()
        if i >= len(argv) or argv[i] is None:
            ends.add(("program", min(i, len(argv))))  # a word not known may be the program
            continue
        word = argv[i]
        if options and word == "--":
            before.add(i)
            then((i + 1, operands, optional, False))
            continue
        if options and is_option(word):
            before.add(i)
            kind, counts = _prefix_option(name, word)
            if kind == "shell":
                ends.add(("shell", i))
            for count in counts:
                then((i + 1 + count, operands, optional, options))
            continue
        if name in ASSIGNS and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word):
            before.add(i)
            then((i + 1, operands, optional, options))
            continue
        if UNKNOWN in word:
            ends.add(("program", i))
            continue
        if operands:
            before.add(i)
            then((i + 1, operands - 1, optional, options))
            continue
        if optional:  # an operand, or the program
            before.add(i)
            then((i + 1, 0, optional - 1, options))
        ends.add(("program", i))
    return ends, before


def programs_after(name: str, argv: list[str | None], at: int) -> list[int]:
    """The indexes the program a prefix runs may be at (past the end: none), in order."""
    ends, _ = readings(name, argv, at)
    return sorted(index for kind, index in ends if kind == "program")
