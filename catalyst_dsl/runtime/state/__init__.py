"""The run state: each run's snapshot and the journal of saves that keeps it.

- `snapshot.py` is the model of a run (`RunState`, `StepRecord`, the pauses and failures)
  and `snapshot_codec.py` its JSON form, checked field by field when read back.
- `store.py` is the store: `StateStore` saves, loads, lists, archives and prunes runs.
  Its public methods are the interface a run and the commands use; `layout.py` is where
  the file store keeps runs on disk, the part another store (a database) would replace.
- `integrity/` seals each save so that an edited or rolled-back snapshot is noticed.
- `locks.py` holds the locks between runs; `durable.py` the crash-safe writes all of them
  use; `errors.py` what a failed read or write of the state means.

Nothing here imports the interpreter or the effects gateway: the state is below them.
"""
