"""Programs that treat one of their arguments as code, a program to run, or a variable name.

A value reaches a bash script as a reference to an environment variable (`bash/`),
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
from typing import NamedTuple

#: Stands for the unknown rest of a word whose start is literal (`NAME=` of `NAME={{ v }}`).
UNKNOWN = "\0"

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

#: Programs that run the program named by one of their arguments. The value is refused
#: from the first argument up to that program; what follows is that program's arguments.
#: Each entry: the options that take a separate argument (the next word). An option not
#: listed here or in FLAGS may take one: the word after it is read both ways.
RUNS_PROGRAM: dict[str, frozenset[str]] = {
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-P", "--default-signal", "--ignore-signal", "--block-signal"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "setsid": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "sudo": frozenset(
        {
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
        }
    ),
    "doas": frozenset({"-u", "-C", "-a"}),
    "runuser": frozenset(
        {"-u", "-g", "-G", "-s", "-w", "--user", "--group", "--supp-group", "--shell", "--whitelist-environment"}
    ),
    "chroot": frozenset({"--userspec", "--groups"}),
    "xargs": frozenset(
        {
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--max-chars",
            "--process-slot-var",
        }
    ),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}),
    "unbuffer": frozenset(),
    "strace": frozenset(
        {
            "-o",
            "-e",
            "-p",
            "-s",
            "-u",
            "-E",
            "-a",
            "-b",
            "-I",
            "-O",
            "-S",
            "-P",
            "-X",
            "--output",
            "--trace-path",
            "--attach",
            "--user",
            "--env",
            "--string-limit",
        }
    ),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-x", "-w"}),
    "taskset": frozenset(),
    "chrt": frozenset({"-T", "-P", "-D"}),
    "catchsegv": frozenset(),
    "fakeroot": frozenset({"-l", "--lib", "--faked", "-s", "-i", "-b"}),
    "firejail": frozenset(),
    "unshare": frozenset(
        {
            "-S",
            "--setuid",
            "-G",
            "--setgid",
            "-R",
            "--root",
            "-w",
            "--wd",
            "--propagation",
            "--setgroups",
            "--map-user",
            "--map-group",
        }
    ),
    "nsenter": frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w"}),
    "valgrind": frozenset(),
    "systemd-run": frozenset(
        {
            "-u",
            "--unit",
            "-p",
            "--property",
            "-E",
            "--setenv",
            "-M",
            "--machine",
            "-H",
            "--host",
            "--description",
            "--slice",
            "--uid",
            "--gid",
            "--nice",
            "--working-directory",
        }
    ),
    "caffeinate": frozenset({"-t", "-w"}),
    "torsocks": frozenset({"-u", "-p", "-a", "-P"}),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "busybox": frozenset(),
    "prlimit": frozenset({"-p", "--pid", "-o", "--output"}),
    "setarch": frozenset(),
    "linux32": frozenset(),
    "linux64": frozenset(),
    "setpriv": frozenset(
        {
            "--reuid",
            "--regid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
        }
    ),
    "dbus-run-session": frozenset({"--config-file", "--dbus-daemon"}),
    "dbus-launch": frozenset({"--config-file"}),
    "xvfb-run": frozenset(
        {
            "-e",
            "-f",
            "-n",
            "-p",
            "-s",
            "-w",
            "--error-file",
            "--auth-file",
            "--server-num",
            "--xauth-protocol",
            "--server-args",
            "--wait",
        }
    ),
    "numactl": frozenset(
        {
            "-i",
            "-m",
            "-N",
            "-C",
            "-p",
            "-P",
            "-b",
            "-w",
            "--interleave",
            "--membind",
            "--cpunodebind",
            "--physcpubind",
            "--preferred",
            "--preferred-many",
            "--weighted-interleave",
        }
    ),
    "faketime": frozenset({"-p", "--date-prog"}),
    "gosu": frozenset(),
    "su-exec": frozenset(),
    "pkexec": frozenset({"--user", "-u"}),
    "cgexec": frozenset({"-g"}),
    "chpst": frozenset(
        {"-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-r", "-t"}
    ),
    "runcon": frozenset({"-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range"}),
    "sandbox-exec": frozenset({"-f", "-n", "-p", "-D"}),
    "ssh-agent": frozenset({"-a", "-E", "-t", "-P", "-O"}),
}
#: Options of those known to take no argument: the word after one is not read as its argument.
FLAGS: dict[str, frozenset[str]] = {
    "exec": frozenset({"-c", "-l"}),
    "command": frozenset({"-p"}),
    "env": frozenset({"-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "--list-signal-handling"}),
    "time": frozenset({"-p", "-a", "--append", "-v", "--verbose", "-q", "--quiet", "--portability"}),
    "setsid": frozenset({"-c", "--ctty", "-f", "--fork", "-w", "--wait"}),
    "ionice": frozenset({"-t", "--ignore"}),
    "timeout": frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
    "sudo": frozenset(
        {
            "-A",
            "--askpass",
            "-b",
            "--background",
            "-E",
            "--preserve-env",
            "-e",
            "--edit",
            "-H",
            "--set-home",
            "-K",
            "--remove-timestamp",
            "-k",
            "--reset-timestamp",
            "-n",
            "--non-interactive",
            "-P",
            "--preserve-groups",
            "-S",
            "--stdin",
            "-B",
            "--bell",
            "-N",
            "--no-update",
        }
    ),
    "doas": frozenset({"-n", "-S", "-L"}),
    "runuser": frozenset({"-l", "--login", "-m", "-p", "--preserve-environment", "-f", "--fast", "-P", "--pty"}),
    "chroot": frozenset({"--skip-chdir"}),
    "xargs": frozenset(
        {
            "-0",
            "--null",
            "-r",
            "--no-run-if-empty",
            "-t",
            "--verbose",
            "-p",
            "--interactive",
            "-x",
            "--exit",
            "-o",
            "--open-tty",
            "--show-limits",
            "-i",
            "-e",
            "-l",
            "--replace",
            "--eof",
        }
    ),
    "flock": frozenset(
        {
            "-s",
            "--shared",
            "-x",
            "-e",
            "--exclusive",
            "-n",
            "--nb",
            "--nonblock",
            "-u",
            "--unlock",
            "-o",
            "--close",
            "-F",
            "--no-fork",
            "--verbose",
        }
    ),
    "strace": frozenset(
        {
            "-f",
            "-ff",
            "-c",
            "-C",
            "-q",
            "-qq",
            "-qqq",
            "-t",
            "-tt",
            "-ttt",
            "-T",
            "-v",
            "-V",
            "-x",
            "-xx",
            "-y",
            "-yy",
            "-r",
            "-w",
            "-z",
            "-Z",
            "-k",
            "-i",
            "-n",
            "-d",
            "-D",
            "-DD",
            "-F",
            "--follow-forks",
            "--summary-only",
            "--quiet",
            "--no-abbrev",
        }
    ),
    "ltrace": frozenset({"-f", "-c", "-C", "-i", "-r", "-S", "-t", "-tt", "-ttt", "-T", "-b"}),
    "taskset": frozenset({"-a", "--all-tasks", "-c", "--cpu-list"}),
    "chrt": frozenset(
        {
            "-a",
            "--all-tasks",
            "-b",
            "--batch",
            "-d",
            "--deadline",
            "-f",
            "--fifo",
            "-i",
            "--idle",
            "-o",
            "--other",
            "-r",
            "--rr",
            "-R",
            "--reset-on-fork",
            "-v",
            "--verbose",
            "-e",
            "--ext",
        }
    ),
    "unshare": frozenset(
        {
            "-m",
            "--mount",
            "-u",
            "--uts",
            "-i",
            "--ipc",
            "-n",
            "--net",
            "-p",
            "--pid",
            "-U",
            "--user",
            "-C",
            "--cgroup",
            "-T",
            "--time",
            "-f",
            "--fork",
            "-r",
            "--map-root-user",
            "-c",
            "--map-current-user",
            "--kill-child",
            "--mount-proc",
            "--keep-caps",
        }
    ),
    "nsenter": frozenset(
        {
            "-m",
            "-u",
            "-i",
            "-n",
            "-p",
            "-U",
            "-C",
            "-T",
            "-F",
            "-Z",
            "-a",
            "--all",
            "-e",
            "-r",
            "--preserve-credentials",
            "--no-fork",
        }
    ),
    "systemd-run": frozenset(
        {
            "--user",
            "--system",
            "--scope",
            "-t",
            "--pty",
            "-P",
            "--pipe",
            "-q",
            "--quiet",
            "-G",
            "--collect",
            "--wait",
            "-r",
            "--remain-after-exit",
            "--no-block",
            "--no-ask-password",
        }
    ),
    "proxychains": frozenset({"-q"}),
    "proxychains4": frozenset({"-q"}),
    "unbuffer": frozenset({"-p"}),
    "prlimit": frozenset({"--noheadings", "--raw", "--verbose"}),
    "setpriv": frozenset(
        {"-d", "--dump", "--nnp", "--no-new-privs", "--keep-groups", "--clear-groups", "--init-groups", "--reset-env"}
    ),
    "xvfb-run": frozenset({"-a", "--auto-servernum", "-l", "--listen-tcp"}),
    "faketime": frozenset({"-f", "-m", "--exclude-monotonic"}),
    "pkexec": frozenset({"--disable-internal-agent", "--keep-cwd"}),
    "cgexec": frozenset({"--sticky"}),
    "chpst": frozenset({"-v", "-P", "-0", "-1", "-2"}),
    "runcon": frozenset({"-c", "--compute"}),
    "ssh-agent": frozenset({"-c", "-s", "-d", "-D", "-k"}),
}
#: Options of those that make their arguments a shell command: `sudo -s cmd`, `flock -c cmd`.
SHELL_OPTIONS = {
    "sudo": frozenset({"-s", "--shell", "-i", "--login"}),
    "flock": frozenset({"-c", "--command"}),
    "runuser": frozenset({"-c", "--command"}),
    "doas": frozenset({"-s"}),
    "env": frozenset({"-S", "--split-string"}),
    "systemd-run": frozenset({"-S", "--shell"}),
}
#: Operands some of those read before the program: `timeout 5 cmd`, `chroot DIR cmd`,
#: `flock FILE cmd`, `taskset MASK cmd`, `chrt PRIO cmd`, `setarch ARCH cmd`, `gosu USER cmd`.
OPERANDS_BEFORE_PROGRAM = {
    "timeout": 1,
    "chroot": 1,
    "flock": 1,
    "taskset": 1,
    "chrt": 1,
    "setarch": 1,
    "faketime": 1,
    "gosu": 1,
    "su-exec": 1,
}
#: Operands some read before the program only sometimes: `runcon CONTEXT cmd` but `runcon -t T cmd`.
OPTIONAL_OPERANDS = {"runcon": 1}
#: Prefixes that take `NAME=value` words before the program and set them in its environment.
ASSIGNS = frozenset({"env", "sudo"})

#: Interpreters: their code is the argument of an option (`-c`, `-e`...) or their first
#: operand (the code, or a script file). A value is refused there and where an option may
#: stand before it; the script's arguments after it are data (INTERPRETERS says which).
_SHELL = r"(ba|da|z|k|mk|a|fi|c|tc|yash|posh)?sh"
_INTERPRETER = re.compile(
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


def _is_stdin_file(word: str | None) -> bool:
    """`/dev/stdin` however it is spelled (`./../../dev/stdin`, `/dev//fd/0`)."""
    if word is None:
        return False
    import posixpath

    return word == "-" or posixpath.normpath("/" + word.lstrip("./")) in STDIN_FILES or word in STDIN_FILES


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


#: Programs that run (or load settings that run) the argument of one of these options:
#: `tar --to-command CMD`, `rsync -e CMD`, `scp -o ProxyCommand=CMD`, `zip -TT CMD`.
EXEC_OPTIONS = {
    "tar": frozenset(
        {
            "--to-command",
            "--checkpoint-action",
            "--use-compress-program",
            "-I",
            "--info-script",
            "--new-volume-script",
            "-F",
            "--rsh-command",
            "--rmt-command",
        }
    ),
    "rsync": frozenset({"-e", "--rsh", "--rsync-path"}),
    "scp": frozenset({"-o", "-S", "-F"}),
    "sftp": frozenset({"-o", "-S", "-F", "-D"}),
    "zip": frozenset({"-TT", "--unzip-command"}),
}
#: Short options of those that take an argument, so that the letters after one in the same
#: word are that argument: `tar -xf archive.tar`.
ARGUMENT_LETTERS = {"tar": "bCfFgHIKLNTVX", "rsync": "BfTM", "scp": "cDiJlPS", "sftp": "BbcDFiJlPRSs"}
#: `find` runs the words after these up to `;` or `+`: `find . -exec cmd {} ;`.
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})

#: Options of git (before its subcommand) whose argument is settings or a place that runs programs.
GIT_OPTIONS = frozenset({"-c", "--config-env", "--exec-path", "--git-dir"})
#: Options of git before its subcommand that take the next word.
GIT_ARGUMENT_OPTIONS = frozenset(
    {"-C", "-c", "--config-env", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"}
)
#: Options of git subcommands whose argument runs as a command.
GIT_EXEC_OPTIONS = {
    "clone": frozenset({"-u", "--upload-pack", "--template", "-c", "--config"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}),
    "archive": frozenset({"--exec"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "init": frozenset({"--template"}),
    "rebase": frozenset({"-x", "--exec"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "send-email": frozenset({"--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd", "--smtp-server"}),
    "filter-branch": frozenset(
        {
            "--setup",
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        }
    ),
    "instaweb": frozenset({"--httpd", "-d", "--browser", "-b"}),
}
#: Options whose argument is optional, so only `-Ocmd` or `--opt=cmd` carries it: `git grep -O`.
GIT_ATTACHED_EXEC_OPTIONS = {"grep": frozenset({"-O", "--open-files-in-pager"})}
#: Subcommands that run everything after a word: `git bisect run CMD`, `git submodule foreach CMD`.
GIT_RUNS_AFTER = {"bisect": "run", "submodule": "foreach"}
#: git settings whose value runs as a command or names one, or code to load (case-insensitive).
GIT_CODE_KEYS = re.compile(
    r"alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|attributesfile)"
    r"|.*\.(command|cmd|program|helper|driver|textconv|path|tool|hook|packobjectshook|uploadpack|receivepack)"
    r"|diff\.external|filter\..*|sequence\.editor|pager\..*|web\.browser|include(if\..*)?\.path|init\.templatedir"
    r"|protocol\..*|interactive\.difffilter|sendemail\..*|credential\..*|uploadpack\..*|remote\..*\.(vcs|proxy)"
    r"|submodule\..*\.update|gpg\..*|.*keycommand|core\.(editor|sshcommand)|merge\..*\.driver|blame\.ignorerevsfile",
    re.IGNORECASE,
)


#: Variables whose text bash or the programs it starts read as code, arithmetic, prompts
#: or places to load code from.
CODE_VARIABLES = frozenset(
    {
        "RANDOM",
        "SRANDOM",
        "OPTIND",
        "OPTERR",
        "BASH_XTRACEFD",
        "BASH_COMPAT",
        "BASH_ENV",
        "ENV",
        "BASH_ARGV0",
        "BASHOPTS",
        "SHELLOPTS",
        "PROMPT_COMMAND",
        "PROMPT_DIRTRIM",
        "IFS",
        "PATH",
        "CDPATH",
        "GLOBIGNORE",
        "EXECIGNORE",
        "FUNCNEST",
        "HISTFILE",
        "HISTCMD",
        "HISTSIZE",
        "HISTFILESIZE",
        "LINENO",
        "SECONDS",
        "TMOUT",
        "COLUMNS",
        "LINES",
        "HOSTFILE",
        "INPUTRC",
        "MAIL",
        "MAILPATH",
        "MAILCHECK",
        "TIMEFORMAT",
        "HOME",
        "SHELL",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "TERMINFO",
        "LOCPATH",
        "GCONV_PATH",
        "MALLOC_CONF",
        "HOSTALIASES",
        "RESOLV_HOST_CONF",
        # debuggers and start-up code of interpreters: perl -d loads PERL5DB, lua runs LUA_INIT, python
        # calls PYTHONBREAKPOINT and imports from PYTHONUSERBASE, R and php read their profile and ini files
        "PERL5DB",
        "PYTHONBREAKPOINT",
        "PYTHONUSERBASE",
        "R_PROFILE",
        "R_PROFILE_USER",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "TCLLIBPATH",
        "GEM_HOME",
        "GEM_PATH",
        "BUNDLE_GEMFILE",
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
        # programs make, configure and compilers run, and flags that load plugins (`-fplugin=`, `-wrapper`)
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "AS",
        "NM",
        "RANLIB",
        "STRIP",
        "CFLAGS",
        "CXXFLAGS",
        "CPPFLAGS",
        "LDFLAGS",
        "RUSTC",
        "RUSTC_WRAPPER",
        "MAKE",
        "MAKEFILES",
        # options programs read from the environment, where an option runs a command: `man -P`, `zip -TT`,
        # make's `VAR=$(shell ...)`, less's `+!cmd` and key files, `rsync -e`, `fc`'s editor
        "MANOPT",
        "ZIPOPT",
        "MAKEFLAGS",
        "GNUMAKEFLAGS",
        "MFLAGS",
        "LESS",
        "LESSKEY",
        "LESSKEYIN",
        "RSYNC_RSH",
        "RSYNC_CONNECT_PROG",
        "FCEDIT",
    }
)
_CODE_VARIABLE_PATTERN = re.compile(
    r"(PS[0-9]|LD_\w*|DYLD_\w*|GIT_\w*|BASH_\w*|NPM_CONFIG_\w*|npm_config_\w*|LUA_\w*"
    r"|\w*_(OPTIONS|OPTS|COMMAND|ASKPASS|PAGER|EDITOR|SHELL))"
)


def is_code_variable(name: str) -> bool:
    return name in CODE_VARIABLES or _CODE_VARIABLE_PATTERN.fullmatch(name) is not None


def program_name(word: str) -> str:
    """`/usr/bin/env` is `env`; a path names the program by its last part."""
    return word.rsplit("/", 1)[-1]


def argv_words(items) -> list[str | None]:
    """An argv step's IR words as `refused_arguments` reads them: the text of a literal
    word, None for one that holds a value."""
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax.expr import nodes as ast

    words: list[str | None] = []
    for item in items:
        if isinstance(item, ir.Lit) and isinstance(item.value, str):
            words.append(item.value)
            continue
        head = item.parts[0] if isinstance(item, ir.Tmpl) and item.parts else None
        known = head.text if isinstance(head, ast.TextPart) else ""
        # `NAME={{ v }}`, `--to-command={{ v }}`: the start is known, which `env` and options need.
        words.append(known + UNKNOWN if known else None)
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
    return _shell_code_at(argv, 0)


def _shell_code_at(argv: list[str | None], at: int) -> int | None:
    if at >= len(argv) or _holds_value(argv[at]):
        return None
    name = program_name(argv[at])
    if name in RUNS_PROGRAM:
        found = (_shell_code_at(argv, i) for i in _programs_after(name, argv, at))
        return next((code for code in found if code is not None), None)
    if name not in BASH_LIKE:
        return None
    code, _, operand = _shell_options(argv, at)
    return operand if code and operand < len(argv) else None


def _shell_options(argv: list[str | None], at: int) -> tuple[bool, bool, int]:
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


def _holds_value(word: str | None) -> bool:
    """A word whose text is not all known: it holds a value (or an expansion)."""
    return word is None or UNKNOWN in word


def _is_option(word: str) -> bool:
    return word.startswith("-") and word != "-"


def _long_option_matches(option: str, options) -> bool:
    """`--opt` is one of `options`, or an abbreviation of one (getopt_long takes `--to-c`)."""
    return (
        option in options
        or len(option) > 3
        and option.startswith("--")
        and any(o.startswith(option) for o in options if o.startswith("--"))
    )


def _prefix_option(name: str, word: str) -> tuple[str, tuple[int, ...]]:
    """How a prefix reads the option `word`: ("shell", ()) when it makes the rest a shell
    command, else ("option", counts) with the numbers of following words it may take as
    its argument (both 0 and 1 when the tables do not know the option)."""
    takes, flags, shell = RUNS_PROGRAM[name], FLAGS.get(name, frozenset()), SHELL_OPTIONS.get(name, frozenset())
    if UNKNOWN in word.split("=", 1)[0]:
        return ("shell", ()) if shell else ("option", (0, 1))  # a value may make it any option
    if word.startswith("--"):
        option = word.split("=", 1)[0]
        if _long_option_matches(option, shell):
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


def _readings(name: str, argv: list[str | None], at: int) -> tuple[set[tuple[str, int]], set[int]]:
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
        if options and _is_option(word):
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


def _programs_after(name: str, argv: list[str | None], at: int) -> list[int]:
    """The indexes the program a prefix runs may be at (past the end: none), in order."""
    ends, _ = _readings(name, argv, at)
    return sorted(index for kind, index in ends if kind == "program")


def _command(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """Fill `refused` for the command starting at word `at` of `argv`."""
    if at >= len(argv):
        return
    word = argv[at]
    if _holds_value(word):
        refused[at] = "in program position, where it names the program that runs"
        for i in range(at + 1, len(argv)):
            refused.setdefault(
                i, "an argument of a program the script does not name literally, which may run it as code"
            )
        return
    name = program_name(word)
    rest = range(at + 1, len(argv))
    if name == "hash":
        _hash(argv, at, refused)
    elif name in EVALUATES:
        for i in rest:
            refused[i] = f"an argument of `{name}`: {EVALUATES[name]}"
    elif name in NAMES:
        _names(name, argv, at, refused)
    elif name in RUNS_PROGRAM:
        _prefix(name, argv, at, refused)
    elif is_interpreter(name):
        _interpreter(name, argv, at, refused)
    elif name == "find":
        _find(argv, at, refused)
    elif name == "git":
        _git(argv, at, refused)
    elif name in EXEC_OPTIONS:
        _exec_options(name, argv, at, refused)


def reads_code_from_stdin(argv: list[str | None]) -> str | None:
    """The program of `argv` when it runs its standard input as code (`bash`, `sh -s`,
    `python3 -`, `xargs sh`...), else None."""
    return _stdin_code_at(argv, 0)


def _stdin_code_at(argv: list[str | None], at: int) -> str | None:
    if at >= len(argv):
        return None
    if _holds_value(argv[at]):
        return "a program the script does not name literally"
    name = program_name(argv[at])
    if name in RUNS_PROGRAM:
        ends, _ = _readings(name, argv, at)
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
    if _is_shell(name):
        code, stdin, operand = _shell_options(argv, at)
        if code and not stdin:
            return None  # the code is an argument
        return (
            name
            if stdin or operand >= len(argv) or _holds_value(argv[operand]) or _is_stdin_file(argv[operand])
            else None
        )
    return name if _code_source(name, argv, at) == "stdin" else None


def _xargs_runs(argv: list[str | None], at: int) -> str | None:
    """xargs makes its input the arguments of its program: code when that program runs
    its arguments (`xargs sh -c`, `xargs eval`), or names one (`xargs env`)."""
    if at >= len(argv):
        return None
    program = argv[at]
    if _holds_value(program):
        return "xargs"
    name = program_name(program)
    if name in EVALUATES or name in RUNS_PROGRAM or is_interpreter(name) or name in OPTIONS_RUN_PROGRAMS:
        return f"xargs {program}"  # (the last: its input, split, may be `-exec` or `--upload-pack=`)
    return None


#: Programs some of whose options run a program or code (`find -exec`, `git
#: --upload-pack=`, `tar --to-command=`, `sort --compress-program=`): a value that is a
#: whole argument of theirs and starts with `-` is an option, so a run refuses it unless
#: the script writes `--` before it.
OPTIONS_RUN_PROGRAMS = frozenset(
    {
        "find",
        "xargs",
        "git",
        "tar",
        "gtar",
        "bsdtar",
        "zip",
        "unzip",
        "rsync",
        "scp",
        "sftp",
        "ssh",
        "sed",
        "gsed",
        "awk",
        "gawk",
        "mawk",
        "perl",
        "ruby",
        "node",
        "sort",
        "man",
        "less",
        "tcpdump",
        "curl",
        "wget",
        "split",
        "sdiff",
        "diff3",
        "install",
    }
)


def option_program(argv: list[str | None], at: int) -> str | None:
    """The program of `argv` that would read the word at `at` as an option that may run
    something, when no `--` comes before it; None otherwise."""
    start = 0
    while start < len(argv) and argv[start] is not None and program_name(argv[start]) in RUNS_PROGRAM:
        ends, _ = _readings(program_name(argv[start]), argv, start)
        nexts = [i for kind, i in ends if kind != "shell"]
        if not nexts:
            return None
        start = min(nexts)
    if start >= len(argv) or start >= at or argv[start] is None:
        return None
    name = program_name(argv[start])
    # git ignores `--` before some operands (`git ls-remote -- URL` still reads an option
    # there); `--end-of-options` it honours everywhere.
    ends = ("--end-of-options",) if name == "git" else ("--", "--end-of-options")
    if name not in OPTIONS_RUN_PROGRAMS or any(w in ends for w in argv[start + 1 : at]):
        return None
    if name == "git":
        command, i = "", start + 1
        while i < at:  # the command, after git's own options (`-c key=value`, `-C dir`)
            word = argv[i]
            if word is None or not word.startswith("-"):
                command = word
                break
            i += 2 if word in ("-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env") else 1
        if command is not None and command in GIT_SAFE_COMMANDS:
            return None  # `git rm`, `git commit -m`: no option of theirs runs a program
    return name


#: git commands none of whose options runs a program (any other command, an alias from
#: the repository's config included, may be `fetch` under another name).
GIT_SAFE_COMMANDS = frozenset(
    {
        "add",
        "am",
        "apply",
        "blame",
        "branch",
        "checkout",
        "cherry-pick",
        "clean",
        "commit",
        "describe",
        "diff",
        "init",
        "log",
        "ls-files",
        "merge",
        "mv",
        "notes",
        "reset",
        "restore",
        "revert",
        "rm",
        "show",
        "stash",
        "status",
        "switch",
        "tag",
        "worktree",
        "rev-parse",
        "cat-file",
        "hash-object",
        "show-ref",
        "for-each-ref",
        "symbolic-ref",
        "update-ref",
        "update-index",
        "ls-tree",
        "shortlog",
        "format-patch",
        "merge-base",
        "rev-list",
        "reflog",
        "gc",
        "fsck",
        "sparse-checkout",
        "check-ignore",
        "check-attr",
        "version",
        "help",
        "var",
        "write-tree",
        "read-tree",
        "commit-tree",
    }
)
#: git commands with an option that runs a program or code (`--upload-pack=`, `-x`,
#: `--extcmd=`, `-O`, `--exec=`, `--receive-pack=`, `--to-cmd=`, `--*-filter`).
GIT_OPTIONS_RUN = frozenset(
    {
        "fetch",
        "pull",
        "clone",
        "ls-remote",
        "push",
        "archive",
        "submodule",
        "rebase",
        "difftool",
        "mergetool",
        "grep",
        "send-email",
        "filter-branch",
        "bisect",
        "remote",
        "request-pull",
        "upload-pack",
        "fetch-pack",
        "send-pack",
        "daemon",
        "instaweb",
        "web--browse",
        "p4",
        "svn",
    }
)


#: Of the builtins in NAMES, the options that take the next word, and of those the ones
#: whose argument is a variable name (`read -a NAME`) or code (`mapfile -C CALLBACK`).
NAME_OPTIONS = {
    "read": (frozenset("adinNptu"), frozenset("a")),
    "mapfile": (frozenset("CcdnOsu"), frozenset("C")),
    "readarray": (frozenset("CcdnOsu"), frozenset("C")),
    "wait": (frozenset("p"), frozenset("p")),
}


def _names(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    why = f"an argument of `{name}`: {NAMES[name]}, and bash evaluates a name's [subscript] as arithmetic"
    if name in NAME_OPTIONS:
        _name_options(name, argv, at, refused, why)
        return
    for i in range(at + 1, len(argv)):
        before = argv[i - 1]
        # `printf` takes a name only after -v, its first argument; `test` after -v or -R
        # anywhere; `getopts OPTSTRING NAME ARGS`. A value before may itself be `-v`.
        if name == "printf":
            named = i == at + 1 or (i == at + 2 and _holds_value(before) or before == "-v")
        elif name in ("test", "["):
            named = i == at + 1 or before in ("-v", "-R") or _holds_value(before)
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
        elif options and word is not None and _is_option(word):
            for k, letter in enumerate(word[1:], 1):
                if letter == UNKNOWN or letter in takes:
                    rest = word[k + 1 :]
                    reason = f"the callback of `{name} -C`, which bash runs as code" if letter == "C" else why
                    if letter == UNKNOWN or letter in named and UNKNOWN in rest:
                        refused[i] = reason  # `-a{{v}}`, or a value that may be any option
                    elif letter in named and not rest and i + 1 < len(argv):
                        i += 1
                        if _holds_value(argv[i]):
                            refused[i] = reason
                    elif not rest:
                        i += 1  # the option's argument: data
                    break
        elif _holds_value(word) and (name != "wait" or options and argv[i - 1] is None):
            refused[i] = why  # a name, or a value that may be an option such as `-a` (`-p` of `wait`)
        i += 1


def _hash(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """`hash -p PATH NAME` makes NAME run PATH; `hash NAME` only looks NAME up."""
    why = "the path of `hash -p`, which makes a command run the program it gives"
    for i in range(at + 1, len(argv)):
        word, before = argv[i], argv[i - 1]
        if word is not None and word.startswith("-") and UNKNOWN in word:
            refused[i] = why  # `-p{{v}}`
        elif _holds_value(word) and i > at + 1 and (before is None or before.startswith("-") and "p" in before):
            refused[i] = why  # after `-p`, or after a value that may be `-p`


def _prefix(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """A prefix: refuse a value wherever some reading of its options takes it for the
    program, an option or an operand before it, and read the program of every reading."""
    if name == "command" and _looks_up_only(argv, at):
        return
    ends, before = _readings(name, argv, at)
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
        if _holds_value(argv[i]):
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
        if word is None or not _is_option(word) or word == "--":
            return False
        if UNKNOWN not in word and not word.startswith("--") and ("v" in word or "V" in word):
            return True
    return False


def _family(name: str) -> str | None:
    return next((family for family, pattern in _FAMILY if re.fullmatch(pattern, name)), None)


def _is_shell(name: str) -> bool:
    return re.fullmatch(_SHELL, name) is not None


#: The role of an option's argument, by the field of `Interpreter` that lists the option.
_ROLES = {"code": "code", "code_file": "code_file", "loads": "loads", "arguments": "argument"}


def _option_argument(spec: Interpreter, word: str) -> tuple[str, str | None] | None:
    """The option of `word` that takes an argument: (the role of that argument, the
    argument when it is in the word itself, else None: it is the next word), or None for
    flags."""
    if word.startswith("--"):
        option = word.split("=", 1)[0].split(UNKNOWN, 1)[0]
        field = next((f for f in _ROLES if _long_option_matches(option, getattr(spec, f))), None)
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
    family = _family(name)
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
        elif options and _is_option(word):
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


def _code_source(name: str, argv: list[str | None], at: int) -> str:
    """Where an interpreter that is not a shell takes its code from: "stdin" or "argument"."""
    spec = INTERPRETERS.get(_family(name), _OTHER_INTERPRETER)
    for i, role in _interpreter_reading(name, argv, at):
        word = argv[i]
        if word is not None and _is_option(word) and role in _ROLES.values():
            word = _option_argument(spec, word)[1]  # `--file=/dev/stdin`
        if role == "code_file" and _is_stdin_file(word) or role == "value-option":
            return "stdin"  # `awk -f -`; a value may be `-`
        if role in ("code", "code_file"):
            return "argument"
        if role == "operand":
            return "stdin" if _holds_value(word) or _is_stdin_file(word) else "argument"
    return "argument" if _family(name) in ("awk", "sed") else "stdin"


def _perl_opens_arguments(argv: list[str | None], at: int) -> bool:
    """`perl -n`, `-p`, `-i` (and `<>` in literal -e code) open every argument with the
    two-argument open, which runs `cmd|` as a command."""
    spec = INTERPRETERS["perl"]
    for i, word in enumerate(argv[at + 1 :], at + 1):
        if word is None or word == "--" or not _is_option(word):
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


def _interpreter(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    if _is_shell(name):
        _shell(name, argv, at, refused)
        return
    why = (
        f"an argument of `{name}` at or before its code or script, which `{name}` runs; "
        "pass the value after the code, as an argument of its own"
    )
    if _family(name) == "perl" and _perl_opens_arguments(argv, at):
        for i in range(at + 1, len(argv)):
            refused[i] = (
                f"an argument of `{name}` with -n, -p, -i or `<>`, which opens each argument with the "
                "two-argument open: `cmd|` runs cmd"
            )
        return
    for i, role in _interpreter_reading(name, argv, at):
        word = argv[i]
        if role in ("value-option", "operand", "code", "code_file", "loads") and _holds_value(word):
            refused[i] = why
        elif role == "argument" and _holds_value(word) and not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word or ""):
            refused[i] = why  # `awk -v NAME={{v}}` is data: awk reads only escapes in it
        elif role == "ambiguous":
            refused[i] = (
                f"an argument of `{name}` before `--`, where it may be an option that runs code "
                f"(`-e`, `-M`...); write `--` before it"
            )


def _shell(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """A shell: a value is refused in its options and as its code or script file."""
    why = (
        f"an argument of `{name}` at or before its code or script, which `{name}` runs; "
        "pass the value after the code, as an argument of its own"
    )
    code, stdin, operand = _shell_options(argv, at)
    for i in range(at + 1, min(operand + 1, len(argv))):
        if _holds_value(argv[i]):
            refused[i] = why
    if operand < len(argv) and _holds_value(argv[operand]):
        for i in range(operand + 1, len(argv)):  # the value may be an option: `-c` makes the next word code
            refused[i] = why


def _option_carries(options, letters: str, word: str) -> str | None:
    """Whether the option `word` is (or may be) one of `options`: "next" when its argument is
    the next word, "here" when it is in the word itself, None when it is another option.
    A word holding a value may be completed into one."""
    if word.startswith("--"):
        option, has_value = word.split("=", 1)[0], "=" in word
        if UNKNOWN in option:
            head = option.split(UNKNOWN, 1)[0]
            return "here" if any(o.startswith(head) for o in options if o.startswith("--")) else None
        if not _long_option_matches(option, options):
            return None
        return "here" if has_value else "next"
    for option in sorted((o for o in options if not o.startswith("--") and len(o) > 2), key=len, reverse=True):
        if word.startswith(option):  # `zip -TT CMD`
            return "next" if word == option else "here"
    for at, letter in enumerate(word[1:], 1):
        if letter == UNKNOWN:
            return "here"  # the value may go on with a letter that runs programs
        if "-" + letter in options:
            return "next" if at + 1 == len(word) else "here"
        if letter in letters:
            return None  # the rest of the word is that option's argument
    return None


def _exec_options(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    options, letters = EXEC_OPTIONS[name], ARGUMENT_LETTERS.get(name, "")
    why = f"the argument of an option of `{name}` that runs it as a command or reads it as settings that run one"
    if name == "tar" and at + 1 < len(argv) and argv[at + 1] and not argv[at + 1].startswith("-"):
        _tar_bundled(argv, at, refused, why)
    for i in range(at + 1, len(argv)):
        word = argv[i]
        if word is None or not _is_option(word):
            continue
        if word == "--":
            return
        carries = _option_carries(options, letters, word)
        if carries == "here" and UNKNOWN in word:
            refused[i] = why
        elif carries == "next" and i + 1 < len(argv) and _holds_value(argv[i + 1]):
            refused[i + 1] = why


def _tar_bundled(argv: list[str | None], at: int, refused: dict[int, str], why: str) -> None:
    """`tar xIf PROG archive.tar`: the letters of tar's first word take the next words in turn."""
    following = at + 2
    for letter in argv[at + 1]:
        if letter in ARGUMENT_LETTERS["tar"]:
            if letter in "IF" and following < len(argv) and _holds_value(argv[following]):
                refused[following] = why
            following += 1


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
                if _holds_value(argv[j]):
                    refused[j] = f"after `find {argv[i]}` with no `;` or `+` to end its command: it may be the program"
        ends = [j for j in range(i + 2, len(argv)) if argv[j] is None] + [terminator or len(argv)]
        for end in sorted(set(e for e in ends if e <= (terminator or len(argv)))):
            for j, reason in refused_arguments(argv[i + 1 : end]).items():
                refused[i + 1 + j] = reason


def _git(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    why = "the argument of a git option or setting that runs it as a command or reads it as settings that run one"
    i = at + 1
    while i < len(argv) and argv[i] is not None and _is_option(argv[i]):
        word = argv[i]
        option = word.split("=", 1)[0].split(UNKNOWN, 1)[0]
        if option in GIT_OPTIONS and UNKNOWN in word:
            refused[i] = why  # `--exec-path=DIR`, `--config-env=KEY=VAR`
        if word in GIT_ARGUMENT_OPTIONS:
            if word in GIT_OPTIONS and i + 1 < len(argv) and _holds_value(argv[i + 1]):
                refused[i + 1] = why
            i += 2
            continue
        if word.startswith("-c") and UNKNOWN in word:
            refused[i] = why  # `-cKEY=VALUE`
        i += 1
    if i >= len(argv):
        return
    if _holds_value(argv[i]):
        refused[i] = "the git subcommand, which may be an alias that runs a command, or an option"
        return
    subcommand = argv[i]
    if subcommand in GIT_RUNS_AFTER:
        after = next((j for j in range(i + 1, len(argv)) if argv[j] == GIT_RUNS_AFTER[subcommand]), None)
        if after is not None:
            for j in range(after + 1, len(argv)):
                refused[j] = f"an argument of `git {subcommand} {argv[after]}`, which runs it as a command"
        return
    if subcommand == "config":
        _git_config(argv, i, refused, why)
        return
    options = GIT_EXEC_OPTIONS.get(subcommand, frozenset())
    attached = GIT_ATTACHED_EXEC_OPTIONS.get(subcommand, frozenset())
    for j in range(i + 1, len(argv)):
        word = argv[j]
        if word is None or not _is_option(word):
            continue
        if word == "--":
            return
        carries = _option_carries(options | attached, "", word)
        if carries == "here" and UNKNOWN in word:
            refused[j] = why
        elif (
            carries == "next"
            and word not in attached
            and not any(word.startswith(o) for o in attached)
            and j + 1 < len(argv)
            and _holds_value(argv[j + 1])
        ):
            refused[j + 1] = why


def _git_config(argv: list[str | None], at: int, refused: dict[int, str], why: str) -> None:
    """`git config [set|add] KEY VALUE`: the value of a key that runs programs, or of a key
    not known, is refused."""
    operands = []
    i = at + 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1  # the end of options: the key follows
            continue
        if word is not None and _is_option(word):
            i += 2 if word in ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value") else 1
            continue
        operands.append(i)
        i += 1
    if operands and argv[operands[0]] in ("set", "add", "replace-all"):
        operands = operands[1:]
    if len(operands) >= 2:
        key = argv[operands[0]]
        if _holds_value(key) or GIT_CODE_KEYS.fullmatch(key):
            refused[operands[1]] = why
