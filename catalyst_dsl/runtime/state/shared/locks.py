"""Locks between runs kept in the state database, so that runs of one repository on any
machine exclude each other from what they write: the interface and the rules of
`locks.LockManager` (resources, overlap, all or nothing, stale locks), on rows.

- **One row per resource** in `catalyst_locks`, keyed by the canonical resource, so that
  two runs taking the same resource meet on the primary key.
- **One changer at a time.** Taking and giving back locks, and the session's changes to a
  run it does not own (`guard`), hold a PostgreSQL advisory lock of the repository, as
  the file locks hold `locks/.guard`; the server drops it with the connection, so a
  process that dies never leaves it held.
- **Stale locks** are those of a run that is over (or gone), and of a run that says it is
  running but whose lease ran out (its process died: lease.py); a paused run keeps its
  locks. Process ids are no test here: the holder may be on another machine.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from catalyst_dsl.runtime.errors import LockConflict
from catalyst_dsl.runtime.machine import this_host, utc_now
from catalyst_dsl.runtime.state.locks import LockInfo, canonical, conflict
from catalyst_dsl.runtime.state.shared.database import Database
from catalyst_dsl.runtime.state.snapshot import FINISHED

#: The advisory lock's first key: catalyst's guard of a repository's locks (the second is the repository's hash).
_GUARD_CLASS = 0x6361_7461


class SharedLocks:
    """The locks of the runs of `repository` (the module docstring says how)."""

    def __init__(self, database: Database, repository: str) -> None:
        self.database = database
        self.repository = repository
        self.where = Path(f"catalyst_locks in {database.shown}")

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Hold the repository's advisory lock (the module docstring). Not re-entrant."""
        args = (_GUARD_CLASS, self.repository)
        self.database.execute("taking the lock guard", "SELECT pg_advisory_lock(%s, hashtext(%s))", args)
        try:
            yield
        finally:
            self.database.execute("giving the lock guard back", "SELECT pg_advisory_unlock(%s, hashtext(%s))", args)

    def acquire(self, run_id: str, resources: Sequence[str]) -> None:
        """Lock every resource for `run_id`, or none: raises LockConflict naming the holder."""
        wanted = sorted({canonical(r): r for r in resources}.items())
        if not wanted:
            return
        with self.guard():
            for holder, held in self._others(run_id):
                for key, resource in wanted:
                    clash, example = conflict(key, held)
                    if clash and not self._stale(holder):
                        raise LockConflict(resource, holder, example)
            stale = [held for holder, held in self._others(run_id) if self._stale(holder)]
            with self.database.transaction("taking locks") as connection:
                for held in stale:
                    connection.execute(
                        "DELETE FROM catalyst_locks WHERE repository = %s AND key = %s", (self.repository, held)
                    )
                for key, resource in wanted:
                    connection.execute(
                        "INSERT INTO catalyst_locks (repository, key, resource, run_id, pid, host, since)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (repository, key) DO UPDATE"
                        " SET pid = excluded.pid, host = excluded.host WHERE catalyst_locks.run_id = excluded.run_id",
                        (self.repository, key, resource, run_id, os.getpid(), this_host(), utc_now()),
                    )

    def release(self, run_id: str, resources: Iterable[str] | None = None) -> None:
        """Give back `run_id`'s locks (all of them, or those of `resources`)."""
        with self.guard():
            if resources is None:
                self.database.execute(
                    "giving locks back",
                    "DELETE FROM catalyst_locks WHERE repository = %s AND run_id = %s",
                    (self.repository, run_id),
                )
                return
            keys = [canonical(r) for r in resources]
            self.database.execute(
                "giving locks back",
                "DELETE FROM catalyst_locks WHERE repository = %s AND run_id = %s AND key = ANY(%s)",
                (self.repository, run_id, keys),
            )

    def held(self) -> list[LockInfo]:
        """Every lock, oldest first (stale ones included: they are still there)."""
        return sorted((holder for holder, _ in self._all()), key=lambda i: (i.since, i.resource))

    def conflicts(self, run_id: str, resources: Sequence[str]) -> list[LockInfo]:
        """The live locks of other runs that `resources` would collide with, taking nothing."""
        keys = [canonical(r) for r in resources]
        return [
            holder
            for holder, held in self._others(run_id)
            if any(conflict(key, held)[0] for key in keys) and not self._stale(holder)
        ]

    def _all(self) -> list[tuple[LockInfo, str]]:
        rows = self.database.execute(
            "reading locks",
            "SELECT key, resource, run_id, pid, host, since FROM catalyst_locks WHERE repository = %s",
            (self.repository,),
        )
        return [
            (LockInfo(resource, run, pid, host, since, self.where), key)
            for key, resource, run, pid, host, since in rows
        ]

    def _others(self, run_id: str) -> list[tuple[LockInfo, str]]:
        return [(holder, key) for holder, key in self._all() if holder.run_id != run_id]

    def _stale(self, holder: LockInfo) -> bool:
        rows = self.database.execute(
            "reading a lock holder's run",
            "SELECT status, archived, lease_until IS NOT NULL AND lease_until < now() FROM catalyst_runs"
            " WHERE repository = %s AND run_id = %s",
            (self.repository, holder.run_id),
        )
        if not rows:
            return True  # its run was removed
        status, archived, lapsed = rows[0]
        if archived or status in FINISHED:
            return True
        if status == "paused":
            return False
        return bool(lapsed)
