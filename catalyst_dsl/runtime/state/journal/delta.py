"""What a save changed since the run's last one: the changes of its journal record.

The store derives them from the `RunState` itself, rather than being told by the code that
changed it: every change a run makes reaches the snapshot this way whatever made it (a
step, an approval given by another command, a cancel), exactly as a full save would.
Cheaply, because of how a run changes its state:

- the four lists only grow (`steps`, `approvals`, `failures`, `trustedEdits`): what is new
  is what lies past the length saved, checked by the identity of the last item saved. The
  journal's one exception, a step run again in the same run (a retried loop: its entry is
  removed and a new one appended), is found by identity too and recorded as `drop` and
  `steps`;
- an item appended is not changed afterwards, with one exception found in the code: an
  approval marked `delivered` once it has failed its step (runtime/lifecycle/run_hooks.py),
  which tells the store (`StateStore.changed`) and is recorded as `approvalsChanged`;
- every other field is small, and is compared by its JSON with what was saved.

A change the record cannot say (a list replaced by another, a different `RunState` object
saved for the run) is saved as a full snapshot instead (`Tracker.changes` returns None).
"""

from __future__ import annotations

import json
import operator
from typing import Any

from catalyst_dsl._internal import records
from catalyst_dsl.runtime.state.snapshot import RunState
from catalyst_dsl.runtime.state.snapshot_codec import JournalCache, camel, converter, field_texts

_to_json = json.JSONEncoder(ensure_ascii=True).encode
#: The lists that only grow, by field name.
_GROWING = ("steps", "approvals", "failures", "trusted_edits")
#: The fields that change at most saves (text or null), each compared as it is; the other
#: fields are compared all at once, as one JSON array, and one by one only when it differs.
_OFTEN = [(name, camel(name)) for name in ("updated_at", "in_flight")]
_RARE = [
    (f.name, camel(f.name)) for f in records.fields(RunState) if f.name not in _GROWING and f.name not in dict(_OFTEN)
]


_rare_values = operator.attrgetter(*(name for name, _ in _RARE))


def _rare_text(texts: dict[str, str]) -> str:
    """The rare fields' JSON as one array, from each one's JSON (as the encoder joins them)."""
    return "[" + ", ".join(texts[key] for _, key in _RARE) + "]"


def _records_as_data(value: Any) -> Any:
    return converter().unstructure(value)


#: JSON of values that may hold records, the records written as the snapshot's format does:
#: the containers are walked by the C encoder, which asks only for the records.
_with_records = json.JSONEncoder(ensure_ascii=True, default=_records_as_data).encode


def consistent_view(state: RunState) -> RunState:
    """`state` with its lists copied: what a compaction writes, while parallel branches may
    go on appending to the lists of `state` itself."""
    return records.replace(state, **{name: list(getattr(state, name)) for name in _GROWING})


class Pending:
    """The changes of one save, to be written as a record and then `Tracker.commit`ted."""

    def __init__(self) -> None:
        #: The record's change texts (`"name": json`), record.CHANGES in order.
        self.parts: list[str] = []
        #: The JSON of the fields that changed, by key, and of the rare ones as one array.
        self.changed: dict[str, str] = {}
        self.rare = ""
        #: The items each list gained, by field name.
        self.added: dict[str, list] = {}
        #: The journal entries removed (a step run again), and then the journal as recorded.
        self.dropped: list[Any] = []
        self.steps: list[Any] = []
        #: (index, approval) of the approvals changed in place.
        self.touched: list[tuple[int, Any]] = []

    @property
    def status_changed(self) -> bool:
        return "status" in self.changed


class Tracker:
    """The state of one run as its last save left it: the object saved, the JSON of its
    fields and the items of its lists, to tell what the next save of it changes."""

    def __init__(
        self, state: RunState, cache: JournalCache, view: RunState | None = None, texts: dict[str, str] | None = None
    ) -> None:
        """`view`: the state as saved, when `state` may have changed since (consistent_view);
        `texts`: its fields' JSON as saved (snapshot_codec.encode_parts), else worked out."""
        view = view if view is not None else state
        self.state = state
        self._cache = cache
        self._fields = texts if texts is not None else field_texts(view)
        self._rare = _rare_text(self._fields)
        self._lists = {name: list(getattr(view, name)) for name in _GROWING}
        #: Approvals changed in place since the last save, by identity.
        self._touched: dict[int, Any] = {}

    def touched(self, item: Any) -> None:
        """`item`, an approval of the state, was changed in place (`StateStore.changed`)."""
        self._touched[id(item)] = item

    def changes(self, state: RunState) -> Pending | None:
        """What saving `state` changes, or None when only a full snapshot can say it."""
        if state is not self.state:
            return None
        pending = Pending()
        values = _rare_values(state)
        pending.rare = _with_records(values)
        changed = pending.changed
        if pending.rare != self._rare:
            for (_, key), value in zip(_RARE, values):
                text = _with_records(value)
                if text != self._fields[key]:
                    changed[key] = text
        for name, key in _OFTEN:
            text = _to_json(getattr(state, name))
            if text != self._fields[key]:
                changed[key] = text
        if changed:
            pending.parts.append('"set": {' + ", ".join(f'"{key}": {text}' for key, text in changed.items()) + "}")
        # Parallel branches append to the lists while this save runs: each is read once here
        # (`_grown` reads it in one slice), and what is committed is what was read.
        steps = _grown(self._lists["steps"], state.steps)
        if steps is None:
            now = list(state.steps)
            replaced = _replaced(self._lists["steps"], now)
            if replaced is None:
                return None
            pending.dropped, steps = replaced
            pending.steps = now
            pending.parts.append('"drop": ' + _to_json([record.path for record in pending.dropped]))
        pending.added["steps"] = steps
        if steps:
            pending.parts.append('"steps": [' + ", ".join(self._cache.entry(record) for record in steps) + "]")
        for name in _GROWING[1:]:
            added = _grown(self._lists[name], getattr(state, name))
            if added is None:
                return None
            pending.added[name] = added
            if added:
                encoded = ", ".join(_to_json(converter().unstructure(item)) for item in added)
                pending.parts.append(f'"{camel(name)}": [{encoded}]')
        pending.touched = self._touched_approvals(state.approvals)
        if pending.touched:
            text = ", ".join(f'"{index}": {_to_json(converter().unstructure(item))}' for index, item in pending.touched)
            pending.parts.append('"approvalsChanged": {' + text + "}")
        return pending

    def _touched_approvals(self, approvals: list) -> list[tuple[int, Any]]:
        """Approvals saved before and changed in place since, with their index."""
        if not self._touched:
            return []
        saved = len(self._lists["approvals"])
        return [(i, item) for i, item in enumerate(approvals[:saved]) if id(item) in self._touched]

    def commit(self, pending: Pending) -> None:
        """The record of `pending` is durable: it is what the next save is compared with."""
        if pending.changed:
            self._fields = {**self._fields, **pending.changed}
        self._rare = pending.rare
        if pending.dropped:
            self._lists["steps"] = pending.steps
        else:
            self._lists["steps"].extend(pending.added["steps"])
        for name in _GROWING[1:]:
            self._lists[name].extend(pending.added[name])
        for _, item in pending.touched:
            self._touched.pop(id(item), None)


def _grown(saved: list, now: list) -> list | None:
    """The items appended to `saved` to make `now`, or None when it is not that.

    Items are only ever removed or appended, each is in a list once, and the last item
    saved is where it was: then nothing before it moved either. `now` is read in one slice
    (atomic), from that item on, so the answer costs what was appended, not the list."""
    if not saved:
        return now[:]
    tail = now[len(saved) - 1 :]
    if not tail or tail[0] is not saved[-1]:
        return None
    return tail[1:]


def _replaced(saved: list, now: list) -> tuple[list, list] | None:
    """(items of `saved` removed, items appended) when `now` is `saved` with some removed and
    others appended after the rest (a step run again: its entry moves to the end), else None."""
    present = {id(item) for item in now}
    kept = [item for item in saved if id(item) in present]
    if any(a is not b for a, b in zip(kept, now)) or len(now) < len(kept):
        return None
    return [item for item in saved if id(item) not in present], now[len(kept) :]
