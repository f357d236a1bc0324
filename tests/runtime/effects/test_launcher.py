"""The launcher that starts every step program of a catalyst process, attacked from the
programs it starts and from outside: each step confined by its own rules only, nothing of
the launcher within a program's reach, side-by-side programs, exit codes as the program
ended, and a launcher that dies (or a catalyst that is killed) taking its programs with it."""

from __future__ import annotations

import os
import signal
import time

import pytest

from catalyst_dsl.runtime.effects.confinement import landlock
from catalyst_dsl.runtime.effects.confinement.launcher import current, namespaces_problem

from tests.runtime.test_reliability import _env, make_project, spawn

needs_landlock = pytest.mark.skipif(landlock.abi_version() == 0, reason="this kernel has no Landlock")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_until(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@needs_landlock
def test_a_step_is_confined_by_its_own_rules_never_by_those_of_a_step_before_it(project):
    project.playbook(
        "grants",
        """
        name: grants
        description: Wide, narrow, wide again.
        owner: Engineer
        allowedWritePaths: [out/**, other/**]
        steps:
          - bash: "mkdir -p out && echo a > out/a"
            writes: [out/**]
          - bash: "echo b > out/b 2>/dev/null || echo 'refused out/b'; mkdir -p other && echo o > other/o"
            writes: [other/**]
          - bash: "echo c > out/c && (echo p > other/p 2>/dev/null || echo 'refused other/p')"
            writes: [out/**]
    """,
    )
    result = project.run("grants", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    # The second step was not given the first's `out/`, nor the third the second's `other/`;
    # the narrower second did not narrow the third.
    assert "refused out/b" in result.output and "refused other/p" in result.output
    assert [project.exists(p) for p in ("out/a", "out/b", "other/o", "out/c", "other/p")] == [
        True,
        False,
        True,
        True,
        False,
    ]


# A program that looks for the launcher's channel: its own descriptors, its keeper's (its
# parent, which leads its group) and the launcher's (its parent's parent): what /proc says
# they are, opening them through /proc, and pidfd_getfd(2), which copies another process's
# descriptor into the caller.
SNOOP = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
own = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
    except OSError:
        continue
    own.append(fd)
print("own", own)
keeper = os.getppid()
print("keeper", sorted(int(f) for f in os.listdir(f"/proc/{keeper}/fd")))
launcher = int(open(f"/proc/{keeper}/status").read().split("PPid:")[1].split()[0])
seen = []
for fd in range(64):
    try:
        seen.append(os.readlink(f"/proc/{launcher}/fd/{fd}"))
    except OSError:
        pass
print("launcher's descriptors seen", seen)
taken = []
handle = os.pidfd_open(launcher)
for fd in range(64):
    got = libc.syscall(438, handle, fd, 0)
    if got >= 0:
        taken.append(fd)
print("taken", taken)
for fd in range(64):
    try:
        with open(f"/proc/{launcher}/fd/{fd}", "wb") as channel:
            channel.write(b"0000")
        print("wrote", fd)
    except OSError:
        pass
"""


@pytest.mark.parametrize(
    "landlock_setting",
    [
        pytest.param("on", marks=needs_landlock),
        # Without Landlock only the launcher being non-dumpable stands in the way: root keeps
        # CAP_SYS_PTRACE outside a namespace of the step's own.
        pytest.param(
            "off",
            marks=pytest.mark.skipif(
                os.geteuid() == 0 and namespaces_problem() is not None, reason="root without namespaces may ptrace"
            ),
        ),
    ],
)
def test_a_program_holds_and_reaches_nothing_of_the_launcher(project, monkeypatch, landlock_setting):
    if landlock_setting == "off":
        monkeypatch.setenv("CATALYST_LANDLOCK", "off")
    project.write("snoop.py", SNOOP)
    project.playbook(
        "snoop",
        """
        name: snoop
        description: Looks for the launcher's channel, then a program runs after it.
        owner: Engineer
        steps:
          - command:
              argv: [python3, snoop.py]
            writes: []
          - bash: "echo still serving"
            writes: []
    """,
    )
    result = project.run("snoop", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "own []" in result.output  # stdin, stdout and stderr, nothing else
    assert "keeper [0, 1, 2]" in result.output  # its keeper too holds only the step's streams
    assert "launcher's descriptors seen []" in result.output  # what each is (its socket) stays hidden
    assert "taken []" in result.output and "wrote" not in result.output
    assert "still serving" in result.output


@needs_landlock
def test_parallel_programs_run_side_by_side_each_confined_by_its_own_rules(project):
    project.playbook(
        "par",
        """
        name: par
        description: Two branches that each wait for the other, each refused the other's place.
        owner: Engineer
        allowedWritePaths: [left/**, right/**]
        steps:
          - parallel:
              - bash: |
                  mkdir -p left && touch left/started
                  n=0; until [ -e right/started ] || [ $n -ge 1000 ]; do sleep 0.01; n=$((n+1)); done
                  test -e right/started
                  touch right/from-left 2>/dev/null || echo 'left refused right'
                writes: [left/**]
              - bash: |
                  mkdir -p right && touch right/started
                  n=0; until [ -e left/started ] || [ $n -ge 1000 ]; do sleep 0.01; n=$((n+1)); done
                  test -e left/started
                  touch left/from-right 2>/dev/null || echo 'right refused left'
                writes: [right/**]
    """,
    )
    result = project.run("par", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "left refused right" in result.output and "right refused left" in result.output
    assert not project.exists("right/from-left") and not project.exists("left/from-right")


def test_exit_codes_and_signals_reach_the_step_as_the_program_ended(project):
    project.write("not-executable.sh", "echo never\n")
    project.playbook(
        "codes",
        """
        name: codes
        description: A code, a signal, a program that cannot be run.
        owner: Engineer
        steps:
          - name: three
            bash: "exit 3"
            writes: []
            errorPolicy: {default: {action: Continue}}
          - name: signalled
            bash: "kill -TERM $$"
            writes: []
            errorPolicy: {default: {action: Continue}}
          - name: unrunnable
            command:
              argv: [./not-executable.sh]
            writes: []
            errorPolicy: {default: {action: Continue}}
          - log-info: "{{ three.exitCode }} {{ signalled.exitCode }} {{ unrunnable.exitCode }}"
    """,
    )
    result = project.run("codes", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "3 -15 127" in result.output
    assert "catalyst: cannot run ./not-executable.sh: Permission denied" in result.output


def test_a_step_that_times_out_takes_what_it_started_with_it(project):
    project.playbook(
        "slow",
        """
        name: slow
        description: A program that outlives its timeout, with a child that ignores SIGTERM.
        owner: Engineer
        steps:
          - bash: |
              sh -c 'trap "" TERM; echo $$ > "$TMPDIR/stubborn"; exec sleep 60' &
              sleep 60
            writes: []
            timeout: 1s
    """,
    )
    result = project.run("slow", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert project.snapshot()["error"]["code"] == "StepTimeout"
    stubborn = int(project.read_temp("stubborn"))
    assert _wait_until(lambda: not _alive(stubborn)), "the timed-out step's child outlived it"


def test_a_launcher_that_dies_under_a_step_fails_it_and_the_next_step_gets_a_new_one(project):
    project.playbook(
        "killer",
        """
        name: killer
        description: A step kills the launcher; the step after it runs all the same.
        owner: Engineer
        steps:
          - name: kills
            bash: |
              launcher=$(awk '/^PPid:/ {print $2}' /proc/$PPID/status)
              kill -KILL "$launcher"
              sleep 30
            writes: []
            errorPolicy: {default: {action: Continue}}
          - bash: "echo after the launcher died"
            writes: []
    """,
    )
    before = current().process.pid
    started = time.monotonic()
    result = project.run("killer", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 20  # the step did not wait for its program's sleep
    assert "the launcher that starts the step's programs was killed by signal 9" in result.output
    assert "after the launcher died" in result.output
    assert current().process.pid != before


def test_a_launcher_killed_between_runs_is_started_again(project):
    project.playbook(
        "one",
        """
        name: one
        description: One program.
        owner: Engineer
        steps:
          - bash: "echo ran"
            writes: []
    """,
    )
    assert project.run("one", "--mode", "autonomous").exit_code == 0
    killed = current().process
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=10)
    again = project.run("one", "--mode", "autonomous")
    assert again.exit_code == 0, again.output
    assert "ran" in again.output and current().process.pid != killed.pid


@pytest.mark.slow
def test_a_killed_catalyst_takes_the_launcher_and_every_program_with_it(tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "pair": """
        name: pair
        description: Two programs side by side, and a daemon one of them left.
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - parallel:
              - bash: |
                  setsid sh -c 'echo $$ > out/left/daemon; exec sleep 60' </dev/null >/dev/null 2>&1 &
                  launcher=$(awk '/^PPid:/ {print $2}' /proc/$PPID/status)
                  echo "$launcher" > out/left/launcher
                  echo $$ > out/left/program
                  sleep 60
                writes: [out/left/**]
              - bash: "echo $$ > out/right/program; sleep 60"
                writes: [out/right/**]
    """
        },
    )
    run = spawn(project, "run", "pair", "--mode", "autonomous", log=tmp_path / "run", env=_env())
    names = ("left/daemon", "left/launcher", "left/program", "right/program")
    files = [project / "out" / name for name in names]
    assert _wait_until(lambda: all(f.exists() and f.read_text().strip() for f in files), 30), (
        tmp_path / "run.err"
    ).read_text()
    pids = {name: int((project / "out" / name).read_text()) for name in names}
    assert all(_alive(pid) for pid in pids.values())
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=10)
    assert _wait_until(lambda: not any(_alive(pid) for pid in pids.values())), {
        name: _alive(pid) for name, pid in pids.items()
    }


def test_every_thread_that_waits_for_a_program_hears_how_it_ended(tmp_path):
    # A step's thread and Ctrl-C stopping every program wait for the same program: each of
    # them must hear of its end, whichever read the launcher's word.
    import threading

    launcher = current()
    null = os.open(os.devnull, os.O_RDWR)
    go_read, go_write = os.pipe()
    try:
        program = launcher.launch(
            ["sh", "-c", "sleep 0.3; exit 7"],
            env={"PATH": os.environ["PATH"]},
            cwd=str(tmp_path),
            streams=(null, null, null),
            go=go_read,
            ruleset=None,
            mounts=None,
        )
    finally:
        os.close(go_read)
        os.close(null)
    heard = []
    waiters = [threading.Thread(target=lambda: heard.append(program.wait(timeout=30))) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    os.write(go_write, b"1")
    os.close(go_write)
    for waiter in waiters:
        waiter.join(timeout=30)
    assert heard == [7, 7, 7]


@pytest.mark.slow
def test_a_program_that_ignores_sigterm_is_killed_with_what_it_moved_to_a_session_of_its_own(project):
    # Past its timeout the program's group gets SIGTERM, then SIGKILL, which kills its keeper
    # before the keeper could kill a daemon in a session of its own: that one falls to the
    # launcher, which kills it.
    project.playbook(
        "deaf",
        """
        name: deaf
        description: Ignores SIGTERM and leaves a daemon in a session of its own.
        owner: Engineer
        steps:
          - bash: |
              trap '' TERM
              setsid sh -c 'echo $$ > "$TMPDIR/daemon"; exec sleep 60' </dev/null >/dev/null 2>&1 &
              while [ ! -s "$TMPDIR/daemon" ]; do sleep 0.05; done
              while true; do sleep 0.1; done
            writes: []
            timeout: 1s
    """,
    )
    result = project.run("deaf", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert project.snapshot()["error"]["code"] == "StepTimeout"
    daemon = int(project.read_temp("daemon"))
    assert _wait_until(lambda: not _alive(daemon)), "the daemon outlived its step"


def test_the_launcher_starts_without_the_standard_library_modules_it_does_without():
    # Each module imported is paid for at every launcher start and copied with every keeper
    # forked: os.py (with collections.abc) and struct.py were a third of its imports.
    import subprocess
    import sys

    from catalyst_dsl.runtime.effects.confinement.launcher import LAUNCH

    shown = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            "import sys; sys.path.append(sys.argv[1]); import launch; "
            "print(sorted(m for m in ('os', 'posixpath', 'collections.abc', 'struct') if m in sys.modules))",
            str(LAUNCH.parent),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == "[]"


def test_a_program_named_without_a_slash_is_found_on_its_path_as_execvp_finds_it(tmp_path):
    from catalyst_dsl.runtime.effects.confinement import launch

    assert launch._joined("/usr/bin", "git") == "/usr/bin/git"
    assert launch._joined("/usr/bin/", "git") == "/usr/bin/git"
    assert launch._joined("", "git") == "git"  # an empty entry of PATH is the working directory
    found = tmp_path / "later"
    found.mkdir()
    (found / "hello").write_text("#!/bin/sh\nexit 7\n")
    (found / "hello").chmod(0o755)
    spawned = launch._spawn(["hello"], {"PATH": f"{tmp_path / 'missing'}::{found}"})
    _, status = os.waitpid(spawned, 0)
    assert os.waitstatus_to_exitcode(status) == 7
