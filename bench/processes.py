"""Whole-process measurements shared by the benchmarks that time `catalyst` from outside.

Each figure is one child process: its CPU time (user + system, from `wait4`), its wall
time and its peak memory (max RSS). Children run with bytecode caching on, in a
temporary `PYTHONPYCACHEPREFIX`, because an installed catalyst has its `.pyc` files
(pip compiles a wheel on install) while a shell with `PYTHONDONTWRITEBYTECODE` set
would compile every module from source on every run and measure the compiler instead.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from pathlib import Path
from typing import Mapping, NamedTuple, Sequence

ROOT = Path(__file__).resolve().parents[1]


class Run(NamedTuple):
    cpu: float
    wall: float
    rss_mib: float


def child_env(pycache: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for measured children: this checkout first on the path, bytecode kept."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), env.get("PYTHONPATH", "")] if p)
    env.update(extra or {})
    return env


def measure(argv: Sequence[str], cwd: Path, env: Mapping[str, str], ok: Sequence[int] = (0, 1)) -> Run:
    """Run one process to its end and return what it cost."""
    start = time.perf_counter()
    process = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = code = os.waitstatus_to_exitcode(status)
    if code not in ok or b"Traceback (most recent call last)" in errors:
        raise SystemExit(f"{' '.join(argv)} exited {code}:\n{errors.decode(errors='replace')}")
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024)


def spread(values: Sequence[float], unit: str = "s", digits: int = 3) -> str:
    """min / median / max."""
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f} {unit}"


def reference_ms() -> float:
    """How fast this machine runs Python now: the best of 5 timings of a fixed piece of
    work (dictionaries, strings and calls, as a check spends its time), in milliseconds.
    The project machine's speed moves with its host, which the load average does not show
    (bench/README.md): a figure is comparable with another only beside this one."""

    def work() -> int:
        counts: dict[str, int] = {}
        for i in range(200_000):
            key = str(i % 997)
            counts[key] = counts.get(key, 0) + len(key)
        return sum(counts.values())

    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def machine() -> str:
    """What the figures were measured on, how busy it was and how fast it ran."""
    one, five, _ = os.getloadavg()
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {one:.2f} (1 min) {five:.2f} (5 min), "
        f"reference work {reference_ms():.0f} ms"
    )
