"""The language server's first library check of a session, answered from the check cache.

Checking a large library from nothing takes seconds (2,000 playbooks: every file parsed,
lowered and checked, then the calls and permissions across them). `catalyst check` keeps,
after a check, a record of its findings with every fact they rest on
(`project.cache.replay`); the server keeps one of its own whole-library check in the same
cache, whenever its open buffers hold what their files on disk hold. The first check of
the next session gives those findings back while every fact still holds, compiling
nothing, and only then loads the library (each file from its entry in the cache, not
compiled) for the incremental checks that follow an edit. A buffer that differs from its
file, a changed byte on disk, a new playbook: the library is checked as before.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from catalyst_dsl.lsp import incremental
from catalyst_dsl.project import observed


def disk_cache(project):
    """The project's check cache (`.xe/cache/` unless the settings move or turn it off),
    or None."""
    from catalyst_dsl.project.cache.store import CheckCache

    return CheckCache.for_project(project)


def as_on_disk(buffers: dict[str, bytes]) -> bool:
    """Whether every open buffer holds what its file holds."""
    for path, data in buffers.items():
        try:
            with open(path, "rb") as handle:
                if handle.read(len(data) + 1) != data:
                    return False
        except OSError:
            return False
    return True


def replayed(cache, project, files: list[str], buffers: dict[str, bytes]):
    """The findings the last whole-library check kept for `files`, when every fact they
    rest on still holds and no buffer differs from its file; else None."""
    if cache is None or not as_on_disk(buffers):
        return None
    from catalyst_dsl.project.cache.replay import replay

    return replay(cache, project, files, frozenset(), [])


@contextlib.contextmanager
def recording(cache, buffers: dict[str, bytes]) -> Iterator[dict | None]:
    """The facts a whole-library check looks at, noted while it runs (None: nothing to
    record, as without a cache or with a buffer unlike its file). The buffers are read in
    place of their files, so their bytes are noted as the files' (they are the same)."""
    if cache is None or not as_on_disk(buffers):
        yield None
        return
    with observed.recording() as facts:
        for path, data in buffers.items():
            observed.note_bytes(path, data)
        yield facts


def remember(cache, project, files: list[str], result, facts: dict) -> None:
    from catalyst_dsl.project.cache.replay import remember

    remember(cache, project, files, frozenset(), [], result, facts)


def loaded(project, files: list[str], catalog, compilations: incremental.Compilations) -> incremental.Snapshot:
    """The library's calls and names after a replay, for the incremental checks that follow:
    every file loaded through `compilations` (from the cache's entries when they hold it)."""
    from catalyst_dsl.project.library import Library

    return incremental.snapshot(Library(project, files, catalog, cache=compilations), project.config)
