"""The store that keeps runs on disk, crash-safe, and finds, lists and retires them.

A run saves after every step, so the store's promises are:

- **One append per save** (`journal/`). A save writes what changed since the save before as
  one record appended to the run's journal `run-{id}.journal` (O_APPEND, one fdatasync),
  MACed with the run key and chained to the save before: a save costs the same at step
  1,000 as at step 1, and a crash at any instant leaves every save before it whole (a
  record cut short by the crash is ignored). Saves from parallel branches are appended one
  at a time, under a lock. The save that only names a step in flight, before a step that
  no `ensures:` can recover, is appended without its sync and moves no anchor: a power cut
  may take it back to the save before, from which that step runs again all the same, and
  the next save's fdatasync covers it (it writes out all of the file's data).
- **A full snapshot at the points that matter** (`journal/writer.py`): when the run's
  status changes (it pauses, ends, resumes), when the journal grows past its bound, and
  when another process saved the run meanwhile, the whole snapshot `run-{id}.json` is
  written (a temporary file, synced, renamed over the old one, the directory synced; the
  one before kept as `run-{id}.json.bak`) and the journal then starts afresh. Reading a
  run (`journal/reading.py`) is the snapshot with the records after it folded in.
- **Friendly, unique ids** (`20261121-143012-create-feature-001`): local date and time of
  `startedAt`, playbook name, the first free 3-digit index. A run claims its id by
  hard-linking its first, complete snapshot to the final name (`durable.create`): the
  link fails when the name exists, so two runs started in the same second never share an
  id and the file is never seen empty.
- **Sealed, chained, anchored saves** (`integrity/`, `journal/`). Every save carries its
  number and an HMAC with the run key over its bytes and the MAC of the save before; the
  run's latest save is also kept outside the state directory (its anchor). A load that
  acts on a run refuses a snapshot or record edited by hand, sealed with another key, out
  of order, from another run, or older than the anchor (a copy put back), naming what is
  wrong. Results too big for a snapshot are kept beside it, named by hash.
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
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalyst_dsl.runtime.state import durable, snapshot_codec
from catalyst_dsl._internal import records
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.state.errors import damaged_abort, state_abort
from catalyst_dsl.runtime.state.integrity.guard import Guard
from catalyst_dsl.runtime.state.integrity.run_key import RunKey, RunKeyError
from catalyst_dsl.runtime.state.journal import files as journal_files
from catalyst_dsl.runtime.state.journal.reading import RunRead, read_run
from catalyst_dsl.runtime.state.journal.reserve import Reserve
from catalyst_dsl.runtime.state.journal.writer import RunJournal, full
from catalyst_dsl.runtime.state.layout import shown, slug
from catalyst_dsl.runtime.state.listing import RunListing
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
)

if TYPE_CHECKING:
    from catalyst_dsl.runtime.state.journal.anchor import Anchors
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


class StateStore(RunListing):
    """Runs under `state_dir` (the project's `.xe/runs` by default), laid out as `RunFiles`
    says. `anchors`: where runs' anchors are kept (journal/anchor.py), the user's state
    directory unless told otherwise."""

    def __init__(self, state_dir: Path, anchors: Anchors | None = None) -> None:
        super().__init__(state_dir)
        self.guard = Guard(self.state_dir, anchors)
        #: The runs this process saves, by id: where each one's saves go on from.
        self._runs: dict[str, RunJournal] = {}
        #: One save at a time: parallel branches save from threads of their own.
        self._saving = threading.Lock()
        self._reserve = Reserve(self.state_dir)
        #: Set when a save could only be made with the reserve: the run stops at its next save.
        self._out_of_room: RunAbort | None = None
        #: Called with the state after each save: views of the run kept elsewhere (a
        #: dialect's own session files). The run's own files are written first and stay the truth.
        self.observers: list = []

    # -- paths

    def run_key(self) -> RunKey:
        """The key that seals this store's runs; RunAbort when it is there but unusable."""
        try:
            return self.guard.key()
        except RunKeyError as error:
            raise RunAbort(EXIT_STATE, error.message, help=error.fix) from None

    def journal_of(self, run_id: str) -> Path:
        """The journal of the live run `run_id` (it exists between a run's compactions)."""
        journal = journal_files.journal_of(self.path_of(run_id))
        assert journal is not None
        return journal

    # -- creating and saving

    def _writer(self, run_id: str) -> RunJournal:
        writer = self._runs.get(run_id)
        if writer is None:
            spill = lambda data: self.guard.results.put(run_id, data)  # noqa: E731
            writer = self._runs[run_id] = RunJournal(self.path_of(run_id), run_id, self.guard, spill)
        return writer

    def create(self, state: RunState) -> RunState:
        """Give `state` the first free id for its start time and playbook, and save it.

        The id is claimed by hard-linking the complete first snapshot to its final name,
        which fails if the name exists: no two runs share an id, however close they start.
        """
        prefix = f"{parse_time(state.started_at).astimezone():%Y%m%d-%H%M%S}-{slug(state.playbook.name)}"
        self.run_key()
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._reserve.ensure()
        except OSError as error:
            raise state_abort(
                error, path=_display(self.state_dir), retry="start the run again (nothing of it ran)"
            ) from None
        taken = {int(m["index"]) for m in map(_indexed.fullmatch, self._names_like(prefix)) if m}
        index = 1
        while True:
            while index in taken:
                index += 1
            taken.add(index)
            state.run_id = f"{prefix}-{index:03d}"
            state.updated_at = utc_now()
            target = self.path_of(state.run_id)
            # Past any number its anchor (or the old ledger) holds for this id (a pruned
            # run's, from the same second): a new run must never look like an older copy of itself.
            seq = self.guard.latest_seen(state.run_id) + 1
            writer = RunJournal(
                target, state.run_id, self.guard, lambda data, run_id=state.run_id: self.guard.results.put(run_id, data)
            )
            data, mac = self.guard.seal(state, seq, "", writer.cache)
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
            # A journal left by a run of this id whose snapshot was removed is not this run's.
            self.journal_of(state.run_id).unlink(missing_ok=True)
            writer.adopt(state, seq, mac, 0, journal_files.identity_of(target))
            with self._saving:
                self._runs[state.run_id] = writer
            self.guard.saved(state.run_id, seq, mac)
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
        """Save `state` durably (see the module docstring); sets `updated_at`.
        `survives_power_cut=False`: a save that a power cut may take back (the module docstring)."""
        state.updated_at = utc_now()
        self._save(state, lasting=survives_power_cut)
        for observe in self.observers:
            observe(state)

    def changed(self, state: RunState, item: Any) -> None:
        """`item`, an approval of `state` saved before, was changed in place: its next save
        records it anew (journal/delta.py says why this is the one such change)."""
        with self._saving:
            writer = self._runs.get(state.run_id)
            if writer is not None and writer.tracker is not None:
                writer.tracker.touched(item)

    def _save(self, state: RunState, *, compact: bool = False, lasting: bool = True) -> None:
        self.run_key()
        with self._saving:
            if self._out_of_room is not None:
                raise self._out_of_room
            writer = self._writer(state.run_id)
            try:
                seq, mac, _ = writer.save(state, compact=compact, lasting=lasting)
            except OSError as error:
                # The files on disk still hold every save before this one: the run stops
                # here and resumes from them once the cause (a full disk, a read-only
                # mount...) is fixed. A full disk first gives back the room kept in reserve
                # (journal/reserve.py): then this save is made, shown, and the next one stops.
                if not (full(error) and self._reserve.release()):
                    raise self._save_abort(writer, state, error) from None
                try:
                    seq, mac, _ = writer.save(state, compact=compact)
                except OSError as again:
                    raise self._save_abort(writer, state, again) from None
                stop = self._save_abort(writer, state, error)
                self._out_of_room = RunAbort(
                    stop.exit_code,
                    stop.message,
                    help=stop.help,
                    details=("the run's last save used the room kept for it (journal-reserve): it stopped there",),
                )
            if lasting:  # the anchor never goes ahead of what a power cut leaves (anchor.py)
                self.guard.saved(state.run_id, seq, mac)

    def _save_abort(self, writer: RunJournal, state: RunState, error: OSError) -> RunAbort:
        return state_abort(
            error,
            path=_display(writer.target),
            snapshot_bytes=writer.target_bytes,
            written="the snapshot" if writer.target == writer.snapshot else "the save",
            kept=self._kept(state.run_id),
            run_id=state.run_id,
        )

    def _kept(self, run_id: str) -> str | None:
        """Where the run's saves before a failed one are, in words; None when nowhere."""
        snapshot, journal = self.path_of(run_id), self.journal_of(run_id)
        if not snapshot.exists():
            return None
        return f"{_display(snapshot)} and {_display(journal)}" if journal.exists() else _display(snapshot)

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

    def load_to_end(self, run_id_or_path: str) -> tuple[RunState, list[str]]:
        """A run to end without running anything of it (`catalyst cancel`): a snapshot that
        does not verify is accepted, and what did not verify is returned for the caller to
        record (a cancel keeps it in its own record, not in `trustedEdits`, as nothing of
        the run was trusted to go on). Never for a command that runs, approves or resumes."""
        return self._load(run_id_or_path, trust=True, results=False, recorded=False)

    def _load(
        self, run_id_or_path: str, *, trust: bool, results: bool, recorded: bool = True
    ) -> tuple[RunState, list[str]]:
        path = self._path_to_load(run_id_or_path)
        self.run_key()
        read, problems = self._read_checked(path, results)
        state = read.state
        if problems and not trust:
            raise RunAbort(
                EXIT_STATE,
                f"{self._named(path)} cannot be trusted: {problems[0]}",
                details=tuple(problems[1:]),
                help=f"if the change was yours (a repair, a copy restored on purpose),"
                f" `catalyst resume {state.run_id} --trust-edited-state` "
                f"accepts it and records it in the run's audit trail;"
                f" otherwise `catalyst cancel {state.run_id} --reason …` ends it (running nothing)"
                f" and `catalyst run {state.playbook.name}` starts a new run",
            )
        self._adopt(read, bool(problems))
        if problems and recorded:
            state.trusted_edits.append(TrustedEdit(by=current_user(), at=utc_now(), changes=problems))
        return state, problems

    def claim(self, run_id: str) -> None:
        """Take the run before resuming it. Nothing to take here: a run kept in files is
        guarded by its owner's process id (snapshot.ensure_resumable) and the journal's lock.
        The shared store takes a lease (shared/lease.py)."""

    def bring_back(self, state: RunState, gateway) -> list[str]:
        """Put back the files the run wrote before it paused: nothing to do here, where the
        run resumes in the checkout that wrote them. The shared store carries them (shared/carried.py)."""
        return []

    def claim_next(self) -> str | None:
        """For `catalyst worker`: a run kept in files is seen by this checkout only, and
        resumed by its own command; taking runs needs the shared store."""
        raise RunAbort(
            EXIT_INVALID,
            "catalyst worker takes runs from the shared store, and runs here are kept in files",
            help="set CATALYST_STATE_URL to the PostgreSQL database the team's runs are kept in (docs/teams.md)",
        )

    def ensure_same_commit(self, run_id: str, doing: str) -> None:
        """Refuse to act on a run started from another commit of the repository (RunAbort):
        nothing to check here, where a run's files live in the checkout that started it.
        The shared store (shared/store.py), which every checkout sees, checks it."""

    def _named(self, path: Path) -> str:
        """The run kept in `path`, in messages."""
        return f"the run snapshot {_display(path)}"

    def _adopt(self, read: RunRead, trusted: bool) -> None:
        """The run's saves by this process go on from what was just read. A run trusted
        although it did not verify is sealed anew by its next save, numbered past every
        copy seen (the one refused included)."""
        run_id = read.state.run_id
        if read.path not in (self.path_of(run_id), self.archived_path(run_id)):
            return  # a copy elsewhere, or a backup: shown, never saved over
        try:
            self._reserve.ensure()  # a disk too full to go on says so before anything runs
        except OSError as error:
            raise state_abort(error, path=_display(self._reserve.path), run_id=run_id) from None
        seq = read.chain.head_seq
        if trusted:
            seq = max(seq, self.guard.latest_seen(run_id))
        with self._saving:
            self._writer(run_id).adopt(
                read.state, seq, read.chain.head_mac, read.journal_size, read.snapshot, compact=trusted
            )

    def _read_checked(self, path: Path, results: bool) -> tuple[RunRead, list[str]]:
        """The run in `path` and what in it does not verify. A save by another process that
        lands between reading the snapshot, its journal and its anchor makes the copy read
        look put back or cut: while the files are found changed, they are read and checked again."""
        read = self._read(path)
        problems = self.guard.check(read, with_results=results)
        for _ in range(_RACED_SAVES):
            if not problems:
                break
            try:
                again = self._read(path)
            except RunAbort:
                break  # archived or removed meanwhile: what was read is what there is to say
            if (again.seal, again.chain.head_mac, again.journal_size) == (
                read.seal,
                read.chain.head_mac,
                read.journal_size,
            ):
                break  # the same files: their problems are their own
            read, problems = again, self.guard.check(again, with_results=results)
        return read, problems

    def inspect(self, run_id_or_path: str) -> tuple[RunState, list[str]]:
        """A run to show, not act on: its state and what in it does not verify (not refused)."""
        path = self._path_to_load(run_id_or_path)
        self.run_key()
        read = self._read(path)
        return read.state, self.guard.check(read, with_results=False)

    def _read(self, path: Path) -> RunRead:
        """The run whose snapshot is `path`, its journal folded in and checked with the run
        key, and its anchor, read first (reading.RunRead.anchor says why)."""
        journal = journal_files.journal_of(path)
        named = snapshot_codec.RUN_FILE.fullmatch(path.name)
        anchor = self.guard.anchors.read(named["id"]) if named else None
        try:
            read = read_run(path, self.guard.key(), _display(journal) if journal else None, anchor)
            if not named:  # a copy under another name: its id is known once it is read
                read = records.replace(read, anchor=self.guard.anchors.read(read.state.run_id))
            return read
        except FileNotFoundError:
            raise RunAbort(
                EXIT_INVALID,
                f"there is no run snapshot {_display(path)}",
                help="`catalyst runs list` shows the runs kept here",
            ) from None
        except snapshot_codec.Damaged as damage:
            raise damaged_abort(path, damage, _display) from None

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

    # -- finishing

    def archive(self, state: RunState) -> Path:
        """Save a finished run and move it to history; returns its new path."""
        if not state.finished:
            raise ValueError(f"run {state.run_id} is {state.status}; only finished runs are archived")
        # A full snapshot, its journal removed: history holds one file per run.
        state.updated_at = utc_now()
        self._save(state, compact=True)
        for observe in self.observers:
            observe(state)
        with self._saving:
            writer = self._runs.pop(state.run_id, None)
            if writer is not None:
                writer.close()
            self.guard.anchors.close(state.run_id)
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

    def discard(self, state: RunState) -> None:
        """Remove a run that never began (a lock refused it before its first step): nothing
        of it ran, so nothing of it is kept, neither a failed run in the listing nor its anchor."""
        with self._saving:
            writer = self._runs.pop(state.run_id, None)
            if writer is not None:
                writer.close()
        live = self.path_of(state.run_id)
        for path in (live, live.with_name(live.name + ".bak"), self.journal_of(state.run_id)):
            path.unlink(missing_ok=True)
        durable.sync_directory(self.state_dir)
        self._forget(state.run_id)

    def _forget(self, run_id: str) -> None:
        """A pruned run's results and anchor go with it (listing.RunListing.prune)."""
        self.guard.forget_run(run_id)

    def reopen(self, state: RunState) -> None:
        """Move an archived run back among the live ones before resuming it (a failed run)."""
        archived = self.archived_path(state.run_id)
        if archived.exists():
            os.replace(archived, self.path_of(state.run_id))
            durable.sync_directory(self.state_dir)

    # -- audit

    def export(self, run_id: str, *, results: bool = False) -> dict[str, Any]:
        """The audit view of a run (run_summary.audit_view): a run that does not verify is
        exported all the same (it is evidence), with what does not verify under `unverified`."""
        from catalyst_dsl.runtime.state.run_summary import audit_view

        return audit_view(*self.inspect(run_id), results=results)


#: How many saves racing one load it reads past (each one re-read): more in a row is not a race.
_RACED_SAVES = 3

# Run ids' patterns, compiled when first needed (creating, listing, pruning runs), not by
# every process that imports the store.


_indexed = LazyPattern(r"(?P<index>\d{3,})")


_display = shown
