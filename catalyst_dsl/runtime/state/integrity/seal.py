"""The seal of a run snapshot: what makes an edit by hand, or a copy put back, visible.

A sealed snapshot file is the snapshot's JSON with one more key, last:

    "seal": {"seq": 7, "key": "1a2b3c4d", "prev": "<64 hex>", "fields": {...}, "mac": "<64 hex>"}

- `mac` is HMAC-SHA256, keyed by the run key, over the save number, the MAC of the save
  before it (`prev`), the field digests and the exact bytes of the file before the seal.
  Any change to any byte shows.
- `seq` counts the saves of the run, and `prev` makes the snapshot a link of the chain of
  its saves that the run journal (`journal/`) continues; the run's anchor outside the state
  directory (`journal/anchor.py`) remembers the latest save, which is how a rollback shows.
  A snapshot written before the run journal has no `prev` (and its MAC another domain): its
  latest save number is in the old save ledger (`ledger.py`), which is still read for it.
- `fields` holds a short digest of every top-level value, of every key of every journal
  entry and of every approval. A MAC only says "something changed"; comparing the digests
  says what ("the result of steps/3 was edited"). They are trustworthy only as far as the
  seal is: someone who rewrites them as well gets the refusal without the field named.
- `key` is the run key's id, so a snapshot sealed with another key says so.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from catalyst_dsl.runtime.state.integrity.run_key import RunKey

SEAL = "seal"
#: Digests only locate a change (the MAC proves it), so they are short: 48 bits.
DIGEST_CHARS = 12
_DOMAIN = b"catalyst-run-seal/1\n"
#: The domain of seals that are links of a chain (they have `prev`).
_CHAINED = b"catalyst-run-seal/2\n"
_to_json = json.JSONEncoder(ensure_ascii=True).encode


def digest(encoded: str) -> str:
    """The digest of one value already encoded as JSON."""
    return hashlib.sha256(encoded.encode("ascii")).hexdigest()[:DIGEST_CHARS]


NULL = digest("null")


def entry_digest(encoded_values: list[str]) -> str:
    """A journal entry's digests, one per key in the entry's key order, joined by dots."""
    return ".".join(map(digest, encoded_values))


def make(key: RunKey, seq: int, body: bytes, fields: dict[str, Any], prev: str) -> dict[str, Any]:
    """The seal of save `seq`, which follows the save whose MAC is `prev` ("" for a run's first)."""
    return {"seq": seq, "key": key.id, "prev": prev, "fields": fields, "mac": _mac(key, seq, fields, body, prev)}


def _mac(key: RunKey, seq: int, fields: dict[str, Any], body: bytes, prev: str | None) -> str:
    if prev is None:  # a seal from before the run journal
        head = _DOMAIN + f"{seq}\n".encode("ascii")
    else:
        head = _CHAINED + f"{seq}\n{prev}\n".encode("ascii")
    message = head + _to_json(fields).encode("ascii") + b"\n" + body
    return hmac.new(key.secret, message, hashlib.sha256).hexdigest()


#: Far beyond any run's saves; a larger number was written by hand, and one more save of
#: it might not even be writable as text (Python's bound on integer digits).
MAX_SEQ = 2**63 - 1


_KEYS = frozenset({"seq", "key", "fields", "mac"})
_CHAINED_KEYS = _KEYS | {"prev"}


def well_formed(seal: Any) -> bool:
    return (
        type(seal) is dict
        and (set(seal) == _KEYS or (set(seal) == _CHAINED_KEYS and type(seal["prev"]) is str))
        and type(seal["seq"]) is int
        and 1 <= seal["seq"] <= MAX_SEQ
        and type(seal["key"]) is str
        and type(seal["fields"]) is dict
        and type(seal["mac"]) is str
    )


def chained(seal: dict[str, Any]) -> bool:
    """Whether a well-formed seal is a link of the chain the run journal continues (else it
    was written before the journal, and the old save ledger holds its run's latest number)."""
    return "prev" in seal


def verifies(key: RunKey, seal: dict[str, Any], body: bytes) -> bool:
    return hmac.compare_digest(seal["mac"], _mac(key, seal["seq"], seal["fields"], body, seal.get("prev")))


def differences(
    sealed: dict[str, Any], now: dict[str, Any], step_keys: list[str], steps: list[Any], approvals: list[Any]
) -> list[str]:
    """What changed between the digests a seal holds and those of the content now, in words.

    `steps` and `approvals` are the entries as loaded (for their paths).
    """
    found = []
    for key in now:
        if key in ("steps", "approvals"):
            continue
        if key not in sealed:
            found.append(f"{key} was added by hand")
        elif sealed[key] != now[key]:
            found.append(_changed(key, sealed[key], now[key]))
    found += _journal(sealed.get("steps"), now["steps"], step_keys, steps)
    found += _approvals(sealed.get("approvals"), now["approvals"], approvals)
    return found


def _changed(what: str, before: str, after: str) -> str:
    if after == NULL:
        return f"{what} was removed"
    if before == NULL:
        return f"{what} was added by hand"
    return f"{what} was edited"


def _journal(sealed: Any, now: list[str], keys: list[str], steps: list[Any]) -> list[str]:
    if type(sealed) is not list:
        return ["the journal's digests are missing from the seal"]
    found = []
    for index, entry in enumerate(now):
        where = _step_name(steps, index)
        if index >= len(sealed):
            found.append(f"{where} was added to the journal by hand")
            continue
        if sealed[index] == entry:
            continue
        before, after = str(sealed[index]).split("."), entry.split(".")
        if len(before) != len(after):
            found.append(f"{where} was edited")
            continue
        found += [_changed(f"the {key} of {where}", b, a) for key, b, a in zip(keys, before, after) if b != a]
    if len(sealed) > len(now):
        gone = len(sealed) - len(now)
        found.append(f"{gone} journal entr{'y was' if gone == 1 else 'ies were'} removed from the end")
    return found


def _approvals(sealed: Any, now: list[str], approvals: list[Any]) -> list[str]:
    if type(sealed) is not list:
        return ["the approvals' digests are missing from the seal"]
    found = []
    for index, entry in enumerate(now):
        where = getattr(approvals[index], "path", f"approvals[{index}]")
        if index >= len(sealed):
            found.append(f"an approval on {where} was added by hand")
        elif sealed[index] != entry:
            found.append(f"the approval on {where} was edited")
    if len(sealed) > len(now):
        gone = len(sealed) - len(now)
        found.append(f"{gone} approval{' was' if gone == 1 else 's were'} removed")
    return found


def _step_name(steps: list[Any], index: int) -> str:
    path = getattr(steps[index], "path", None) if index < len(steps) else None
    return path if isinstance(path, str) and path else f"journal entry {index}"
