"""The save ledger: the latest save number of every run, kept outside its snapshot.

A snapshot's seal holds its save number (`seq`); after every save the store appends
`RUN-ID SEQ MAC` to `snapshot-ledger` in the state directory (O_APPEND, fsynced, one short
line). A snapshot whose number is lower than the ledger's latest for its run is an older
copy put back (the `.bak`, a backup, a copy from another machine) and is refused.

Order and crashes: the snapshot is saved first, the line appended after. A crash in
between leaves the snapshot one save ahead of the ledger, which is accepted: only the run
key makes a seal, so a snapshot ahead of the ledger was written by catalyst, and lines can
only be lost, never gained. The other order could leave the ledger ahead of the snapshot
and refuse a run that did nothing wrong.

A run with no line at all whose snapshot is past its first save is refused: its lines
were deleted with the ledger (deleting it is how one would hide a rollback).

Every line carries a short MAC with the run key, so a line written by hand is ignored
rather than believed. The file is compacted (the latest line of each run still kept)
when it passes `COMPACT_AT`, under an exclusive lock that appenders take too.

The limit: the ledger lives in the state directory. Whoever can write that directory can
cut the newest lines of a run and put back the copy before them; the ledger catches
stale copies, not an attacker who also rewinds the ledger.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from catalyst_dsl.runtime.state import durable
from catalyst_dsl.runtime.state.integrity.run_key import RunKey

LEDGER = "snapshot-ledger"
COMPACT_AT = 256 * 1024
#: A save number as written: ASCII digits (str.isdigit() also passes "²", which int()
#: refuses), as many as a seal's number may have (seal.MAX_SEQ).
_SEQ = re.compile(r"[0-9]{1,19}")


class Ledger:
    def __init__(self, state_dir: Path, key: Callable[[], RunKey]) -> None:
        self.path = Path(state_dir) / LEDGER
        self._lock_path = Path(state_dir) / (LEDGER + ".lock")
        self._key = key

    def latest(self, run_id: str) -> int:
        """The highest save number recorded for `run_id`; 0 when it has none."""
        return self._read().get(run_id, 0)

    def append(self, run_id: str, seq: int, *, keep: Callable[[str], bool] = lambda run_id: True) -> None:
        """Record that `run_id` was saved with number `seq`, durably; compact when large.

        `keep` says, when compacting, whether a run still exists (its lines are dropped if not).
        """
        line = f"{run_id} {seq} {self._line_mac(run_id, seq)}\n".encode("utf-8")
        with self._locked():
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
            try:
                os.write(fd, line)
                os.fsync(fd)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            if size > COMPACT_AT:
                self._compact(keep)

    def _compact(self, keep: Callable[[str], bool]) -> None:
        latest = {run_id: seq for run_id, seq in self._read().items() if keep(run_id)}
        text = "".join(f"{run_id} {seq} {self._line_mac(run_id, seq)}\n" for run_id, seq in sorted(latest.items()))
        durable.replace(self.path, text.encode("utf-8"), mode=0o600)

    def _read(self) -> dict[str, int]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        latest: dict[str, int] = {}
        for raw in data.split(b"\n"):
            # A line cut short by a crash, or glued to the next, or written by hand: ignored.
            parts = raw.decode("utf-8", "replace").rsplit(" ", 2)
            if len(parts) != 3 or not _SEQ.fullmatch(parts[1]):
                continue
            run_id, seq_text, mac = parts
            seq = int(seq_text)
            if hmac.compare_digest(mac, self._line_mac(run_id, seq)) and seq > latest.get(run_id, 0):
                latest[run_id] = seq
        return latest

    def _line_mac(self, run_id: str, seq: int) -> str:
        message = f"catalyst-ledger/1\n{run_id}\n{seq}".encode("utf-8", "surrogateescape")
        return hmac.new(self._key().secret, message, hashlib.sha256).hexdigest()[:16]

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # Windows: appends are not compacted concurrently there
            yield
            return
        fd = os.open(self._lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
