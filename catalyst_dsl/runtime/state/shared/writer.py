"""One run's saves by this process into the state database: each a journal row appended,
or the whole snapshot written anew (a compaction), as journal/writer.py does in files and
for the same reasons (a status change, a journal past its bound, another process's save).

A record is one statement: it moves the run's head (`head_seq`, `head_mac`: its anchor)
from the save this process made last to the new one *and* inserts the row, or does
nothing when the head is not where this process left it. PostgreSQL commits and syncs it
as one transaction, in one round trip. A head moved by someone else (another process
saved the run: `approve` while it waits, a worker) makes the save a compaction over
theirs, as in files.

A compaction replaces the snapshot, moves the head and deletes the rows it now holds, in
one transaction, again only from the head this process knows.

`fence`: the run's fencing token as this process holds it. Every statement requires it,
so a process whose claim on the run was taken over (a worker whose lease ran out) can
never save again: its save finds no row to change, and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from catalyst_dsl.runtime.errors import EXIT_STATE, RunAbort
from catalyst_dsl.runtime.state import snapshot_codec
from catalyst_dsl.runtime.state.journal import record
from catalyst_dsl.runtime.state.journal.delta import Tracker, consistent_view
from catalyst_dsl.runtime.state.journal.writer import COMPACT_AT
from catalyst_dsl.runtime.state.shared.database import Database
from catalyst_dsl.runtime.state.snapshot import pause_released

if TYPE_CHECKING:
    from catalyst_dsl.runtime.state.integrity.guard import Guard
    from catalyst_dsl.runtime.state.snapshot import RunState

_APPEND = """
WITH moved AS (
    UPDATE catalyst_runs SET head_seq = %(seq)s, head_mac = %(mac)s, updated_at = %(updated)s
    WHERE repository = %(repository)s AND run_id = %(run)s AND head_seq = %(prev)s AND fence = %(fence)s
    RETURNING 1
)
INSERT INTO catalyst_journal (repository, run_id, seq, line)
SELECT %(repository)s, %(run)s, %(seq)s, %(line)s FROM moved
"""

#: A run that stops running (it pauses, ends) gives up its lease; one paused at a checkpoint
#: whose decision is in is `runnable`: a worker may claim it (store.py).
_COMPACT = """
UPDATE catalyst_runs SET snapshot = %(snapshot)s, snapshot_seq = %(seq)s, head_seq = %(seq)s,
    head_mac = %(mac)s, status = %(status)s, updated_at = %(updated)s, runnable = %(runnable)s,
    lease_owner = CASE WHEN %(status)s = 'running' THEN lease_owner END,
    lease_until = CASE WHEN %(status)s = 'running' THEN lease_until END
WHERE repository = %(repository)s AND run_id = %(run)s AND head_seq = %(prev)s AND fence = %(fence)s
"""


class SharedRunJournal:
    """One run's saves by this process (the module docstring says how); the interface of
    journal/writer.RunJournal, which the store drives."""

    def __init__(
        self, database: Database, repository: str, run_id: str, guard: Guard, spill: Callable[[bytes], str]
    ) -> None:
        self.database = database
        self.repository = repository
        self.run_id = run_id
        self.guard = guard
        self.cache = snapshot_codec.JournalCache(spill=spill)
        self.head_seq = 0
        self.head_mac = ""
        self.fence = 0
        #: Set when this process's lease on the run was found taken (store.py's heartbeat).
        self.lost = False
        self.tracker: Tracker | None = None
        self.compact_next = True
        #: Bytes of records since the last compaction, and the snapshot's size.
        self._size = 0
        self._snapshot_size = 0
        #: What the save being made writes, in words, and how many bytes (for a failed save's message).
        self.target = f"the state database {database.shown}"
        self.target_bytes: int | None = None

    def adopt(
        self,
        state: RunState,
        head_seq: int,
        head_mac: str,
        journal_size: int,
        snapshot_size: int,
        fence: int,
        compact: bool = False,
    ) -> None:
        """The run as just read (or created): saves of `state` go on from save `head_seq`."""
        self.head_seq, self.head_mac, self.fence = head_seq, head_mac, fence
        self._size, self._snapshot_size = journal_size, snapshot_size
        self.tracker = Tracker(state, self.cache)
        self.compact_next = compact

    def save(self, state: RunState, *, compact: bool = False, lasting: bool = True) -> tuple[int, str, int]:
        """Save `state`: (its save number, its MAC, the bytes written). RunAbort when the
        database cannot take it; the rows then hold the save before. Every save is synced
        by the server's commit (`lasting` asks for nothing less)."""
        if self.lost:
            raise self._lost()
        pending = None
        if not (compact or self.compact_next) and self.tracker is not None:
            pending = self.tracker.changes(state)
            if pending is not None and (pending.status_changed or state.status != "running" or self._past_bound()):
                pending = None
        if pending is not None:
            done = self._append(pending, state)
            if done is not None:
                return done
            self._read_head()  # another process saved the run: this save replaces theirs whole
        done = self._compact(state)
        if done is None:
            self._read_head()
            done = self._compact(state)
        if done is None:
            raise self._lost()
        return done

    def _past_bound(self) -> bool:
        return self._size > COMPACT_AT and self._size > self._snapshot_size

    def _params(self, state: RunState, seq: int, mac: str) -> dict:
        return {
            "repository": self.repository,
            "run": self.run_id,
            "seq": seq,
            "mac": mac,
            "prev": self.head_seq,
            "fence": self.fence,
            "updated": state.updated_at,
        }

    def _append(self, pending, state: RunState) -> tuple[int, str, int] | None:
        assert self.tracker is not None
        seq = self.head_seq + 1
        line, mac = record.line(self.guard.key(), self.run_id, seq, self.head_mac, pending.parts)
        self.target_bytes = len(line)
        changed = self.database.count("saving the run", _APPEND, {**self._params(state, seq, mac), "line": line})
        if changed != 1:
            return None
        self._size += len(line)
        self.head_seq, self.head_mac = seq, mac
        self.tracker.commit(pending)
        return seq, mac, len(line)

    def _compact(self, state: RunState) -> tuple[int, str, int] | None:
        seq = self.head_seq + 1
        view, texts = consistent_view(state), {}
        data, mac = self.guard.seal(view, seq, self.head_mac, self.cache, texts)
        self.target_bytes = len(data)
        with self.database.transaction("saving the run") as connection:
            runnable = state.status == "paused" and pause_released(state)
            changed = connection.execute(
                _COMPACT,
                {**self._params(state, seq, mac), "snapshot": data, "status": state.status, "runnable": runnable},
            ).rowcount
            if changed != 1:
                return None
            connection.execute(
                "DELETE FROM catalyst_journal WHERE repository = %s AND run_id = %s AND seq <= %s",
                (self.repository, self.run_id, seq),
            )
        self._size, self._snapshot_size = 0, len(data)
        self.head_seq, self.head_mac = seq, mac
        self.tracker = Tracker(state, self.cache, view, texts)
        self.compact_next = False
        return seq, mac, len(data)

    def _read_head(self) -> None:
        """The run's head as the database says now; a fence that moved means the run was
        taken over, and this process may not save it again."""
        rows = self.database.execute(
            "reading the run's latest save",
            "SELECT head_seq, head_mac, fence FROM catalyst_runs WHERE repository = %s AND run_id = %s",
            (self.repository, self.run_id),
        )
        if not rows or rows[0][2] != self.fence:
            raise self._lost()
        self.head_seq, self.head_mac = rows[0][0], rows[0][1]

    def _lost(self) -> RunAbort:
        return RunAbort(
            EXIT_STATE,
            f"run {self.run_id} was taken over by another process (its fencing token moved past"
            f" {self.fence}), or removed: this process stops without saving it again",
            help=f"`catalyst runs show {self.run_id}` says where the run is now",
        )

    def close(self) -> None:
        """Nothing is held open per run."""
