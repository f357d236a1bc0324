"""Checking the records that follow a snapshot: which of them fold into it, and what in
them does not verify, in words naming the record.

Records numbered up to the snapshot's save are older than it (a compaction wrote the
snapshot and a crash came before the journal was removed): the snapshot holds them, and
they are skipped. The rest must continue the snapshot's save one by one: save N+1 after
the snapshot's N, each linked to the MAC of the one before, each MAC verifying with the
run key. A record that does not is named by its save number and line.
"""

from __future__ import annotations

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.state.integrity.run_key import RunKey
from catalyst_dsl.runtime.state.journal.record import Record


@record
class Chain:
    """What the records after a snapshot add to it."""

    #: The records to fold into the snapshot, in order.
    records: list
    #: The save the run's chain ends at (the last record's, else the snapshot's).
    head_seq: int
    head_mac: str
    #: What does not verify, in words.
    problems: list


def follow(records: list[Record], key: RunKey, run_id: str, seq: int, mac: str | None, where: str) -> Chain:
    """The records of the journal `where` that follow the snapshot's save `seq` (MAC `mac`,
    None when the snapshot has no usable seal)."""
    after = [r for r in records if r.seq > seq]
    if not after:
        return Chain([], seq, mac or "", [])
    last = after[-1]
    first = after[0]
    if first.seq != seq + 1 or first.prev != mac:
        # The journal goes on from another save than this snapshot: the snapshot was put
        # back (or replaced by a copy from elsewhere). Its records belong to the chain of the
        # snapshot they were written after, so none of them is folded into this one.
        if mac is None:
            said = f"its journal {where} goes on from a sealed snapshot, which this is not"
        elif first.seq > seq + 1:
            said = f"it is an older copy put back: it is save {seq} of the run, and save {last.seq} was made since"
        else:
            said = f"it is not the save {seq} its journal {where} goes on from: another copy was put in its place"
        return Chain([], last.seq, last.mac, [said])
    problems = []
    other_key = [r for r in after if r.key != key.id]
    if other_key:
        r = other_key[0]
        problems.append(
            f"save {r.seq} in its journal {where} was sealed with another run key (id {r.key});"
            f" the key in use here, from {key.source}, has id {key.id}"
        )
    previous_seq, previous_mac = seq, mac
    broken = False
    for r in after:
        if r.seq != previous_seq + 1 or r.prev != previous_mac:
            if not broken:  # the first break says it: the records after it follow from it
                problems.append(
                    f"save {r.seq} in its journal {where} (line {r.number}) does not follow save {previous_seq}:"
                    " records were removed, moved or put in by hand"
                )
            broken = True
        elif r.key == key.id and not r.verifies(key, run_id):
            problems.append(
                f"save {r.seq} in its journal {where} (line {r.number}) was edited,"
                f" or copied from another run ({r.says()})"
            )
        previous_seq, previous_mac = r.seq, r.mac
    return Chain(after, last.seq, last.mac, problems)
