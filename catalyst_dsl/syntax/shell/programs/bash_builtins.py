"""bash's builtins that run their arguments as code (`eval`, `source`, `trap`...) or take
them as variable names (`read`, `unset`, `printf -v`...), whose [subscript] bash
evaluates as arithmetic; `hash -p`, which makes a name run a path.
"""

from __future__ import annotations

from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, holds_value, is_option

#: Builtins and programs whose every argument bash or the program may run as code.
EVALUATES = {
    "eval": "`eval` runs its arguments as bash code",
    "source": "`source` runs the file it names",
    ".": "`.` runs the file it names",
    "trap": "`trap` runs its first argument as bash code when the signal comes",
    "alias": "an alias is bash code run where its name is used",
    "enable": "`enable -f` loads a builtin from the file it names",
    "complete": "`complete -C`/`-F` run commands and functions it names",
    "compgen": "`compgen -W` expands its word list, running command substitutions in it",
    "bind": "`bind -x` runs its argument as bash code",
    "fc": "`fc` runs commands from the history",
    "let": "`let` evaluates its arguments as arithmetic, where `a[$(cmd)]` runs cmd",
    "coproc": "`coproc` runs its arguments as a command",
    "watch": "`watch` runs its arguments through `sh -c`",
    "parallel": "`parallel` runs its arguments as commands",
    "ssh": "`ssh` runs its command arguments through the remote shell",
    "su": "`su -c` runs its argument through a shell",
    "sg": "`sg GROUP -c CMD` runs CMD through a shell",
    "script": "`script -c` runs its argument through a shell",
    "expect": "`expect` runs its arguments as Tcl code",
    "osascript": "`osascript` runs its arguments as code",
    "make": "`make` expands `$(shell ...)` in variables given on its command line",
    "sqlite3": "`sqlite3` runs its arguments as SQL and dot-commands (`.shell`)",
    "psql": "`psql` runs its arguments as SQL and meta-commands (`\\!` runs a shell)",
    "mysql": "`mysql -e` runs its argument as SQL",
    "mongosh": "`mongosh --eval` runs its argument as JavaScript",
    "npx": "`npx` runs the package it names",
    "pnpx": "`pnpx` runs the package it names",
    "bunx": "`bunx` runs the package it names",
    "uvx": "`uvx` runs the package it names",
    "pipx": "`pipx run` runs the package it names",
    "vim": "`vim -c` runs editor commands",
    "nvim": "`nvim -c` runs editor commands",
    "gdb": "`gdb -ex` runs commands",
}
#: Builtins that take variable names as arguments. A name may carry a `[subscript]`, which
#: bash evaluates as arithmetic: `unset 'a[$(cmd)]'` runs cmd.
NAMES = {
    "unset": "`unset` takes variable names",
    "read": "`read` takes variable names",
    "mapfile": "`mapfile` takes a variable name",
    "readarray": "`readarray` takes a variable name",
    "getopts": "`getopts` takes a variable name",
    "wait": "`wait -p` takes a variable name",
    "declare": "`declare` takes variable names",
    "typeset": "`typeset` takes variable names",
    "local": "`local` takes variable names",
    "export": "`export` takes variable names",
    "readonly": "`readonly` takes variable names",
    "printf": "`printf -v` takes a variable name",
    "test": "`test -v` takes a variable name",
    "[": "`[ -v ]` takes a variable name",
}
#: Of the builtins in NAMES, the options that take the next word, and of those the ones
#: whose argument is a variable name (`read -a NAME`) or code (`mapfile -C CALLBACK`).
NAME_OPTIONS = {
    "read": (frozenset("adinNptu"), frozenset("a")),
    "mapfile": (frozenset("CcdnOsu"), frozenset("C")),
    "readarray": (frozenset("CcdnOsu"), frozenset("C")),
    "wait": (frozenset("p"), frozenset("p")),
}


def refuse_names(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """Fill `refused` with the arguments of the builtin `name` that it takes as variable names."""
    why = f"an argument of `{name}`: {NAMES[name]}, and bash evaluates a name's [subscript] as arithmetic"
    if name in NAME_OPTIONS:
        _name_options(name, argv, at, refused, why)
        return
    for i in range(at + 1, len(argv)):
        before = argv[i - 1]
        # `printf` takes a name only after -v, its first argument; `test` after -v or -R
        # anywhere; `getopts OPTSTRING NAME ARGS`. A value before may itself be `-v`.
        if name == "printf":
            named = i == at + 1 or (i == at + 2 and holds_value(before) or before == "-v")
        elif name in ("test", "["):
            named = i == at + 1 or before in ("-v", "-R") or holds_value(before)
        elif name == "getopts":
            named = i == at + 2
        else:
            named = True
        if named:
            refused[i] = why


def _name_options(name: str, argv: list[str | None], at: int, refused: dict[int, str], why: str) -> None:
    """`read`, `mapfile`, `wait`: names are the words that are not options (for `wait`,
    only the argument of `-p`) and the arguments of some options; other arguments are data."""
    takes, named = NAME_OPTIONS[name]
    i, options = at + 1, True
    while i < len(argv):
        word = argv[i]
        if options and word == "--":
            options = False
        elif options and word is not None and is_option(word):
            for k, letter in enumerate(word[1:], 1):
                if letter == UNKNOWN or letter in takes:
                    rest = word[k + 1 :]
                    reason = f"the callback of `{name} -C`, which bash runs as code" if letter == "C" else why
                    if letter == UNKNOWN or letter in named and UNKNOWN in rest:
                        refused[i] = reason  # `-a{{v}}`, or a value that may be any option
                    elif letter in named and not rest and i + 1 < len(argv):
                        i += 1
                        if holds_value(argv[i]):
                            refused[i] = reason
                    elif not rest:
                        i += 1  # the option's argument: data
                    break
        elif holds_value(word) and (name != "wait" or options and argv[i - 1] is None):
            refused[i] = why  # a name, or a value that may be an option such as `-a` (`-p` of `wait`)
        i += 1


def refuse_hash_path(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """`hash -p PATH NAME` makes NAME run PATH; `hash NAME` only looks NAME up."""
    why = "the path of `hash -p`, which makes a command run the program it gives"
    for i in range(at + 1, len(argv)):
        word, before = argv[i], argv[i - 1]
        if word is not None and word.startswith("-") and UNKNOWN in word:
            refused[i] = why  # `-p{{v}}`
        elif holds_value(word) and i > at + 1 and (before is None or before.startswith("-") and "p" in before):
            refused[i] = why  # after `-p`, or after a value that may be `-p`
