"""The journal's file: where it is, how it is read, locked and appended to.

`run-{id}.journal` sits beside the run's snapshot `run-{id}.json`. Records are appended
with O_APPEND and made durable with one fdatasync each; nothing in the file is ever
changed in place, except a torn last record (a crash while it was written), which the
next writer cuts off before appending after it. Writers of one run (the run's process,
and `approve`, `cancel` or a webhook from others) take an exclusive `flock` on the file
for each save; a compaction removes the file while it holds the lock, so a writer that
gets the lock on a file with no name left knows the run moved on without it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from catalyst_dsl._internal.records import record

#: The journal of the snapshot `run-{id}.json` (or of its archived copy).
SUFFIX = ".journal"

try:
    import fcntl
except ImportError:  # Windows: no locks between processes there (as for the save ledger before)
    fcntl = None  # type: ignore[assignment]

_FLAGS = os.O_RDWR | os.O_APPEND | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
_sync_data = getattr(os, "fdatasync", os.fsync)


def journal_of(snapshot: Path) -> Path | None:
    """The journal beside the snapshot file `snapshot`; None for a file that has none (a `.bak`)."""
    if not snapshot.name.endswith(".json"):
        return None
    return snapshot.with_name(snapshot.name[: -len(".json")] + SUFFIX)


@record
class Identity:
    """What tells one version of a file from another, as far as a writer needs: a file put
    in its place by a rename is a new inode, and one appended to is longer."""

    inode: int
    size: int
    mtime: int


def identity_of(path: Path) -> Identity | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return Identity(found.st_ino, found.st_size, found.st_mtime_ns)


def read(path: Path | None) -> bytes:
    """The journal's bytes; empty when there is none."""
    if path is None:
        return b""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def open_for_append(path: Path) -> tuple[int, bool]:
    """The journal open to append to, created when missing (mode 0600); and whether it was
    created (its name is durable only once the directory is synced)."""
    while True:
        try:
            return os.open(path, _FLAGS | os.O_CREAT | os.O_EXCL, 0o600), True
        except FileExistsError:
            pass
        try:
            return os.open(path, _FLAGS), False
        except FileNotFoundError:
            continue  # removed by a compaction between the two opens: create it


def lock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def size_and_name(fd: int) -> tuple[int, bool]:
    """The open file's size, and whether it still has a name (a compaction removes it)."""
    found = os.fstat(fd)
    return found.st_size, found.st_nlink > 0


def append(fd: int, data: bytes, sync: bool = True) -> None:
    """Append `data` and make it durable: one write (or more, if the system writes less),
    one fdatasync (none when `sync` is False: the next synced append covers it, since
    fdatasync writes out all of the file's data). A failure leaves at most a torn record,
    which readers ignore."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    if sync:
        _sync_data(fd)


def tail(fd: int, start: int, end: int) -> bytes:
    return os.pread(fd, end - start, start)


def cut(fd: int, size: int) -> None:
    """Cut the file back to `size` bytes (a torn record off its end)."""
    os.ftruncate(fd, size)


def close(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
