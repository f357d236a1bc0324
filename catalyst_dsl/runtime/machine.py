"""This machine as runs record it: the time (snapshots' and locks' stamps), who runs the
process, the host's name, and whether a process is alive.

Apart from the snapshot's records (snapshot.py) because a what-if asks for these
(the interpreter's default approver, the lock check) but reads and writes no snapshot:
it does not build the snapshot's classes.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone


def utc_now() -> str:
    """Now as the snapshot writes times: ISO 8601, UTC, milliseconds, `Z`."""
    return format_time(datetime.now(timezone.utc))


def format_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    """The inverse of `format_time`; ValueError for anything that is not an ISO time."""
    # Python 3.10's fromisoformat does not read `Z`.
    moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return moment


def current_user() -> str:
    """Who runs this process, for records (approvals, cancels, owners)."""
    import getpass  # with termios: not needed by a what-if, which records nobody

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers) and no USER variable
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


def this_host() -> str:
    """This machine's name, as owners and lock files record it."""
    import socket  # here, not at the top: a what-if never asks, and socket costs it 3 ms

    return socket.gethostname()


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (True when we cannot tell)."""
    if pid <= 0:
        return False  # 0 and negatives name process groups, never a run
    if os.name == "nt":
        return True  # os.kill(pid, 0) would terminate the process on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM: it exists and belongs to someone else
    return True
