"""Leases and fencing tokens: at most one process runs a run kept in the shared store.

A process that runs a run (one that starts it, a `resume`, a `catalyst worker`) holds its
*lease*: its row names the process (`lease_owner`, `HOLDER`) and a time (`lease_until`)
that a heartbeat thread moves on every third of the lease while the process lives. Taking
the lease also moves the run's *fencing token* (`fence`) on by one, and every save the
process makes requires the token it took (writer.py). So:

- a process killed mid-step stops renewing; once its lease has run out, another takes the
  run over, and the token it takes is newer;
- a process that was only slow (stopped by a debugger, a VM paused) and comes back after
  that can never save again: its token is old, its save changes nothing and it stops
  ("taken over"); its heartbeat finds the lease gone and says so to its writer first;
- two workers asking for one run at once: `claim_next` locks the row it takes with
  `FOR UPDATE SKIP LOCKED`, so the other skips it and takes another, or nothing.

A run that pauses or ends gives its lease up in the save that records it (writer.py). A
worker claims runs of its repository at its checkout's commit that are paused at a
checkpoint whose decision is in (`runnable`, set by that save: an approval, a webhook
review), or still say "running" with a lease that ran out (their process died).
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from typing import Callable

from catalyst_dsl.runtime.errors import EXIT_STATE, EXIT_USAGE, RunAbort
from catalyst_dsl.runtime.state.shared.database import Database

#: How long a lease lasts without renewal, by default (`CATALYST_LEASE_SECONDS`, `worker --lease`).
LEASE = 60.0
LEASE_ENV = "CATALYST_LEASE_SECONDS"
#: Shorter leases would be renewed more often than a busy server answers.
MIN_LEASE = 1.0

#: This process, as a lease names it: host, process id, and a random part, since process
#: ids are reused and hosts share names.
HOLDER = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"

_CLAIM = """
UPDATE catalyst_runs SET fence = fence + 1, lease_owner = %(holder)s,
    lease_until = now() + make_interval(secs => %(seconds)s)
WHERE repository = %(repository)s AND run_id = %(run)s AND NOT archived
    AND (lease_until IS NULL OR lease_until < now() OR lease_owner = %(holder)s)
RETURNING fence
"""

_CLAIM_NEXT = """
UPDATE catalyst_runs SET fence = fence + 1, lease_owner = %(holder)s,
    lease_until = now() + make_interval(secs => %(seconds)s), runnable = false
WHERE (repository, run_id) = (
    SELECT repository, run_id FROM catalyst_runs
    WHERE repository = %(repository)s AND NOT archived
        AND (commit IS NULL OR %(commit)s::text IS NULL OR commit = %(commit)s)
        AND ((status = 'paused' AND runnable) OR (status = 'running' AND lease_until < now()))
    ORDER BY updated_at
    FOR UPDATE SKIP LOCKED
    LIMIT 1
)
RETURNING run_id, fence
"""

_RENEW = """
UPDATE catalyst_runs SET lease_until = now() + make_interval(secs => %(seconds)s)
WHERE repository = %(repository)s AND run_id = %(run)s AND fence = %(fence)s AND lease_owner = %(holder)s
"""


def lease_seconds() -> float:
    """The lease this process takes: `CATALYST_LEASE_SECONDS` when it is a number of seconds
    of at least MIN_LEASE, else LEASE (RunAbort for a value that is not one)."""
    given = os.environ.get(LEASE_ENV, "").strip()
    if not given:
        return LEASE
    try:
        seconds = float(given)
    except ValueError:
        seconds = float("nan")
    if not seconds >= MIN_LEASE or seconds > 86400:
        raise RunAbort(
            EXIT_USAGE,
            f"{LEASE_ENV} is {given[:40]!r}: a lease is a number of seconds from {MIN_LEASE:g} to 86400",
            help=f"unset it for the default of {LEASE:g} seconds",
        )
    return seconds


class Leases:
    """The leases this process holds on runs of `repository`, kept alive by a heartbeat.
    `lost(run_id)` is called when one is found taken."""

    def __init__(self, database: Database, repository: str, seconds: float, lost: Callable[[str], None]) -> None:
        self.database = database
        self.repository = repository
        self.seconds = seconds
        self._lost = lost
        #: run id -> the fencing token this process took.
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._beating: threading.Thread | None = None

    def fence_of(self, run_id: str, found: int) -> int:
        """The token saves of `run_id` name: the one this process took, else the one just read."""
        with self._lock:
            return self._held.get(run_id, found)

    def claim(self, run_id: str) -> int:
        rows = self.database.execute(
            "taking the run's lease",
            _CLAIM,
            {"holder": HOLDER, "seconds": self.seconds, "repository": self.repository, "run": run_id},
        )
        if not rows:
            raise self._held_elsewhere(run_id)
        self.hold(run_id, rows[0][0])
        return rows[0][0]

    def claim_next(self, commit: str | None) -> str | None:
        rows = self.database.execute(
            "looking for a run to take",
            _CLAIM_NEXT,
            {"holder": HOLDER, "seconds": self.seconds, "repository": self.repository, "commit": commit},
        )
        if not rows:
            return None
        run_id, fence = rows[0]
        self.hold(run_id, fence)
        return run_id

    def hold(self, run_id: str, fence: int) -> None:
        with self._lock:
            self._held[run_id] = fence
            if self._beating is None or not self._beating.is_alive():
                self._beating = threading.Thread(target=self._beat, name="catalyst-lease", daemon=True)
                self._beating.start()

    def holds(self, run_id: str) -> bool:
        """Whether this process holds the run's lease (it is the one running the run)."""
        with self._lock:
            return run_id in self._held

    def let_go(self, run_id: str) -> None:
        """Stop renewing `run_id` (the save that pauses or ends it clears the lease)."""
        with self._lock:
            self._held.pop(run_id, None)

    def _beat(self) -> None:
        while True:
            self._wake.wait(self.seconds / 3)
            with self._lock:
                held = dict(self._held)
            if not held:
                with self._lock:
                    if not self._held:
                        self._beating = None
                        return
                continue
            for run_id, fence in held.items():
                try:
                    renewed = self.database.count(
                        "renewing the run's lease",
                        _RENEW,
                        {
                            "seconds": self.seconds,
                            "repository": self.repository,
                            "run": run_id,
                            "fence": fence,
                            "holder": HOLDER,
                        },
                    )
                except RunAbort:
                    continue  # the server is away: the next beat tries again, the next save says so
                if renewed == 0:
                    with self._lock:
                        if self._held.get(run_id) != fence:
                            continue  # let go or taken anew by this process meanwhile
                        self._held.pop(run_id, None)
                    self._lost(run_id)

    def _held_elsewhere(self, run_id: str) -> RunAbort:
        rows = self.database.execute(
            "reading the run's lease",
            "SELECT lease_owner, lease_until, archived FROM catalyst_runs WHERE repository = %s AND run_id = %s",
            (self.repository, run_id),
        )
        if not rows:
            return RunAbort(EXIT_STATE, f"there is no run {run_id!r} to take", help="`catalyst runs list` shows them")
        owner, until, archived = rows[0]
        if archived:
            return RunAbort(EXIT_STATE, f"run {run_id} has ended", help=f"`catalyst runs show {run_id}`")
        return RunAbort(
            EXIT_STATE,
            f"run {run_id} is being run by {owner} (its lease runs until {until:%Y-%m-%d %H:%M:%S %Z})",
            help="wait for it to pause or end; if that process died, the run can be taken"
            " once its lease has run out (`catalyst worker` takes such runs)",
        )
