"""File effects beneath a directory handle: a path walked one name at a time, never out of its base.

The gateway checks a path and then acts on it. Acting by name would re-read the path
from the top, so a directory swapped for a symbolic link between the check and the
write carries the write outside the project. Here a path is walked from a handle on
the base directory (the project root, the run's scratch space, the resources), each
name opened with `dir_fd=` and O_NOFOLLOW. A symbolic link met on the way is read and
resolved by this walk itself, under the same base: it may lead anywhere inside, never
out, and `..` never climbs above the base. The effect then happens in the handle of the
directory the walk ended in, and the path the walk took is handed back so the caller
can check that it is the path it allowed.

Linux's openat2(RESOLVE_BENEATH) would do the walk in the kernel, but the os module
does not offer it; openat, one name at a time, gives the same guarantee on every POSIX
system without ctypes.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from catalyst_dsl._internal.records import record

#: As the kernel's own bound on links in one path: more means a loop.
MAX_LINKS = 40

#: How often one name may change kind under the walk (a directory one moment, a link the
#: next) before the walk gives up: something is swapping it on purpose.
MAX_CHANGES = 100

_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)

#: Whether this system can open a name relative to a directory handle (not Windows).
SUPPORTED = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")


class Escape(Exception):
    """The path leaves its base: a link out, `..` above it, a loop. `reason` says which,
    calling the base "its base" for the caller to name."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FileTooLarge(OSError):
    """A file larger than a reader accepts."""


@record
class Walked:
    """Where a walk ended: the handle of the last directory, the name in it, and the path
    below the base that led there, links resolved (`inner`)."""

    directory: int
    name: str
    inner: str


def resolve(base: Path, inner: str, *, follow_last: bool = True) -> str:
    """`inner` (POSIX, below `base`) with every link resolved beneath `base`; the names that
    do not exist yet are taken as written. Escape when it leaves `base`."""
    if not os.path.isdir(base):
        return _lexical([], inner.split("/"))
    try:
        with walk(base, inner, follow_last=follow_last, missing="lexical") as walked:
            return walked.inner
    except NotADirectoryError:
        return _lexical([], inner.split("/"))  # the effect itself will say what is in the way
    except PermissionError:
        return _lexical([], inner.split("/"))  # an unreadable directory: so will the effect


def read(base: Path, inner: str, limit: int) -> bytes | None:
    """The bytes of the file at `inner`; None when it does not exist; FileTooLarge beyond `limit`."""
    try:
        with walk(base, inner) as walked:
            _expect(walked, inner)
            try:
                fd = os.open(walked.name, _FILE, dir_fd=walked.directory)
            except FileNotFoundError:
                return None
            except OSError as error:
                raise _changed_into_link(error, inner) from None
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(file.fileno())
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, "it is a directory", inner)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file", inner)
        if status.st_size > limit:
            raise FileTooLarge(inner)
        return file.read()


def files(base: Path, inner: str) -> list[str]:
    """The files below the directory `inner` (paths relative to it, sorted), walked by
    handle: links to directories are listed, never entered. NotADirectoryError when it is
    not a directory."""
    with walk(base, inner) as walked:
        _expect(walked, inner, directory=True)
        try:
            fd = os.open(walked.name or ".", _DIRECTORY, dir_fd=walked.directory)
        except OSError as error:
            if error.errno in (errno.ENOENT, errno.ENOTDIR):
                raise NotADirectoryError(errno.ENOTDIR, "it is not a directory", inner) from None
            raise _changed_into_link(error, inner) from None
    try:
        found = []
        for directory, dirs, names, _ in os.fwalk(".", dir_fd=fd):
            dirs.sort()
            found += [os.path.normpath(os.path.join(directory, name)) for name in sorted(names)]
        return found
    finally:
        os.close(fd)


def write(base: Path, inner: str, data: bytes, *, sync: bool = True) -> None:
    """Put `data` at `inner` atomically, creating the directories above it; the walk must
    find exactly `inner` (links resolved): anything else changed after the check. Synced
    to disk unless `sync` is False (`durable.replace_in`)."""
    from catalyst_dsl.runtime.state import durable  # here: a what-if reads through this module, never writes

    os.makedirs(base, exist_ok=True)  # the run's scratch space is made on first use
    with walk(base, inner, missing="create") as walked:
        _expect(walked, inner)
        durable.replace_in(walked.directory, walked.name, data, sync=sync)


@contextlib.contextmanager
def fresh(base: Path, inner: str, data: bytes) -> Iterator[None]:
    """A new file at `inner` holding `data` for the length of the block, then removed: a
    step's script, which only its program reads. Created exclusively (never over a file
    or through a link that is there), readable and writable by its owner only, and not
    synced; written and removed in the handle of the directory the walk ended in, so
    nothing is looked up by name twice and no temporary name is needed."""
    os.makedirs(base, exist_ok=True)  # the run's scratch space is made on first use
    with walk(base, inner, missing="create") as walked:
        _expect(walked, inner)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(walked.name, flags, 0o600, dir_fd=walked.directory)
        try:
            try:
                # os.write, as `durable` writes its small files: a file object's set-up (a
                # stat, an isatty, a seek) cost more than the write of a step's script.
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(walked.name, dir_fd=walked.directory)


def delete(base: Path, inner: str) -> bool:
    """Remove the name `inner` (a link itself, not what it names); False when it is absent."""
    try:
        with walk(base, inner, follow_last=False) as walked:
            _expect(walked, inner)
            os.unlink(walked.name, dir_fd=walked.directory)
    except FileNotFoundError:
        return False
    return True


def _expect(walked: Walked, inner: str, *, directory: bool = False) -> None:
    """The walk found the path the caller checked (and, unless `directory`, a file name)."""
    if not walked.name and not directory:
        raise IsADirectoryError(errno.EISDIR, "it names a directory, not a file", inner)
    if walked.inner != inner:
        raise Escape(f"it changed while it was being used (it now leads to {walked.inner})")


def _changed_into_link(error: OSError, inner: str) -> OSError | Escape:
    if error.errno == errno.ELOOP:
        return Escape("it was changed into a symbolic link while it was being opened")
    return error


@contextlib.contextmanager
def walk(base: Path, inner: str, *, follow_last: bool = True, missing: str = "raise") -> Iterator[Walked]:
    """Walk `inner` below `base` (see the module docstring); the handles close afterwards.

    `missing`: what a directory that does not exist does: "raise" (FileNotFoundError),
    "create" it, or "lexical" (the rest of the path is taken as written; the handle
    then is the last directory that exists).
    """
    if not SUPPORTED:
        raise Escape(
            "this system cannot open files relative to a directory handle, so catalyst cannot write safely here"
        )
    # The base itself is opened by name: it is the project's own location, links and all.
    root = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    stack: list[tuple[int, str]] = [(root, "")]
    try:
        yield _walk(base, stack, inner.split("/"), follow_last, missing)
    finally:
        for fd, _ in stack:
            os.close(fd)


def _walk(base: Path, stack: list[tuple[int, str]], parts: list[str], follow_last: bool, missing: str) -> Walked:
    pending = collections.deque(parts)
    links = changes = 0
    while True:
        while pending and pending[0] in ("", "."):
            pending.popleft()
        if not pending:  # it ended on a directory (the base, or after `..` or a link to one)
            return Walked(stack[-1][0], "", "/".join(n for _, n in stack[1:]))
        name = pending.popleft()
        if name == "..":
            if len(stack) == 1:
                raise Escape("`..` leads it outside its base")
            os.close(stack.pop()[0])
            continue
        here = stack[-1][0]
        last = not any(p not in ("", ".") for p in pending)
        try:
            status: os.stat_result | None = os.stat(name, dir_fd=here, follow_symlinks=False)
        except FileNotFoundError:
            status = None
        if status is not None and stat.S_ISLNK(status.st_mode) and (follow_last or not last):
            links += 1
            if links > MAX_LINKS:
                raise Escape("its symbolic links form a loop (or nest too deeply)")
            try:
                target = os.readlink(name, dir_fd=here)
            except OSError:
                changes = _again(pending, name, changes)  # no longer a link: look again
                continue
            if target.startswith("/"):
                # The base's real path, only here: a walk that meets no absolute link (a
                # step's script, nearly every write) needs none, and resolving it is a stat
                # per name of the base's path.
                below = _below(os.path.realpath(base), target)
                if below is None:
                    raise Escape(f"a symbolic link leads it outside its base, to {target}")
                while len(stack) > 1:
                    os.close(stack.pop()[0])
                target = below
            pending.extendleft(reversed(target.split("/")))
            continue
        if last:
            return Walked(here, name, "/".join([n for _, n in stack[1:]] + [name]))
        if status is None and missing == "lexical":
            names = [n for _, n in stack[1:]]
            return Walked(here, "", _lexical(names, [name, *pending]))
        try:
            fd = os.open(name, _DIRECTORY, dir_fd=here)
        except FileNotFoundError:
            if missing == "raise":
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=here)
            changes = _again(pending, name, changes)
            continue
        except OSError as error:
            if status is not None and not stat.S_ISDIR(status.st_mode) and not stat.S_ISLNK(status.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "a file stands where a directory belongs", name) from None
            if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                raise
            changes = _again(pending, name, changes)  # it changed kind since the stat
            continue
        stack.append((fd, name))


def _again(pending: collections.deque, name: str, changes: int) -> int:
    if changes >= MAX_CHANGES:
        raise Escape("it kept changing while it was being walked")
    pending.appendleft(name)
    return changes + 1


def _below(base_real: str, target: str) -> str | None:
    """An absolute link target as a path below the base, or None when it is not below it."""
    if target.rstrip("/") == base_real:
        return "."
    prefix = base_real.rstrip("/") + "/"
    # The rest may hold `..`: the walk bounds it like any other.
    return target[len(prefix) :] if target.startswith(prefix) else None


def _lexical(names: list[str], rest: list[str]) -> str:
    """Names that do not exist, joined to the walked ones as written (`..` still bounded)."""
    names = list(names)
    for part in rest:
        if part in ("", "."):
            continue
        if part == "..":
            if not names:
                raise Escape("`..` leads it outside its base")
            names.pop()
        else:
            names.append(part)
    return "/".join(names)


def is_within(path: Path, directory: Path) -> bool:
    """Whether `path` is `directory` or below it (compare resolved paths for real containment)."""
    if os.sep == "/" and path.is_absolute() and directory.is_absolute():
        # As text: `path.parents` builds a path object per level, which each program step
        # paid for dozens of times (its confinement's paths against the read-only ones).
        inner, outer = os.fspath(path), os.fspath(directory)
        return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")
    return path == directory or directory in path.parents
