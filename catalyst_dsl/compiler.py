"""The front end's driver: a file in, its IR and diagnostics out."""

from __future__ import annotations

import contextlib
import gc
import os
from typing import Iterator

import attrs

from catalyst_dsl.actions.catalog import Catalog, builtin_catalog
from catalyst_dsl.diagnostics.model import Diagnostic, DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.source import SourceFile

#: A playbook is hand-written; a file this large is something else, and reading it
#: would cost time and memory for nothing.
MAX_FILE_BYTES = 5 * 1024 * 1024
PLAYBOOK_SUFFIXES = (".yaml", ".yml", ".md")


@attrs.define
class Compiled:
    path: str
    source: SourceFile | None
    playbook: ir.Playbook | None
    diagnostics: list[Diagnostic]
    #: The `playbook` steps, with the types of what they pass (for the library checks).
    calls: list = attrs.Factory(list)

    @property
    def has_errors(self) -> bool:
        return any(d.severity.value == "error" for d in self.diagnostics)


def compile_bytes(data: bytes, path: str, catalog: Catalog | None = None) -> Compiled:
    from catalyst_dsl.checks.outputs import check_outputs
    from catalyst_dsl.checks.scope import check_references
    from catalyst_dsl.dialects.catalyst import CatalystLowerer
    from catalyst_dsl.dialects.markdown import compile_markdown
    from catalyst_dsl.syntax.yaml_loader import decode, load_yaml

    catalog = catalog or builtin_catalog()
    sink = DiagnosticSink()
    if len(data) > MAX_FILE_BYTES:
        sink.report("C015", f"the file is {len(data) / 1024 / 1024:.1f} MiB; playbooks are limited to {MAX_FILE_BYTES // 1024 // 1024} MiB", SourceFile(path, "").span(0), help="split it into smaller playbooks that call each other")
        return Compiled(path, None, None, sink.sorted())
    source = decode(data, path, sink)
    if source is None:
        return Compiled(path, None, None, sink.sorted())
    playbook = None
    if path.endswith(".md"):
        playbook = compile_markdown(source, sink, catalog)
    else:
        if not source.text.strip() or all(not line.strip() or line.lstrip().startswith("#") for line in source.text.splitlines()):
            sink.report("C014", "the file is empty", source.span(0), help="a playbook needs at least name, description, owner and steps")
        else:
            root = load_yaml(source, sink)
            if root is not None:
                playbook = CatalystLowerer(source, sink, catalog).playbook(root)
    calls = []
    if playbook is not None:
        calls = check_references(playbook, sink, catalog)
        check_outputs(playbook, sink)
    return Compiled(path, source, playbook, sink.sorted(), calls)


def compile_path(path: str, catalog: Catalog | None = None) -> Compiled:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        sink = DiagnosticSink()
        sink.report("C001", f"cannot read the file: {exc.strerror or exc}", SourceFile(path, "").span(0), help="check that the path exists and is readable")
        return Compiled(path, None, None, sink.sorted())
    return compile_bytes(data, path, catalog)


@contextlib.contextmanager
def collector_tuned_for_checking() -> Iterator[None]:
    """Run a batch of compilations with the cyclic garbage collector tuned for it.

    Checking allocates many small objects that live until the end (nodes, spans, IR) and
    almost no reference cycles. Under CPython's default thresholds the collector rescans
    that growing heap again and again, so time grows faster than the input (measured:
    2,000 steps took 14.6x the time of 200). Objects created before the batch (imported
    modules, the catalog) are frozen out of the scans and collections run less often; the
    previous settings come back afterwards, so a library caller's process is left as it was.
    """
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(previous[0], 50_000), max(previous[1], 20), max(previous[2], 100))
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()


def discover(paths: list[str]) -> list[str]:
    """Playbook files under the given files and directories, in a stable order."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") or d == ".xe")
                for name in sorted(files):
                    if name.endswith(PLAYBOOK_SUFFIXES) and name.lower() not in ("readme.md", "changelog.md"):
                        found.append(os.path.join(root, name))
        else:
            found.append(path)
    return found
