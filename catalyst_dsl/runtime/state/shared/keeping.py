"""What the integrity guard (integrity/guard.py) keeps in the state database rather than
in files: each run's anchor, results too big for a snapshot, and the run key when none
is given.

- **Anchors.** A run's row holds the number and MAC of its latest save (`head_seq`,
  `head_mac`), moved by the same statement that appends the save (writer.py), so the
  anchor can never be behind or ahead of the rows. A journal whose last rows were deleted
  (a rewind) ends before it and is refused as an older copy, as a state directory put back
  is; a rewind that also rewrites the run's row is one only the database's owner can make.
- **Results** over the snapshot's limit (integrity/results.py) are rows named by their
  SHA-256, checked on reading like the files.
- **The run key.** Machines that share runs must share the key that seals them:
  `CATALYST_RUN_KEY` (the same secret on every machine: a CI secret) when set; otherwise
  a key made by the first catalyst that needs one and kept in the database, in
  `catalyst_run_keys`. Like the key the file store keeps in its state directory, that one
  protects nothing against whoever can write the database (they can read it too); it
  still catches edits by tools and people who do not know it.
"""

from __future__ import annotations

import hashlib
import os
import secrets

from catalyst_dsl.runtime.state.integrity.results import ResultEdited, ResultMissing
from catalyst_dsl.runtime.state.integrity.run_key import KEY_ENV, RunKey, load_run_key
from catalyst_dsl.runtime.state.journal.anchor import Anchor
from catalyst_dsl.runtime.state.shared.database import Database

__all__ = ["SharedAnchors", "SharedResults", "shared_run_key"]


class SharedAnchors:
    """Anchors read from the runs' rows (the module docstring says why they are never written apart)."""

    def __init__(self, database: Database, repository: str) -> None:
        self.database = database
        self.repository = repository
        self.where = f"the state database {database.shown}"

    def read(self, run_id: str) -> Anchor | None:
        rows = self.database.execute(
            "reading a run's latest save",
            "SELECT head_seq, head_mac FROM catalyst_runs WHERE repository = %s AND run_id = %s",
            (self.repository, run_id),
        )
        return Anchor(rows[0][0], rows[0][1]) if rows else None

    def write(self, run_id: str, seq: int, mac: str) -> None:
        """Nothing to do: the save's own statement moved the anchor."""

    def forget(self, run_id: str) -> None:
        """Nothing to do: the anchor goes with the run's row."""

    def close(self, run_id: str) -> None:
        """Nothing is held open per run."""


class SharedResults:
    """Big results, as rows; the interface of integrity/results.ResultStore."""

    def __init__(self, database: Database, repository: str) -> None:
        self.database = database
        self.repository = repository

    def where(self, run_id: str, sha: str) -> str:
        return f"the state database {self.database.shown} (result {sha[:12]}… of run {run_id})"

    def put(self, run_id: str, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        self.database.execute(
            "keeping a step's result",
            "INSERT INTO catalyst_results (repository, run_id, sha, data) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (self.repository, run_id, sha, data),
        )
        return sha

    def get(self, run_id: str, sha: str) -> bytes:
        rows = self.database.execute(
            "reading a step's result",
            "SELECT data FROM catalyst_results WHERE repository = %s AND run_id = %s AND sha = %s",
            (self.repository, run_id, sha),
        )
        if not rows:
            raise ResultMissing(sha)
        data = bytes(rows[0][0])
        if hashlib.sha256(data).hexdigest() != sha:
            raise ResultEdited(sha)
        return data

    def remove_run(self, run_id: str) -> None:
        self.database.execute(
            "removing a run's results",
            "DELETE FROM catalyst_results WHERE repository = %s AND run_id = %s",
            (self.repository, run_id),
        )


def shared_run_key(database: Database, repository: str, state_dir) -> RunKey:
    """The key that seals the runs of `repository` (the module docstring says which)."""
    if os.environ.get(KEY_ENV, "").strip():
        return load_run_key(state_dir)
    made = secrets.token_hex(32)
    with database.transaction("finding the run key") as connection:
        connection.execute(
            "INSERT INTO catalyst_run_keys (repository, secret) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (repository, made),
        )
        [(secret,)] = connection.execute(
            "SELECT secret FROM catalyst_run_keys WHERE repository = %s", (repository,)
        ).fetchall()
    return RunKey(secret.encode("ascii"), f"the state database {database.shown}", True)
