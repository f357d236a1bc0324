"""Room kept for the saves of runs, so that a full disk stops a run between its steps.

A save that finds the disk full used to fail after its step had run: the step's work was
done and not recorded. The state directory keeps `journal-reserve`, a file of `SIZE` bytes
allocated ahead (posix_fallocate) when a run starts or is loaded to be saved. A save that
finds the disk full gives that room back and is made again: it is then durable, and the
store stops the run at its next save, before anything else runs (StateStore._save). When
the reserve cannot be made, the disk is too full to start or go on: that is said before
any step runs.

One reserve serves the whole state directory; a run that used it leaves the next one to
make it again (or to say that it cannot).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

RESERVE = "journal-reserve"
#: A journal record holding the biggest result a snapshot keeps inline (results.LIMIT), twice.
SIZE = 512 * 1024


class Reserve:
    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / RESERVE

    def ensure(self) -> None:
        """Make the reserve unless it is there; OSError when the disk has no room for it."""
        if self.path.exists():
            return
        temporary = self.path.with_name(f".{RESERVE}.{os.urandom(6).hex()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            try:
                _allocate(fd)
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            if error.errno in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                return  # a file system that cannot allocate ahead: runs go on without a reserve
            raise

    def release(self) -> bool:
        """Give the room back to the disk; whether there was any."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True


def _allocate(fd: int) -> None:
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, SIZE)
    else:  # macOS, Windows: written out
        os.write(fd, bytes(SIZE))
