"""The facts about programs (`syntax/shell/programs`): which arguments may not hold a value.

An argv is a list of words: a str the author wrote, None for a word holding a value, and a
str ending in UNKNOWN for a word whose start is literal (`--to-command={{ v }}`).
"""

from __future__ import annotations

import pytest

from catalyst_dsl.syntax.shell.programs.code_variables import is_code_variable
from catalyst_dsl.syntax.shell.programs.interpreters import shell_code
from catalyst_dsl.syntax.shell.programs.refusals import refused_arguments
from catalyst_dsl.syntax.shell.programs.stdin import reads_code_from_stdin
from catalyst_dsl.syntax.shell.programs.words import UNKNOWN

V = None


def refused(argv) -> set[int]:
    """The positions holding a value that `refused_arguments` refuses."""
    return {i for i in refused_arguments(argv) if argv[i] is None or argv[i].endswith(UNKNOWN)}


# 1. prefixes: an option the table does not know may take the next word as its argument


@pytest.mark.parametrize(
    "argv",
    [
        ["stdbuf", "--output", "L", V],
        ["xargs", "--max-args", "1", V],
        ["xargs", "--max-procs", "1", V],
        ["ionice", "--class", "3", V],
        ["unshare", "--propagation", "slave", V],
        ["strace", "-P", "/x", V],
        ["sudo", "--user", "root", V],
        ["sudo", "--frobnicate", "x", V],
        ["env", "--frobnicate", "x", V],
        ["time", "-f", "%e", V],
        ["sudo", "-Eu", "root", V],
        ["runcon", "ctx_t", V],
        ["runcon", "-t", "t", V],
    ],
)
def test_a_value_a_prefix_may_read_as_its_program_is_refused(argv):
    assert len(argv) - 1 in refused(argv)


def test_both_readings_of_an_unknown_option_are_checked():
    # `--weird` may take `bash` as its argument, making `-c` the program, or not.
    assert refused(["sudo", "--weird", "sh", "-c", V]) == {4}
    assert refused(["stdbuf", "--output", "L", "eval", V]) == {4}
    assert refused(["sudo", "--sh", V]) == {2}  # an abbreviation of --shell


@pytest.mark.parametrize(
    "argv",
    [
        ["timeout", "5", "printf", "%s", V],
        ["sudo", "-u", "root", "printf", "%s", V],
        ["nice", "-5", "echo", V],
        ["xargs", "-0", "-n", "1", "echo", V],
        ["env", "-i", "A=1", "echo", V],
        ["env", "A=" + UNKNOWN, "true"],
        ["stdbuf", "-oL", "echo", V],
        ["command", "-v", V],
        ["command", "-V", V],
    ],
)
def test_a_value_that_is_an_argument_of_the_program_is_allowed(argv):
    assert refused(argv) == set()


@pytest.mark.parametrize(
    "prefix",
    [
        ["prlimit", "--nofile=1024"],
        ["setarch", "x86_64"],
        ["setpriv", "--no-new-privs"],
        ["dbus-run-session", "--"],
        ["xvfb-run", "-a"],
        ["numactl", "--interleave=all"],
        ["faketime", "2020-01-01"],
        ["gosu", "nobody"],
        ["su-exec", "nobody"],
        ["pkexec"],
        ["cgexec", "-g", "cpu:x"],
        ["nsenter", "-t", "1", "-m"],
        ["chpst", "-u", "x"],
        ["runcon", "-t", "x_t"],
        ["sandbox-exec", "-n", "no-network"],
        ["systemd-run", "--scope"],
        ["doas", "-u", "x"],
    ],
)
def test_more_programs_run_the_program_they_are_given(prefix):
    assert len(prefix) in refused([*prefix, V, "x"])
    assert refused([*prefix, "printf", "%s", V]) == set()


def test_sg_runs_its_command_through_a_shell():
    assert 3 in refused(["sg", "staff", "-c", V])


# 2. find -exec


def test_find_exec_after_an_exec_whose_terminator_is_a_value():
    # `\;` in a script is a value to the analysis today: it may be the terminator, or not.
    assert 6 in refused(["find", ".", "-exec", "true", V, "-exec", V, "PWNED", V])
    assert 6 in refused(["find", ".", "-exec", "true", ";", "-exec", V, "PWNED", ";"])


def test_find_exec_without_a_terminator_refuses_every_value_after_it():
    assert {4, 5} <= refused(["find", ".", "-exec", "echo", V, V])


def test_find_exec_arguments_before_the_terminator_are_data():
    assert refused(["find", ".", "-exec", "printf", "%s", V, ";"]) == set()
    assert refused(["find", ".", "-name", V]) == set()


# 3. code-running options


@pytest.mark.parametrize(
    "argv",
    [
        ["scp", "-o", V, "a", "b"],
        ["scp", "-o" + UNKNOWN, "a", "b"],
        ["scp", "-S", V, "a", "b"],
        ["sftp", "-F", V, "h"],
        ["zip", "-TT", V, "a.zip", "x"],
        ["zip", "--unzip-command", V, "a.zip", "x"],
        ["rsync", "-e" + UNKNOWN, "a", "b"],
        ["rsync", "-avze", V, "a", "b"],
        ["rsync", "-av" + UNKNOWN, "a", "b"],
    ],
)
def test_options_that_run_programs(argv):
    assert next(i for i, w in enumerate(argv) if w is None or w.endswith(UNKNOWN)) in refused(argv)


def test_rsync_data_arguments_are_allowed():
    assert refused(["rsync", "-av", V, "dest/"]) == set()


# 4. variables


@pytest.mark.parametrize(
    "name",
    [
        "PERL5DB",
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "MANOPT",
        "ZIPOPT",
        "RSYNC_RSH",
        "FCEDIT",
        "MAKEFLAGS",
        "GNUMAKEFLAGS",
        "LESS",
        "GREP_OPTIONS",
        "LUA_INIT",
    ],
)
def test_variables_programs_read_as_code(name):
    assert is_code_variable(name)
    assert 1 in refused(["env", name + "=" + UNKNOWN, "true"])


def test_a_plain_variable_is_data():
    assert not is_code_variable("BRANCH")


# 5. standard input as code


@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-e"],
        ["bash", "-ex"],
        ["sh", "-eu"],
        ["bash", "-o", "pipefail"],
        ["bash", "+o", "posix"],
        ["bash", "/dev/stdin"],
        ["sh", "/proc/self/fd/0"],
        ["python3", "/dev/fd/0"],
        ["python3", "-u"],
        ["awk", "-f", "-"],
        ["awk", "-f", "/dev/stdin"],
        ["sed", "-f", "-"],
        ["gawk", "--file=/dev/stdin"],
        ["sqlite3", "db"],
        ["psql"],
        ["mysql"],
        ["mongosh"],
        ["ssh", "host"],
        ["su"],
        ["expect"],
        ["sudo", "--user", "root", "bash"],
        ["node", "-r", "x"],
        ["perl", "-w"],
        ["bash", "-"],
    ],
)
def test_programs_that_run_their_standard_input(argv):
    assert reads_code_from_stdin(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-c", "x"],
        ["bash", "-o", "pipefail", "-c", "x"],
        ["python3", "-c", "x"],
        ["python3", "-m", "json.tool"],
        ["node", "-e", "x"],
        ["node", "--print", "x"],
        ["perl", "-e", "x"],
        ["perl", "-E", "x"],
        ["ruby", "-e", "x"],
        ["php", "-r", "x"],
        ["awk", "{print}"],
        ["sed", "p"],
        ["awk", "-f", "prog.awk"],
        ["python3", "x.py"],
        ["grep", "x"],
        ["xargs", "printf", "%s"],
    ],
)
def test_programs_whose_code_is_an_argument(argv):
    assert reads_code_from_stdin(argv) is None


# 6. the code of `bash -c` behind options that take an argument


@pytest.mark.parametrize(
    "argv, index",
    [
        (["bash", "-o", "pipefail", "-c", "CODE"], 4),
        (["bash", "-O", "extglob", "-c", "CODE"], 4),
        (["bash", "--rcfile", "f", "-c", "CODE"], 4),
        (["bash", "+o", "x", "-c", "CODE"], 4),
        (["bash", "-eo", "pipefail", "-c", "CODE"], 4),
        (["sudo", "--user", "root", "sh", "-c", "CODE"], 5),
        (["bash", "-c", "--", "CODE"], 3),
    ],
)
def test_shell_code_skips_options_with_arguments(argv, index):
    assert shell_code(argv) == index


def test_a_value_given_to_a_shell_option_is_refused():
    assert 2 in refused(["bash", "-o", V, "-c", "x"])
    assert refused(["bash", "-o", "pipefail", "-c", "printf %s", "_", V]) == set()


# 7. arguments after the code


@pytest.mark.parametrize(
    "argv",
    [
        ["perl", "-n", "-e", "print", V],
        ["perl", "-ne", "print", V],
        ["perl", "-lane", "print", V],
        ["perl", "-pi", "-e", "s/a/b/", V],
        ["perl", "-i.bak", "-e", "1", V],
        ["perl", "-e", "while(<>){}", "--", V],
        ["perl", "-e", "1", "-e", V],
        ["ruby", "-e", "1", "-e", V],
        ["sed", "-e", "p", "-e", V],
        ["sed", "-e", "p", "f", "-e", V],
        ["sed", "--expression=" + UNKNOWN],
        ["node", "-r", V, "x.js"],
        ["perl", "-e", "print @ARGV", V],
        ["sed", "-f", "s.sed", V],
        ["awk", "-f", V],
    ],
)
def test_a_value_an_interpreter_may_read_as_code(argv):
    index = next(i for i, w in enumerate(argv) if w is None or w.endswith(UNKNOWN))
    assert index in refused(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["awk", "-f", "prog.awk", "--", V],
        ["sed", "-f", "s.sed", "--", V],
        ["awk", "-v", "x=" + UNKNOWN, "{print x}"],
        ["awk", "{print}", V],
        ["perl", "-e", "print @ARGV", "--", V],
        ["perl", "script.pl", V],
        ["python3", "-c", "import sys", V],
        ["python3", "-m", "json.tool", V],
        ["awk", "-f", "prog.awk", "in.txt", V],
    ],
)
def test_a_value_an_interpreter_reads_as_data(argv):
    assert refused(argv) == set()


# 8. options written with `=` or attached, and git


@pytest.mark.parametrize(
    "argv",
    [
        ["tar", "--to-command=" + UNKNOWN, "-xf", "a.tar"],
        ["tar", "--checkpoint-action=exec=" + UNKNOWN, "-cf", "a", "b"],
        ["tar", "--use-compress-program=" + UNKNOWN, "-xf", "a"],
        ["tar", "-I" + UNKNOWN, "-xf", "a"],
        ["tar", "-xI", V, "-f", "a"],
        ["tar", "xIf", V, "a.tar"],
        ["tar", "--to-c", V, "-xf", "a"],
        ["git", "-c", V, "status"],
        ["git", "--config-env=" + UNKNOWN, "status"],
        ["git", "--exec-path=" + UNKNOWN, "x"],
        ["git", "fetch", "--upload-pack", V, "origin"],
        ["git", "fetch", "--upload-pack=" + UNKNOWN, "origin"],
        ["git", "push", "--receive-pack=" + UNKNOWN, "o"],
        ["git", "rebase", "-x", V, "main"],
        ["git", "rebase", "--exec=" + UNKNOWN, "main"],
        ["git", "difftool", "-x", V],
        ["git", "difftool", "--extcmd", V],
        ["git", "grep", "-O" + UNKNOWN, "x"],
        ["git", "grep", "--open-files-in-pager=" + UNKNOWN, "x"],
        ["git", "send-email", "--to-cmd", V, "p"],
        ["git", "send-email", "--cc-cmd=" + UNKNOWN, "p"],
        ["git", "filter-branch", "--tree-filter", V],
        ["git", "filter-branch", "--msg-filter=" + UNKNOWN],
        ["git", "bisect", "run", "sh", V],
        ["git", "submodule", "foreach", "echo", V],
        ["git", "config", V, V],
        ["git", "config", "alias.x", V],
        ["git", "config", "--global", "core.pager", V],
        ["git", "config", "core.sshCommand", V],
        ["git", "config", "diff.x.command", V],
        ["git", "config", "filter.a.clean", V],
        ["git", "config", "credential.helper", V],
        ["git", "config", "set", "sequence.editor", V],
        ["git", V],
        ["git", "config", "gpg.program", V],
    ],
)
def test_git_and_tar_options_that_run_programs(argv):
    index = max(i for i, w in enumerate(argv) if w is None or w.endswith(UNKNOWN))
    assert index in refused(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["git", "switch", V],
        ["git", "log", "--format=%s", "--", V],
        ["git", "config", "user.name", V],
        ["git", "grep", "-O", V],
        ["git", "push", "-u", "origin", V],
        ["git", "add", "-u", V],
        ["tar", "-xf", V],
        ["git", "commit", "-m", V],
    ],
)
def test_git_and_tar_data(argv):
    assert refused(argv) == set()


# 9. builtins that take names only in some places


@pytest.mark.parametrize(
    "argv",
    [
        ["type", V],
        ["hash", V],
        ["command", "-v", V],
        ["read", "-p", V, "x"],
        ["read", "-t", V, "x"],
        ["read", "-d", V, "x"],
        ["read", "-n", V, "x"],
        ["read", "-N", V, "x"],
        ["read", "-u", V, "x"],
        ["read", "-i", V, "x"],
        ["wait", V],
        ["getopts", V, "opt"],
        ["getopts", "ab", "opt", V],
        ["mapfile", "-d", V, "a"],
        ["mapfile", "-n", V, "a"],
        ["readarray", "-O", V, "a"],
        ["mapfile", "-s", V, "a"],
        ["mapfile", "-u", V, "a"],
        ["mapfile", "-c", V, "a"],
        ["printf", "%s", V],
    ],
)
def test_builtins_reading_a_value_as_data(argv):
    assert refused(argv) == set()


@pytest.mark.parametrize(
    "argv",
    [
        ["read", V],
        ["read", "-r", V],
        ["read", "-a", V],
        ["read", "-ra", V],
        ["read", "-p", "x", V],
        ["wait", "-p", V],
        ["wait", "-n", "-p", V],
        ["getopts", "ab", V],
        ["mapfile", "-C", V, "a"],
        ["mapfile", "-t", V],
        ["readarray", V],
        ["hash", "-p", V, "ls"],
        ["printf", "-v", V, "%s"],
    ],
)
def test_builtins_reading_a_value_as_a_name_or_code(argv):
    assert argv.index(None) in refused(argv)


# a word whose rest is a value may become any option


@pytest.mark.parametrize(
    "argv, index",
    [
        (["sudo", "-" + UNKNOWN, "echo", V], 3),
        (["env", "--split-" + UNKNOWN, "echo", V], 3),
        (["read", "-a" + UNKNOWN], 1),
        (["mapfile", "-C" + UNKNOWN, "a"], 1),
        (["hash", "-p" + UNKNOWN, "ls"], 1),
        (["python3", "-" + UNKNOWN, "x.py"], 1),
        (["git", "-c" + UNKNOWN, "status"], 1),
    ],
)
def test_a_value_that_completes_an_option(argv, index):
    assert index in refused(argv)
