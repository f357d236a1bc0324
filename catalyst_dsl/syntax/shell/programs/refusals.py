"""The arguments of a command that may not hold a value, and why: the command's program is
read from its first word and, behind prefixes and `find -exec`, again for the command
it runs, by the facts of this package's other modules.
"""

from __future__ import annotations

import re

from catalyst_dsl.syntax.shell.programs.bash_builtins import EVALUATES, NAMES, refuse_hash_path, refuse_names
from catalyst_dsl.syntax.shell.programs.code_variables import is_code_variable
from catalyst_dsl.syntax.shell.programs.git import refuse_git
from catalyst_dsl.syntax.shell.programs.interpreters import is_interpreter, refuse_interpreter
from catalyst_dsl.syntax.shell.programs.options import EXEC_OPTIONS, refuse_exec_options
from catalyst_dsl.syntax.shell.programs.prefix_tables import ASSIGNS, RUNS_PROGRAM
from catalyst_dsl.syntax.shell.programs.prefixes import readings
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, holds_value, is_option, program_name


#: The positions an argument of the command `argv` may not hold a value in, and why.
#: `argv` is the command's words: a str for a literal word the author wrote, None for a
#: word whose text is not known before the run (it holds a value or an expansion).
def refused_arguments(argv: list[str | None]) -> dict[int, str]:
    refused: dict[int, str] = {}
    _command(argv, 0, refused)
    return refused


def _command(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """Fill `refused` for the command starting at word `at` of `argv`."""
    if at >= len(argv):
        return
    word = argv[at]
    if holds_value(word):
        refused[at] = "in program position, where it names the program that runs"
        for i in range(at + 1, len(argv)):
            refused.setdefault(
                i, "an argument of a program the script does not name literally, which may run it as code"
            )
        return
    name = program_name(word)
    rest = range(at + 1, len(argv))
    if name == "hash":
        refuse_hash_path(argv, at, refused)
    elif name in EVALUATES:
        for i in rest:
            refused[i] = f"an argument of `{name}`: {EVALUATES[name]}"
    elif name in NAMES:
        refuse_names(name, argv, at, refused)
    elif name in RUNS_PROGRAM:
        _prefix(name, argv, at, refused)
    elif is_interpreter(name):
        refuse_interpreter(name, argv, at, refused)
    elif name == "find":
        _find(argv, at, refused)
    elif name == "git":
        refuse_git(argv, at, refused)
    elif name in EXEC_OPTIONS:
        refuse_exec_options(name, argv, at, refused)


def _prefix(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """A prefix: refuse a value wherever some reading of its options takes it for the
    program, an option or an operand before it, and read the program of every reading."""
    if name == "command" and _looks_up_only(argv, at):
        return
    ends, before = readings(name, argv, at)
    for kind, i in sorted(ends):
        if kind == "shell":
            for j in range(i + 1, len(argv)):
                refused[j] = f"an argument of `{name} {argv[i]}`, which runs it through a shell"
    why = f"before the program `{name}` runs, where it could be taken for that program or an option"
    for j in sorted(before):
        word = argv[j]
        if word is None or UNKNOWN not in word:
            continue
        variable = word.split("=", 1)[0]
        if name in ASSIGNS and "=" in word.split(UNKNOWN, 1)[0] and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
            if is_code_variable(variable):
                refused[j] = (
                    f"assigned to `{variable}` by `{name}`, a variable programs read as code or a place "
                    "to load code from"
                )
            continue
        refused.setdefault(j, why)
    for kind, i in sorted(ends):
        if kind != "program" or i >= len(argv):
            continue
        if holds_value(argv[i]):
            refused[i] = f"in program position behind `{name}`, where it names the program that runs"
            for j in range(i + 1, len(argv)):
                refused.setdefault(
                    j, "an argument of a program the script does not name literally, which may run it as code"
                )
        else:
            _command(argv, i, refused)


def _looks_up_only(argv: list[str | None], at: int) -> bool:
    """`command -v NAME` and `command -V NAME` look NAME up and run nothing."""
    for word in argv[at + 1 :]:
        if word is None or not is_option(word) or word == "--":
            return False
        if UNKNOWN not in word and not word.startswith("--") and ("v" in word or "V" in word):
            return True
    return False


#: `find` runs the words after these up to `;` or `+`: `find . -exec cmd {} ;`.
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """`find ... -exec PROGRAM ARGS ;`: the words up to `;` or `+` are a command. A word not
    known may be that terminator, so every end it could make is read; with no literal
    terminator the command may run to the end, and any value after `-exec` may be the program."""
    for i in range(at + 1, len(argv)):
        if argv[i] not in FIND_EXEC:
            continue
        terminator = next((j for j in range(i + 1, len(argv)) if argv[j] in (";", "+")), None)
        if terminator is None:
            for j in range(i + 1, len(argv)):
                if holds_value(argv[j]):
                    refused[j] = f"after `find {argv[i]}` with no `;` or `+` to end its command: it may be the program"
        ends = [j for j in range(i + 2, len(argv)) if argv[j] is None] + [terminator or len(argv)]
        for end in sorted(set(e for e in ends if e <= (terminator or len(argv)))):
            for j, reason in refused_arguments(argv[i + 1 : end]).items():
                refused[i + 1 + j] = reason
