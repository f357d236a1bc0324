"""Commands that run their standard input as code (`bash`, `sh -s`, `python3 -`, `xargs sh`,
`sqlite3`...): a value piped or redirected into one is code.
"""

from __future__ import annotations

from catalyst_dsl.syntax.shell.programs.bash_builtins import EVALUATES
from catalyst_dsl.syntax.shell.programs.interpreters import (
    code_source,
    is_interpreter,
    is_shell,
    is_stdin_file,
    shell_options,
)
from catalyst_dsl.syntax.shell.programs.options import OPTIONS_RUN_PROGRAMS
from catalyst_dsl.syntax.shell.programs.prefix_tables import RUNS_PROGRAM
from catalyst_dsl.syntax.shell.programs.prefixes import readings
from catalyst_dsl.syntax.shell.programs.words import holds_value, program_name

#: Programs that read commands from their standard input when it is not a terminal.
STDIN_COMMANDS = {
    "sqlite3": "SQL and dot-commands (`.shell`)",
    "psql": "SQL and meta-commands (`\\!`)",
    "mysql": "SQL (`system`)",
    "mongosh": "JavaScript",
    "mongo": "JavaScript",
    "redis-cli": "commands (`EVAL` runs Lua)",
    "ssh": "commands for the remote shell",
    "su": "shell commands",
    "sg": "shell commands",
    "script": "shell commands",
    "expect": "Tcl code",
    "osascript": "AppleScript",
    "dc": "commands (`!` runs a shell)",
    "ed": "commands (`!` runs a shell)",
    "ex": "editor commands",
    "at": "shell commands",
    "batch": "shell commands",
    "crontab": "a crontab of commands",
    "gdb": "commands (`shell`)",
}


def reads_code_from_stdin(argv: list[str | None]) -> str | None:
    """The program of `argv` when it runs its standard input as code (`bash`, `sh -s`,
    `python3 -`, `xargs sh`...), else None."""
    return _stdin_code_at(argv, 0)


def _stdin_code_at(argv: list[str | None], at: int) -> str | None:
    if at >= len(argv):
        return None
    if holds_value(argv[at]):
        return "a program the script does not name literally"
    name = program_name(argv[at])
    if name in RUNS_PROGRAM:
        ends, _ = readings(name, argv, at)
        for kind, i in sorted(ends):
            if kind == "shell" and i == len(argv) - 1:
                return f"{name} {argv[i]}"  # `sudo -s`: an interactive shell
            found = None if kind == "shell" else _xargs_runs(argv, i) if name == "xargs" else _stdin_code_at(argv, i)
            if found:
                return found
        return None
    if name in ("eval", "source", ".") or name in STDIN_COMMANDS:
        return name
    if not is_interpreter(name):
        return None
    if is_shell(name):
        code, stdin, operand = shell_options(argv, at)
        if code and not stdin:
            return None  # the code is an argument
        return (
            name
            if stdin or operand >= len(argv) or holds_value(argv[operand]) or is_stdin_file(argv[operand])
            else None
        )
    return name if code_source(name, argv, at) == "stdin" else None


def _xargs_runs(argv: list[str | None], at: int) -> str | None:
    """xargs makes its input the arguments of its program: code when that program runs
    its arguments (`xargs sh -c`, `xargs eval`), or names one (`xargs env`)."""
    if at >= len(argv):
        return None
    program = argv[at]
    if holds_value(program):
        return "xargs"
    name = program_name(program)
    if name in EVALUATES or name in RUNS_PROGRAM or is_interpreter(name) or name in OPTIONS_RUN_PROGRAMS:
        return f"xargs {program}"  # (the last: its input, split, may be `-exec` or `--upload-pack=`)
    return None
