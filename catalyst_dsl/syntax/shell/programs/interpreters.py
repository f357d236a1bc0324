"""Interpreters and shells: where each takes its code from (an option's argument, its
first operand, its standard input), and the arguments refused as that code.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.shell.programs.prefix_tables import RUNS_PROGRAM
from catalyst_dsl.syntax.shell.programs.prefixes import programs_after
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, holds_value, is_option, long_option_matches, program_name

#: Interpreters: their code is the argument of an option (`-c`, `-e`...) or their first
#: operand (the code, or a script file). A value is refused there and where an option may
#: stand before it; the script's arguments after it are data (INTERPRETERS says which).
_SHELL = r"(ba|da|z|k|mk|a|fi|c|tc|yash|posh)?sh"
_INTERPRETER = LazyPattern(
    _SHELL + r"|pwsh|powershell|python[0-9.]*|pypy[0-9.]*|node(js)?|deno|bun"
    r"|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|wish|R|Rscript|[gmn]?awk|sed|gsed|jshell"
    r"|groovy|scala|julia|guile|racket|sbcl|ocaml|erl|elixir|escript|swift|kotlin"
    r"|i?python[0-9.]*|jupyter|irb|pry|ghci|runghc|gawk|busybox-awk|tsx|ts-node|clojure|clj|gst|gforth|m4|dc"
)


class Interpreter(NamedTuple):
    """How an interpreter takes its code, from its options."""

    #: Options whose argument (the next word, or the rest of the word) is the code.
    code: frozenset[str] = frozenset()
    #: Options whose argument is a file to read the code from (`awk -f prog.awk`).
    code_file: frozenset[str] = frozenset()
    #: Options whose argument is more code to load, or a place to load it from (`node -r`).
    loads: frozenset[str] = frozenset()
    #: Options that take the next word as an argument that is not code.
    arguments: frozenset[str] = frozenset()
    #: Letters of short options that take the rest of their word, never the next word.
    attached: str = ""
    #: The options end at the first operand (`node s.js ARGS`), not only at `--`: GNU sed
    #: reads `sed p FILE --expression=CODE`. Until they end, a value after the code may be
    #: an option such as `-e` or `-M` (`perl -e CODE {{v}}`): write `--` before it.
    stops: bool = True


#: Options of the shells that take the next word: `bash -o pipefail -c CODE`.
SHELL_ARGUMENT_OPTIONS = frozenset({"-o", "-O", "+o", "+O", "--rcfile", "--init-file"})
#: Interpreters by family; a name not here reads `-e`/`-c` as code and `-l`/`-r`/`-I` as loading it.
INTERPRETERS = {
    "python": Interpreter(code=frozenset({"-c", "-m"}), arguments=frozenset({"-W", "-X", "-Q"})),
    "node": Interpreter(
        code=frozenset({"-e", "-p", "--eval", "--print"}),
        loads=frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"}),
        arguments=frozenset({"-C", "--conditions", "--input-type", "--title"}),
    ),
    "perl": Interpreter(code=frozenset({"-e", "-E"}), attached="CdDFiImMx"),
    "ruby": Interpreter(
        code=frozenset({"-e"}), loads=frozenset({"-r", "-I"}), arguments=frozenset({"-C"}), attached="0EFiKlTWx"
    ),
    "php": Interpreter(
        code=frozenset({"-r", "-B", "-R", "-E"}),
        code_file=frozenset({"-f", "-F"}),
        loads=frozenset({"-d", "-c"}),
        arguments=frozenset({"-z", "-t", "-S", "--rf", "--rc", "--re"}),
    ),
    "awk": Interpreter(
        code=frozenset({"-e", "--source"}),
        code_file=frozenset({"-f", "--file", "-E", "--exec"}),
        loads=frozenset({"-i", "--include", "-l", "--load"}),
        arguments=frozenset({"-v", "--assign", "-F", "--field-separator", "-W"}),
    ),
    # GNU sed reads options after its operands too: a value there may be `--expression=...`
    "sed": Interpreter(
        code=frozenset({"-e", "--expression"}),
        code_file=frozenset({"-f", "--file"}),
        arguments=frozenset({"-l", "--line-length"}),
        attached="i",
        stops=False,
    ),
}
_FAMILY = [
    ("python", r"python[0-9.]*|pypy[0-9.]*"),
    ("node", r"node(js)?"),
    ("perl", r"perl[0-9.]*"),
    ("ruby", r"ruby[0-9.]*"),
    ("php", r"php[0-9.]*"),
    ("awk", r"[gmn]?awk"),
    ("sed", r"g?sed"),
]
_OTHER_INTERPRETER = Interpreter(code=frozenset({"-e", "-c", "-E", "--eval"}), loads=frozenset({"-l", "-r", "-I"}))
#: Script operands that are the standard input: `python3 -`, `bash /dev/stdin`.
STDIN_FILES = frozenset({"-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"})


def is_stdin_file(word: str | None) -> bool:
    """`/dev/stdin` however it is spelled (`./../../dev/stdin`, `/dev//fd/0`)."""
    if word is None:
        return False
    import posixpath

    return word == "-" or posixpath.normpath("/" + word.lstrip("./")) in STDIN_FILES or word in STDIN_FILES


def is_interpreter(name: str) -> bool:
    """Whether the program `name` runs code it is given (a shell, python, awk...)."""
    return _INTERPRETER.fullmatch(name) is not None


def interpreter_family(name: str) -> str | None:
    """The key of INTERPRETERS for `name` (`python3.12` is "python"), or None."""
    return next((family for family, pattern in _FAMILY if re.fullmatch(pattern, name)), None)


def is_shell(name: str) -> bool:
    """Whether `name` is a POSIX-like shell (`bash`, `dash`, `zsh`...)."""
    return re.fullmatch(_SHELL, name) is not None


#: Shells whose `-c` code an argv step's value may stand in: their grammar is bash's or a
#: subset of it, so the code is analysed as a bash script and gets its values by reference.
BASH_LIKE = frozenset({"bash", "sh", "dash"})


def shell_code(argv: list[str | None]) -> int | None:
    """The index of the code of `bash -c CODE` in an argv, behind any prefixes
    (`env`, `sudo`...), or None."""
    return _shell_code_at(argv, 0)


def _shell_code_at(argv: list[str | None], at: int) -> int | None:
    if at >= len(argv) or holds_value(argv[at]):
        return None
    name = program_name(argv[at])
    if name in RUNS_PROGRAM:
        found = (_shell_code_at(argv, i) for i in programs_after(name, argv, at))
        return next((code for code in found if code is not None), None)
    if name not in BASH_LIKE:
        return None
    code, _, operand = shell_options(argv, at)
    return operand if code and operand < len(argv) else None


def shell_options(argv: list[str | None], at: int) -> tuple[bool, bool, int]:
    """How the shell at `at` reads its options: whether `-c` makes its first operand the
    code, whether `-s` makes it read the code from stdin, and the index of that operand."""
    code = stdin = False
    i = at + 1
    while i < len(argv):
        word = argv[i]
        if word is None or word in ("--", "-"):
            return code, stdin, i + (word is not None)
        if word in SHELL_ARGUMENT_OPTIONS:
            i += 2
            continue
        if not (word.startswith(("-", "+")) and len(word) > 1):
            break
        if not word.startswith("--"):
            letters = word[1:]
            code = code or "c" in letters and word[0] == "-"
            stdin = stdin or "s" in letters and word[0] == "-"
            i += 1 + letters.count("o") + letters.count("O")  # `-eo pipefail`
            continue
        i += 1
    return code, stdin, i


#: The role of an option's argument, by the field of `Interpreter` that lists the option.
_ROLES = {"code": "code", "code_file": "code_file", "loads": "loads", "arguments": "argument"}


def _option_argument(spec: Interpreter, word: str) -> tuple[str, str | None] | None:
    """The option of `word` that takes an argument: (the role of that argument, the
    argument when it is in the word itself, else None: it is the next word), or None for
    flags."""
    if word.startswith("--"):
        option = word.split("=", 1)[0].split(UNKNOWN, 1)[0]
        field = next((f for f in _ROLES if long_option_matches(option, getattr(spec, f))), None)
        return (_ROLES[field], word.split("=", 1)[1] if "=" in word else None) if field else None
    for at, letter in enumerate(word[1:], 1):
        field = next((f for f in _ROLES if "-" + letter in getattr(spec, f)), None)
        if field:
            return _ROLES[field], word[at + 1 :] or None
        if letter == UNKNOWN:
            return "code", word[at:]  # the value may go on with `e...`
        if letter in spec.attached:
            return None
    return None


def _interpreter_reading(name: str, argv: list[str | None], at: int):
    """Walk an interpreter's words, yielding (index, role). Roles: "option"; "value-option"
    (a value where an option may stand); "code", "code_file", "loads" and "argument" (the
    argument of such an option, the next word or the word itself when attached);
    "operand" (the code or script, when no option gave it); "data" (the program's
    arguments); "ambiguous" (a value after the code that may still be an option)."""
    family = interpreter_family(name)
    spec = INTERPRETERS.get(family, _OTHER_INTERPRETER)
    given = False  # an option or an operand gave the code
    options = True
    i = at + 1
    while i < len(argv):
        word = argv[i]
        if options and word == "--":
            yield i, "option"
            options = False
        elif options and word is None:
            yield i, "ambiguous" if given else "value-option"
        elif options and is_option(word):
            found = _option_argument(spec, word)
            if found is None:
                yield i, "value-option" if UNKNOWN in word else "option"
            else:
                kind, attached = found
                given = given or kind in ("code", "code_file")
                if attached is not None:
                    yield i, kind
                else:
                    yield i, "option"
                    if i + 1 < len(argv):
                        i += 1
                        yield i, kind
                if kind == "code" and family == "python":
                    yield from ((j, "data") for j in range(i + 1, len(argv)))  # `python3 -c CODE ARGS...`
                    return
        elif not given:
            yield i, "operand"  # the code or the script
            given = True
            options = options and not spec.stops
        else:
            yield i, "data"
            options = options and not spec.stops
        i += 1


def code_source(name: str, argv: list[str | None], at: int) -> str:
    """Where an interpreter that is not a shell takes its code from: "stdin" or "argument"."""
    spec = INTERPRETERS.get(interpreter_family(name), _OTHER_INTERPRETER)
    for i, role in _interpreter_reading(name, argv, at):
        word = argv[i]
        if word is not None and is_option(word) and role in _ROLES.values():
            word = _option_argument(spec, word)[1]  # `--file=/dev/stdin`
        if role == "code_file" and is_stdin_file(word) or role == "value-option":
            return "stdin"  # `awk -f -`; a value may be `-`
        if role in ("code", "code_file"):
            return "argument"
        if role == "operand":
            return "stdin" if holds_value(word) or is_stdin_file(word) else "argument"
    return "argument" if interpreter_family(name) in ("awk", "sed") else "stdin"


def _perl_opens_arguments(argv: list[str | None], at: int) -> bool:
    """`perl -n`, `-p`, `-i` (and `<>` in literal -e code) open every argument with the
    two-argument open, which runs `cmd|` as a command."""
    spec = INTERPRETERS["perl"]
    for i, word in enumerate(argv[at + 1 :], at + 1):
        if word is None or word == "--" or not is_option(word):
            if word is not None and argv[i - 1] in spec.code and re.search(r"<\s*(ARGV)?\s*>", word):
                return True
            if word is None or word == "--" or argv[i - 1] not in spec.code:
                return False
            continue
        for letter in word[1:]:
            if letter in "npi":
                return True
            if letter in spec.attached or "-" + letter in spec.code:
                break
    return False


def refuse_interpreter(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """Fill `refused` for the interpreter `name` at `at`: a value is refused as its code,
    its script, and where an option may stand before them."""
    if is_shell(name):
        _refuse_shell(name, argv, at, refused)
        return
    why = (
        f"an argument of `{name}` at or before its code or script, which `{name}` runs; "
        "pass the value after the code, as an argument of its own"
    )
    if interpreter_family(name) == "perl" and _perl_opens_arguments(argv, at):
        for i in range(at + 1, len(argv)):
            refused[i] = (
                f"an argument of `{name}` with -n, -p, -i or `<>`, which opens each argument with the "
                "two-argument open: `cmd|` runs cmd"
            )
        return
    for i, role in _interpreter_reading(name, argv, at):
        word = argv[i]
        if role in ("value-option", "operand", "code", "code_file", "loads") and holds_value(word):
            refused[i] = why
        elif role == "argument" and holds_value(word) and not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word or ""):
            refused[i] = why  # `awk -v NAME={{v}}` is data: awk reads only escapes in it
        elif role == "ambiguous":
            refused[i] = (
                f"an argument of `{name}` before `--`, where it may be an option that runs code "
                f"(`-e`, `-M`...); write `--` before it"
            )


def _refuse_shell(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """A shell: a value is refused in its options and as its code or script file."""
    why = (
        f"an argument of `{name}` at or before its code or script, which `{name}` runs; "
        "pass the value after the code, as an argument of its own"
    )
    code, stdin, operand = shell_options(argv, at)
    for i in range(at + 1, min(operand + 1, len(argv))):
        if holds_value(argv[i]):
            refused[i] = why
    if operand < len(argv) and holds_value(argv[operand]):
        for i in range(operand + 1, len(argv)):  # the value may be an option: `-c` makes the next word code
            refused[i] = why
