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
import shutil
import subprocess
import sys
import threading
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
        writer, readers_of = process.stdin, (process.stdout, process.stderr)
    with _LIVE_LOCK:
        _LIVE.add(process)
    captured: dict[str, list[str]] = {"stdout": [], "stderr": []}

    def pump(stream, name: str) -> None:
        size = 0
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            on_output(name, line.rstrip("\n"))
            if size < MAX_CAPTURE:
                captured[name].append(line)
                size += len(line)
        stream.close()

    readers = [
        threading.Thread(target=pump, args=(readers_of[0], "stdout"), daemon=True),
        threading.Thread(target=pump, args=(readers_of[1], "stderr"), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if stdin is not None:
        try:
            writer.write(stdin.encode("utf-8"))
            writer.close()
        except BrokenPipeError:
            pass
    timed_out = False
    lost = None
    try:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
        except LauncherGone as gone:
            lost = gone  # its keeper killed the program's group as the launcher died
        except BaseException:
            _kill_group(process)  # Ctrl-C: the step's programs stop with the run
            raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(process)
        if groups is not None and launched:
            groups.remove(process.pid)
    for reader in readers:
        reader.join(timeout=5)
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


def _launch(argv, cwd: Path, env, with_stdin: bool, ruleset, mounts, groups) -> tuple[Launched, object, tuple]:
    """Start `argv` through the launcher: the program, the writer of its stdin (None
    without one) and the readers of its stdout and stderr."""
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
    writer = os.fdopen(stdin_write, "wb") if with_stdin else None
    return process, writer, (os.fdopen(out_read, "rb"), os.fdopen(err_read, "rb"))


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
            started = start_time(process.pid)
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
