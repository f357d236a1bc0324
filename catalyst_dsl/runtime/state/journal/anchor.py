"""The anchor: each run's latest save, kept outside the state directory.

The chain of a run's saves (the snapshot, then the journal's records) shows an edit, a
reorder or a record from elsewhere; it cannot show that the whole of it, snapshot and
journal together, was put back as it was some saves ago (a backup restored, a copy of the
state directory, a `git checkout` of it). The anchor can: after every save the store
writes the save's number and MAC to it, and a load that finds the chain ending before
the anchor refuses it as an older copy put back.

`FileAnchors` keeps them in the user's own state directory,
`$XDG_STATE_HOME/catalyst/anchors/<16 hex digits of the SHA-256 of the state directory's
real path>/<run id>` (`~/.local/state/...` by default), which a copy or rollback of a
project never touches. The anchor's directory holds `path`, the state directory's path, for
people who wonder whose it is.

Written without a sync of its own, and only after the save it names is durable: a crash or
a power cut can leave the anchor behind the chain (which is accepted), never ahead of it.
A missing anchor (a fresh machine, a CI job that restored the state directory, another
user, a user who removed it) is accepted too: the anchor adds a witness, and whoever can
remove it can also read the run key beside it and forge anything. An anchor that does not
verify (cut short by a power cut, written by hand) counts as missing.

`Anchors` is what the store asks of them, so that a shared store (a database) can keep
them instead.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.state.integrity.run_key import RunKey
from catalyst_dsl.runtime.state.journal.record import keyed

_DOMAIN = b"catalyst-anchor/1\n"
_LINE = re.compile(r"(?P<seq>[0-9]{20}) (?P<mac>[0-9a-f]{64}) (?P<tag>[0-9a-f]{32})\n")


@record
class Anchor:
    """A run's latest save as the anchor records it."""

    seq: int
    mac: str


class Anchors(Protocol):
    #: Where they are kept, for messages.
    where: str

    def read(self, run_id: str) -> Anchor | None: ...

    def write(self, run_id: str, seq: int, mac: str) -> None: ...

    def forget(self, run_id: str) -> None: ...

    def close(self, run_id: str) -> None: ...


def user_state_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$XDG_STATE_HOME/catalyst`, else `~/.local/state/catalyst`; None when there is no home."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_STATE_HOME")
    if not base:
        home = environ.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".local", "state")
    return Path(base) / "catalyst"


class FileAnchors:
    """The anchors of the runs of one state directory, in the user's state directory."""

    def __init__(self, state_dir: Path, key: Callable[[], RunKey], environ: Mapping[str, str] | None = None) -> None:
        home = user_state_dir(environ)
        real = os.path.realpath(state_dir)
        self._state_dir = real
        self.directory = (
            home / "anchors" / hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
            if home is not None
            else None
        )
        self.where = str(self.directory) if self.directory is not None else "nowhere (no home directory)"
        self._key = key
        #: Open anchors of the runs this process saves, rewritten in place at every save.
        self._open: dict[str, int] = {}
        #: Set once the directory cannot be made: the runs go on without anchors.
        self._off = self.directory is None

    def read(self, run_id: str) -> Anchor | None:
        if self.directory is None:
            return None
        try:
            text = (self.directory / run_id).read_bytes().decode("ascii")
        except (OSError, UnicodeDecodeError):
            return None
        found = _LINE.fullmatch(text)
        if found is None or not hmac.compare_digest(found["tag"], self._tag(run_id, int(found["seq"]), found["mac"])):
            return None
        return Anchor(int(found["seq"]), found["mac"])

    def write(self, run_id: str, seq: int, mac: str) -> None:
        """Record save `seq` of `run_id`, once it is durable; never raises (see the module docstring)."""
        if self._off:
            return
        line = f"{seq:020d} {mac} {self._tag(run_id, seq, mac)}\n".encode("ascii")
        try:
            fd = self._open.get(run_id)
            if fd is None:
                fd = self._open[run_id] = self._opened(run_id)
            # One write of a fixed-size line over the last: the file is always one whole
            # anchor or, after a power cut, something that does not verify.
            if hasattr(os, "pwrite"):
                os.pwrite(fd, line, 0)
            else:  # Windows
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, line)
        except OSError:
            self._off = True  # a read-only or full home: a weaker check, not a failed run

    def _opened(self, run_id: str) -> int:
        assert self.directory is not None
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            (self.directory / "path").write_text(self._state_dir + "\n", encoding="utf-8", errors="surrogateescape")
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        return os.open(self.directory / run_id, flags, 0o600)

    def forget(self, run_id: str) -> None:
        """A run deleted (`runs prune`): its anchor goes too."""
        fd = self._open.pop(run_id, None)
        if fd is not None:
            os.close(fd)
        if self.directory is not None:
            try:
                (self.directory / run_id).unlink()
            except OSError:
                pass

    def close(self, run_id: str) -> None:
        """Done saving `run_id` in this process (it was archived)."""
        fd = self._open.pop(run_id, None)
        if fd is not None:
            os.close(fd)

    def _tag(self, run_id: str, seq: int, mac: str) -> str:
        tag = keyed(self._key().secret)
        tag.update(_DOMAIN + f"{run_id}\n{seq} {mac}".encode("utf-8", "surrogateescape"))
        return tag.hexdigest()[:32]
