"""The store's integrity guard: seals what it saves, checks what it loads.

`StateStore` (store.py) calls `seal` for the bytes of every full snapshot and `saved`
after every save (a snapshot or a journal record), and `check` on every load that will act
on a run. `check` returns the problems in words, each naming what is wrong ("the result
of steps/3 was edited", "an approval on steps/5 was added by hand", "save 12 in its
journal ... was edited", "it is an older copy put back: ..."); the store refuses the run
with them, or records them when told to trust it (`resume --trust-edited-state`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from catalyst_dsl._internal import records
from catalyst_dsl.runtime.state import snapshot_codec
from catalyst_dsl.runtime.state.integrity import seal
from catalyst_dsl.runtime.state.integrity.ledger import LEDGER, Ledger
from catalyst_dsl.runtime.state.integrity.results import ResultEdited, ResultMissing, ResultStore
from catalyst_dsl.runtime.state.integrity.run_key import RunKey, load_run_key
from catalyst_dsl.runtime.state.journal.anchor import Anchors, FileAnchors
from catalyst_dsl.runtime.state.journal.reading import RunRead
from catalyst_dsl.runtime.state.snapshot import RunState, StepRecord

#: The keys of a journal entry, in the order the seal's entry digests follow.
STEP_KEYS = [snapshot_codec._camel(f.name) for f in records.fields(StepRecord)]


class Guard:
    """`anchors`, `results` and `find_key`: where runs' anchors and big results are kept and
    how the run key is found; the state directory's files and `load_run_key` unless a
    store that keeps runs elsewhere (runtime/state/shared/) says otherwise."""

    def __init__(
        self,
        state_dir: Path,
        anchors: Anchors | None = None,
        results: ResultStore | None = None,
        find_key: Callable[[], RunKey] | None = None,
    ) -> None:
        self.state_dir = Path(state_dir)
        self._key: RunKey | None = None
        self._find_key = find_key or (lambda: load_run_key(self.state_dir))
        #: The save ledger of catalysts from before the run journal: read, for their runs.
        self.ledger = Ledger(self.state_dir, self.key)
        self.results = results if results is not None else ResultStore(self.state_dir)
        self.anchors = anchors if anchors is not None else FileAnchors(self.state_dir, self.key)

    def key(self) -> RunKey:
        """The run key, found once (RunKeyError when one is there but unusable)."""
        if self._key is None:
            self._key = self._find_key()
        return self._key

    # -- saving

    def seal(
        self,
        state: RunState,
        seq: int,
        prev: str,
        cache: snapshot_codec.JournalCache,
        texts: dict[str, str] | None = None,
    ) -> tuple[bytes, str]:
        """The file's bytes for `state` as save number `seq` after the save whose MAC is
        `prev`, and its MAC. `texts` receives its fields' JSON (snapshot_codec.encode_parts)."""
        body, fields = snapshot_codec.encode_parts(state, cache, texts)
        sealed = seal.make(self.key(), seq, body.encode("ascii"), fields, prev)
        return (body + snapshot_codec.seal_text(sealed)).encode("ascii"), sealed["mac"]

    def saved(self, run_id: str, seq: int, mac: str) -> None:
        """After a save is durable: the run's anchor moves on to it (never before: see anchor.py)."""
        self.anchors.write(run_id, seq, mac)

    def latest_seen(self, run_id: str) -> int:
        """The highest save number known of `run_id` outside its files: its anchor's, or the
        old ledger's for a run saved before the journal. A new save numbers past it."""
        anchor = self.anchors.read(run_id)
        return max(anchor.seq if anchor is not None else 0, self.ledger.latest(run_id))

    # -- loading

    def check(self, read: RunRead, *, with_results: bool = True) -> list[str]:
        """What cannot be trusted in a run just read, in words (empty: nothing).

        Fills in results kept beside the snapshot (unless `with_results` is False); one
        that is missing or edited is a problem, and the entry's result is left null.
        """
        state, found = read.state, read.seal
        key = self.key()
        problems: list[str] = []
        if found is None:
            problems.append(
                "it has no seal: it was written by a catalyst from before sealed snapshots, or its seal was removed"
            )
        elif not seal.well_formed(found):
            problems.append("its seal was edited: it is not a seal as catalyst writes it")
        elif not seal.verifies(key, found, read.body):
            if found["key"] != key.id:
                problems.append(
                    f"it was sealed with another run key (id {found['key']});"
                    f" the key in use here, from {key.source}, has id {key.id}"
                )
            else:
                problems += self._edits(read)
        problems += read.chain.problems
        if not any("older copy put back" in problem for problem in problems):
            problems += self._rolled_back(read)
        if with_results:
            problems += self._fill_results(state)
        return problems

    def _edits(self, read: RunRead) -> list[str]:
        """What was edited in a snapshot whose MAC does not verify, by its field digests."""
        try:  # the snapshot without the journal's records
            document = snapshot_codec.parse_document(read.raw)
            alone = snapshot_codec.structured(document.data, read.path, document.name)
        except snapshot_codec.Damaged:
            alone = read.state
        _, now = snapshot_codec.encode_parts(alone)
        return seal.differences(read.seal["fields"], now, STEP_KEYS, alone.steps, alone.approvals) or [
            "it was edited where no field can be named (the seal itself, or the file's layout)"
        ]

    def _rolled_back(self, read: RunRead) -> list[str]:
        """An older copy put back, snapshot and journal together: the chain ends before the
        save the run's anchor records (or, for a run saved before the journal, the ledger)."""
        run_id, head, anchor = read.state.run_id, read.chain.head_seq, read.anchor
        if anchor is not None and anchor.seq > head:
            return [
                f"it is an older copy put back, or cut short: it is save {head} of the run,"
                f" and save {anchor.seq} was made since"
            ]
        if anchor is not None and anchor.seq == head and anchor.mac != read.chain.head_mac:
            return [f"it is another copy of save {head} of the run than the one made here: a copy was put back"]
        found = read.seal
        if not seal.well_formed(found) or seal.chained(found):
            return []
        latest = self.ledger.latest(run_id)
        if head < latest:
            return [f"it is an older copy put back: it is save {head} of the run, and save {latest} was made since"]
        if latest == 0 and anchor is None and found["seq"] > 1 and not read.chain.records:
            return [
                f"the snapshot ledger ({LEDGER}) has no record of this run,"
                f" which was saved {found['seq']} times: the ledger was deleted or cut"
            ]
        return []

    def _fill_results(self, state: RunState) -> list[str]:
        problems = []
        for record in state.steps:
            if record.result_blob is None:
                continue
            where = self.results.where(state.run_id, record.result_blob)
            try:
                record.result = json.loads(self.results.get(state.run_id, record.result_blob))
                continue
            except ResultMissing:
                problems.append(f"the result of {record.path}, kept in {where}, is missing")
            except (ResultEdited, ValueError):
                problems.append(f"the result of {record.path}, kept in {where}, was edited")
            record.result, record.result_blob = None, None
        return problems

    def forget_run(self, run_id: str) -> None:
        """A run deleted by `runs prune`: its results and its anchor go too."""
        self.results.remove_run(run_id)
        self.anchors.forget(run_id)
