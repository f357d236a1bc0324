"""The save ledger of catalysts from before the run journal: read, never written.

Before the run journal, every save rewrote the whole snapshot and appended
`RUN-ID SEQ MAC` to `snapshot-ledger` in the state directory, so that an older snapshot
put back (a lower save number than the ledger's latest for its run) was noticed. A run
saved that way still has only that ledger to tell its latest save: a snapshot whose seal
is not a link of a chain (integrity/seal.py) is checked against it (guard.py), until its
next save by this catalyst writes a chained snapshot and the run's anchor
(journal/anchor.py), which take over. Runs saved since never add to the ledger.

Each line carries a short MAC with the run key, so a line written by hand is ignored
rather than believed.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from pathlib import Path

from catalyst_dsl.runtime.state.integrity.run_key import RunKey

LEDGER = "snapshot-ledger"
#: A save number as written: ASCII digits (str.isdigit() also passes "²", which int()
#: refuses), as many as a seal's number may have (seal.MAX_SEQ).
_SEQ = re.compile(r"[0-9]{1,19}")


class Ledger:
    def __init__(self, state_dir: Path, key: Callable[[], RunKey]) -> None:
        self.path = Path(state_dir) / LEDGER
        self._key = key
        self._latest: dict[str, int] | None = None

    def latest(self, run_id: str) -> int:
        """The highest save number recorded for `run_id`; 0 when it has none."""
        if self._latest is None:
            self._latest = self._read()  # nothing adds to it any more: read once
        return self._latest.get(run_id, 0)

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
