"""The shared state store: runs kept in PostgreSQL, so that every checkout of a repository,
on any machine, sees the same runs.

Chosen by `CATALYST_STATE_URL=postgresql://…` or the `state-url` setting of the user's own
configuration (never a repository's: the URL carries credentials). Without it runs stay
in the state directory's files (store.py), which need no server.

- `settings.py`: which store a command uses, and the URL shown without its password;
- `repository.py`: which runs are this repository's (every checkout of it shares them);
- `database.py`: the connection, its errors in words, the tables (made on first use);
- `keeping.py`: what the integrity guard keeps in the database (anchors, big results,
  the run key when none is given);
- `writer.py`: one run's saves, each a row appended in one statement;
- `store.py`: `SharedStore`, the file store's interface over the database.

A run is sealed and chained exactly as in files (integrity/, journal/): the rows hold the
same bytes a snapshot file and its journal would.
"""
