"""The launcher every step program starts through: it confines, then runs the program.

Run as `python -I -S launch.py GO_FD RULESET_FD PARENT_PID -- PROGRAM ARGS...` by
`runtime/process.py`, never imported by catalyst. It uses the standard library only,
because `-S` leaves the virtualenv (and catalyst itself) off the path; catalyst's own
threads never run Python between fork and exec, this single-threaded process does.

1. It asks for a signal when the catalyst thread that started it dies (a parent-death
   signal); the handler kills its whole process group, so a `kill -9` of catalyst takes
   the step's programs and everything they started with it.
2. It waits for one byte on GO_FD: catalyst writes it once the process group is recorded
   beside the run's snapshot, so no program runs that a resume could not find. End of
   file (catalyst died first) means nothing runs.
3. It applies the Landlock ruleset RULESET_FD (-1: none) with no-new-privileges, which
   the program and all its children inherit and cannot lift.
4. It forks the program (with its own parent-death SIGKILL), waits for it, and exits as
   the program did. SIGTERM and SIGINT sent to the group reach the program; the launcher
   ignores them and ends when the program does.
5. It is a child subreaper: whatever the program leaves behind (a background job, a
   double fork, `setsid`, `nohup`) becomes the launcher's child when orphaned, and is
   killed before the launcher exits, so nothing a step starts outlives it.
"""

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_RESTRICT_SELF = 446
#: The launcher's parent-death signal: caught, so the group can be killed first.
_PARENT_GONE = signal.SIGUSR2
#: Exit code when the program could not be started at all (as a shell reports it).
_CANNOT_RUN = 127


def main(argv):
    go_fd, ruleset_fd, parent = int(argv[1]), int(argv[2]), int(argv[3])
    program = argv[5:]
    libc = ctypes.CDLL(None, use_errno=True)
    signal.signal(_PARENT_GONE, _kill_group)
    if libc.prctl(_PR_SET_PDEATHSIG, int(_PARENT_GONE), 0, 0, 0) != 0 or os.getppid() != parent:
        _kill_group()  # no signal would come, or catalyst is already gone
    with os.fdopen(go_fd, "rb", buffering=0) as go:
        if go.read(1) != b"1":
            os._exit(_CANNOT_RUN)
    if ruleset_fd >= 0:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, ruleset_fd, 0) != 0:
            _fail(f"cannot confine the program: {os.strerror(ctypes.get_errno())}")
        os.close(ruleset_fd)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    launcher = os.getpid()
    child = os.fork()
    if child == 0:
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != launcher:
            os._exit(_CANNOT_RUN)  # the launcher died before the signal was set
        # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across
        # exec: the program gets the defaults a shell would give it (`yes | head` ends).
        for restored in (_PARENT_GONE, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(restored, signal.SIG_DFL)
        try:
            os.execvp(program[0], program)
        except OSError as error:
            _fail(f"cannot run {program[0]}: {error.strerror}")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, status = os.waitpid(child, 0)
    _end_descendants()
    if os.WIFSIGNALED(status):
        killed_by = os.WTERMSIG(status)
        signal.signal(killed_by, signal.SIG_DFL)
        os.kill(os.getpid(), killed_by)
        os._exit(128 + killed_by)
    os._exit(os.waitstatus_to_exitcode(status))


def _kill_group(*_):
    _end_descendants()
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _end_descendants():
    """Kill every process below the launcher, wherever its group or session. A killed
    process's children are handed to the launcher (the subreaper) before it can be
    reaped, so the loop ends only when none is left."""
    while True:
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _children():
    me = str(os.getpid())
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1].decode() == me and fields[0] != b"Z":
            found.append(int(name))
    return found


def _fail(message):
    os.write(2, f"catalyst: {message}\n".encode("utf-8", "replace"))
    os._exit(_CANNOT_RUN)


if __name__ == "__main__":
    main(sys.argv)
