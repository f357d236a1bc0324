"""Programs some of whose options run a program (`tar --to-command`, `rsync -e`, `zip -TT`,
`git --upload-pack=`): the argument of such an option is refused, and a value that may
start with `-` where such an option may stand is one a run checks.
"""

from __future__ import annotations

from catalyst_dsl.syntax.shell.programs.git import GIT_SAFE_COMMANDS
from catalyst_dsl.syntax.shell.programs.prefix_tables import RUNS_PROGRAM
from catalyst_dsl.syntax.shell.programs.prefixes import readings
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, holds_value, is_option, option_carries, program_name

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
        ends, _ = readings(program_name(argv[start]), argv, start)
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


def refuse_exec_options(name: str, argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """Fill `refused` with the arguments of the options of `name` that run programs (EXEC_OPTIONS)."""
    options, letters = EXEC_OPTIONS[name], ARGUMENT_LETTERS.get(name, "")
    why = f"the argument of an option of `{name}` that runs it as a command or reads it as settings that run one"
    if name == "tar" and at + 1 < len(argv) and argv[at + 1] and not argv[at + 1].startswith("-"):
        _tar_bundled(argv, at, refused, why)
    for i in range(at + 1, len(argv)):
        word = argv[i]
        if word is None or not is_option(word):
            continue
        if word == "--":
            return
        carries = option_carries(options, letters, word)
        if carries == "here" and UNKNOWN in word:
            refused[i] = why
        elif carries == "next" and i + 1 < len(argv) and holds_value(argv[i + 1]):
            refused[i + 1] = why


def _tar_bundled(argv: list[str | None], at: int, refused: dict[int, str], why: str) -> None:
    """`tar xIf PROG archive.tar`: the letters of tar's first word take the next words in turn."""
    following = at + 2
    for letter in argv[at + 1]:
        if letter in ARGUMENT_LETTERS["tar"]:
            if letter in "IF" and following < len(argv) and holds_value(argv[following]):
                refused[following] = why
            following += 1
