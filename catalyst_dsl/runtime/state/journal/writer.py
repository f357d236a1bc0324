"""The saves of one run by this process: each one a record appended to the run's journal,
or the whole snapshot written anew (a compaction), after which the journal starts afresh.

A save is a record (`_append`): the changes since the save before (delta.py), chained to
it, appended and synced once; the time it costs does not grow with the run. It is a
compaction (`_compact`) instead when:

- the run's status changes (it pauses, ends, is resumed, fails), or it is saved while it
  is not running (an approval recorded while it waits): the snapshot then always says
  where the run is, for the commands that only ask that (`runs list`, the locks), and a
  run at rest is one file;
- the journal has grown past `COMPACT_AT` and past the snapshot's size, so that a resume
  never reads more than about twice what the run holds, and the time spent compacting is
  a constant share of the saves;
- the change cannot be said as a record (delta.py), or the run was loaded although it did
  not verify (`resume --trust-edited-state` seals it anew);
- another process saved the run since this one last did (`approve` while the run waits at
  a terminal): its save replaces theirs whole, as every save did before the journal.

A compaction writes the sealed snapshot (durable.replace: synced, renamed, the directory
synced, the one before kept as `.bak`) and only then removes the journal. A crash in
between leaves the new snapshot and the old journal, whose records it already holds
(readers skip them: chain.py).

The process holds the journal open between saves, and for each save locks it (files.py)
and checks that the journal and the snapshot are as it left them: the journal still has
its name and the length this process gave it, the snapshot the same file. A journal longer
than that by a part of a line (a crashed writer's torn record) is cut back; anything else
means another process saved the run: the head of the chain is read again from the files
and the save is a compaction.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from catalyst_dsl.runtime.state import durable, snapshot_codec
from catalyst_dsl.runtime.state.journal import files, record
from catalyst_dsl.runtime.state.journal.delta import Tracker, consistent_view

if TYPE_CHECKING:
    from catalyst_dsl.runtime.state.integrity.guard import Guard
    from catalyst_dsl.runtime.state.snapshot import RunState

#: A journal this long (and longer than the snapshot) is compacted at the next save.
COMPACT_AT = 1024 * 1024
_PRIVATE = 0o600


class RunJournal:
    """One run's saves by this process (the module docstring says how)."""

    def __init__(self, snapshot: Path, run_id: str, guard: Guard, spill: Callable[[bytes], str]) -> None:
        self.snapshot = snapshot
        self.path = files.journal_of(snapshot)
        self.run_id = run_id
        self.guard = guard
        self.cache = snapshot_codec.JournalCache(spill=spill)
        self.head_seq = 0
        self.head_mac = ""
        self.tracker: Tracker | None = None
        #: Whether the next save must be a compaction whatever it changes.
        self.compact_next = True
        self._fd: int | None = None
        #: Whether this process created the journal file and has not synced its directory yet.
        self._created = False
        #: The bytes of whole records in the journal, as this process last saw it.
        self._size = 0
        #: The snapshot file as this process last wrote or read it.
        self._snapshot: files.Identity | None = None
        self._snapshot_size = 0
        #: The file the save being made writes, and how many bytes (for a failed save's message).
        self.target: Path = self.path
        self.target_bytes: int | None = None

    def adopt(
        self,
        state: RunState,
        head_seq: int,
        head_mac: str,
        journal_size: int,
        snapshot: files.Identity | None,
        compact: bool = False,
    ) -> None:
        """The run as just read (or created): saves of `state` go on from save `head_seq`."""
        self.head_seq, self.head_mac = head_seq, head_mac
        self._size = journal_size
        self._snapshot = snapshot
        self._snapshot_size = snapshot.size if snapshot is not None else 0
        self.tracker = Tracker(state, self.cache)
        self.compact_next = compact

    # -- saving

    def save(self, state: RunState, *, compact: bool = False, lasting: bool = True) -> tuple[int, str, int]:
        """Save `state` durably: (its save number, its MAC, the bytes written). OSError
        when it cannot be written; the files then hold the save before. `lasting=False`: a
        record is appended without its sync (a save a power cut may take back: store.py)."""
        self.target, self.target_bytes = self.path, None
        pending = None
        if not (compact or self.compact_next) and self.tracker is not None:
            pending = self.tracker.changes(state)
            if pending is not None and (pending.status_changed or state.status != "running" or self._past_bound()):
                pending = None
        as_left = self._lock()
        try:
            if not as_left:
                self._read_head()
                pending = None
            if pending is None:
                return self._compact(state)
            return self._append(pending, lasting)
        finally:
            if self._fd is not None:
                files.unlock(self._fd)

    def _past_bound(self) -> bool:
        return self._size > COMPACT_AT and self._size > self._snapshot_size

    def _lock(self) -> bool:
        """Open and lock the journal; whether it and the snapshot are as this process left them."""
        while True:
            if self._fd is None:
                try:
                    self._fd, created = files.open_for_append(self.path)
                except FileNotFoundError:
                    # The state directory was removed under a running run: made again, once.
                    self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    self._fd, created = files.open_for_append(self.path)
                self._created = self._created or created
            files.lock(self._fd)
            size, named = files.size_and_name(self._fd)
            if named:
                break
            files.unlock(self._fd)  # compacted by another process since it was opened
            files.close(self._fd)
            self._fd = None
            self._snapshot = None
        as_left = (
            self._snapshot is not None and size >= self._size and files.identity_of(self.snapshot) == self._snapshot
        )
        if as_left and size > self._size:
            if b"\n" in files.tail(self._fd, self._size, size):
                return False  # another process appended records
            files.cut(self._fd, self._size)  # a crashed writer's torn record
        return as_left

    def _read_head(self) -> None:
        """The head of the run's chain as the files say now (another process saved the run):
        the next save numbers past it, and past every number the run's anchor has seen."""
        seq, mac = 0, ""
        try:
            document = snapshot_codec.read_document(self.snapshot)
            sealed = document.seal
            if type(sealed) is dict and type(sealed.get("seq")) is int and type(sealed.get("mac")) is str:
                seq, mac = sealed["seq"], sealed["mac"]
        except (OSError, snapshot_codec.Damaged):
            pass
        try:
            records, _ = record.parse(files.read(self.path))
        except record.Damaged:
            records = []
        if records and records[-1].seq > seq:
            seq, mac = records[-1].seq, records[-1].mac
        if not seq:  # no live snapshot (a run read from history): the head as it was read
            seq, mac = self.head_seq, self.head_mac
        self.head_seq = max(seq, self.guard.latest_seen(self.run_id))
        self.head_mac = mac

    def _append(self, pending, lasting: bool = True) -> tuple[int, str, int]:
        assert self._fd is not None and self.tracker is not None
        seq = self.head_seq + 1
        line, mac = record.line(self.guard.key(), self.run_id, seq, self.head_mac, pending.parts)
        self.target, self.target_bytes = self.path, len(line)
        try:
            files.append(self._fd, line, sync=lasting)
        except OSError:
            try:
                files.cut(self._fd, self._size)  # what part of the record was written goes
            except OSError:
                pass
            raise
        if self._created and lasting:
            durable.sync_directory(self.path.parent)  # the new journal's name, durable too
            self._created = False
        self._size += len(line)
        self.head_seq, self.head_mac = seq, mac
        self.tracker.commit(pending)
        return seq, mac, len(line)

    def _compact(self, state: RunState) -> tuple[int, str, int]:
        seq = self.head_seq + 1
        view, texts = consistent_view(state), {}
        data, mac = self.guard.seal(view, seq, self.head_mac, self.cache, texts)
        self.target, self.target_bytes = self.snapshot, len(data)
        durable.replace(self.snapshot, data, mode=_PRIVATE, backup=self.snapshot.with_name(self.snapshot.name + ".bak"))
        # The snapshot holds every record now: the journal starts afresh. Removed while
        # locked, so that a writer waiting for the lock finds it gone (files.size_and_name).
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        assert self._fd is not None
        files.unlock(self._fd)
        files.close(self._fd)
        self._fd, self._created, self._size = None, False, 0
        self._snapshot = files.identity_of(self.snapshot)
        self._snapshot_size = len(data)
        self.head_seq, self.head_mac = seq, mac
        self.tracker = Tracker(state, self.cache, view, texts)
        self.compact_next = False
        return seq, mac, len(data)

    def close(self) -> None:
        files.close(self._fd)
        self._fd = None


def full(error: OSError) -> bool:
    """Whether `error` says the disk (or the user's quota) is full."""
    return error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
