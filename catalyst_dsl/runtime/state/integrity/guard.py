"""The store's integrity guard: seals what it saves, checks what it loads.

`StateStore` (store.py) calls `seal` for the bytes of every save and `recorded` after it,
and `check` on every load that will act on a snapshot. `check` returns the problems in
words, each naming what is wrong ("the result of steps/3 was edited", "an approval on
steps/5 was added by hand", "it is an older copy put back: ..."); the store refuses the
snapshot with them, or records them when told to trust it (`resume --trust-edited-state`).
"""

from __future__ import annotations

import json
from pathlib import Path

from catalyst_dsl._internal import records
from catalyst_dsl.runtime.state import snapshot_codec
from catalyst_dsl.runtime.state.integrity import seal
from catalyst_dsl.runtime.state.integrity.ledger import LEDGER, Ledger
from catalyst_dsl.runtime.state.integrity.results import ResultEdited, ResultMissing, ResultStore
from catalyst_dsl.runtime.state.integrity.run_key import RunKey, load_run_key
from catalyst_dsl.runtime.state.snapshot import RunState, StepRecord

#: The keys of a journal entry, in the order the seal's entry digests follow.
STEP_KEYS = [snapshot_codec._camel(f.name) for f in records.fields(StepRecord)]


class Guard:
    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self._key: RunKey | None = None
        self.ledger = Ledger(self.state_dir, self.key)
        self.results = ResultStore(self.state_dir)
        #: The save number each run had when this process last loaded or saved it.
        self._seqs: dict[str, int] = {}

    def key(self) -> RunKey:
        """The run key, found once (RunKeyError when one is there but unusable)."""
        if self._key is None:
            self._key = load_run_key(self.state_dir)
        return self._key

    # -- saving

    def next_seq(self, run_id: str) -> int:
        known = self._seqs.get(run_id)
        return (known if known is not None else self.ledger.latest(run_id)) + 1

    def seal(self, state: RunState, seq: int, cache: snapshot_codec.JournalCache) -> bytes:
        """The file's bytes for `state` as save number `seq`."""
        body, fields = snapshot_codec.encode_parts(state, cache)
        sealed = seal.make(self.key(), seq, body.encode("ascii"), fields)
        return (body + snapshot_codec.seal_text(sealed)).encode("ascii")

    def recorded(self, run_id: str, seq: int, keep, ledger: bool = True) -> None:
        """After a save: remember its number here and (unless `ledger` is False) in the
        ledger (after, see ledger.py). A save with no line of its own is a snapshot ahead
        of the ledger, which is accepted; the next save's line covers it."""
        self._seqs[run_id] = seq
        if ledger:
            self.ledger.append(run_id, seq, keep=keep)

    # -- loading

    def check(self, sealed: snapshot_codec.Sealed, *, with_results: bool = True) -> list[str]:
        """What cannot be trusted in a snapshot just read, in words (empty: nothing).

        Fills in results kept beside the snapshot (unless `with_results` is False); one
        that is missing or edited is a problem, and the entry's result is left null.
        """
        state, found = sealed.state, sealed.seal
        key = self.key()
        latest = self.ledger.latest(state.run_id)
        problems: list[str] = []
        if found is None:
            problems.append(
                "it has no seal: it was written by a catalyst from before sealed snapshots, or its seal was removed"
            )
        elif not seal.well_formed(found):
            problems.append("its seal was edited: it is not a seal as catalyst writes it")
        elif not seal.verifies(key, found, sealed.body):
            if found["key"] != key.id:
                problems.append(
                    f"it was sealed with another run key (id {found['key']});"
                    f" the key in use here, from {key.source}, has id {key.id}"
                )
            else:
                _, now = snapshot_codec.encode_parts(state)
                problems += seal.differences(found["fields"], now, STEP_KEYS, state.steps, state.approvals) or [
                    "it was edited where no field can be named (the seal itself, or the file's layout)"
                ]
        else:
            seq = found["seq"]
            if seq < latest:
                problems.append(
                    f"it is an older copy put back: it is save {seq} of the run, and save {latest} was made since"
                )
            elif latest == 0 and seq > 1:
                problems.append(
                    f"the snapshot ledger ({LEDGER}) has no record of this run,"
                    f" which was saved {seq} times: the ledger was deleted or cut"
                )
        # A save after this load must outnumber every copy seen, the one refused included.
        self._seqs[state.run_id] = max(latest, found["seq"] if seal.well_formed(found) else 0)
        if with_results:
            problems += self._fill_results(state)
        return problems

    def _fill_results(self, state: RunState) -> list[str]:
        problems = []
        for record in state.steps:
            if record.result_blob is None:
                continue
            where = _display(self.results.path_of(state.run_id, record.result_blob))
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
        """A run deleted by `runs prune`: its results go too."""
        self.results.remove_run(run_id)
        self._seqs.pop(run_id, None)


def _display(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (OSError, ValueError):
        return str(path)
