"""The run journal: one record appended per save, the snapshot the fold of them.

- `record.py`: a record's line (what one save changed), its MAC chained to the save before;
- `delta.py`: what a save changed since the one before, derived from the `RunState`;
- `fold.py`: a snapshot's data with records' changes applied;
- `chain.py`: which records follow a snapshot, and what in them does not verify;
- `reading.py`: a run as read: the snapshot and the records after it, folded;
- `files.py`: the journal file (`run-{id}.journal`): reading, locking, appending;
- `writer.py`: one run's saves by this process, appended or compacted to a full snapshot;
- `anchor.py`: each run's latest save kept outside the state directory.

`store.py` (the store) is their one user; the seal, the run key and big results are in
`integrity/`.
"""
