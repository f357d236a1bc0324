"""Programs that treat one of their arguments as code, a program to run, or a variable name.

A value reaches a bash script as a reference to an environment variable (`bash_refs`),
so bash itself never reads it as code. But the program that receives the value as an
argument may: `eval` and `bash -c` run it, `sudo`, `xargs` and `find -exec` run the
program it names, and `read`, `unset` or `printf -v` take it as a variable name, whose
`[subscript]` bash evaluates as arithmetic. These tables say where in such a command a
value is refused. They are facts about programs, so they are a list: a program not named
here is trusted to read its arguments as data (docs/security.md says so).

The same tables serve bash scripts and argv steps (`command`, cleo's deterministic
nodes), so `catalyst check` and a run refuse the same commands.
"""

from __future__ import annotations

import re

#: Stands for the unknown rest of a word whose start is literal (`NAME=` of `NAME={{ v }}`).
UNKNOWN = "\0"

#: Builtins and programs whose every argument bash or the program may run as code.
EVALUATES = {
    "eval": "`eval` runs its arguments as bash code",
    "source": "`source` runs the file it names", ".": "`.` runs the file it names",
    "trap": "`trap` runs its first argument as bash code when the signal comes",
    "alias": "an alias is bash code run where its name is used",
    "enable": "`enable -f` loads a builtin from the file it names",
    "complete": "`complete -C`/`-F` run commands and functions it names",
    "compgen": "`compgen -W` expands its word list, running command substitutions in it",
    "bind": "`bind -x` runs its argument as bash code", "fc": "`fc` runs commands from the history",
    "let": "`let` evaluates its arguments as arithmetic, where `a[$(cmd)]` runs cmd",
    "hash": "`hash -p` makes a name run the program it gives",
    "coproc": "`coproc` runs its arguments as a command",
    "watch": "`watch` runs its arguments through `sh -c`", "parallel": "`parallel` runs its arguments as commands",
    "ssh": "`ssh` runs its command arguments through the remote shell",
    "su": "`su -c` runs its argument through a shell", "script": "`script -c` runs its argument through a shell",
    "expect": "`expect` runs its arguments as Tcl code", "osascript": "`osascript` runs its arguments as code",
    "make": "`make` expands `$(shell ...)` in variables given on its command line",
    "sqlite3": "`sqlite3` runs its arguments as SQL and dot-commands (`.shell`)",
    "psql": "`psql` runs its arguments as SQL and meta-commands (`\\!` runs a shell)",
    "mysql": "`mysql -e` runs its argument as SQL", "mongosh": "`mongosh --eval` runs its argument as JavaScript",
    "npx": "`npx` runs the package it names", "pnpx": "`pnpx` runs the package it names",
    "bunx": "`bunx` runs the package it names", "uvx": "`uvx` runs the package it names",
    "pipx": "`pipx run` runs the package it names",
    "vim": "`vim -c` runs editor commands", "nvim": "`nvim -c` runs editor commands", "gdb": "`gdb -ex` runs commands",
}

#: Builtins that take variable names as arguments. A name may carry a `[subscript]`, which
#: bash evaluates as arithmetic: `unset 'a[$(cmd)]'` runs cmd.
NAMES = {
    "unset": "`unset` takes variable names", "read": "`read` takes variable names",
    "mapfile": "`mapfile` takes a variable name", "readarray": "`readarray` takes a variable name",
    "getopts": "`getopts` takes a variable name", "wait": "`wait -p` takes a variable name",
    "declare": "`declare` takes variable names", "typeset": "`typeset` takes variable names",
    "local": "`local` takes variable names", "export": "`export` takes variable names",
    "readonly": "`readonly` takes variable names", "printf": "`printf -v` takes a variable name",
    "test": "`test -v` takes a variable name", "[": "`[ -v ]` takes a variable name",
}

#: Programs that run the program named by one of their arguments. The value is refused
#: from the first argument up to that program; what follows is that program's arguments.
#: Each entry: the options that take a separate argument (the next word).
RUNS_PROGRAM: dict[str, frozenset[str]] = {
    "exec": frozenset({"-a"}), "command": frozenset(), "builtin": frozenset(), "nohup": frozenset(),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}), "time": frozenset(), "setsid": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}), "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}), "stdbuf": frozenset({"-i", "-o", "-e"}),
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"}), "doas": frozenset({"-u", "-C"}),
    "runuser": frozenset({"-u", "-g", "-G"}), "chroot": frozenset({"--userspec", "--groups"}),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), "unbuffer": frozenset(),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E"}), "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u"}),
    "taskset": frozenset(), "chrt": frozenset(), "catchsegv": frozenset(), "fakeroot": frozenset(),
    "firejail": frozenset(), "unshare": frozenset(), "nsenter": frozenset({"-t", "--target"}),
    "valgrind": frozenset(), "systemd-run": frozenset({"-u", "--unit", "-p", "--property"}),
    "caffeinate": frozenset(), "torsocks": frozenset(), "proxychains": frozenset({"-f"}), "busybox": frozenset(),
}
#: Options of those that make their arguments a shell command: `sudo -s cmd`, `flock -c cmd`.
SHELL_OPTIONS = {"sudo": frozenset({"-s", "--shell", "-i", "--login"}), "flock": frozenset({"-c", "--command"}),
                 "runuser": frozenset({"-c", "--command"})}
#: Operands some of those read before the program: `timeout 5 cmd`, `chroot DIR cmd`,
#: `flock FILE cmd`, `taskset MASK cmd`, `chrt PRIO cmd`.
OPERANDS_BEFORE_PROGRAM = {"timeout": 1, "chroot": 1, "flock": 1, "taskset": 1, "chrt": 1}

#: Interpreters: their code (after `-c`, `-e`...) or script file is their first operand.
#: The value is refused up to and including it; what follows are the script's arguments.
_INTERPRETER = re.compile(
    r"(ba|da|z|k|mk|a|fi|c|tc|yash|posh)?sh|pwsh|powershell|python[0-9.]*|pypy[0-9.]*|node(js)?|deno|bun"
    r"|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|wish|R|Rscript|[gmn]?awk|sed|gsed|jshell"
    r"|groovy|scala|julia|guile|racket|sbcl|ocaml|erl|elixir|escript|swift|kotlin")

#: Programs that run the word after one of these options: `find . -exec cmd {} ;`.
EXEC_OPTIONS = {"find": frozenset({"-exec", "-execdir", "-ok", "-okdir"}),
                "git": frozenset({"-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "-u"}),
                "tar": frozenset({"--to-command", "--checkpoint-action", "--use-compress-program", "-I", "--info-script", "-F"}),
                "rsync": frozenset({"-e", "--rsh", "--rsync-path"})}


#: Variables whose text bash or the programs it starts read as code, arithmetic, prompts
#: or places to load code from.
CODE_VARIABLES = frozenset({
    "RANDOM", "SRANDOM", "OPTIND", "OPTERR", "BASH_XTRACEFD", "BASH_COMPAT", "BASH_ENV", "ENV", "BASH_ARGV0",
    "BASHOPTS", "SHELLOPTS", "PROMPT_COMMAND", "PROMPT_DIRTRIM", "IFS", "PATH", "CDPATH", "GLOBIGNORE",
    "EXECIGNORE", "FUNCNEST", "HISTFILE", "HISTCMD", "HISTSIZE", "HISTFILESIZE", "LINENO", "SECONDS", "TMOUT",
    "COLUMNS", "LINES", "HOSTFILE", "INPUTRC", "MAIL", "MAILPATH", "MAILCHECK", "TIMEFORMAT", "HOME", "SHELL",
    "EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS",
    "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
    "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
    "TERMINFO", "LOCPATH", "GCONV_PATH", "MALLOC_CONF", "HOSTALIASES", "RESOLV_HOST_CONF",
})
_CODE_VARIABLE_PATTERN = re.compile(
    r"(PS[0-9]|LD_\w*|DYLD_\w*|GIT_\w*|BASH_\w*|NPM_CONFIG_\w*|npm_config_\w*|\w*_(OPTIONS|OPTS|COMMAND|ASKPASS|PAGER|EDITOR|SHELL))")

def is_code_variable(name: str) -> bool:
    return name in CODE_VARIABLES or _CODE_VARIABLE_PATTERN.fullmatch(name) is not None


def program_name(word: str) -> str:
    """`/usr/bin/env` is `env`; a path names the program by its last part."""
    return word.rsplit("/", 1)[-1]


def argv_words(items) -> list[str | None]:
    """An argv step's IR words as `refused_arguments` reads them: the text of a literal
    word, None for one that holds a value."""
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax import expr_ast as ast

    words: list[str | None] = []
    for item in items:
        if isinstance(item, ir.Lit) and isinstance(item.value, str):
            words.append(item.value)
            continue
        head = item.parts[0] if isinstance(item, ir.Tmpl) and item.parts else None
        known = head.text if isinstance(head, ast.TextPart) else ""
        # `NAME={{ v }}`: the name is known, which `env` needs.
        words.append(known + UNKNOWN if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=", known) else None)
    return words


def is_interpreter(name: str) -> bool:
    return _INTERPRETER.fullmatch(name) is not None


#: The positions an argument of the command `argv` may not hold a value in, and why.
#: `argv` is the command's words: a str for a literal word the author wrote, None for a
#: word whose text is not known before the run (it holds a value or an expansion).
def refused_arguments(argv: list[str | None]) -> dict[int, str]:
    refused: dict[int, str] = {}
    _command(argv, 0, refused)
    return refused


#: Shells whose `-c` code an argv step's value may stand in: their grammar is bash's or a
#: subset of it, so the code is analysed as a bash script and gets its values by reference.
BASH_LIKE = frozenset({"bash", "sh", "dash"})


def shell_code(argv: list[str | None]) -> int | None:
    """The index of the code of `bash -c CODE` in an argv, behind any prefixes
    (`env`, `sudo`...), or None."""
    at = 0
    while at < len(argv) and argv[at] is not None:
        name = program_name(argv[at])
        if name in RUNS_PROGRAM:
            at = _program_after(name, argv, at)
            continue
        if name not in BASH_LIKE:
            return None
        code = False
        for i in range(at + 1, len(argv)):
            word = argv[i]
            if word is None:
                return i if code else None
            if word == "--":
                return i + 1 if code and i + 1 < len(argv) else None
            if word.startswith("-") and not word.startswith("--") and len(word) > 1:
                code = code or "c" in word[1:]
                continue
            if word.startswith("--"):
                continue
            return i if code else None
        return None
    return None


def _program_after(name: str, argv: list[str | None], at: int) -> int:
    """The index of the program a prefix runs (or past the end)."""
    takes_argument = RUNS_PROGRAM[name]
    operands = OPERANDS_BEFORE_PROGRAM.get(name, 0)
    i = at + 1
    while i < len(argv) and argv[i] is not None:
        word = argv[i]
        if word == "--":
            return i + 1
        if word.startswith("-") and word != "-":
            i += 2 if word in takes_argument else 1
        elif name == "env" and "=" in word or operands:
            operands -= 0 if name == "env" and "=" in word else 1
            i += 1
        else:
            return i
    return len(argv) if i < len(argv) and argv[i] is None else i


def _command(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """Fill `refused` for the command starting at word `at` of `argv`."""
    if at >= len(argv):
        return
    word = argv[at]
    if word is None:
        refused[at] = "in program position, where it names the program that runs"
        for i in range(at + 1, len(argv)):
            refused.setdefault(i, "an argument of a program the script does not name literally, which may run it as code")
        return
    name = program_name(word)
    rest = range(at + 1, len(argv))
    if name in EVALUATES:
        for i in rest:
            refused[i] = f"an argument of `{name}`: {EVALUATES[name]}"
    elif name in NAMES:
        _names(name, argv, at, refused)
    elif name in RUNS_PROGRAM:
        _prefix(name, argv, at, refused)
    elif is_interpreter(name):
        _interpreter(name, argv, at, refused)
    elif name in EXEC_OPTIONS:
        _exec_options(name, argv, at, refused)


def reads_code_from_stdin(argv: list[str | None]) -> str | None:
    """The program of `argv` when it runs its standard input as code (`bash`, `sh -s`,
    `python3 -`, `xargs sh`...), else None."""
    at = 0
    while at < len(argv) and argv[at] is not None and program_name(argv[at]) in RUNS_PROGRAM:
        prefix = program_name(argv[at])
        at = _program_after(prefix, argv, at)
        if prefix == "xargs":
            # xargs makes its input the arguments of its program: code when that program
            # runs its arguments (`xargs sh -c`, `xargs eval`), or names one (`xargs env`)
            if at >= len(argv):
                return None
            program = argv[at]
            if program is None or program_name(program) in EVALUATES or program_name(program) in RUNS_PROGRAM \
                    or is_interpreter(program_name(program)):
                return f"xargs {program or ''}".strip()
            return None
    if at >= len(argv) or argv[at] is None:
        return None if at >= len(argv) else "a program the script does not name literally"
    name = program_name(argv[at])
    if name in ("eval", "source", "."):
        return name
    if not is_interpreter(name) or name in ("sed", "gsed") or name.endswith("awk"):
        return None
    for i in range(at + 1, len(argv)):
        word = argv[i]
        if word is None:
            return name
        if word == "-" or word == "-s":
            return name
        if word.startswith("-") and any(c in word[1:] for c in "ce") and not word.startswith("--"):
            return None  # the code is an argument; stdin is data
        if not word.startswith("-"):
            return None  # a script file
    return name


def _names(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    # `printf` takes a name only after -v, its first argument; `test` after -v or -R
    # anywhere. A value before may itself be `-v`, making the next word a name.
    why = f"an argument of `{name}`: {NAMES[name]}, and bash evaluates a name's [subscript] as arithmetic"
    for i in range(at + 1, len(argv)):
        before = argv[i - 1]
        if name == "printf":
            named = i == at + 1 or (i == at + 2 and before in ("-v", None))
        elif name in ("test", "["):
            named = i == at + 1 or before in ("-v", "-R", None)
        else:
            named = True
        if named:
            refused[i] = why


def _prefix(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    takes_argument = RUNS_PROGRAM[name]
    operands = OPERANDS_BEFORE_PROGRAM.get(name, 0)
    i = at + 1
    why = f"before the program `{name}` runs, where it could be taken for that program or an option"
    while i < len(argv):
        word = argv[i]
        if word is None:
            break  # not known: it may be the program
        if word == "--":
            i += 1
            break
        if word.startswith("-") and word != "-":
            if name == "env" and (word in ("-S", "--split-string") or word.startswith("--split-string")) \
                    or word in SHELL_OPTIONS.get(name, ()):
                for j in range(i + 1, len(argv)):
                    refused[j] = f"an argument of `{name} {word}`, which runs it through a shell"
                return
            i += 2 if word in takes_argument else 1
            continue
        if name == "env" and "=" in word:
            variable = word.split("=", 1)[0]
            if UNKNOWN in word and is_code_variable(variable):
                refused[i] = f"assigned to `{variable}` by `env`, a variable programs read as code or a place to load code from"
            i += 1
            continue
        if operands:
            operands -= 1
            i += 1
            continue
        break
    for j in range(at + 1, min(i, len(argv))):
        word = argv[j]
        if word is None or UNKNOWN in word and not (name == "env" and "=" in word.split(UNKNOWN)[0]):
            refused.setdefault(j, why)
    if i < len(argv):
        if argv[i] is None:
            refused[i] = f"in program position behind `{name}`, where it names the program that runs"
            for j in range(i + 1, len(argv)):
                refused.setdefault(j, "an argument of a program the script does not name literally, which may run it as code")
        else:
            _command(argv, i, refused)


def _interpreter(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    why = (f"an argument of `{name}` at or before its code or script, which `{name}` runs; "
           "pass the value after the code, as an argument of its own")
    for i in range(at + 1, len(argv)):
        word = argv[i]
        refused[i] = why
        if word is not None and not word.startswith("-") and argv[i - 1] not in ("-W", "-X", "-I", "-F", "-v", "-f", "-o", "-O"):
            return  # the code or the script: what follows is its arguments


def _exec_options(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    options = EXEC_OPTIONS[name]
    i = at + 1
    while i < len(argv):
        word = argv[i]
        if word is None:
            i += 1
            continue
        option = word.split("=", 1)[0]
        if option in options:
            if "=" in word and option.startswith("--"):
                i += 1
                continue
            if name == "find":
                end = next((j for j in range(i + 1, len(argv)) if argv[j] in (";", "+")), len(argv))
                sub = refused_arguments(argv[i + 1:end])
                for j, why in sub.items():
                    refused[i + 1 + j] = why
                i = end + 1
                continue
            if i + 1 < len(argv):
                refused[i + 1] = f"the argument of `{name} {word}`, which {name} runs or reads as settings that run programs"
            i += 2
            continue
        i += 1
