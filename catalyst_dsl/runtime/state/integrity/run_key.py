"""The run key: the secret that seals run snapshots and the lines of the save ledger.

Where it comes from, first found wins:

1. `CATALYST_RUN_KEY` (at least 32 characters), for CI and shared machines;
2. `$XDG_CONFIG_HOME/catalyst/run-key` (default `~/.config/catalyst/run-key`): 32 random
   bytes as hex, made on first use with mode 0600 and never overwritten, refused when
   group or others may read it (like the secrets file);
3. when the config directory cannot be written (a read-only home), `run-key` in the state
   directory. That key protects nothing against whoever can write the state directory
   (they can read it too); it still catches edits by tools and people who do not know
   it. The run says so.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from catalyst_dsl._internal.records import field, record
from catalyst_dsl.runtime.state import durable

KEY_ENV = "CATALYST_RUN_KEY"
KEY_FILE = "run-key"
#: An environment key shorter than this is refused: a seal is as strong as its key.
MIN_ENV_KEY = 32


@record
class RunKey:
    secret: bytes = field(repr=False)
    #: Where it came from, for messages: the variable's name or the file's path.
    source: str
    #: False for the key kept in the state directory (see the module docstring).
    outside_state: bool

    @property
    def id(self) -> str:
        """A short name of the key, kept in seals, so a wrong key is told from an edit."""
        return hashlib.sha256(b"catalyst run key id\0" + self.secret).hexdigest()[:8]


class RunKeyError(Exception):
    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


def user_key_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$XDG_CONFIG_HOME/catalyst/run-key`, or under `~/.config`; None when there is no home."""
    from catalyst_dsl.project.config import user_config_dir

    directory = user_config_dir(environ)
    return directory / KEY_FILE if directory is not None else None


def load_run_key(state_dir: Path, environ: Mapping[str, str] | None = None) -> RunKey:
    """The run key (see the module docstring); RunKeyError when one is there but unusable."""
    environ = os.environ if environ is None else environ
    text = environ.get(KEY_ENV, "").strip()
    if text:
        if len(text) < MIN_ENV_KEY:
            raise RunKeyError(
                f"{KEY_ENV} is {len(text)} characters long; a run key needs at least {MIN_ENV_KEY}",
                "set it to a random value,"
                " e.g. the output of `python -c \"import secrets; print(secrets.token_hex(32))\"`",
            )
        return RunKey(text.encode("utf-8"), KEY_ENV, True)
    path = user_key_path(environ)
    if path is not None:
        try:
            return RunKey(_read_or_create(path), str(path), True)
        except _Unwritable:
            pass  # a read-only or missing home: the state directory's key, said out loud by the caller
    fallback = Path(state_dir) / KEY_FILE
    try:
        return RunKey(_read_or_create(fallback), str(fallback), False)
    except _Unwritable as error:
        raise RunKeyError(
            f"no run key can be made: {error}", f"set {KEY_ENV} to a random value of at least {MIN_ENV_KEY} characters"
        ) from None


class _Unwritable(Exception):
    pass


def _read_or_create(path: Path) -> bytes:
    try:
        return _read(path)
    except (FileNotFoundError, NotADirectoryError):
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Linked into place only when the name is free: of two first runs, one key wins
        # and both use it; nobody ever reads a half-written key.
        durable.create(path, secrets.token_hex(32).encode("ascii") + b"\n", mode=0o600)
    except OSError as error:
        raise _Unwritable(f"{path}: {error.strerror or error}") from None
    return _read(path)


def _read(path: Path) -> bytes:
    if os.name == "posix":
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise RunKeyError(
                f"the run key {path} is accessible by group or others (mode {mode:04o}); it must be private",
                f"run `chmod 600 {path}`",
            )
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except (IsADirectoryError, PermissionError) as error:
        raise RunKeyError(
            f"the run key {path} cannot be read: {error.strerror}", f"make {path} a file you can read, mode 0600"
        ) from None
    try:
        if len(text) != 64:
            raise ValueError
        return bytes.fromhex(text)
    except ValueError:
        raise RunKeyError(
            f"the run key {path} is not 64 hexadecimal digits",
            f"put back the key that sealed your runs, or remove {path} to make a new one"
            " (runs sealed with the old key then need `catalyst resume RUN --trust-edited-state`)",
        ) from None
