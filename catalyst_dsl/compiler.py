"""The front end's driver: a file in, its IR and diagnostics out."""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.checks.call_sites import CallSite
from catalyst_dsl._internal.collector import tuned_thresholds
from catalyst_dsl.diagnostics.ids import FILE_TOO_LARGE, NOT_A_PLAYBOOK_FILE, UNREADABLE_FILE
from catalyst_dsl.diagnostics.model import Diagnostic, DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.lazy_module import lazy_module
from catalyst_dsl._internal.reading import read_file
from catalyst_dsl.project import observed
from catalyst_dsl.project.discovery import MAX_FILE_BYTES, PLAYBOOK_SUFFIXES, discover  # noqa: F401 (this module's names too)
from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.syntax.source import SourceFile


@record(frozen=False)
class Compiled:
    path: str
    source: SourceFile | None
    playbook: ir.Playbook | None
    diagnostics: list[Diagnostic]
    #: The `playbook` steps, with the types of what they pass (for the library checks).
    calls: list[CallSite] = factory(list)

    @property
    def not_a_playbook(self) -> bool:
        """YAML that is no playbook at all (C018): a directory scan leaves it out."""
        return self.playbook is None and [d.code for d in self.diagnostics] == [NOT_A_PLAYBOOK_FILE]

    @property
    def has_errors(self) -> bool:
        return any(d.severity.value == "error" for d in self.diagnostics)


# The front end's modules, imported at the first compile (a command that compiles nothing
# does not load them) and not again at every file.
_playbook_rules = lazy_module("catalyst_dsl.checks.rules.playbook_rules")
_registry = lazy_module("catalyst_dsl.dialects.registry")
_yaml_loader = lazy_module("catalyst_dsl.syntax.yaml_loader")
# The native front end, for native files only (about 1 ms a check of one file in another
# dialect does not spend).
_native_lowerer = lazy_module("catalyst_dsl.dialects.native.lowerer")
_native_vocabulary = lazy_module("catalyst_dsl.dialects.native.vocabulary")


def compile_bytes(data: bytes, path: str, catalog: Catalog | None = None) -> Compiled:
    registry = _registry()
    catalog = catalog or builtin_catalog()
    sink = DiagnosticSink()
    if len(data) > MAX_FILE_BYTES:
        return _too_large(path, len(data))
    source = _yaml_loader().decode(data, path, sink)
    if source is None:
        return Compiled(path, None, None, sink.sorted())
    playbook = None
    dialect = registry.by_place(path)
    if path.endswith(".md") and dialect is None:
        # Imported for Markdown only: its patterns cost a YAML compile (a run's called
        # playbooks) about 2 ms.
        from catalyst_dsl.dialects.native.markdown import compile_markdown

        playbook = compile_markdown(source, sink, catalog)
    else:
        root = _yaml_loader().load_yaml(source, sink)
        # An empty document (no root) is the dialect's to report, as C014; a YAML error is not.
        if root is not None or not sink.has_errors:
            if dialect is None and root is not None:
                dialect = registry.by_content(root, sink)
            if dialect is not None:
                playbook = dialect.reader().compile_document(source, root, sink, catalog)
            elif _native_vocabulary().ordinary_yaml(root, catalog.declares):
                sink.report(
                    NOT_A_PLAYBOOK_FILE,
                    "this YAML file is not a playbook: it has no `steps:` and none of a playbook's keys",
                    source.span(0, min(len(source.text), 1)),
                    help="check playbooks, not other YAML; a playbook needs at least `name:` and `steps:` "
                    "(directory scans skip such files)",
                )
            else:
                playbook = _native_lowerer().CatalystLowerer(source, sink, catalog).playbook(root)
    calls: list[CallSite] = []
    for rule in _playbook_rules().FILE_RULES if playbook is not None else ():
        calls += rule(playbook, sink, catalog) or ()
    return Compiled(path, source, playbook, sink.sorted(), calls)


def _too_large(path: str, size: int | None) -> Compiled:
    """C015 for a file of `size` bytes (None: over the limit by an amount not known)."""
    limit = f"playbooks are limited to {MAX_FILE_BYTES // 1024 // 1024} MiB"
    message = (
        f"the file is {size / 1024 / 1024:.1f} MiB; {limit}"
        if size is not None
        else f"the file is larger than the limit; {limit}"
    )
    sink = DiagnosticSink()
    sink.report(
        FILE_TOO_LARGE,
        message,
        SourceFile(path, "").span(0),
        help="split it into smaller playbooks that call each other",
    )
    return Compiled(path, None, None, sink.sorted())


def compile_path(path: str, catalog: Catalog | None = None) -> Compiled:
    data = read_playbook(path)
    return data if isinstance(data, Compiled) else compile_bytes(data, path, catalog)


def read_playbook(path: str) -> bytes | Compiled:
    """The file's bytes, or its C001/C015 result when it cannot be read or is too large."""
    try:
        # Never read more than one byte past the limit: a huge file costs nothing.
        # Its size for the message comes from the file system, not from what was read.
        data, size = read_file(path, MAX_FILE_BYTES + 1)
        observed.note_bytes(path, data)
    except OSError as exc:
        observed.note_bytes(path, None)
        sink = DiagnosticSink()
        sink.report(
            UNREADABLE_FILE,
            f"cannot read the file: {exc.strerror or exc}",
            SourceFile(path, "").span(0),
            help="check that the path exists and is readable",
        )
        return Compiled(path, None, None, sink.sorted())
    if len(data) > MAX_FILE_BYTES:
        # A pipe or device has no meaningful size: then all that is known is "too large".
        return _too_large(path, size if size >= len(data) else None)
    return data


#: Batches under way (`collector_tuned_for_checking`), and the thresholds from before the first.
_batches = 0
_untuned: tuple[int, int, int] | None = None
_batches_lock = threading.Lock()


@contextlib.contextmanager
def collector_tuned_for_checking() -> Iterator[None]:
    """Run a batch of compilations with the cyclic garbage collector tuned for it
    (catalyst_dsl/_internal/collector.py says why). Objects created before the batch (imported
    modules, the catalog) are frozen out of the scans and collections run less often; the
    previous settings come back afterwards, so a library caller's process is left as it was.
    Batches nest and overlap (the language server's library check holds one while a check
    inside it, or an edit on another thread, opens its own): the collector is tuned by the
    first to start and given back by the last to end.
    """
    global _batches, _untuned
    with _batches_lock:
        if _batches == 0:
            _untuned = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(*tuned_thresholds())
        _batches += 1
    try:
        yield
    finally:
        with _batches_lock:
            _batches -= 1
            if _batches == 0:
                gc.set_threshold(*_untuned)
                gc.unfreeze()
