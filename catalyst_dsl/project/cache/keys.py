"""Where the check cache's sealing key lives, and the fingerprint of the build that
checked a file, which every entry's name covers.

The key is private to the user (`$XDG_CACHE_HOME/catalyst/cache-key`, mode 0600, made on
first use): entries sealed under it are trusted, so without a usable key (no home, a key
readable by others) the cache is off. The fingerprint is catalyst's version, the Python
that runs it and the size and time of each file of the package: a different build of the
checker never reads another's results.

Apart from the store so that the sandbox, which keeps the key out of a playbook's reach,
asks where it is without loading the cache.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from catalyst_dsl import __version__
from catalyst_dsl._internal import digests

#: Changes whenever the layout of an entry does (the fingerprint covers it, so every
#: entry of an older layout is named differently and never read).
FORMAT = 5
KEY_FILE = "cache-key"


def user_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$XDG_CACHE_HOME/catalyst`, else `~/.cache/catalyst`; None when there is no home."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        home = environ.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "catalyst"


def cache_key(environ: Mapping[str, str] | None = None, *, make: bool = True) -> bytes | None:
    """The user's private sealing key, made on first use (unless `make` is false); None
    when none can be used."""
    directory = user_cache_dir(environ)
    if directory is None:
        return None
    path = directory / KEY_FILE
    if not make and not path.is_file():
        return None
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            # Created whole or not at all: of two first checks, one key wins and both read it.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            import secrets  # only to make the key: every later check reads it

            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(secrets.token_hex(32) + "\n")
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or (
            os.name == "posix" and (info.st_mode & 0o077 or info.st_uid != os.getuid())
        ):
            return None  # readable by others, or not ours: it seals nothing
        text = path.read_bytes().decode("ascii").strip()  # not read_text: its codec lookup imports encodings.ascii
        return bytes.fromhex(text) if len(text) == 64 else None
    except (OSError, ValueError):
        return None


def code_fingerprint(package: str | None = None) -> str:
    """catalyst's version, the Python that runs it, and the size and time of each of its
    files (of `package`, the folder of catalyst_dsl unless given, and of the grammar
    beside it): a different build of the checker, or the same source tree run by another
    Python (another standard library, another libyaml build beside it), never reads
    another's results."""
    # This file is catalyst_dsl/project/cache/keys.py: the package is three folders up.
    package = package or os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    stamps = [f"{__version__}\0{FORMAT}\0{sys.implementation.cache_tag}\0{sys.version}"]
    for root in (package, os.path.join(os.path.dirname(package), "grammar")):
        _stamp_files(root, stamps)
    return digests.hexdigest("".join(stamps).encode("utf-8", "surrogatepass"))


def _stamp_files(directory: str, stamps: list[str]) -> None:
    """Each source file under `directory` (sub-folders first in name order, `__pycache__`
    left out) as its path, size and time, appended to `stamps`."""
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return  # no such folder (an installed package has no grammar/ beside it)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):  # as os.walk: a link to a folder is not followed
            if entry.name != "__pycache__":
                _stamp_files(entry.path, stamps)
        elif entry.name.endswith((".py", ".lark", ".json", ".toml")):
            info = entry.stat()
            stamps.append(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}\n")
