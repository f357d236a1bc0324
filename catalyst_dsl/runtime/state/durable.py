"""Durable file writes: a file is its old content or its new one, never a mix.

Every write first goes to a unique temporary file beside the target (a rename is only
atomic within one file system), which is fsynced; then the content takes the target's
name in one step, and the directory is fsynced so that the new name survives a power
cut as well:

- `replace` renames it over whatever is there, optionally keeping the current content
  as a backup first;
- `create` hard-links it to the name only if the name is free, so of any number of
  racing creators exactly one wins, and nobody ever sees the file empty.

Run snapshots (`store.py`) and lock files (`locks.py`) name their files by path; the
files a playbook writes come through `replace_in`, which works in a directory handle
that `effects/beneath.py` walked to, so that no name is looked up twice.

A file nobody reads after a power cut may skip the syncs and stay atomic (`sync=False`:
a reader of this boot, after any process was killed, sees the old content or the new),
and a file whose new name may be lost in a power cut, as long as either name's content
is whole, may skip the directory's (`sync_rename=False`). The callers say why.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

_BINARY = getattr(os, "O_BINARY", 0)

#: What a new file asks for unless told otherwise; the umask takes its share, as with open().
DEFAULT_MODE = 0o666


def _unique() -> str:
    """12 random hex digits for a temporary name: `secrets.token_hex(6)`, without importing
    secrets (and base64 with it) into every what-if, which imports this module and writes nothing."""
    return os.urandom(6).hex()


def replace(
    target: Path,
    data: bytes,
    *,
    mode: int = DEFAULT_MODE,
    backup: Path | None = None,
    sync: bool = True,
    sync_rename: bool = True,
) -> None:
    """Put `data` at `target`, over whatever is there.

    `mode`: the permission bits of the new file, less the umask; a target that exists
    does not pass its own on, since the new content is a new file. `backup`: keep the
    current content there first (see `_keep_backup`). `sync`, `sync_rename`: the module
    docstring.
    """
    temporary = target.with_name(f".{target.name}.{_unique()}.tmp")
    try:
        _write_new(temporary, data, mode, sync=sync)
        if backup is not None:
            _keep_backup(target, backup)
        os.replace(temporary, target)
    except BaseException:
        # Only when it did not take the target's name: after a rename the unlink found
        # nothing, and its exception cost every save (a run's process record, twice a step).
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    if sync and sync_rename:
        sync_directory(target.parent)


def replace_in(directory: int, name: str, data: bytes, *, mode: int = DEFAULT_MODE, sync: bool = True) -> None:
    """`replace` for the file `name` in the open directory `directory`: the temporary file
    is created there (never through a link) and renamed within that same handle."""
    temporary = f".{name}.{_unique()}.tmp"
    try:
        _write_new(temporary, data, mode, directory, sync)
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=directory)
    if sync:
        os.fsync(directory)


def create(target: Path, data: bytes, *, mode: int = DEFAULT_MODE) -> bool:
    """Put `data` at `target` only if the name is free: False when it exists already."""
    with _temporary(target, data, mode) as temporary:
        if not _link_new(temporary, target, data, mode):
            return False
    sync_directory(target.parent)
    return True


def sync_directory(directory: Path) -> None:
    """Make a rename in `directory` durable (POSIX; Windows cannot open directories)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _temporary(target: Path, data: bytes, mode: int, sync: bool = True) -> Iterator[Path]:
    """A file holding `data` beside `target` (synced unless told not to), gone afterwards
    whatever happens."""
    temporary = target.with_name(f".{target.name}.{_unique()}.tmp")
    try:
        _write_new(temporary, data, mode, sync=sync)
        yield temporary
    finally:
        temporary.unlink(missing_ok=True)


def _write_new(path: Path | str, data: bytes, mode: int, directory: int | None = None, sync: bool = True) -> None:
    """Create `path` (in `directory` when given) holding `data`, synced to disk unless
    `sync` is False; FileExistsError when it exists, a link included."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, mode) if directory is None else os.open(path, flags, mode, dir_fd=directory)
    try:
        # os.write, not a file object: the small files saved at each step (the run's process
        # record, a step's script) paid more for the buffered file's set-up than for the write.
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _link_new(source: Path, target: Path, data: bytes, mode: int) -> bool:
    """Give `source`'s content the name `target` unless that name exists."""
    try:
        os.link(source, target)
        return True
    except FileExistsError:
        return False
    except OSError:
        pass  # no hard links here (some network and FAT file systems)
    # Fallback: an exclusive create, then the write. A crash in between leaves a short
    # file, which readers must treat as damaged.
    try:
        _write_new(target, data, mode)
    except FileExistsError:
        return False
    return True


def _keep_backup(current: Path, backup: Path) -> None:
    """Make `backup` a whole copy of `current` as it is now, at the cost of two syscalls.

    A hard link of the current file (never modified in place: `replace` puts a new file
    there), renamed onto the backup so that the backup too is always whole. Nothing is
    kept when `current` does not exist yet or hard links are unsupported.
    """
    link = current.with_name(f".{backup.name}.{_unique()}.tmp")
    try:
        os.link(current, link)
    except OSError:
        return
    try:
        os.replace(link, backup)
    except OSError:
        link.unlink(missing_ok=True)
