"""Per-resource locks between runs: files in `.xe/runs/locks/`, one per resource.

A resource is `kind:value`: `path:<glob>` (what a run writes) or `branch:<name>`; any
other kind is compared by equality. Two path locks conflict when some path matches both
globs (`paths.globs.overlap`); branches when their names are equal.

How a lock is taken, and why:

- **Exclusive creation.** The lock file is named by a sha256 of the canonical resource
  and holds `{resource, runId, pid, host, since}`. It is written complete to a temporary
  file and hard-linked to its name, which fails when the name exists (the same promise
  as an `O_CREAT|O_EXCL` create, without a moment where the file is empty; where hard
  links are unsupported it is an `O_EXCL` create). Of any number of runs racing for one
  resource, exactly one wins. The content is fsynced before it gets the name
  (`durable.create`): else a power cut can leave the name with no content, a damaged
  lock that blocks its resource until removed by hand. (A lost lock is harmless: its
  holder died in the same power cut.)
- **Overlap after creation.** Different globs have different files, so after creating
  its own files a run reads every other lock and backs off (releasing what it took) if
  one of another live run overlaps.
- **All or nothing.** On any conflict the locks taken by this call are released.
- **Stale locks are recovered.** A lock is stale when its run is finished (its snapshot
  says completed/failed/cancelled), or its run is not paused and its process is gone
  (same host, `os.kill(pid, 0)` says no such process). A paused run keeps its locks
  although its process has exited. Recovery renames the stale file to a unique
  tombstone, checks the tombstone holds what was judged stale (else puts it back), drops
  it, and then creates a new lock like anyone else.
- **One changer at a time.** Acquiring and releasing hold an OS lock (`flock`, or
  `msvcrt.locking` on Windows) on `locks/.guard` for the few microseconds they take. The
  files alone cannot make recovery safe: a recoverer that judged a lock stale can be
  paused before its rename while another recovers the lock and takes it fresh; the
  rename then moves a live lock away, and a third run can take the free name before it
  is put back, leaving two winners (a stress test of 8 threads did this within 300
  rounds). The kernel drops the guard with its process, so a crash never leaves it held.
  Serialized, overlapping runs also get exactly one winner instead of "at most one".
  Where the file system refuses OS locks, the file protocol above works alone: one
  winner per resource, at most one for overlapping ones, and the narrow window above.
  `conflicts` (for `--what-if`) takes no guard: it writes nothing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from catalyst_dsl._internal.records import field, record
from catalyst_dsl.runtime.state import durable
from catalyst_dsl.runtime.state.layout import RunFiles
from catalyst_dsl.runtime.errors import LockConflict  # noqa: F401 (raised here, and imported from here)
from catalyst_dsl.runtime.machine import pid_alive, this_host, utc_now

_BINARY = getattr(os, "O_BINARY", 0)

#: Lock files, like `.guard`, are 0644 less the umask.
_LOCK_MODE = 0o644

#: How long to wait for the guard. Holders keep it for microseconds; a wait this long
#: means a process stopped (Ctrl-Z, a debugger) in the middle of taking its locks.
GUARD_TIMEOUT = 10.0


@record
class LockInfo:
    """Who holds a resource, as its lock file says."""

    resource: str
    run_id: str
    pid: int
    host: str
    since: str
    file: Path = field(eq=False)

    def describe(self) -> str:
        return f"run {self.run_id} (process {self.pid} on {self.host}, since {self.since})"


class DamagedLock(LockConflict):
    """A lock file that cannot be read blocks its resource until someone removes it."""

    def __init__(self, resource: str, file: Path, problem: str) -> None:
        owner = LockInfo(resource=resource, run_id="unknown", pid=0, host="unknown", since="unknown", file=file)
        super().__init__(
            resource,
            owner,
            message=f"{resource} is locked by a damaged lock file {file} ({problem});"
            f" remove it if no run is using {resource}",
        )


class LockManager:
    """The locks under `locks_dir` (`state_dir/locks`).

    `run_status(run_id)` tells what a holder's snapshot says (None when unknown); by
    default it asks the run files of `locks_dir.parent`.
    """

    def __init__(self, locks_dir: Path, run_status: Callable[[str], str | None] | None = None) -> None:
        self.locks_dir = Path(locks_dir)
        if run_status is None:
            run_status = RunFiles(self.locks_dir.parent).peek_status
        self._run_status = run_status

    @functools.cached_property
    def _host(self) -> str:
        # Asked when a lock is taken or judged stale, not when the manager is made: a
        # what-if does neither (this_host imports socket).
        return this_host()

    def path_for(self, resource: str) -> Path:
        """The lock file of a resource (globs written differently but equal share one)."""
        digest = hashlib.sha256(canonical(resource).encode("utf-8")).hexdigest()
        return self.locks_dir / f"{digest}.lock"

    # -- taking and giving back

    def acquire(self, run_id: str, resources: Sequence[str]) -> None:
        """Lock every resource for `run_id`, or none: raises LockConflict naming the holder."""
        wanted = sorted(
            {canonical(r): r for r in resources}.items()
        )  # ValueError for a bad resource, before anything is taken
        if not wanted:
            return
        self.locks_dir.mkdir(parents=True, exist_ok=True)
        with self.guard():
            taken: list[Path] = []
            try:
                for key, resource in wanted:
                    if self._take(run_id, key, resource):
                        taken.append(self.path_for(key))
                # Other resources that overlap ours have other files: look at them now
                # that ours exist, so that of two racing runs (when the guard is not
                # available) the later one always sees the other.
                mine = {self.path_for(key) for key, _ in wanted}
                for holder, held in self._others(run_id, skip=mine):
                    for key, resource in wanted:
                        clash, example = conflict(key, held)
                        if clash:
                            if self._stale(holder):
                                self._remove_if(holder.file, holder)
                                break
                            raise LockConflict(resource, holder, example)
            except BaseException:
                for path in taken:
                    self._remove_if(path, None, run_id)
                raise

    def _take(self, run_id: str, key: str, resource: str) -> bool:
        """Create the lock file of one resource; False when `run_id` already held it."""
        path = self.path_for(key)
        body = json.dumps(
            {"resource": resource, "runId": run_id, "pid": os.getpid(), "host": self._host, "since": utc_now()}
        ).encode("utf-8")
        while True:
            if durable.create(path, body, mode=_LOCK_MODE):
                return True
            try:
                holder = self._read(path)
            except FileNotFoundError:
                continue  # released between our attempt and our look: try again
            except ValueError as exc:
                raise DamagedLock(resource, path, str(exc)) from None
            if holder.run_id == run_id:
                # Ours from before (a resumed run in a new process): name this process,
                # or a later reader would think the lock's process is gone.
                if holder.pid != os.getpid() or holder.host != self._host:
                    durable.replace(path, body, mode=_LOCK_MODE)
                return False
            if not self._stale(holder):
                raise LockConflict(resource, holder)
            self._remove_if(path, holder)

    def release(self, run_id: str, resources: Iterable[str] | None = None) -> None:
        """Give back `run_id`'s locks (all of them, or those of `resources`); others' are left alone."""
        if resources is None:
            paths = self._lock_files()
        else:
            paths = [self.path_for(canonical(r)) for r in resources]
        if not paths or not self.locks_dir.is_dir():
            return
        with self.guard():
            for path in paths:
                self._remove_if(path, None, run_id)

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Hold `locks/.guard` exclusively (see the module docstring); closing drops it. The
        session also holds it to change a run's snapshot it does not own (an approval, a
        cancel, the claim of a resume), so two such changes never interleave. Not re-entrant."""
        self.locks_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.locks_dir / ".guard", os.O_RDWR | os.O_CREAT | _BINARY, _LOCK_MODE)
        try:
            _hold(fd, self.locks_dir)
            yield
        finally:
            os.close(fd)

    # -- looking

    def held(self) -> list[LockInfo]:
        """Every readable lock, oldest first (stale ones included: they are still there)."""
        infos = []
        for path in self._lock_files():
            try:
                infos.append(self._read(path))
            except (FileNotFoundError, ValueError):
                continue
        return sorted(infos, key=lambda i: (i.since, i.resource))

    def conflicts(self, run_id: str, resources: Sequence[str]) -> list[LockInfo]:
        """The live locks of other runs that `resources` would collide with, taking nothing.

        For `--what-if`: stale locks are not reported (acquire would recover them) and
        nothing is written or removed.
        """
        keys = [canonical(r) for r in resources]
        found = []
        for holder, held in self._others(run_id):
            if any(conflict(key, held)[0] for key in keys) and not self._stale(holder):
                found.append(holder)
        return found

    # -- files

    def _lock_files(self) -> list[Path]:
        try:
            names = os.listdir(self.locks_dir)
        except FileNotFoundError:
            return []
        # Temporary files and tombstones start with a dot.
        return [self.locks_dir / n for n in names if n.endswith(".lock") and not n.startswith(".")]

    def _others(self, run_id: str, skip: set[Path] = frozenset()) -> list[tuple[LockInfo, str]]:
        """Other runs' locks, each with its canonical resource."""
        others = []
        for path in self._lock_files():
            if path in skip:
                continue
            try:
                holder = self._read(path)
                held = canonical(holder.resource)
            except (FileNotFoundError, ValueError):
                continue  # gone, or damaged: its resource is unknown, so it can overlap nothing
            if holder.run_id != run_id:
                others.append((holder, held))
        return others

    def _read(self, path: Path) -> LockInfo:
        """The lock in `path`; ValueError when it is not a lock file we wrote."""
        try:
            raw = path.read_bytes()
        except (IsADirectoryError, PermissionError) as exc:
            raise ValueError(f"cannot be read: {exc.strerror or exc}") from None
        try:
            data = json.loads(raw)
        except ValueError:
            raise ValueError("not JSON") from None
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        kinds = {"resource": str, "runId": str, "pid": int, "host": str, "since": str}
        for key, kind in kinds.items():
            if type(data.get(key)) is not kind:
                raise ValueError(f"{key} is missing or not {kind.__name__}")
        return LockInfo(
            resource=data["resource"],
            run_id=data["runId"],
            pid=data["pid"],
            host=data["host"],
            since=data["since"],
            file=path,
        )

    def _stale(self, holder: LockInfo) -> bool:
        from catalyst_dsl.runtime.state.snapshot import (
            FINISHED,
        )  # its records are a run's; a what-if with no lock in its way needs none

        status = self._run_status(holder.run_id)
        if status in FINISHED:
            return True  # covers a reused pid: the run is over whoever has that number now
        if status == "paused":
            return False  # a paused run keeps its locks while no process runs it
        return holder.host == self._host and not pid_alive(holder.pid)

    def _remove_if(self, path: Path, judged: LockInfo | None, owner: str | None = None) -> None:
        """Remove `path` if it still holds `judged` (stale) or a lock of run `owner`.

        Rename first, look second: the rename is atomic, so of two removers only one gets
        the file, and what it got is checked before it is dropped. A file that turns out
        to be someone else's fresh lock is put back.
        """
        tombstone = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tomb")
        try:
            os.rename(path, tombstone)
        except FileNotFoundError:
            return  # already gone
        try:
            got = self._read(tombstone)
        except (FileNotFoundError, ValueError):
            got = None
        if got is not None and (
            (judged is not None and _same(got, judged)) or (owner is not None and got.run_id == owner)
        ):
            tombstone.unlink(missing_ok=True)
            return
        # Not what we meant to remove: give it back under its name, unless a new lock
        # took the name meanwhile (then the new one stands and the displaced one is
        # dropped: its holder finds its file gone on release, which is harmless).
        try:
            os.link(tombstone, path)
        except OSError:
            pass
        tombstone.unlink(missing_ok=True)


def _hold(fd: int, locks_dir: Path) -> None:
    """Lock `fd` exclusively, waiting up to GUARD_TIMEOUT; returns unlocked where the
    file system has no OS locks (the file protocol then works alone)."""
    try:
        import fcntl
    except ImportError:  # Windows
        fcntl = None
        import msvcrt
    deadline = time.monotonic() + GUARD_TIMEOUT
    while True:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return
        except BlockingIOError:
            pass  # held by another process or thread
        except OSError:
            if fcntl is not None:
                return  # ENOLCK, EOPNOTSUPP: no OS locks on this file system
            # msvcrt reports a held lock as a plain OSError
        if time.monotonic() > deadline:
            guard = locks_dir / ".guard"
            owner = LockInfo(resource=str(guard), run_id="unknown", pid=0, host="unknown", since="unknown", file=guard)
            raise LockConflict(
                str(guard),
                owner,
                message=f"the lock directory {locks_dir} stayed busy for {GUARD_TIMEOUT:g}s:"
                " a catalyst process seems stopped while taking its locks",
            )
        time.sleep(0.001)


def _same(a: LockInfo, b: LockInfo) -> bool:
    return (a.resource, a.run_id, a.pid, a.host, a.since) == (b.resource, b.run_id, b.pid, b.host, b.since)


def canonical(resource: str) -> str:
    """The resource as compared: `path:./src//**` is `path:src/**`. ValueError when malformed."""
    kind, sep, value = resource.partition(":")
    if not sep or not kind or not value:
        raise ValueError(f"a lock resource is written kind:value (path:src/** or branch:main), not {resource!r}")
    if kind == "path":
        from catalyst_dsl.paths.globs import Glob

        return f"path:{Glob.compile(value).key}"  # GlobError is a ValueError
    return resource


def conflict(a: str, b: str) -> tuple[bool, str | None]:
    """Whether two canonical resources collide, with a path both match for path locks."""
    kind_a, _, value_a = a.partition(":")
    kind_b, _, value_b = b.partition(":")
    if kind_a != kind_b:
        return False, None
    if kind_a == "path":
        from catalyst_dsl.paths.globs import Glob, overlap

        example = overlap(Glob.compile(value_a), Glob.compile(value_b))
        return example is not None, example
    return value_a == value_b, None
