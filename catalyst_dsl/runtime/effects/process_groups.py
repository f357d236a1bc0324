"""Process groups of the programs a run has in flight, recorded beside its snapshot.

Each program a step starts leads its own process group. Before the program proper runs,
the group id and the leader's start time (field 22 of /proc/PID/stat, in clock ticks
since boot) are written to `run-{id}.processes` in the state directory; the entry goes
when the program ends. The snapshot format is untouched.

A resume calls `reap` before any step runs: a group whose leader is still alive with the
recorded start time is killed and waited for, so a step that was in flight when catalyst
was killed never runs twice side by side. A pid whose start time differs (reused) is
never signalled. Anyone can read a start time in /proc, so each entry also carries a MAC
with the run key over the file's name, the group and the start time: an entry written
by hand, copied from another run's file or made with another key names nothing to kill.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import threading
import time
from pathlib import Path

from catalyst_dsl.runtime.state import durable

#: How long a resume waits for a killed group to be gone before it says so.
REAP_WAIT_SECONDS = 10.0


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks after boot, or None when it is not alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count after its last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19]) if fields[0] != "Z" else None
    except (IndexError, ValueError):
        return None


class ProcessGroups:
    """The record of one run's groups in flight (`run-{id}.processes`)."""

    def __init__(self, path: Path, key: bytes) -> None:
        self.path = path
        #: The run key's secret (state/integrity/run_key.py), which vouches for each entry.
        self._key = key
        self._lock = threading.Lock()
        #: The entries as this object last wrote them (None: not read yet). Only the run that
        #: owns the file writes it, so each program's start and end need not read it again.
        self._written: dict | None = None

    @classmethod
    def of_run(cls, state_dir: Path, run_id: str, key: bytes) -> "ProcessGroups":
        return cls(state_dir / f"run-{run_id}.processes", key)

    def add(self, pgid: int, started: int, program: str) -> None:
        """Record a group before its program is let run."""
        with self._lock:
            groups = self._read() if self._written is None else self._written
            groups[str(pgid)] = {"start": started, "program": program, "mac": self._mac(pgid, started)}
            self._write(groups)

    def _mac(self, pgid: int, started: int) -> str:
        message = f"catalyst-processes/1\n{self.path.name}\n{pgid}\n{started}".encode("utf-8", "surrogateescape")
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def remove(self, pgid: int) -> None:
        with self._lock:
            groups = self._read() if self._written is None else self._written
            if groups.pop(str(pgid), None) is not None:
                self._write(groups)

    def reap(self) -> list[int]:
        """Kill every recorded group whose leader is the process recorded, wait until each
        is gone, forget the record. Returns the groups killed."""
        with self._lock:
            groups = self._read()
            killed = []
            for key, entry in groups.items():
                try:
                    pgid, started, mac = int(key), int(entry["start"]), entry["mac"]
                    genuine = hmac.compare_digest(str(mac), self._mac(pgid, started))
                except (KeyError, TypeError, ValueError):
                    continue  # a damaged entry names nothing that may be killed
                if genuine and pgid > 1 and start_time(pgid) == started:
                    try:
                        os.killpg(pgid, signal.SIGKILL)
                    except OSError:
                        continue
                    killed.append(pgid)
            deadline = time.monotonic() + REAP_WAIT_SECONDS
            while any(_group_alive(pgid) for pgid in killed) and time.monotonic() < deadline:
                time.sleep(0.05)
            self._write({})
            return killed

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, groups: dict) -> None:
        self._written = groups
        if groups:
            # Atomic, never synced: the record is read by a resume on this boot, after catalyst
            # was killed (the system still has the write); a power cut ends every process it
            # names, and a record it damaged reads as empty.
            durable.replace(self.path, json.dumps(groups, sort_keys=True).encode("utf-8"), sync=False)
        else:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Signal 0 also reaches zombies that only their parent can reap: look at the leader.
    return start_time(pgid) is not None or _members(pgid)


def _members(pgid: int) -> bool:
    """Whether a live (not zombie) process is in the group."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False
