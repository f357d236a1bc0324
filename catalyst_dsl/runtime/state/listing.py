"""Listing and retention of runs kept in files: `catalyst runs list`, shell completion's
run ids and `catalyst runs prune`, read from the state directory's files (layout.py).

Kept apart from the store (store.py), which saves and loads runs, and whose subclass for
the shared store (shared/store.py) answers the same questions with queries.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from catalyst_dsl.runtime.machine import parse_time
from catalyst_dsl.runtime.state import snapshot_codec
from catalyst_dsl.runtime.state.errors import located
from catalyst_dsl.runtime.state.journal.reading import read_run
from catalyst_dsl.runtime.state.layout import RunFiles, run_id_of
from catalyst_dsl.runtime.state.snapshot import shown_status

if TYPE_CHECKING:
    from catalyst_dsl.runtime.state.run_summary import RunSummary


#: A run as a store knows it: a snapshot file's path, or an id.
T = TypeVar("T")


class RunListing(RunFiles):
    """The runs under `state_dir`, listed and pruned. `_forget(run_id)`: what else goes
    with a pruned run (its results, its anchor), said by the store."""

    def _forget(self, run_id: str) -> None:
        pass

    def list(self, include_history: bool = True) -> list[RunSummary]:
        """Every run, newest first; unreadable files are listed as "corrupt"."""
        files = [(path, False) for path in self._live_files()]
        if include_history:
            files += [(path, True) for path in self._archived_files()]
        summaries = [self._summary(path, archived) for path, archived in files]
        # Ids begin with the local start time, so they sort by age.
        summaries.sort(key=lambda s: s.run_id, reverse=True)
        return summaries

    def _summary(self, path: Path, archived: bool) -> RunSummary:
        from catalyst_dsl.runtime.state.run_summary import RunSummary

        run_id = run_id_of(path)
        try:
            state = read_run(path, None).state  # folded, not checked: listing stays cheap
        except FileNotFoundError:  # archived or pruned while we listed
            return RunSummary(run_id, None, "missing", None, None, path, archived, "the file went away while listing")
        except snapshot_codec.Damaged as damage:
            return RunSummary(
                run_id, damage.name, "corrupt", None, None, path, archived, "; ".join(map(located, damage.problems))
            )
        return RunSummary(
            state.run_id, state.playbook.name, shown_status(state), state.started_at, state.updated_at, path, archived
        )

    def run_ids(self, include_history: bool = True) -> list[str]:
        """The ids of the runs kept here, newest first, read from file names only: cheap
        enough for shell completion, and a damaged snapshot still has its id."""
        files = self._live_files() + (self._archived_files() if include_history else [])
        return sorted({run_id_of(path) for path in files}, reverse=True)

    def _live_files(self) -> list[Path]:
        try:
            names = os.listdir(self.state_dir)
        except FileNotFoundError:
            return []
        return [self.state_dir / n for n in names if n.startswith("run-") and n.endswith(".json")]

    def _archived_files(self) -> list[Path]:
        if not self.history_dir.is_dir():
            return []
        return [p for p in self.history_dir.glob("*/*/*/run-*.json") if p.is_file()]

    def prune(
        self, *, keep_days: int | None, keep_last: int | None, dry_run: bool = False, now: datetime | None = None
    ) -> list[Path]:
        """Delete archived runs that no rule keeps; returns what was (or would be) deleted.

        A run is kept when it started within `keep_days` days or is among the `keep_last`
        newest archived runs; a rule that is None keeps nothing by itself, and with no
        rule at all nothing is deleted. Live runs (running, paused, crashed) are never
        looked at: only history is.
        """
        if not retention_rules(keep_days, keep_last):
            return []
        runs = sorted(self._archived_files(), key=lambda p: p.name, reverse=True)
        # A live run moved into history by hand has no start (`_started`): it is kept.
        doomed = retired(((path, self._started(path)) for path in runs), keep_days, keep_last, now)
        if not dry_run:
            for path in doomed:
                path.unlink(missing_ok=True)
                self._forget(run_id_of(path))
                for directory in (path.parent, path.parent.parent, path.parent.parent.parent):
                    try:
                        directory.rmdir()  # only succeeds once a day, month or year is empty
                    except OSError:
                        break
        return doomed

    def _started(self, path: Path) -> datetime | None:
        """When an archived run started (its file time when unreadable); None for unfinished ones."""
        try:
            state = read_run(path, None).state
        except (FileNotFoundError, snapshot_codec.Damaged):
            try:
                return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
            except FileNotFoundError:
                return None
        if not state.finished:
            return None
        return parse_time(state.started_at)


def retention_rules(keep_days: int | None, keep_last: int | None) -> bool:
    """Whether any rule is given (ValueError for a negative one): with none, nothing is pruned."""
    if (keep_days is not None and keep_days < 0) or (keep_last is not None and keep_last < 0):
        raise ValueError("keep_days and keep_last cannot be negative")
    return keep_days is not None or keep_last is not None


def retired(
    newest_first: Iterable[tuple[T, datetime | None]],
    keep_days: int | None,
    keep_last: int | None,
    now: datetime | None = None,
) -> list[T]:
    """The archived runs no rule keeps, of `newest_first` (each with when it started; None
    for one that is never pruned). A run is kept when it is among the `keep_last` newest or
    started within `keep_days` days; the file store and the shared store share this rule."""
    now = now or datetime.now(timezone.utc)
    doomed = []
    for rank, (run, started) in enumerate(newest_first):
        if keep_last is not None and rank < keep_last:
            continue
        if started is None:
            continue
        if keep_days is not None and now - started <= timedelta(days=keep_days):
            continue
        doomed.append(run)
    return doomed
