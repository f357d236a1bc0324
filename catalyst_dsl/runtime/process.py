"""Running a program for a step: output streamed line by line, a timeout, a clean kill.

The program gets its own process group so a timeout or Ctrl-C stops everything it
started (a `bash` step's pipelines too), not only the shell.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Callable, Mapping, Sequence

from catalyst_dsl.runtime.gateway import ProcessOutcome

#: Output kept in a step's result; beyond it the middle is dropped (the log has it all).
MAX_CAPTURE = 1_000_000


def run_streaming(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float | None,
                  on_output: Callable[[str, str], None], stdin: str | None = None) -> ProcessOutcome:
    full_env = {**os.environ, **env}
    process = subprocess.Popen(
        list(argv), cwd=cwd, env=full_env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
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

    readers = [threading.Thread(target=pump, args=(process.stdout, "stdout"), daemon=True),
               threading.Thread(target=pump, args=(process.stderr, "stderr"), daemon=True)]
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
    for reader in readers:
        reader.join(timeout=5)
    return ProcessOutcome(process.returncode, "".join(captured["stdout"]), "".join(captured["stderr"]), timed_out)


#: Programs running now, in any thread: Ctrl-C during a `parallel` group stops them all.
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def stop_all_processes() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        _kill_group(process)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    except ProcessLookupError:
        pass
