"""`SharedStore`: the file store's interface (store.StateStore) over the state database.

What a run holds and how it is sealed, chained and checked is the file store's, and so
is the code: loading, trusting an edited run, saving through the journal's change tracker,
refusing what does not verify. What differs is kept here: where the bytes go (a run's row
holds its snapshot and its head; `catalyst_journal` its records since, writer.py), how a
run claims its id (an insert that fails when the id is taken), and the listing, archiving
and pruning, which are queries.

A run's row also records the commit it was started from, so that a checkout of another
commit does not resume it by mistake (`commit_of`), and its fencing token (`fence`,
writer.py). Locks between runs are rows too (shared/locks.py).
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.machine import parse_time, utc_now
from catalyst_dsl.runtime.state import snapshot_codec
from catalyst_dsl.runtime.state.errors import located
from catalyst_dsl.runtime.state.integrity.guard import Guard
from catalyst_dsl.runtime.state.journal.anchor import Anchor
from catalyst_dsl.runtime.state.journal.reading import RunRead, read_bytes
from catalyst_dsl.runtime.state.listing import retention_rules, retired
from catalyst_dsl.runtime.state.layout import run_id_of, slug
from catalyst_dsl.runtime.state.shared.carried import Carrier
from catalyst_dsl.runtime.state.shared.database import Database
from catalyst_dsl.runtime.state.shared.keeping import SharedAnchors, SharedResults, shared_run_key
from catalyst_dsl.runtime.state.shared.lease import HOLDER, LEASE, Leases
from catalyst_dsl.runtime.state.shared.locks import SharedLocks
from catalyst_dsl.runtime.state.shared.writer import SharedRunJournal
from catalyst_dsl.runtime.state.snapshot import FINISHED, RunState, shown_status
from catalyst_dsl.runtime.state.store import StateStore

if TYPE_CHECKING:
    from catalyst_dsl.runtime.state.run_summary import RunSummary

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")

#: A run read whole: its row and its journal's records since the snapshot, in one query.
_READ = """
SELECT r.snapshot, r.head_seq, r.head_mac, r.fence, r.archived,
       coalesce((SELECT string_agg(j.line, ''::bytea ORDER BY j.seq) FROM catalyst_journal j
                 WHERE j.repository = r.repository AND j.run_id = r.run_id AND j.seq > r.snapshot_seq), ''::bytea)
FROM catalyst_runs r WHERE r.repository = %s AND r.run_id = %s
"""


class _NoReserve:
    """The database keeps no room in reserve on this machine's disk: it is not written here."""

    def ensure(self) -> None:
        pass

    def release(self) -> bool:
        return False


class SharedStore(StateStore):
    """Runs of `repository` in the database at `url`; `state_dir` holds what stays on this
    machine (the check cache's neighbours, a run's scratch space)."""

    def __init__(
        self,
        state_dir: Path,
        url: str,
        repository: str,
        commit: str | None = None,
        lease_seconds: float = LEASE,
        root: Path | None = None,
    ) -> None:
        super().__init__(state_dir)
        self.database = Database(url)
        self.repository = repository
        #: The commit this checkout is at, recorded on the runs it starts.
        self.commit = commit
        self.guard = Guard(
            self.state_dir,
            SharedAnchors(self.database, repository),
            SharedResults(self.database, repository),
            lambda: shared_run_key(self.database, repository, self.state_dir),
        )
        self._reserve = _NoReserve()
        self.where = f"the state database {self.database.shown}"
        self.leases = Leases(self.database, repository, lease_seconds, self._writers_lost)
        #: The files a run wrote, kept at its pauses (carried.py); None: not carried (no project root).
        self.carrier = Carrier(self.database, repository, root, self.state_dir) if root is not None else None

    @functools.cached_property
    def locks(self) -> SharedLocks:
        """The locks between the repository's runs, in the database (shared/locks.py)."""
        return SharedLocks(self.database, self.repository)

    def _writers_lost(self, run_id: str) -> None:
        with self._saving:
            writer = self._runs.get(run_id)
            if writer is not None:
                writer.lost = True

    # -- creating and saving

    def _writer(self, run_id: str) -> SharedRunJournal:
        writer = self._runs.get(run_id)
        if writer is None:
            writer = self._runs[run_id] = self._new_writer(run_id)
        return writer

    def _new_writer(self, run_id: str) -> SharedRunJournal:
        spill = lambda data: self.guard.results.put(run_id, data)  # noqa: E731
        return SharedRunJournal(self.database, self.repository, run_id, self.guard, spill)

    def create(self, state: RunState) -> RunState:
        """Give `state` the first free id for its start time and playbook, and save it: the
        insert fails when another process took the id a moment ago, and the next is tried."""
        prefix = f"{parse_time(state.started_at).astimezone():%Y%m%d-%H%M%S}-{slug(state.playbook.name)}"
        self.run_key()
        taken = {
            row[0]
            for row in self.database.execute(
                "finding a free run id",
                "SELECT run_id FROM catalyst_runs WHERE repository = %s AND starts_with(run_id, %s)",
                (self.repository, prefix + "-"),
            )
        }
        index = 1
        while True:
            run_id = f"{prefix}-{index:03d}"
            index += 1
            if run_id in taken:
                continue
            state.run_id = run_id
            state.updated_at = utc_now()
            writer = self._new_writer(run_id)
            data, mac = self.guard.seal(state, 1, "", writer.cache)
            created = self.database.count(
                "starting the run",
                "INSERT INTO catalyst_runs (repository, run_id, playbook, status, started_at, updated_at, commit,"
                " snapshot, snapshot_seq, head_seq, head_mac, fence, lease_owner, lease_until)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1, 1, %s, 1, %s, now() + make_interval(secs => %s))"
                " ON CONFLICT DO NOTHING",
                (
                    self.repository,
                    run_id,
                    state.playbook.name,
                    state.status,
                    state.started_at,
                    state.updated_at,
                    self.commit,
                    data,
                    mac,
                    HOLDER,
                    self.leases.seconds,
                ),
            )
            if created != 1:
                continue
            writer.adopt(state, 1, mac, 0, len(data), 1)
            with self._saving:
                self._runs[run_id] = writer
            self.leases.hold(run_id, 1)
            return state

    # -- loading

    def _path_to_load(self, run_id_or_path: str) -> Path:
        given = str(run_id_or_path).removeprefix("run-").removesuffix(".json")
        if not _RUN_ID.fullmatch(given):
            raise RunAbort(
                EXIT_INVALID,
                f"{run_id_or_path!r} is not a run id: runs kept in {self.where} are named by id",
                help="`catalyst runs list` shows them",
            )
        return self.path_of(given)

    def _named(self, path: Path) -> str:
        return f"run {run_id_of(path)} in {self.where}"

    def _read(self, path: Path) -> RunRead:
        run_id = run_id_of(path)
        rows = self.database.execute("reading the run", _READ, (self.repository, run_id))
        if not rows:
            raise RunAbort(
                EXIT_INVALID,
                f"there is no run {run_id!r} of this repository ({self.repository}) in {self.where}",
                help="`catalyst runs list` shows the runs kept there",
            )
        snapshot, head_seq, head_mac, _fence, _archived, journal = rows[0]
        try:
            return read_bytes(
                path,
                bytes(snapshot),
                bytes(journal),
                self.guard.key(),
                f"its journal in {self.where}",
                Anchor(head_seq, head_mac),
            )
        except snapshot_codec.Damaged as damage:
            raise RunAbort(
                EXIT_STATE,
                f"run {run_id} in {self.where} is damaged: {located(damage.problems[0])}",
                details=tuple(map(located, damage.problems[1:])),
                help=f"start a new run with `catalyst run {damage.name or 'PLAYBOOK'}`",
            ) from None

    def _adopt(self, read: RunRead, trusted: bool) -> None:
        """The run's saves by this process go on from what was just read (its head and fence)."""
        run_id = read.state.run_id
        rows = self.database.execute(
            "reading the run's latest save",
            "SELECT fence, octet_length(snapshot) FROM catalyst_runs WHERE repository = %s AND run_id = %s",
            (self.repository, run_id),
        )
        if not rows:
            return
        fence, snapshot_size = rows[0]
        fence = self.leases.fence_of(run_id, fence)
        with self._saving:
            self._writer(run_id).adopt(
                read.state,
                read.chain.head_seq,
                read.chain.head_mac,
                read.journal_size,
                snapshot_size,
                fence,
                compact=trusted,
            )

    def claim(self, run_id: str) -> None:
        """Take the run's lease before resuming it (RunAbort when another live process holds
        it); its saves then name the new fencing token, and a heartbeat keeps the lease."""
        fence = self.leases.claim(run_id)
        with self._saving:
            writer = self._runs.get(run_id)
            if writer is not None:
                writer.fence, writer.lost = fence, False

    def claim_next(self) -> str | None:
        """For `catalyst worker`: take the lease of one runnable run of this repository at this
        checkout's commit (the module docstring of lease.py says which); its id, or None."""
        return self.leases.claim_next(self.commit)

    def _save(self, state: RunState, *, compact: bool = False, lasting: bool = True) -> None:
        if state.status == "paused" and self.carrier is not None and self.leases.holds(state.run_id):
            # The process that ran it, pausing it (not an approval saved from elsewhere, whose
            # checkout has none of its files); before the save: a worker may take the run
            # as soon as that lands.
            self.carrier.carry(state.run_id, state.permissions.get("allowedWritePaths"), self.guard.key())
        if state.status != "running":
            self.leases.let_go(state.run_id)  # the save gives the lease up (writer.py)
        super()._save(state, compact=compact, lasting=lasting)

    def bring_back(self, state: RunState, gateway) -> list[str]:
        """Put back the files the run wrote before its pause (carried.py), through `gateway`."""
        if self.carrier is None:
            return []
        return self.carrier.bring_back(state.run_id, self.guard.key(), gateway)

    def commit_of(self, run_id: str) -> str | None:
        """The commit the run was started from, when it was recorded."""
        rows = self.database.execute(
            "reading the run's commit",
            "SELECT commit FROM catalyst_runs WHERE repository = %s AND run_id = %s",
            (self.repository, run_id),
        )
        return rows[0][0] if rows else None

    def ensure_same_commit(self, run_id: str, doing: str) -> None:
        """A run is resumed or approved only from a checkout of the commit it started from:
        its playbook, and the steps it has run, are that commit's. A run or a checkout with
        no commit (not a git repository) is not checked."""
        started = self.commit_of(run_id)
        if started is None or self.commit is None or started == self.commit:
            return
        raise RunAbort(
            EXIT_STATE,
            f"run {run_id} was started from commit {started[:12]}, and this checkout is at"
            f" {self.commit[:12]}: catalyst will not {doing} it here",
            help=f"{doing} it from a checkout of {started[:12]} (`git checkout {started[:12]}`),"
            f" or start a new run at this commit",
        )

    # -- finishing

    def archive(self, state: RunState) -> Path:
        """Save a finished run whole and mark it archived (history keeps its one row)."""
        if not state.finished:
            raise ValueError(f"run {state.run_id} is {state.status}; only finished runs are archived")
        state.updated_at = utc_now()
        self._save(state, compact=True)
        for observe in self.observers:
            observe(state)
        with self._saving:
            self._runs.pop(state.run_id, None)
        self._mark(state.run_id, archived=True)
        return self.path_of(state.run_id)

    def discard(self, state: RunState) -> None:
        """The file store's (store.StateStore.discard): the run's row goes, and its journal with it."""
        with self._saving:
            self._runs.pop(state.run_id, None)
        self.leases.let_go(state.run_id)
        self.database.execute(
            "removing the run that never began",
            "DELETE FROM catalyst_runs WHERE repository = %s AND run_id = %s",
            (self.repository, state.run_id),
        )
        self.guard.forget_run(state.run_id)

    def reopen(self, state: RunState) -> None:
        self._mark(state.run_id, archived=False)

    def _mark(self, run_id: str, *, archived: bool) -> None:
        self.database.execute(
            "moving the run to history" if archived else "moving the run out of history",
            "UPDATE catalyst_runs SET archived = %s WHERE repository = %s AND run_id = %s",
            (archived, self.repository, run_id),
        )

    # -- listing, retention

    def peek_status(self, run_id: str) -> str | None:
        try:
            rows = self.database.execute(
                "reading the run's status",
                "SELECT status FROM catalyst_runs WHERE repository = %s AND run_id = %s",
                (self.repository, run_id),
            )
        except RunAbort:
            return None
        return rows[0][0] if rows else None

    def list(self, include_history: bool = True) -> list[RunSummary]:
        """Every run of the repository, newest first, each read whole (a listing shows the
        status its journal says); one that cannot be read is listed as "corrupt"."""
        from catalyst_dsl.runtime.state.run_summary import RunSummary

        rows = self.database.execute(
            "listing runs",
            "SELECT run_id, archived FROM catalyst_runs WHERE repository = %s AND (%s OR NOT archived)"
            " ORDER BY run_id DESC",
            (self.repository, include_history),
        )
        summaries = []
        for run_id, archived in rows:
            path = self.path_of(run_id)
            try:
                found = self.database.execute("reading the run", _READ, (self.repository, run_id))
                if not found:
                    continue  # pruned while we listed
                snapshot, *_, journal = found[0]
                state = read_bytes(path, bytes(snapshot), bytes(journal), None, "").state
            except snapshot_codec.Damaged as damage:
                summaries.append(
                    RunSummary(
                        run_id,
                        damage.name,
                        "corrupt",
                        None,
                        None,
                        None,
                        archived,
                        "; ".join(map(located, damage.problems)),
                        self.database.shown,
                    )
                )
                continue
            summaries.append(
                RunSummary(
                    state.run_id,
                    state.playbook.name,
                    shown_status(state),
                    state.started_at,
                    state.updated_at,
                    None,
                    archived,
                    store=self.database.shown,
                )
            )
        return summaries

    def run_ids(self, include_history: bool = True) -> list[str]:
        rows = self.database.execute(
            "listing runs",
            "SELECT run_id FROM catalyst_runs WHERE repository = %s AND (%s OR NOT archived) ORDER BY run_id DESC",
            (self.repository, include_history),
        )
        return [row[0] for row in rows]

    def prune(
        self, *, keep_days: int | None, keep_last: int | None, dry_run: bool = False, now: datetime | None = None
    ) -> list[Path]:
        """The file store's rules (store.StateStore.prune) over archived runs' rows."""
        if not retention_rules(keep_days, keep_last):
            return []
        rows = self.database.execute(
            "listing runs to prune",
            "SELECT run_id, started_at, status FROM catalyst_runs WHERE repository = %s AND archived"
            " ORDER BY run_id DESC",
            (self.repository,),
        )
        doomed = retired(((run_id, _started(status, at)) for run_id, at, status in rows), keep_days, keep_last, now)
        if not dry_run:
            for run_id in doomed:
                self.database.execute(
                    "pruning a run",
                    "DELETE FROM catalyst_runs WHERE repository = %s AND run_id = %s AND archived",
                    (self.repository, run_id),
                )
                self.guard.forget_run(run_id)
                if self.carrier is not None:
                    self.carrier.forget(run_id)
        return [self.path_of(run_id) for run_id in doomed]


def _started(status: str, started_at: str | None) -> datetime | None:
    """When an archived run started; None (never pruned) for one not finished or unreadable."""
    if status not in FINISHED:
        return None
    try:
        return parse_time(started_at)
    except (TypeError, ValueError):
        return None
