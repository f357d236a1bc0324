"""What a check looked at: the facts its findings depend on, noted while it runs.

A library check reads the files it checks and what they call, lists the playbook
folders, probes for files (a called path, a slash command's file), asks the plugins about
action names that are not built in and looks for programs on PATH. Each of those goes
through a function here, which answers as the file system does and, while `recording()`
is on, notes the question and the answer. `cache.replay` keeps the notes beside the
findings and asks every question again before it gives those findings back: when one
answer differs, the library is checked again.

A check must look at the file system through these functions only: whatever it learnt
otherwise would not be asked again, and a replay could give back findings that no
longer hold.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

#: The facts of the check under way: (kind, question) -> answer; None when not recording.
_facts: dict[tuple[str, str], object] | None = None


@contextlib.contextmanager
def recording() -> Iterator[dict[tuple[str, str], object]]:
    """Note every fact asked through this module until the block ends; the dict yielded
    fills as the check runs."""
    global _facts
    from catalyst_dsl.actions import catalog  # not at the top: a replayed check never loads it

    outer = _facts
    _facts = facts = {}
    try:
        with catalog.telling_fallbacks_to(_asked_plugins):
            yield facts
    finally:
        _facts = outer


def is_recording() -> bool:
    return _facts is not None


def merge(facts: dict[tuple[str, str], object]) -> None:
    """Note the facts another process looked at for this check (a share's, `project.shards`)."""
    if _facts is not None:
        for key, answer in facts.items():
            _facts.setdefault(key, answer)


def _asked_plugins(name: str) -> None:
    note("plugin", name, True)


def note(kind: str, question: str, answer: object) -> None:
    """Record one fact (the first answer wins: a check asks each question once in effect)."""
    if _facts is not None:
        _facts.setdefault((kind, question), answer)


def note_bytes(path: str | os.PathLike, data: bytes | None) -> None:
    """Record a file's bytes by digest (None: it could not be read); digested only while
    recording: a check that keeps nothing (`--no-cache`) never hashes."""
    if _facts is not None:
        _facts.setdefault(("bytes", os.fspath(path)), digest(data))


def digest(data: bytes | None) -> str | None:
    from catalyst_dsl._internal import digests

    return None if data is None else digests.hexdigest(data)


def is_file(path: str | os.PathLike) -> bool:
    answer = os.path.isfile(path)
    note("is-file", os.fspath(path), answer)
    return answer


def which(program: str) -> str | None:
    import shutil

    answer = shutil.which(program)
    note("which", program, answer)
    return answer


def read_bytes(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The file's bytes (at most `limit` + 1 of them); OSError as `open` raises it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    except OSError:
        note_bytes(path, None)
        raise
    note_bytes(path, data)
    return data


def resolved(path: str | os.PathLike) -> str:
    """The path with its links followed, as far as they lead (`os.path.realpath`, not
    strict: what `Path.resolve` gives, except that a loop of links is no RuntimeError)."""
    answer = os.path.realpath(path)
    note("resolved", os.fspath(path), answer)
    return answer


def listdir(path: str | os.PathLike) -> list[str] | None:
    """The names in a folder, sorted; None when it is no folder."""
    answer = sorted(os.listdir(path)) if os.path.isdir(path) else None
    note("listdir", os.fspath(path), answer)
    return answer


def listed(paths: list[str], found: list[str]) -> list[str]:
    """Note what a scan of the playbook folders `paths` found (see `discovery.discover`)."""
    note("listing", "\0".join(paths), found)
    return found
