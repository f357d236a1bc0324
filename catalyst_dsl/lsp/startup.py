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


class Early:
    """What the session's first check publishes before the library's rules have run, and
    how this process checks its share when that check is split (`project.shards`)."""

    def __init__(self, server, generation: int, library, config, buffers: dict[str, bytes]) -> None:
        self.server = server
        self.generation = generation
        self.library = library
        self.config = config
        self.buffers = buffers

    def publish_as_compiled(self, files: list[str]) -> None:
        """Compile `files`, publishing each file's own findings as soon as it is compiled.
        The first check compiles every file before a library rule can run: seconds, in a
        library of thousands, during which the findings of the first files would otherwise
        wait for the last file. The library's own findings (calls, permissions, cycles)
        follow with the check's publication, which replaces these. Files without findings
        wait for it: an empty list changes nothing on screen. The open files' own findings
        are out already (`publish_file`)."""
        from catalyst_dsl.lsp import findings

        for path in files:
            compiled = self.library.compiled(path)
            if path in self.buffers or compiled.source is None or not compiled.diagnostics:
                continue
            found = findings.own(compiled.source, compiled, self.config)
            if found and not self.server.publish_early(self.generation, path, found):
                return  # stale: the next check publishes, and compiles nothing already compiled

    def __call__(self, share: list[str], elsewhere: frozenset[str]):
        """This process's share of a split check, in its own library."""
        from catalyst_dsl.project.check import check_project
        from catalyst_dsl.project.shards import share_rules

        self.publish_as_compiled(share)
        library = self.library
        return check_project(
            library.project, share, library=library, rules=share_rules(True), checked_elsewhere=elsewhere
        )


def start_shares(root) -> list:
    """Processes for the shares of the first check, started as the server starts, when the
    workspace's library is large enough to be split (`project.shards`): by its first check,
    their start and imports are done. None for a small one, or on one processor."""
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project import shards
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.project.discovery import discover_folders

    if shards.processors() < 2:
        return []
    try:
        project = load_project(root, DiagnosticSink(), ceiling=root)
        count = len(discover_folders([str(project.resolve(d)) for d in project.config.playbook_dirs]))
    except (OSError, ValueError):
        return []
    wanted = len(shards.split(list(range(count)), shards.processors())) - 1
    return [shards.Share() for _ in range(wanted)]


def split_check(project, files: list[str], buffers: dict[str, bytes], use_cache: bool, own_share, ready: list):
    """The first check of a large library, split across processes (`project.shards`), this
    process checking its share with `own_share` and the shares' processes in `ready` used
    first; None when the library is too small for the split to pay."""
    from catalyst_dsl.project import shards

    result = shards.check_split(project, files, overlay=buffers, use_cache=use_cache, own_share=own_share, ready=ready)
    finish_unused(ready, result)
    return result


def finish_unused(ready: list, result) -> None:
    """Stop the processes started ahead that a check did not use."""
    used = getattr(result, "children", ())
    for share in ready:
        if not any(share is child for child in used):
            share.finish()


def finish_split(result) -> None:
    """Wait for the shares' processes to write their entries of the check cache, from which
    this process then loads their files."""
    from catalyst_dsl.project import shards

    shards.finish(result)
