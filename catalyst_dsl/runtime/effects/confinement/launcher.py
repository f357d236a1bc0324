"""catalyst's side of the launcher (`launch.py`), the one process that starts every step
program of a catalyst process, confined.

It is started the first time a program is (or the namespaces are probed), and serves
every run of the process from then on: a step no longer pays for an interpreter of its
own, only for the fork of a small, single-threaded process (catalyst's own threads never
fork to run Python). It is started again when it has died, for the step after; a step
it dies under gets `LauncherGone` (the step fails, never waits forever). It ends when
catalyst does: the end of the channel closes with catalyst's process, whatever ends it,
and an atexit handler closes it first and waits for the launcher, so that a run's CPU
figures count it.

The channel is a Unix stream socket: a request is a length, then a dictionary in
`marshal`'s format (the launcher reads it without importing json, a third of its start;
only the two ends hold the channel), with the step's descriptors passed alongside
(SCM_RIGHTS); an answer is the same without descriptors. Any thread may send (one at a
time) and wait: the first waiter reads what arrives for everyone and wakes the others, so
no thread of catalyst's is kept for the launcher.
"""

from __future__ import annotations

import atexit
import itertools
import marshal
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

LAUNCH = Path(__file__).with_name("launch.py")
#: How the launcher starts: launch.py imported as a module, so that its bytecode is read from
#: `__pycache__` (compiled once) rather than compiled anew, as a script's is, at every start.
_START = "import sys; sys.path.append(sys.argv.pop(1)); import launch; launch.main(sys.argv)"
#: A request's and an answer's length, before its dictionary (as the launcher writes them).
_LENGTH = struct.Struct("!I")
#: How long a request waits for its answer (a fork and a few system calls) before the
#: launcher is taken for stuck: it is then killed, and every program with it.
ANSWER_SECONDS = 60.0
#: How long catalyst's end waits for the launcher to exit once told to.
CLOSE_SECONDS = 5.0

#: Variables of catalyst's own that no program may see: the run key seals snapshots (a
#: program holding it could forge one), and `CATALYST_SECRET_*` reach a run as secret
#: inputs, which a step hands to its program by `env:` when it means to.
_CATALYST_ONLY = ("CATALYST_RUN_KEY", "CATALYST_SECRET_")


def program_environment() -> dict[str, str]:
    """The environment a step's program inherits: catalyst's own, minus its keys and secrets."""
    return {k: v for k, v in os.environ.items() if not k.startswith(_CATALYST_ONLY)}


class LauncherGone(OSError):
    """The launcher ended (killed, crashed) or stopped answering while a step needed it."""


class Launched:
    """A program the launcher started: `pid` is its keeper's, which leads the program's
    process group (and session). `wait` gives the keeper's exit code as Popen's
    `returncode` does (negative: the signal that ended the program)."""

    def __init__(self, launcher: "Launcher", argv: Sequence[str]) -> None:
        self.launcher = launcher
        self.pid = 0  # known once the launcher answers
        #: The keeper's start time in clock ticks after boot, as it read it itself (None: unknown).
        self.start: int | None = None
        self.args = list(argv)
        #: Set by whichever thread reads the launcher's word that the keeper ended.
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        """The exit code; subprocess.TimeoutExpired after `timeout` seconds; LauncherGone when
        the launcher died first (its parent-death signal killed the program's group). Any
        number of threads may wait (a step, and Ctrl-C stopping every program)."""
        if self.launcher.await_answer(lambda: self.returncode, timeout) is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode


class Launcher:
    """One launcher process and the channel to it."""

    def __init__(self) -> None:
        ours, theirs = (_above_streams(end) for end in socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _START, str(LAUNCH.parent), str(theirs.fileno()), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                # Its own session: a Ctrl-C at the terminal reaches catalyst, which stops the
                # programs it started; the launcher keeps serving until catalyst ends.
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
                cwd="/",
                env=program_environment(),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._socket = ours
        self._owner = os.getpid()
        self._ids = itertools.count(1)
        self._sending = threading.Lock()
        self._changed = threading.Condition(threading.Lock())
        #: Answers to requests not yet taken, by request id.
        self._answers: dict[int, dict] = {}
        #: Programs started and not ended yet, by the id of the request that started them.
        self._running: dict[int, Launched] = {}
        self._reading = False
        self._unread = b""
        #: Why the launcher no longer serves (None while it does).
        self._gone: str | None = None

    def serving(self) -> bool:
        """Whether this launcher may take a request: it is alive and this process's own
        (a fork of catalyst starts one of its own)."""
        return self._gone is None and self._owner == os.getpid() and self.process.poll() is None

    def launch(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str,
        streams: tuple[int, int, int],
        go: int,
        ruleset: int | None,
        mounts: Mapping | None,
    ) -> Launched:
        """Have the launcher start `argv` with `streams` as its stdin, stdout and stderr, once
        a byte comes on `go` (a pipe's reading end), confined by `ruleset` and `mounts`. The
        caller closes its copies of the descriptors. OSError when the launcher could not fork."""
        request = next(self._ids)
        fds = [*streams, go, *([] if ruleset is None else [ruleset])]
        message = {
            "id": request,
            "argv": list(argv),
            "env": dict(env),
            "cwd": cwd,
            "mounts": None if mounts is None else dict(mounts),
            "ruleset": ruleset is not None,
        }
        # Known before the request goes: its end may be read, by any thread, before the start.
        launched = Launched(self, argv)
        with self._changed:
            self._running[request] = launched
        try:
            answer = self._ask(request, message, fds)
            if "error" in answer:
                raise OSError(answer["errno"] or 0, f"the launcher could not start the program: {answer['error']}")
        except BaseException:
            with self._changed:
                self._running.pop(request, None)
            raise
        launched.pid, launched.start = answer["pid"], answer.get("start")
        return launched

    def probe(self) -> str | None:
        """Why programs cannot get private mounts here (None: they can), tried by the launcher."""
        request = next(self._ids)
        return self._ask(request, {"id": request, "probe": True}, [])["problem"]

    def _ask(self, request: int, message: dict, fds: list[int]) -> dict:
        data = marshal.dumps(message)
        frame = _LENGTH.pack(len(data)) + data
        with self._sending:
            if self._gone is not None:
                raise LauncherGone(self._gone)
            try:
                sent = socket.send_fds(self._socket, [frame], fds)
                if sent < len(frame):
                    self._socket.sendall(frame[sent:])
            except OSError as error:
                # A request cut short leaves nothing on the channel that could be trusted.
                self._abandon(f"the launcher could not be reached: {error.strerror or error}")
                raise LauncherGone(self._gone) from None
        answer = self.await_answer(lambda: self._answers.pop(request, None), ANSWER_SECONDS)
        if answer is None:
            self._abandon(f"the launcher did not answer within {ANSWER_SECONDS:g} s")
            raise LauncherGone(self._gone)
        return answer

    def await_answer(self, came: Callable[[], Any], timeout: float | None) -> Any:
        """What `came()` gives once it is not None, called under the lock as answers arrive
        (None after `timeout` seconds): the waiting thread reads the channel when no other
        does, for every waiter, and wakes them."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._changed:
                while True:
                    answer = came()
                    if answer is not None:
                        return answer
                    if self._gone is not None:
                        raise LauncherGone(self._gone)
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        return None
                    if not self._reading:
                        self._reading = True
                        break
                    self._changed.wait(remaining)
            answers: list[dict] = []
            ended = False
            try:
                answers, ended = self._read(remaining)
            finally:
                why = self._why_ended() if ended else None
                with self._changed:
                    self._reading = False
                    for answer in answers:
                        if "status" in answer:
                            ended_program = self._running.pop(answer["id"], None)
                            if ended_program is not None:
                                ended_program.returncode = os.waitstatus_to_exitcode(answer["status"])
                        else:
                            self._answers[answer["id"]] = answer
                    if why is not None and self._gone is None:
                        self._gone = why
                    self._changed.notify_all()

    def _read(self, timeout: float | None) -> tuple[list[dict], bool]:
        """What arrives within `timeout` seconds (all of it that is whole), and whether the
        channel ended (the launcher is gone)."""
        poller = select.poll()
        poller.register(self._socket, select.POLLIN)
        if not poller.poll(None if timeout is None else max(0, int(timeout * 1000) + 1)):
            return [], False
        try:
            data = self._socket.recv(65536)
        except OSError:
            data = b""
        if not data:
            return [], True
        self._unread += data
        answers = []
        while len(self._unread) >= _LENGTH.size:
            size = _LENGTH.unpack_from(self._unread)[0]
            if len(self._unread) < _LENGTH.size + size:
                break
            answers.append(marshal.loads(self._unread[_LENGTH.size : _LENGTH.size + size]))
            self._unread = self._unread[_LENGTH.size + size :]
        return answers, False

    def _why_ended(self) -> str:
        try:
            code = self.process.wait(timeout=CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            return "the launcher closed its end of the channel"
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the launcher that starts the step's programs {how}"

    def _abandon(self, why: str) -> None:
        """Give the launcher up: killed, its keepers' parent-death signal takes every program
        it started with it; the next program starts a new one."""
        with self._changed:
            if self._gone is None:
                self._gone = why
            self._changed.notify_all()
        try:
            self.process.kill()
        except OSError:
            pass

    def close(self) -> None:
        """End the launcher (it kills whatever still runs) and wait until it has exited."""
        if self._owner != os.getpid():
            return  # a fork's copy: the launcher is its parent's
        with self._changed:
            self._gone = self._gone or "catalyst is ending"
            self._changed.notify_all()
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._socket.close()
        try:
            self.process.wait(timeout=CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _above_streams(end: socket.socket) -> socket.socket:
    """`end`, at a number above 2: a closed standard stream (`catalyst run ... >&-`) leaves
    its number free for the socket, where the launcher's own stdout or stderr would go."""
    if end.fileno() > 2:
        return end
    import fcntl

    try:
        return socket.socket(fileno=fcntl.fcntl(end.fileno(), fcntl.F_DUPFD_CLOEXEC, 3))
    finally:
        end.close()


_current: Launcher | None = None
_current_lock = threading.Lock()


def current() -> Launcher:
    """This process's launcher, started on first use and again when it has died."""
    global _current
    with _current_lock:
        if _current is None or not _current.serving():
            if _current is None:
                atexit.register(_close_current)
            _current = Launcher()
        return _current


def _close_current() -> None:
    with _current_lock:
        if _current is not None:
            _current.close()


def namespaces_problem() -> str | None:
    """Why the launcher cannot give programs private mounts on this machine, or None when
    it can (it tries, in a process of its own: seccomp, AppArmor or a container may forbid
    what the kernel offers)."""
    if not sys.platform.startswith("linux"):
        return "only Linux has mount namespaces"
    try:
        return current().probe()
    except OSError as error:
        return f"the launcher could not be started: {error}"
