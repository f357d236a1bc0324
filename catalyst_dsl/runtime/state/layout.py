"""Where the file store keeps runs: the snapshot files' names and folders, and the
cheapest question one can ask of them (the status a run records).

`RunFiles` is the layout alone: `store.StateStore` builds on it to save and load runs,
and `locks.LockManager` asks it whether a lock's holder is finished. The lock manager
needs only that question, so it need not import the store (which imports the lock
module's neighbours: the codec, the seal) and the two stay apart.

The layout of `state_dir` (the project's `.xe/runs` by default):

- `run-{id}.json`, a live run's snapshot (with `run-{id}.json.bak`, the one before), and
  while it runs `run-{id}.journal`, the saves since (journal/);
- `history/YYYY/MM/DD/run-{id}.json`, a finished run, under the date in its id;
- `locks/`, the lock files (`locks.py`);
- `results/{id}/`, results too big for a snapshot (integrity/results.py), and
  `journal-reserve`, room kept for saves (journal/reserve.py).
"""

from __future__ import annotations

import glob
import json
import re
from datetime import datetime
from pathlib import Path

from catalyst_dsl._internal.lazy_pattern import LazyPattern

#: The date at the start of a run id made by the store (`20261121-143012-name-001`).
_run_day = LazyPattern(r"(\d{4})(\d{2})(\d{2})-\d{6}-")


class RunFiles:
    """The files of the runs under `state_dir`."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.history_dir = self.state_dir / "history"
        #: Kept by `locks.LockManager`; named here so the layout is written down once.
        self.locks_dir = self.state_dir / "locks"

    def path_of(self, run_id: str) -> Path:
        if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
            raise ValueError(f"not a run id: {run_id!r}")
        return self.state_dir / f"run-{run_id}.json"

    def archived_path(self, run_id: str) -> Path:
        """Where a finished run is kept: history/YYYY/MM/DD/ of the date in its id."""
        day = _run_day.match(run_id)
        if day:
            year, month, date = day.groups()
        else:  # an id not made by `create`: today's directory
            year, month, date = datetime.now().strftime("%Y %m %d").split()
        return self.history_dir / year / month / date / f"run-{run_id}.json"

    def _find(self, run_id: str) -> Path | None:
        for candidate in (self.path_of(run_id), self.archived_path(run_id)):
            if candidate.exists():
                return candidate
        if not self.history_dir.is_dir() or glob.has_magic(run_id):
            return None  # a run id never holds * ? [ ]: such text names no run
        return next(self.history_dir.glob(f"*/*/*/run-{run_id}.json"), None)

    def peek_status(self, run_id: str) -> str | None:
        """The status a run's snapshot records, cheaply and without raising: None when unknown.

        For `locks.LockManager`, deciding whether a lock's holder is finished. The snapshot
        alone is enough: a change of status is always saved as a full snapshot, never only
        as a journal record (journal/writer.py).
        """
        try:
            path = self._find(run_id)
            if path is None:
                return None
            status = json.loads(path.read_bytes()).get("status")
        except (OSError, ValueError, AttributeError):
            return None
        return status if isinstance(status, str) else None


def run_id_of(path: Path) -> str:
    """The id of the run a snapshot file holds, from its name (`run-{id}.json`)."""
    return Path(path).name.removeprefix("run-").removesuffix(".json")


def shown(path: Path) -> str:
    """A path as short as is clear in a message: relative to the working directory when under it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (OSError, ValueError):
        return str(path)


def slug(name: str) -> str:
    """The playbook name as it may appear in a file name (run ids, worktree folders)."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60].strip("-")
    return text or "run"
