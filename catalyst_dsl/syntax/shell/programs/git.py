"""git: its options and settings that run programs, the subcommands with such options, and
the arguments of a git command refused for it.
"""

from __future__ import annotations

import re

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN, holds_value, is_option, option_carries

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
GIT_CODE_KEYS = LazyPattern(
    r"alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|attributesfile)"
    r"|.*\.(command|cmd|program|helper|driver|textconv|path|tool|hook|packobjectshook|uploadpack|receivepack)"
    r"|diff\.external|filter\..*|sequence\.editor|pager\..*|web\.browser|include(if\..*)?\.path|init\.templatedir"
    r"|protocol\..*|interactive\.difffilter|sendemail\..*|credential\..*|uploadpack\..*|remote\..*\.(vcs|proxy)"
    r"|submodule\..*\.update|gpg\..*|.*keycommand|core\.(editor|sshcommand)|merge\..*\.driver|blame\.ignorerevsfile",
    re.IGNORECASE,
)
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


def refuse_git(argv: list[str | None], at: int, refused: dict[int, str]) -> None:
    """Fill `refused` for `git` at `at`: its own options, its subcommand and that subcommand's options."""
    why = "the argument of a git option or setting that runs it as a command or reads it as settings that run one"
    i = at + 1
    while i < len(argv) and argv[i] is not None and is_option(argv[i]):
        word = argv[i]
        option = word.split("=", 1)[0].split(UNKNOWN, 1)[0]
        if option in GIT_OPTIONS and UNKNOWN in word:
            refused[i] = why  # `--exec-path=DIR`, `--config-env=KEY=VAR`
        if word in GIT_ARGUMENT_OPTIONS:
            if word in GIT_OPTIONS and i + 1 < len(argv) and holds_value(argv[i + 1]):
                refused[i + 1] = why
            i += 2
            continue
        if word.startswith("-c") and UNKNOWN in word:
            refused[i] = why  # `-cKEY=VALUE`
        i += 1
    if i >= len(argv):
        return
    if holds_value(argv[i]):
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
        if word is None or not is_option(word):
            continue
        if word == "--":
            return
        carries = option_carries(options | attached, "", word)
        if carries == "here" and UNKNOWN in word:
            refused[j] = why
        elif (
            carries == "next"
            and word not in attached
            and not any(word.startswith(o) for o in attached)
            and j + 1 < len(argv)
            and holds_value(argv[j + 1])
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
        if word is not None and is_option(word):
            i += 2 if word in ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value") else 1
            continue
        operands.append(i)
        i += 1
    if operands and argv[operands[0]] in ("set", "add", "replace-all"):
        operands = operands[1:]
    if len(operands) >= 2:
        key = argv[operands[0]]
        if holds_value(key) or GIT_CODE_KEYS.fullmatch(key):
            refused[operands[1]] = why
