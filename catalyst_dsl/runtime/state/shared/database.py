"""The connection to the state database, its failures in words, and its tables.

One connection per process, in autocommit: a save is one statement (writer.py), which
PostgreSQL commits, and syncs to its write-ahead log, as one transaction; the few changes
of more than one statement run in an explicit transaction. Statements are serialised by a
lock, since a run's parallel branches save from threads of their own.

The tables are made on first use, under an advisory lock so that two first commands do
not race, and carry a schema version so that a later catalyst can migrate them. Every
row belongs to a repository (repository.py): one database may keep the runs of many.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

from catalyst_dsl.runtime.errors import EXIT_STATE, RunAbort
from catalyst_dsl.runtime.state.shared.settings import shown_url

SCHEMA_VERSION = 1

#: An arbitrary, fixed key for the advisory lock that guards making the tables.
_SCHEMA_LOCK = 0x6361_7461_6C79_7374 & 0x7FFF_FFFF_FFFF_FFFF

SCHEMA = """
CREATE TABLE IF NOT EXISTS catalyst_schema (
    version integer NOT NULL
);
CREATE TABLE IF NOT EXISTS catalyst_run_keys (
    repository text PRIMARY KEY,
    secret text NOT NULL
);
CREATE TABLE IF NOT EXISTS catalyst_runs (
    repository text NOT NULL,
    run_id text NOT NULL,
    playbook text,
    status text NOT NULL,
    started_at text,
    updated_at text,
    commit text,
    archived boolean NOT NULL DEFAULT false,
    snapshot bytea NOT NULL,
    snapshot_seq bigint NOT NULL,
    head_seq bigint NOT NULL,
    head_mac text NOT NULL,
    fence bigint NOT NULL DEFAULT 0,
    lease_owner text,
    lease_until timestamptz,
    runnable boolean NOT NULL DEFAULT false,
    PRIMARY KEY (repository, run_id)
);
CREATE INDEX IF NOT EXISTS catalyst_runs_runnable ON catalyst_runs (repository, status, updated_at)
    WHERE NOT archived;
CREATE TABLE IF NOT EXISTS catalyst_journal (
    repository text NOT NULL,
    run_id text NOT NULL,
    seq bigint NOT NULL,
    line bytea NOT NULL,
    PRIMARY KEY (repository, run_id, seq),
    FOREIGN KEY (repository, run_id) REFERENCES catalyst_runs ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS catalyst_files (
    repository text NOT NULL,
    sha text NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (repository, sha)
);
CREATE TABLE IF NOT EXISTS catalyst_carried (
    repository text NOT NULL,
    run_id text NOT NULL,
    manifest text NOT NULL,
    mac text NOT NULL,
    PRIMARY KEY (repository, run_id)
);
CREATE TABLE IF NOT EXISTS catalyst_locks (
    repository text NOT NULL,
    key text NOT NULL,
    resource text NOT NULL,
    run_id text NOT NULL,
    pid integer NOT NULL,
    host text NOT NULL,
    since text NOT NULL,
    PRIMARY KEY (repository, key)
);
CREATE TABLE IF NOT EXISTS catalyst_results (
    repository text NOT NULL,
    run_id text NOT NULL,
    sha text NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (repository, run_id, sha)
);
"""


class Database:
    """The state database at `url`, connected on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.shown = shown_url(url)
        self._connection: Any = None
        self._lock = threading.RLock()

    def _connect(self):
        import psycopg

        try:
            connection = psycopg.connect(self.url, autocommit=True, connect_timeout=10, application_name="catalyst")
        except psycopg.Error as error:
            raise unreachable(self.shown, error) from None
        try:
            _make_tables(connection)
        except (psycopg.Error, _NewerSchema) as error:
            connection.close()
            raise failed(self.shown, error, "preparing its tables") from None
        return connection

    @contextmanager
    def connection(self, doing: str) -> Iterator[Any]:
        """The open connection, for `doing` (words for messages); its failures as RunAbort.
        A connection the server dropped (a restart) is made again for the next statement."""
        import psycopg

        with self._lock:
            if self._connection is None or self._connection.closed:
                self._connection = self._connect()
            try:
                yield self._connection
            except psycopg.OperationalError as error:
                self._drop()
                raise failed(self.shown, error, doing) from None
            except psycopg.Error as error:
                raise failed(self.shown, error, doing) from None

    def execute(self, doing: str, query: str, params: Any = None) -> list[tuple]:
        """Run one statement; its rows (empty for a statement that returns none)."""
        cursor = self._once_more(doing, query, params)
        return cursor.fetchall() if cursor.description is not None else []

    def count(self, doing: str, query: str, params: Any = None) -> int:
        """Run one statement; how many rows it changed."""
        return self._once_more(doing, query, params).rowcount

    def _once_more(self, doing: str, query: str, params: Any):
        """One statement, sent again once on a new connection when the server dropped the
        old one (a restart, a fail-over). Every statement catalyst sends may be: a save is
        conditional on the head it moves (writer.py), so one that committed before the
        connection broke changes nothing the second time, and the writer then finds its
        own save there."""
        try:
            with self.connection(doing) as connection:
                return connection.execute(query, params)
        except RunAbort:
            if self._connection is not None:
                raise  # not a lost connection: the statement itself failed
        with self.connection(doing) as connection:
            return connection.execute(query, params)

    @contextmanager
    def transaction(self, doing: str) -> Iterator[Any]:
        with self.connection(doing) as connection, connection.transaction():
            yield connection

    def _drop(self) -> None:
        try:
            self._connection.close()
        except Exception:  # noqa: BLE001 - closing a broken connection: nothing to say
            pass
        self._connection = None

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._drop()


def _make_tables(connection) -> None:
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        found = connection.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = 'catalyst_schema'"
            " AND table_schema = current_schema()"
        ).fetchone()
        if found is None:
            connection.execute(SCHEMA)
            connection.execute("INSERT INTO catalyst_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            return
        [row] = connection.execute("SELECT max(version) FROM catalyst_schema").fetchall()
        if row[0] is not None and row[0] > SCHEMA_VERSION:
            raise _NewerSchema(row[0])


class _NewerSchema(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def unreachable(shown: str, error: Exception) -> RunAbort:
    return RunAbort(
        EXIT_STATE,
        f"cannot reach the state database {shown}: {_reason(error)}",
        help="check that the server is up and that CATALYST_STATE_URL (or state-url in your own"
        " configuration) names it, with a user that may connect",
    )


def failed(shown: str, error: Exception, doing: str) -> RunAbort:
    if isinstance(error, _NewerSchema):
        return RunAbort(
            EXIT_STATE,
            f"the state database {shown} was set up by a newer catalyst (tables version {error.version};"
            f" this one knows version {SCHEMA_VERSION})",
            help="upgrade catalyst on this machine",
        )
    return RunAbort(
        EXIT_STATE,
        f"the state database {shown} failed while {doing}: {_reason(error)}",
        help="what was saved before this stays saved; once the server is back,"
        " `catalyst resume RUN` goes on from the last save",
    )


def _reason(error: Exception) -> str:
    """The server's or the driver's own words, on one line, without the URL's password."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:400]
