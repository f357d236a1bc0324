"""Reading a run: its snapshot, with the records of its journal folded in.

What every reader of a run gets (a resume, `approve`, `runs list`, `runs show`, an export):
the snapshot file read as data, the journal's records after it checked (chain.py) and
folded in (fold.py), and the result read as a `RunState` with every problem named by its
JSON path (snapshot_codec.structured). A torn last record is left out; any other record
that is not one catalyst writes makes the run damaged, naming the record's line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.state import snapshot_codec
from catalyst_dsl.runtime.state.integrity import seal
from catalyst_dsl.runtime.state.integrity.run_key import RunKey
from catalyst_dsl.runtime.state.journal import files, fold
from catalyst_dsl.runtime.state.journal import record as journal_record
from catalyst_dsl.runtime.state.journal.anchor import Anchor
from catalyst_dsl.runtime.state.journal.chain import Chain, follow
from catalyst_dsl.runtime.state.snapshot import RunState


@record
class RunRead:
    """A run as read from its files."""

    path: Path
    #: The snapshot with the journal's records folded in.
    state: RunState
    #: The snapshot's seal as read (None when it has none) and the bytes its MAC covers.
    seal: Any
    body: bytes
    #: The records folded in, the head of the chain and what in it does not verify.
    chain: Chain
    #: The bytes of whole records in the journal, and the snapshot file as it was read:
    #: a writer goes on from these (journal/writer.py).
    journal_size: int
    snapshot: files.Identity | None
    #: The run's anchor (anchor.py), read before its files: a save is written to the files
    #: before its anchor, so files read after their anchor are never behind it unless they
    #: were put back (or a compaction came in between, which a second read tells).
    anchor: Anchor | None = None
    #: The snapshot's bytes as read, for naming what was edited in it (integrity/guard.py).
    raw: bytes = b""


def read_run(path: Path, key: RunKey | None, shown: str | None = None, anchor: Anchor | None = None) -> RunRead:
    """The run whose snapshot is `path`. `key`: the run key, to check the journal's records
    (None: fold them as they link, unchecked, for a listing). `shown`: the journal's name in
    messages. `anchor`: the run's anchor, read just before. Damaged or FileNotFoundError as
    snapshot_codec.read."""
    # Looked at before reading: a snapshot replaced after this is then seen as changed by a
    # writer going on from this read, never the other way round.
    identity = files.identity_of(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise snapshot_codec.Damaged([f"cannot be read: {exc.strerror or exc}"]) from None
    journal = files.journal_of(path)
    where = shown or (journal.name if journal is not None else "")
    return read_bytes(path, raw, files.read(journal), key, where, anchor, identity)


def read_bytes(
    path: Path,
    raw: bytes,
    journal: bytes,
    key: RunKey | None,
    where: str,
    anchor: Anchor | None = None,
    identity: files.Identity | None = None,
) -> RunRead:
    """A run from its snapshot's bytes and its journal's, wherever they were kept (files, or
    a shared store's rows); `path` names the snapshot (its file name holds the run's id),
    `where` the journal, in messages. Damaged as `read_run`."""
    document = snapshot_codec.parse_document(raw)
    try:
        records, size = journal_record.parse(journal)
    except journal_record.Damaged as damage:
        raise snapshot_codec.Damaged(
            [f"has a damaged journal: line {damage.number} of {where}: {damage.problem}"], document.name
        ) from None
    found = document.seal
    if seal.well_formed(found):
        seq, mac = found["seq"], found["mac"]
    else:
        seq, mac = 0, None
    run_id = _run_id(path, document.data)
    if key is None:
        chain = _linked(records, seq, mac)
    else:
        chain = follow(records, key, run_id, seq, mac, where)
    for each in chain.records:
        fold.apply(document.data, each.changes)
    state = snapshot_codec.structured(document.data, path, document.name)
    return RunRead(path, state, found, document.body, chain, size, identity, anchor, raw)


def _linked(records: list, seq: int, mac: str | None) -> Chain:
    """The records that continue the snapshot, by number and link only (a listing's view)."""
    after = []
    for each in records:
        if each.seq <= seq:
            continue
        if each.seq != seq + 1 or each.prev != mac:
            break
        after.append(each)
        seq, mac = each.seq, each.mac
    return Chain(after, seq, mac or "", [])


def _run_id(path: Path, data: dict) -> str:
    """The run a record must have been written for: the file's name says it (its MACs cover
    the id, so a record of another run does not verify here)."""
    named = snapshot_codec.RUN_FILE.fullmatch(path.name)
    if named:
        return named["id"]
    run_id = data.get("runId")
    return run_id if type(run_id) is str else ""
