"""Running a program for a step: output streamed line by line, a timeout, a clean kill.

The program gets its own process group so a timeout or Ctrl-C stops everything it
started (a `bash` step's pipelines too), not only the shell. On Linux the launcher
(`confinement/launcher.py`, one process serving the whole catalyst process) starts it
through a keeper that applies the step's Landlock ruleset and mounts, kills the group
when catalyst or the launcher dies, and waits to run the program until the group is
recorded beside the run's snapshot (`process_groups.py`).
"""

from __future__ import annotations

import errno
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from catalyst_dsl.runtime.effects.confinement.launcher import (
    Launched,
    LauncherGone,
    current,
    namespaces_problem,
    program_environment,
)
from catalyst_dsl.runtime.effects.performing import ProcessOutcome
from catalyst_dsl.runtime.errors import StepError

if TYPE_CHECKING:
    from catalyst_dsl.runtime.effects.process_groups import ProcessGroups

__all__ = ["MAX_CAPTURE", "namespaces_problem", "program_environment", "run_streaming", "stop_all_processes"]

#: Output kept in a step's result; beyond it the middle is dropped (the log has it all).
MAX_CAPTURE = 1_000_000


def run_streaming(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float | None,
    on_output: Callable[[str, str], None],
    stdin: str | None = None,
    ruleset: int | None = None,
    groups: "ProcessGroups | None" = None,
    mounts: Mapping | None = None,
) -> ProcessOutcome:
    """Run `argv` to its end. `ruleset` is a Landlock ruleset fd to confine it with (the
    caller closes it); `mounts` the launcher's private mounts (`Confinement.mounts`);
    `groups` records its process group while it runs."""
    full_env = {**program_environment(), **env}
    launched = sys.platform.startswith("linux")
    if launched:
        _must_exist(argv[0], cwd, full_env)
        process, writer, readers_of = _launch(argv, cwd, full_env, stdin is not None, ruleset, mounts, groups)
    else:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=full_env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        writer, readers_of = _own_fds(process)
    with _LIVE_LOCK:
        _LIVE.add(process)
    captured: dict[str, list[str]] = {"stdout": [], "stderr": []}
    lost, timed_out = None, False
    try:
        try:
            timed_out = _collect(process, readers_of, writer, stdin, timeout, _Capture(captured, on_output))
        except LauncherGone as gone:
            lost = gone  # its keeper killed the program's group as the launcher died
        except BaseException:
            _kill_group(process)  # Ctrl-C: the step's programs stop with the run
            raise
        finally:
            for fd in readers_of:
                os.close(fd)
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(process)
        if groups is not None and launched:
            groups.remove(process.pid)
    stdout, stderr = "".join(captured["stdout"]), "".join(captured["stderr"])
    if lost is not None:
        raise StepError(
            "CommandFailed",
            f"`{argv[0]}` was stopped: {lost}",
            metadata={"stdout": stdout, "stderr": stderr, "exitCode": None},
            guidance="run the step again (a new launcher starts for it); if it keeps happening, look for what "
            "kills processes on this machine",
        )
    return ProcessOutcome(process.returncode, stdout, stderr, timed_out)


class _Capture:
    """What a program said, line by line: each line to `on_output` as it comes, and kept
    up to MAX_CAPTURE characters a stream."""

    def __init__(self, captured: dict[str, list[str]], on_output: Callable[[str, str], None]) -> None:
        self.captured = captured
        self.on_output = on_output
        self.sizes = {"stdout": 0, "stderr": 0}
        #: The start of each stream's line still unended, as read (joined once it ends: a
        #: long line read in many pieces costs its length, not its length times the pieces).
        self.started: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

    def take(self, name: str, data: bytes) -> None:
        """Bytes read from `name`; b"" at its end, which says its last line without a newline."""
        started = self.started[name]
        if not data or b"\n" not in data:
            if data:
                started.append(data)
            elif started:
                self._line(name, b"".join(started).decode("utf-8", "replace"))
                started.clear()
            return
        first, *lines, rest = data.split(b"\n")
        self._line(name, b"".join([*started, first]).decode("utf-8", "replace") + "\n")
        for raw in lines:
            self._line(name, raw.decode("utf-8", "replace") + "\n")
        started[:] = [rest] if rest else []

    def _line(self, name: str, line: str) -> None:
        self.on_output(name, line.rstrip("\n"))
        if self.sizes[name] < MAX_CAPTURE:
            self.captured[name].append(line)
            self.sizes[name] += len(line)


#: How long output is still read after the program ended or was stopped, while something
#: it started elsewhere holds its streams open (the reader threads' join timeout before).
_DRAIN_SECONDS = 5.0
#: How often a quiet program's end is looked for when its streams stay open.
_LOOK_SECONDS = 0.5


def _collect(
    process, outputs: tuple[int, int], stdin_fd: int | None, stdin: str | None, timeout, capture: _Capture
) -> bool:
    """Read the program's stdout and stderr and write its stdin in this thread (one poll
    loop: no reader threads started and joined per program) until both outputs end and
    the program has; whether its timeout stopped it. Output still comes for
    `_DRAIN_SECONDS` after the program ended, or was stopped, with its streams held open.
    Closes `stdin_fd` (the caller, `outputs`)."""
    feeding = _Feeding(stdin_fd, stdin)
    try:
        return _pump(process, outputs, feeding, timeout, capture)
    finally:
        feeding.close()


def _pump(process, outputs: tuple[int, int], feeding: "_Feeding", timeout, capture: _Capture) -> bool:
    names = {outputs[0]: "stdout", outputs[1]: "stderr"}
    poller = select.poll()
    for fd in outputs:
        poller.register(fd, select.POLLIN)
    if feeding.fd is not None:
        poller.register(feeding.fd, select.POLLOUT)
    deadline = None if timeout is None else time.monotonic() + timeout
    drain_until = None
    timed_out = False
    while names:
        now = time.monotonic()
        if drain_until is not None and now >= drain_until:
            break
        if not timed_out and deadline is not None and now >= deadline:
            timed_out = True
            _kill_group(process)
            drain_until = time.monotonic() + _DRAIN_SECONDS
            continue
        limit = min(t for t in (None if timed_out else deadline, drain_until, now + _LOOK_SECONDS) if t)
        events = poller.poll(max(0, int((limit - now) * 1000) + 1))
        if not events:
            if drain_until is None and _ended(process):
                drain_until = time.monotonic() + _DRAIN_SECONDS
            continue
        for fd, _ in events:
            if fd == feeding.fd:
                if feeding.feed():
                    poller.unregister(fd)
                    feeding.close()
                continue
            data = os.read(fd, 65536)
            capture.take(names[fd], data)
            if not data:
                poller.unregister(fd)
                del names[fd]
    if not timed_out:
        try:
            process.wait(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
    return timed_out


class _Feeding:
    """The program's stdin: what is left to write, written as the pipe takes it."""

    def __init__(self, fd: int | None, text: str | None) -> None:
        self.fd = fd
        self.pending = text.encode("utf-8") if text is not None and fd is not None else b""
        if fd is not None:
            os.set_blocking(fd, False)

    def feed(self) -> bool:
        """Write what the pipe takes now; whether all is written (or the program closed its end)."""
        try:
            written = os.write(self.fd, self.pending[:65536]) if self.pending else 0
        except BrokenPipeError:
            return True
        except BlockingIOError:
            return False
        self.pending = self.pending[written:]
        return not self.pending

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _ended(process) -> bool:
    """Whether the program has ended (its streams may still be open elsewhere)."""
    if isinstance(process, subprocess.Popen):
        return process.poll() is not None
    try:
        process.wait(timeout=0.001)
    except subprocess.TimeoutExpired:
        return False
    return True


def _own_fds(process: subprocess.Popen) -> tuple[int | None, tuple[int, int]]:
    """A started Popen's stdin, stdout and stderr as descriptors of their own, its file
    objects closed (the collector reads and writes descriptors)."""
    stdin = os.dup(process.stdin.fileno()) if process.stdin is not None else None
    outputs = (os.dup(process.stdout.fileno()), os.dup(process.stderr.fileno()))
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    return stdin, outputs


def _launch(argv, cwd: Path, env, with_stdin: bool, ruleset, mounts, groups) -> tuple[Launched, int | None, tuple]:
    """Start `argv` through the launcher: the program, the descriptor writing its stdin
    (None without one) and those reading its stdout and stderr."""
    launcher = current()
    # The keeper waits for one byte on this pipe: the group is recorded first.
    go_read, go_write = os.pipe()
    stdin_read, stdin_write = os.pipe() if with_stdin else (os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC), -1)
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    ours = [go_write, stdin_write, out_read, err_read]
    try:
        try:
            process = launcher.launch(
                argv,
                env=env,
                cwd=str(cwd),
                streams=(stdin_read, out_write, err_write),
                go=go_read,
                ruleset=ruleset,
                mounts=mounts,
            )
        finally:
            for theirs in (go_read, stdin_read, out_write, err_write):
                os.close(theirs)  # the keeper holds its own copies
    except LauncherGone as gone:
        _close(ours)
        raise StepError(
            "CommandFailed",
            f"`{argv[0]}` could not be started: {gone}",
            guidance="run the step again (a new launcher starts for it)",
        ) from None
    except BaseException:
        _close(ours)
        raise
    try:
        _let_run(process, go_write, groups, argv[0])
    except BaseException:
        _close(ours[1:])  # _let_run closed the go pipe
        raise
    return process, (stdin_write if with_stdin else None), (out_read, err_read)


def _close(fds: list[int]) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _must_exist(program: str, cwd: Path, env: Mapping[str, str]) -> None:
    """FileNotFoundError for a program that is not there, as starting it directly gives,
    rather than the launcher's exit code 127."""
    if "/" in program:
        found = os.path.exists(os.path.join(cwd, program))
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _let_run(process: Launched, go: int, groups: "ProcessGroups | None", program: str) -> None:
    """Record the keeper's group (it leads it), then let it run the program. A record that
    cannot be written stops the keeper before the program starts."""
    from catalyst_dsl.runtime.effects.process_groups import start_time

    try:
        if groups is not None:
            # As the keeper read it (the launcher's answer), else from /proc here.
            started = process.start if process.start is not None else start_time(process.pid)
            if started is not None:
                groups.add(process.pid, started, os.path.basename(program))
        try:
            os.write(go, b"1")
        except BrokenPipeError:
            pass  # the keeper is gone already; its exit status tells why
    except BaseException:
        _kill_group(process)
        raise
    finally:
        os.close(go)


#: Programs running now, in any thread: Ctrl-C during a `parallel` group stops them all.
_LIVE: set["Launched | subprocess.Popen"] = set()
_LIVE_LOCK = threading.Lock()


def stop_all_processes() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        _kill_group(process)


def _kill_group(process: "Launched | subprocess.Popen") -> None:
    import signal

    try:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    except (ProcessLookupError, LauncherGone):
        pass  # gone already, or with the launcher (its keeper killed the group)
