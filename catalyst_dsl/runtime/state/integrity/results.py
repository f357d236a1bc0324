"""Step results too big for a snapshot, kept beside it in files named by their hash.

A result whose JSON is over `LIMIT` bytes is written to
`results/RUN-ID/SHA256.json` in the state directory (mode 0600, fsynced, linked into place
before the snapshot that names it is saved); the journal entry keeps only the hash
(`resultBlob`), which the seal covers. Loading reads the file back and checks its hash:
a missing or edited file is refused naming the step. Snapshots stay small, so every save
and every resume stays fast however big one step's output was. `runs prune` deletes a
run's results with it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from catalyst_dsl.runtime.state import durable
from catalyst_dsl.runtime.state.layout import shown

#: 256 KiB of JSON: far above ordinary results (a command's output, an AI answer), far
#: below what makes a save slow.
LIMIT = 256 * 1024
RESULTS = "results"


class ResultMissing(Exception):
    pass


class ResultEdited(Exception):
    pass


class ResultStore:
    def __init__(self, state_dir: Path) -> None:
        self.root = Path(state_dir) / RESULTS

    def path_of(self, run_id: str, sha: str) -> Path:
        return self.root / run_id / f"{sha}.json"

    def where(self, run_id: str, sha: str) -> str:
        """Where the result is kept, for messages."""
        return shown(self.path_of(run_id, sha))

    def put(self, run_id: str, data: bytes) -> str:
        """Keep `data` (a result's JSON) durably; returns its SHA-256 in hex."""
        sha = hashlib.sha256(data).hexdigest()
        target = self.path_of(run_id, sha)
        if not target.exists():
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            target.parent.mkdir(exist_ok=True, mode=0o700)
            durable.create(target, data, mode=0o600)  # False: a racing writer stored the same bytes
        return sha

    def get(self, run_id: str, sha: str) -> bytes:
        """The bytes stored under `sha`; ResultMissing or ResultEdited when they cannot be trusted."""
        if not _SHA256.fullmatch(sha):
            raise ResultMissing(sha)  # never a path: only a hash names a file here
        try:
            data = self.path_of(run_id, sha).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise ResultMissing(sha) from None
        except OSError as error:
            raise ResultMissing(f"{sha}: {error.strerror}") from None
        if hashlib.sha256(data).hexdigest() != sha:
            raise ResultEdited(sha)
        return data

    def remove_run(self, run_id: str) -> None:
        shutil.rmtree(self.root / run_id, ignore_errors=True)


_SHA256 = re.compile(r"[0-9a-f]{64}")
