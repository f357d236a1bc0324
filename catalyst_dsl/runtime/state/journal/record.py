"""One record of the run journal: what one save changed, a line of JSON, MACed and chained.

A record is one line of ASCII JSON, its MAC last:

    {"seq": 12, "prev": "<MAC of save 11>", "key": "1a2b3c4d", "set": {...}, "steps": [...], "mac": "<64 hex>"}

- `seq` is the save's number: one more than the save before it, whether that was a
  record or the snapshot (whose seal has the same `seq` and `mac`, integrity/seal.py).
- `prev` is the MAC of the save before it, so the records and the snapshot they continue
  are one chain: a record rewritten, moved, removed from the middle or taken from another
  run no longer links, and each save costs one MAC however long the run.
- `mac` is HMAC-SHA256 with the run key over the run's id and the exact bytes of the line
  before `, "mac"` (the run id is not in the line: a record copied from another run, even
  one sealed with the same key, does not verify here).
- `key` is the run key's id, so that a record sealed with another key says so.
- The changes (`CHANGES`, each optional) are the snapshot's own JSON: `set` holds the
  top-level fields whose value changed; `drop` the paths of journal entries replaced (a
  step run again in the same run), `steps` the entries added; `approvals`, `failures` and
  `trustedEdits` what was appended; `approvalsChanged` approvals changed in place since
  they were saved (by index). `fold.py` applies them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.state.integrity.run_key import RunKey

_DOMAIN = b"catalyst-run-journal/1\n"
#: The keys a record's changes may have, and the JSON kind of each.
CHANGES = {
    "set": dict,
    "drop": list,
    "steps": list,
    "approvals": list,
    "approvalsChanged": dict,
    "failures": list,
    "trustedEdits": list,
}
_HEAD = ("seq", "prev", "key")
#: `, "mac": "` + 64 hex digits + `"}` and the newline: what follows the signed bytes.
_TAIL = len(', "mac": "') + 64 + len('"}\n')
_HEX64 = re.compile(r"[0-9a-f]{64}")


def line(key: RunKey, run_id: str, seq: int, prev: str, changes: list[str]) -> tuple[bytes, str]:
    """The record of save `seq` after the save whose MAC is `prev`, and its own MAC.

    `changes` are `"name": json` texts, already encoded (`CHANGES` names them).
    """
    body = f'{{"seq": {seq}, "prev": "{prev}", "key": "{key.id}"' + "".join(", " + part for part in changes)
    mac = _mac(key, run_id, body.encode("ascii"))
    return f'{body}, "mac": "{mac}"}}\n'.encode("ascii"), mac


def _mac(key: RunKey, run_id: str, signed: bytes) -> str:
    mac = keyed(key.secret)
    mac.update(_DOMAIN + run_id.encode("utf-8", "surrogateescape") + b"\n" + signed)
    return mac.hexdigest()


def keyed(secret: bytes, _prepared: dict = {}) -> hmac.HMAC:  # noqa: B006 - a cache, on purpose
    """A fresh HMAC-SHA256 with `secret`: a copy of one keyed once (keying one costs two hashes)."""
    prepared = _prepared.get(secret)
    if prepared is None:
        prepared = _prepared[secret] = hmac.new(secret, digestmod=hashlib.sha256)
    return prepared.copy()


@record
class Record:
    """A record as read from the journal file."""

    #: Its line in the file, from 1.
    number: int
    seq: int
    prev: str
    key: str
    mac: str
    #: The changes (`CHANGES`) it holds.
    changes: dict
    #: The bytes its MAC covers.
    signed: bytes

    def verifies(self, key: RunKey, run_id: str) -> bool:
        return hmac.compare_digest(self.mac, _mac(key, run_id, self.signed))

    def says(self) -> str:
        """What it recorded, in a few words, for messages naming it."""
        steps = [e.get("path") for e in self.changes.get("steps", ()) if type(e) is dict]
        shown = [str(path) for path in steps if path is not None][:3]
        if shown:
            more = f" and {len(steps) - len(shown)} more" if len(steps) > len(shown) else ""
            return f"it records {', '.join(shown)}{more}"
        named = [key for key in CHANGES if key in self.changes and key != "set"]
        named += sorted(self.changes.get("set", {}))
        return f"it records {', '.join(named[:4])}" if named else "it records nothing"


class Damaged(Exception):
    """A record other than the last that is not one catalyst writes: the journal cannot be
    folded past it."""

    def __init__(self, number: int, problem: str) -> None:
        super().__init__(f"line {number}: {problem}")
        self.number = number
        self.problem = problem


def parse(raw: bytes) -> tuple[list[Record], int]:
    """The records of a journal file's bytes, and how many bytes the whole ones take.

    The last line is torn when it does not end with a newline (a crash while it was being
    appended, or a power cut): it is left out, as if never written. Damaged for any other
    line that is not a record."""
    records = []
    start = 0
    number = 0
    while True:
        end = raw.find(b"\n", start)
        if end < 0:
            return records, start  # nothing, or a torn last line
        number += 1
        records.append(_record(raw[start : end + 1], number))
        start = end + 1


def _record(text: bytes, number: int) -> Record:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise Damaged(number, "it is not JSON") from None
    if type(data) is not dict:
        raise Damaged(number, "it is not a JSON object")
    seq, prev, key, mac = (data.pop(name, None) for name in (*_HEAD, "mac"))
    if type(seq) is not int or seq < 1 or type(prev) is not str or type(key) is not str:
        raise Damaged(number, "it has no save number, link or key as catalyst writes them")
    if type(mac) is not str or not _HEX64.fullmatch(mac) or text[-_TAIL:] != f', "mac": "{mac}"}}\n'.encode("ascii"):
        raise Damaged(number, "its MAC is missing or not last")
    for name, value in data.items():
        kind = CHANGES.get(name)
        if kind is None:
            raise Damaged(number, f"it has the unknown key {name!r}")
        if type(value) is not kind:
            raise Damaged(number, f"its {name!r} is not a JSON {'object' if kind is dict else 'array'}")
    return Record(number, seq, prev, key, mac, data, text[:-_TAIL])
