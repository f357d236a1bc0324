"""The language server's library check, re-checking only what a change touches.

Between checks the server keeps every file's compilation (`Compilations`, keyed by the
exact bytes compiled: an open buffer's text or the file's content on disk) and the call
graph and playbook names of the last check (`Snapshot`). A check compiles again only the
files whose text changed, and checks:

- the changed files;
- the playbooks they call (directly), and every playbook that calls them, directly or
  through others, in the new graph or the last one (their calls' inputs, the permissions
  they pass down, the cycles through them may have changed);

and the whole library when that is not enough to be right: on the first check, when a
file appears or goes, when a changed file's playbook name changes (calls by name and
duplicate names, C802, reach any file), or when the project's settings change. The
findings of a check are the same as a whole-library check's for the files it checks;
the other files keep what they were last given.
"""

from __future__ import annotations

import threading
from typing import Callable

from catalyst_dsl._internal.records import record

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.compiler import Compiled, compile_bytes, read_playbook
from catalyst_dsl.diagnostics.ids import UNREADABLE_FILE
from catalyst_dsl.syntax.source import SourceFile


class Compilations:
    """Each file's last compilation, with the bytes it was compiled from; a file (or a
    buffer) is compiled again only when those differ. The `cache.store.CheckCache`
    interface, so a `Library` reads through it."""

    def __init__(self, inside: Callable[[str], bool] = lambda path: True) -> None:
        #: Whether a file may be read: a link in the workspace to a file outside it is not.
        self.inside = inside
        self._kept: dict[str, tuple[bytes, Compiled]] = {}
        #: The editor's buffers, by path, read instead of the files on disk.
        self.buffers: dict[str, bytes] = {}
        #: The project's check cache (`cache.store.CheckCache`), or None: a file not kept yet
        #: is read from its entry there instead of compiled (a warm start), and the files
        #: compiled are kept in it. An editor's buffer never goes there.
        self.disk = None
        #: Files compiled again (their text changed) since `take_changed` was last called.
        self._changed: set[str] = set()
        #: The edit worker and the library check share this object from two threads: a
        #: change recorded between another thread's read and write must not be lost.
        self._lock = threading.Lock()

    def compiled(self, path: str, catalog: Catalog) -> Compiled:
        data = self.buffers.get(path)
        if data is None:
            if not self.inside(path):
                return _outside(path)
            data = read_playbook(path)
            if isinstance(data, Compiled):  # unreadable (deleted meanwhile) or too large
                with self._lock:
                    if self._kept.pop(path, None) is not None:
                        self._changed.add(path)
                return data
        with self._lock:
            kept = self._kept.get(path)
        if kept is not None and kept[0] == data:
            return kept[1]
        # Outside the lock: it may take a while.
        on_disk = self.disk is not None and path not in self.buffers
        result = self.disk.compiled_bytes(path, data, catalog) if on_disk else compile_bytes(data, path, catalog)
        self.keep(path, data, result)
        return result

    def recalled(self, path: str, data: bytes) -> Compiled | None:
        """The compilation kept for `path` when it was made from these very bytes."""
        with self._lock:
            kept = self._kept.get(path)
        return kept[1] if kept is not None and kept[0] == data else None

    def keep(self, path: str, data: bytes, compiled: Compiled) -> None:
        """Remember a compilation made elsewhere (the server's own, on an edit)."""
        with self._lock:
            kept = self._kept.get(path)
            if kept is None or kept[0] != data:
                self._changed.add(path)
            self._kept[path] = (data, compiled)

    def take_changed(self) -> set[str]:
        with self._lock:
            changed, self._changed = self._changed, set()
        return changed

    def settle(self, checked: dict[str, SourceFile]) -> None:
        """A check saw these texts: a file kept compiled from the very text the check saw
        is no change since it. The split first check compiles its files in other processes,
        and this one loads them after it (from their cache entries): without this, the
        first edit that follows re-checked the whole library."""
        with self._lock:
            for path in list(self._changed):
                kept, seen = self._kept.get(path), checked.get(path)
                if kept is not None and seen is not None and kept[1].source == seen:
                    self._changed.discard(path)

    def give_back(self, changed: set[str]) -> None:
        """Changes a check took but did not publish (a newer edit made it stale)."""
        with self._lock:
            self._changed |= changed

    def forget_others(self, files: set[str]) -> None:
        with self._lock:
            for path in set(self._kept) - files:
                del self._kept[path]


def _outside(path: str) -> Compiled:
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.syntax.source import SourceFile

    sink = DiagnosticSink()
    sink.report(
        UNREADABLE_FILE,
        "cannot read the file: it links to a file outside the workspace, which the language server never reads",
        SourceFile(path, "").span(0),
        help="open the folder that holds the file it links to as the workspace, or check it with catalyst check",
    )
    return Compiled(path, None, None, sink.sorted())


@record
class Snapshot:
    """What the last check saw: the files, who calls whom, each playbook's name, the settings."""

    files: frozenset[str]
    calls: dict[str, frozenset[str]]
    names: dict[str, str | None]
    settings: object


def snapshot(library, settings) -> Snapshot:
    files = frozenset(library.files)
    calls = {path: frozenset(e.callee for e in library.edges(path) if e.callee is not None) for path in files}
    names = {path: library.playbook_name(path) for path in files}
    return Snapshot(files, calls, names, settings)


def to_check(now: Snapshot, last: Snapshot | None, changed: set[str]) -> set[str]:
    """The files a check must look at after `changed` changed: all of them when the
    change can reach any file (see the module's docstring)."""
    if last is None or now.files != last.files or now.settings != last.settings:
        return set(now.files)
    if any(now.names.get(path) != last.names.get(path) for path in changed):
        return set(now.files)
    changed = changed & now.files
    callers: dict[str, set[str]] = {}
    for graph in (now.calls, last.calls):
        for caller, callees in graph.items():
            for callee in callees:
                callers.setdefault(callee, set()).add(caller)
    reached = set(changed)
    pending = list(changed)
    while pending:  # every caller, through any number of calls
        for caller in callers.get(pending.pop(), ()):
            if caller not in reached:
                reached.add(caller)
                pending.append(caller)
    for path in changed:
        reached |= now.calls.get(path, frozenset()) | last.calls.get(path, frozenset())
    return reached & now.files
