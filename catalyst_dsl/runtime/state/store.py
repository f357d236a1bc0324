"""The store that keeps run snapshots on disk, crash-safe, and finds, lists and retires them.

A run saves its snapshot (`snapshot.py`) after every step, so the store's promises are:

- **Atomic saves** (`durable.replace`). Each save writes a temporary file in the same
  directory, fsyncs it, `os.replace`s it onto `run-{id}.json` and fsyncs the directory: a
  reader (or a resume after `kill -9` or a power cut) sees the old snapshot or the new
  one, never a mix. The save that only names a step in flight, before a step that no
  `ensures:` can recover, skips the directory's fsync and its ledger line: a power cut
  may take it back to the save before, from which that step runs again all the same
  (the content is synced, so either name holds a whole snapshot; the next save's
  directory fsync and ledger line cover it).
- **One backup.** Before each save the current file is hard-linked to
  `run-{id}.json.bak`, so the backup is always the snapshot before the latest save. A
  link and a rename cost two syscalls, no copy, so it is kept at every save rather than
  only at checkpoints: the newest good copy is the most useful one after a bad edit.
  Where hard links are unsupported no backup is kept.
- **Friendly, unique ids** (`20261121-143012-create-feature-001`): local date and time of
  `startedAt`, playbook name, the first free 3-digit index. A run claims its id by
  hard-linking its first, complete snapshot to the final name (`durable.create`): the
  link fails when the name exists, so two runs started in the same second never share an
  id and the file is never seen empty.
- **Sealed, numbered saves** (`integrity/`). Every save carries an HMAC with the run key
  and a save number that the snapshot ledger also records; a load that acts on a run
  refuses a snapshot edited by hand, sealed with another key, or older than the ledger
  (a copy put back), naming what is wrong. Results too big for a snapshot are kept
  beside it, named by hash.
- **Loading never shows a traceback.** A missing file, or any damage `snapshot_codec.py`
  finds in one, is a `RunAbort(EXIT_STATE)` naming the file, the JSON path
  (`$.steps[3].attempts`) and how to recover (from the backup, when it is good).

Finished runs move to `history/YYYY/MM/DD/` (the date in the run id), which carries a
`.gitignore` of `*`. Retention (`prune`) only ever touches that history.

The snapshot model is re-exported here, so a caller that saves and loads runs needs one
import.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalyst_dsl.runtime.state import durable, snapshot_codec
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.state.errors import state_abort
from catalyst_dsl.runtime.state.integrity.guard import Guard
from catalyst_dsl.runtime.state.integrity.run_key import RunKey, RunKeyError
from catalyst_dsl.runtime.state.layout import RunFiles, slug
from catalyst_dsl.runtime.machine import current_user, format_time, parse_time, pid_alive, utc_now
from catalyst_dsl.runtime.state.snapshot import (
    FINISHED,
    FORMAT,
    VERSION,
    Approval,
    Cancel,
    Failure,
    Owner,
    Pause,
    PlaybookRef,
    RunState,
    RunStatus,
    StepRecord,
    TrustedEdit,
    current_owner,
    ensure_resumable,
    new_run_state,
    shown_status,
)

if TYPE_CHECKING:
    from catalyst_dsl.runtime.state.run_summary import RunSummary

__all__ = [
    "FINISHED",
    "FORMAT",
    "VERSION",
    "Approval",
    "Cancel",
    "Failure",
    "Owner",
    "Pause",
    "PlaybookRef",
    "RunState",
    "RunStatus",
    "RunSummary",
    "StateStore",
    "StepRecord",
    "TrustedEdit",
    "current_owner",
    "ensure_resumable",
    "format_time",
    "new_run_state",
    "parse_time",
    "pid_alive",
    "utc_now",
]

#: Snapshots hold a run's inputs and results: only their owner may read them.
_PRIVATE = 0o600


def __getattr__(name: str):
    # RunSummary is kept in its own module, imported when runs are listed: a run never
    # lists runs, so it never loads that module.
    if name == "RunSummary":
        from catalyst_dsl.runtime.state.run_summary import RunSummary

        return RunSummary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the store ---------------------------------------------------------------------------------


class StateStore(RunFiles):
    """Snapshots of runs under `state_dir` (the project's `.xe/runs` by default), laid out
    as `RunFiles` says."""

    def __init__(self, state_dir: Path) -> None:
        super().__init__(state_dir)
        self.guard = Guard(self.state_dir)
        #: The run being saved, whose big results `_spill` keeps beside it.
        self._saving = ""
        self._journal = snapshot_codec.JournalCache(spill=self._spill)
        #: Called with the state after each save: views of the run kept elsewhere (a
        #: dialect's own session files). The snapshot is written first and stays the truth.
        self.observers: list = []

    # -- paths

    def run_key(self) -> RunKey:
        """The key that seals this store's snapshots; RunAbort when it is there but unusable."""
        try:
            return self.guard.key()
        except RunKeyError as error:
            raise RunAbort(EXIT_STATE, error.message, help=error.fix) from None

    # -- creating and saving

    def _spill(self, data: bytes) -> str:
        return self.guard.results.put(self._saving, data)

    def _sealed(self, state: RunState, seq: int, cache: snapshot_codec.JournalCache | None = None) -> bytes:
        self.run_key()
        self._saving = state.run_id
        return self.guard.seal(state, seq, cache or snapshot_codec.JournalCache(spill=self._spill))

    def create(self, state: RunState) -> RunState:
        """Give `state` the first free id for its start time and playbook, and save it.

        The id is claimed by hard-linking the complete first snapshot to its final name,
        which fails if the name exists: no two runs share an id, however close they start.
        """
        prefix = f"{parse_time(state.started_at).astimezone():%Y%m%d-%H%M%S}-{slug(state.playbook.name)}"
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        taken = {int(m["index"]) for m in map(_indexed.fullmatch, self._names_like(prefix)) if m}
        index = 1
        while True:
            while index in taken:
                index += 1
            taken.add(index)
            state.run_id = f"{prefix}-{index:03d}"
            state.updated_at = utc_now()
            target = self.path_of(state.run_id)
            # Past any number the ledger still holds for this id (a pruned run's, from the
            # same second): a new run must never look like an older copy of itself.
            seq = self.guard.next_seq(state.run_id)
            data = self._sealed(state, seq)
            try:
                created = durable.create(target, data, mode=_PRIVATE)
            except OSError as error:
                raise state_abort(
                    error,
                    path=_display(self.state_dir),
                    snapshot_bytes=len(data),
                    retry="start the run again (nothing of it ran)",
                ) from None
            if not created:
                continue  # another run took this index a moment ago
            # A run with this id may have been archived between our listing and our
            # claim (a run of under a second): its live file was gone when we linked.
            if self.archived_path(state.run_id).exists():
                target.unlink()
                continue
            self.guard.recorded(state.run_id, seq, keep=self._exists)
            return state

    def _names_like(self, prefix: str) -> list[str]:
        """File names of live and archived runs whose id starts with `prefix`, without `.json`."""
        names = []
        for directory in (self.state_dir, self.archived_path(f"{prefix}-000").parent):
            try:
                names += [
                    n[4:-5] for n in os.listdir(directory) if n.startswith(f"run-{prefix}-") and n.endswith(".json")
                ]
            except FileNotFoundError:
                pass
        return [n[len(prefix) + 1 :] for n in names]

    def save(self, state: RunState, *, survives_power_cut: bool = True) -> None:
        """Write the snapshot atomically (see the module docstring); sets `updated_at`.
        `survives_power_cut=False`: a save that a power cut may undo (the module docstring)."""
        state.updated_at = utc_now()
        target = self.path_of(state.run_id)
        seq = self.guard.next_seq(state.run_id)
        data = self._sealed(state, seq, self._journal)
        backup = target.with_name(target.name + ".bak")
        lasting = survives_power_cut
        try:
            try:
                durable.replace(target, data, mode=_PRIVATE, backup=backup, sync_rename=lasting)
            except FileNotFoundError:
                # The state directory was removed under a running run: recreate it, once.
                self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                durable.replace(target, data, mode=_PRIVATE, backup=backup, sync_rename=lasting)
        except OSError as error:
            # The file on disk is still the previous, whole snapshot: the run stops here and
            # resumes from it once the cause (a full disk, a read-only mount...) is fixed.
            kept = _display(target) if target.exists() else None
            raise state_abort(
                error, path=_display(target), snapshot_bytes=len(data), kept=kept, run_id=state.run_id
            ) from None
        self.guard.recorded(state.run_id, seq, keep=self._exists, ledger=lasting)
        for observe in self.observers:
            observe(state)

    def _exists(self, run_id: str) -> bool:
        try:
            return self._find(run_id) is not None
        except ValueError:
            return False

    # -- loading

    def load(self, run_id_or_path: str, *, results: bool = True) -> RunState:
        """A live or archived run by id (or a snapshot file by path), to act on.

        RunAbort(EXIT_STATE) on any problem, a snapshot that does not verify included
        (integrity/guard.py). `results=False` leaves results kept beside the snapshot unread.
        """
        return self._load(run_id_or_path, trust=False, results=results)[0]

    def load_trusting(self, run_id_or_path: str) -> tuple[RunState, list[str]]:
        """`load`, but a snapshot that does not verify is accepted: what did not verify is
        returned and added to its `trustedEdits` (kept by its next save, which seals it anew)."""
        return self._load(run_id_or_path, trust=True, results=True)

    def _load(self, run_id_or_path: str, *, trust: bool, results: bool) -> tuple[RunState, list[str]]:
        path = self._path_to_load(run_id_or_path)
        self.run_key()
        sealed, problems = self._read_checked(path, results)
        state = sealed.state
        if problems and not trust:
            raise RunAbort(
                EXIT_STATE,
                f"the run snapshot {_display(path)} cannot be trusted: {problems[0]}",
                details=tuple(problems[1:]),
                help=f"if the change was yours (a repair, a copy restored on purpose),"
                f" `catalyst resume {state.run_id} --trust-edited-state` "
                f"accepts it and records it in the run's audit trail;"
                f" otherwise start a new run with `catalyst run {state.playbook.name}`",
            )
        if problems:
            state.trusted_edits.append(TrustedEdit(by=current_user(), at=utc_now(), changes=problems))
        return state, problems

    def _read_checked(self, path: Path, results: bool) -> tuple[snapshot_codec.Sealed, list[str]]:
        """The snapshot in `path` and what in it does not verify. A save by another process
        that lands between reading the file and reading the ledger makes the copy read look
        put back: while the file is found changed, it is read and checked again."""
        sealed = self._read(path)
        problems = self.guard.check(sealed, with_results=results)
        for _ in range(_RACED_SAVES):
            if not problems:
                break
            try:
                again = self._read(path)
            except RunAbort:
                break  # archived or removed meanwhile: what was read is what there is to say
            if again.seal == sealed.seal:
                break  # the same file: its problems are its own
            sealed, problems = again, self.guard.check(again, with_results=results)
        return sealed, problems

    def inspect(self, run_id_or_path: str) -> tuple[RunState, list[str]]:
        """A run to show, not act on: its snapshot and what in it does not verify (not refused)."""
        path = self._path_to_load(run_id_or_path)
        self.run_key()
        sealed = self._read(path)
        return sealed.state, self.guard.check(sealed, with_results=False)

    def _read(self, path: Path) -> snapshot_codec.Sealed:
        try:
            return snapshot_codec.read_sealed(path)
        except FileNotFoundError:
            raise RunAbort(
                EXIT_INVALID,
                f"there is no run snapshot {_display(path)}",
                help="`catalyst runs list` shows the runs kept here",
            ) from None
        except snapshot_codec.Damaged as damage:
            raise self._abort(path, damage) from None

    def _path_to_load(self, run_id_or_path: str) -> Path:
        given = str(run_id_or_path)
        if "/" in given or os.sep in given:
            path: Path | None = Path(given)
        elif given.endswith(".bak"):
            path = self.state_dir / given
        else:
            run_id = given.removeprefix("run-").removesuffix(".json")
            try:
                path = self._find(run_id)
            except ValueError:
                path = None
            if path is None:
                raise RunAbort(
                    EXIT_INVALID,
                    f"there is no run {given!r} in {_display(self.state_dir)}",
                    help="`catalyst runs list` shows the runs kept here",
                )
        return path

    def _abort(self, path: Path, damage: snapshot_codec.Damaged) -> RunAbort:
        first, *rest = damage.problems
        named = snapshot_codec.RUN_FILE.fullmatch(path.name)
        # The id holds the playbook name too, for when the file no longer tells it.
        from_id = _id_name.fullmatch(named["id"]) if named else None
        name = damage.name or (from_id["name"] if from_id else "NAME")
        new_run = f"start a new run with `catalyst run {name}`"
        if damage.version is not None and damage.version > VERSION:
            help = f"a newer catalyst wrote it: resume it with that version, or {new_run}"
        else:
            help = f"{new_run}; the damaged file is kept for inspection"
            backup = path.with_name(path.name + ".bak") if not path.name.endswith(".bak") else None
            if backup is not None and named:
                try:
                    good = snapshot_codec.read(backup)
                except (FileNotFoundError, snapshot_codec.Damaged):
                    good = None
                if good is not None:
                    steps = f"{len(good.steps)} step{'' if len(good.steps) == 1 else 's'} recorded"
                    help = (
                        f"the last good copy is {_display(backup)} (saved {good.updated_at}, {steps}): "
                        f"copy it over {_display(path)} and resume with --trust-edited-state, or {new_run};"
                        " the damaged file is kept for inspection"
                    )
        text, at, where = first.rpartition(" @ ")
        sentence = f"is damaged at {where}: {text}" if at else first
        return RunAbort(
            EXIT_STATE, f"the run snapshot {_display(path)} {sentence}", help=help, details=tuple(map(_located, rest))
        )

    # -- finishing

    def archive(self, state: RunState) -> Path:
        """Save a finished run and move it to history; returns its new path."""
        if not state.finished:
            raise ValueError(f"run {state.run_id} is {state.status}; only finished runs are archived")
        self.save(state)
        self._journal.forget()
        live = self.path_of(state.run_id)
        target = self.archived_path(state.run_id)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        ignore = self.history_dir / ".gitignore"
        if not ignore.exists():
            durable.replace(ignore, b"# Finished catalyst runs: local records, kept out of git.\n*\n", mode=0o644)
        os.replace(live, target)  # atomic: the run is live or archived, never both nor neither
        durable.sync_directory(target.parent)
        durable.sync_directory(self.state_dir)
        live.with_name(live.name + ".bak").unlink(missing_ok=True)
        return target

    def reopen(self, state: RunState) -> None:
        """Move an archived run back among the live ones before resuming it (a failed run)."""
        archived = self.archived_path(state.run_id)
        if archived.exists():
            os.replace(archived, self.path_of(state.run_id))
            durable.sync_directory(self.state_dir)

    # -- listing, retention, audit

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

        run_id = path.name[4:-5]
        try:
            state = snapshot_codec.read(path)
        except FileNotFoundError:  # archived or pruned while we listed
            return RunSummary(run_id, None, "missing", None, None, path, archived, "the file went away while listing")
        except snapshot_codec.Damaged as damage:
            return RunSummary(
                run_id, damage.name, "corrupt", None, None, path, archived, "; ".join(map(_located, damage.problems))
            )
        return RunSummary(
            state.run_id, state.playbook.name, shown_status(state), state.started_at, state.updated_at, path, archived
        )

    def run_ids(self, include_history: bool = True) -> list[str]:
        """The ids of the runs kept here, newest first, read from file names only: cheap
        enough for shell completion, and a damaged snapshot still has its id."""
        files = self._live_files() + (self._archived_files() if include_history else [])
        return sorted({path.name[4:-5] for path in files}, reverse=True)

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
        if (keep_days is not None and keep_days < 0) or (keep_last is not None and keep_last < 0):
            raise ValueError("keep_days and keep_last cannot be negative")
        if keep_days is None and keep_last is None:
            return []
        now = now or datetime.now(timezone.utc)
        runs = sorted(self._archived_files(), key=lambda p: p.name, reverse=True)
        doomed = []
        for rank, path in enumerate(runs):
            if keep_last is not None and rank < keep_last:
                continue
            started = self._started(path)
            if started is None:
                continue  # a live run moved into history by hand
            if keep_days is not None and now - started <= timedelta(days=keep_days):
                continue
            doomed.append(path)
        if not dry_run:
            for path in doomed:
                path.unlink(missing_ok=True)
                self.guard.forget_run(path.name[4:-5])
                for directory in (path.parent, path.parent.parent, path.parent.parent.parent):
                    try:
                        directory.rmdir()  # only succeeds once a day, month or year is empty
                    except OSError:
                        break
        return doomed

    def _started(self, path: Path) -> datetime | None:
        """When an archived run started (its file time when unreadable); None for unfinished ones."""
        try:
            state = snapshot_codec.read(path)
        except (FileNotFoundError, snapshot_codec.Damaged):
            try:
                return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
            except FileNotFoundError:
                return None
        if not state.finished:
            return None
        return parse_time(state.started_at)

    def export(self, run_id: str) -> dict[str, Any]:
        """The audit view of a run: who ran what, approvals, failures, and the journal without results.

        A snapshot that does not verify is exported all the same (it is evidence), with
        what does not verify under `unverified`.
        """
        state, problems = self.inspect(run_id)
        data = snapshot_codec.converter().unstructure(state)
        audit: dict[str, Any] = {"format": "catalyst-audit", "version": VERSION}
        for key in (
            "runId",
            "playbook",
            "status",
            "mode",
            "startedAt",
            "endedAt",
            "owner",
            "permissions",
            "locks",
            "approvals",
            "failures",
            "cancel",
            "error",
            "trustedEdits",
        ):
            audit[key] = data[key]
        audit["unverified"] = problems
        audit["steps"] = [{k: v for k, v in record.items() if k != "result"} for record in data["steps"]]
        return audit


#: How many saves racing one load it reads past (each one re-read): more in a row is not a race.
_RACED_SAVES = 3

# Run ids' patterns, compiled when first needed (creating, listing, pruning runs), not by
# every process that imports the store.


_id_name = LazyPattern(r"\d{8}-\d{6}-(?P<name>.+)-\d{3,}")
_indexed = LazyPattern(r"(?P<index>\d{3,})")


def _located(problem: str) -> str:
    """`text @ $.path` as `$.path: text`, for lists of problems."""
    text, at, where = problem.rpartition(" @ ")
    return f"{where}: {text}" if at else problem


def _display(path: Path) -> str:
    """A path as short as is clear: relative to the working directory when under it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (OSError, ValueError):
        return str(path)
