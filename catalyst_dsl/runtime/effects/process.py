"""Running a program for a step: output streamed line by line, a timeout, a clean kill.

The program gets its own process group so a timeout or Ctrl-C stops everything it
started (a `bash` step's pipelines too), not only the shell. On Linux it starts through
the launcher (`confinement/launch.py`), which applies the step's Landlock ruleset, kills
the group when catalyst dies, and waits to run the program until the group is recorded
beside the run's snapshot (`process_groups.py`).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from catalyst_dsl.runtime.effects.performing import ProcessOutcome

if TYPE_CHECKING:
    import subprocess

    from catalyst_dsl.runtime.effects.process_groups import ProcessGroups

LAUNCHER = Path(__file__).parent / "confinement" / "launch.py"

#: Output kept in a step's result; beyond it the middle is dropped (the log has it all).
MAX_CAPTURE = 1_000_000


#: Variables of catalyst's own that no program may see: the run key seals snapshots (a
#: program holding it could forge one), and `CATALYST_SECRET_*` reach a run as secret
#: inputs, which a step hands to its program by `env:` when it means to.
_CATALYST_ONLY = ("CATALYST_RUN_KEY", "CATALYST_SECRET_")


def program_environment() -> dict[str, str]:
    """The environment a step's program inherits: catalyst's own, minus its keys and secrets."""
    return {k: v for k, v in os.environ.items() if not k.startswith(_CATALYST_ONLY)}


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
    import subprocess  # here, not at the top: a what-if starts no program

    full_env = {**program_environment(), **env}
    launched = sys.platform.startswith("linux")
    go_read = go_write = -1
    command, fds = list(argv), ()
    if launched:
        _must_exist(argv[0], cwd, full_env)
        # The launcher waits for one byte on this pipe: the group is recorded first.
        go_read, go_write = os.pipe()
        fds = (go_read,) if ruleset is None else (go_read, ruleset)
        command = [
            sys.executable,
            "-I",
            "-S",
            str(LAUNCHER),
            str(go_read),
            str(-1 if ruleset is None else ruleset),
            str(os.getpid()),
            "-" if mounts is None else json.dumps(mounts),
            "--",
            *argv,
        ]
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=fds,
        )
    finally:
        if go_read >= 0:
            os.close(go_read)
    with _LIVE_LOCK:
        _LIVE.add(process)
    if launched:
        _let_run(process, go_write, groups, argv[0])
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
        threading.Thread(target=pump, args=(process.stdout, "stdout"), daemon=True),
        threading.Thread(target=pump, args=(process.stderr, "stderr"), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if stdin is not None:
        try:
            process.stdin.write(stdin.encode("utf-8"))
            process.stdin.close()
        except BrokenPipeError:
            pass
    timed_out = False
    try:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
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
    return ProcessOutcome(process.returncode, "".join(captured["stdout"]), "".join(captured["stderr"]), timed_out)


def namespaces_problem() -> str | None:
    """Why the launcher cannot give programs private mounts on this machine, or None when
    it can (it tries, in a process of its own: seccomp, AppArmor or a container may forbid
    what the kernel offers)."""
    import subprocess

    if not sys.platform.startswith("linux"):
        return "only Linux has mount namespaces"
    try:
        probe = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), "--probe"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return f"the launcher could not be started: {error}"
    return (
        None
        if probe.returncode == 0
        else (probe.stdout.decode("utf-8", "replace").strip() or "the launcher's probe failed")
    )


def _must_exist(program: str, cwd: Path, env: Mapping[str, str]) -> None:
    """FileNotFoundError for a program that is not there, as starting it directly gives,
    rather than the launcher's exit code 127."""
    if "/" in program:
        found = os.path.exists(os.path.join(cwd, program))
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _let_run(process: subprocess.Popen, go: int, groups: "ProcessGroups | None", program: str) -> None:
    """Record the launcher's group (it leads it), then let it run the program. A record that
    cannot be written stops the launcher before the program starts."""
    from catalyst_dsl.runtime.effects.process_groups import start_time

    try:
        if groups is not None:
            started = start_time(process.pid)
            if started is not None:
                groups.add(process.pid, started, os.path.basename(program))
        try:
            os.write(go, b"1")
        except BrokenPipeError:
            pass  # the launcher is gone already; its exit status tells why
    except BaseException:
        _kill_group(process)
        raise
    finally:
        os.close(go)


#: Programs running now, in any thread: Ctrl-C during a `parallel` group stops them all.
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def stop_all_processes() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        _kill_group(process)


def _kill_group(process: subprocess.Popen) -> None:
    import signal
    import subprocess

    try:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    except ProcessLookupError:
        pass
