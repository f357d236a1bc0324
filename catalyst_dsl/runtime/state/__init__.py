"""The run state: each run's snapshot and the journal of saves that keeps it.

- `snapshot.py` is the model of a run (`RunState`, `StepRecord`, the pauses and failures)
  and `snapshot_codec.py` its JSON form, checked field by field when read back.
- `store.py` is the store: `StateStore` creates, saves, loads, lists, archives and prunes
  runs, in files laid out as `layout.py` says (`RunFiles`); `run_summary.py` is one line
  of a listing.
- `journal/` makes each save one record appended to the run's journal, chained to the save
  before, and reads a run as its snapshot with the records after it folded in; it keeps
  each run's latest save outside the state directory (its anchor).
- `integrity/` seals each save, so that an edited or rolled-back snapshot is noticed.
- `locks.py` holds the locks between runs; `durable.py` the crash-safe writes all of them
  use; `errors.py` what a failed read or write of the state means.

The seam for another store (a journal in a database): `StateStore`'s public methods are
what the session and the commands ask of the state; `RunFiles`, `durable.py` and
`journal/files.py` are the file store's own, and `journal/anchor.Anchors` is what the
store asks of wherever anchors are kept. `locks.py` asks the state only the status a run records, through the
`run_status` it is given.

Nothing here imports the interpreter or the effects gateway: the state is below them.
"""
