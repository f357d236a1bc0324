"""`catalyst lsp`: a Language Server Protocol server over stdio, built on pygls.

Every change is applied to the server's copy of the document as it arrives; the file is
then compiled from the newest text by a worker thread and its own findings are published
(a file compiles in milliseconds), once per burst of edits, not once per edit (latest.py),
each publication carrying the document version it was made from, and none ever older than
one already published. Requests compile the newest text themselves. The library checks (calls,
cycles, permissions) run after the edits pause, in a worker thread, with every open buffer
in place of its file on disk, over only the files a change reaches (incremental.py);
their findings are published for every file they check, open or not, and a check made
stale by a newer edit is dropped. The session's first library check is replayed from the
check cache when nothing changed since the last (startup.py), and files changed outside
the editor are checked again, reported by the editor or looked for by the server
(watching.py). The server never reads or writes outside the workspace it was opened on,
but for the user's key that seals the check cache. A request whose parameters cannot be
read is answered with an error (messages.py), and no header or length on the wire can
stall or kill the server (framing.py).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from catalyst_dsl import __version__
from catalyst_dsl.diagnostics.ids import UNCHECKED_SHELL_WRITES
from catalyst_dsl.lsp import (
    completion,
    dialect_completion,
    dialect_hover,
    dialect_names,
    edits,
    findings,
    incremental,
    knowledge,
    mentions,
    references,
    startup,
    watching,
)
from catalyst_dsl.lsp.framing import GuardedInput
from catalyst_dsl.lsp.latest import NewestText
from catalyst_dsl.lsp.messages import CatalystProtocol, UnparsableLoggedOnce
from catalyst_dsl.lsp.positions import code_point_column, to_offset, to_range, utf16_column

#: Seconds of quiet after an edit before the library is checked again.
LIBRARY_DELAY = 0.3
#: The same before the session's first library check: nobody is typing yet, but an editor
#: that restores a session opens its files one message after another, and each open
#: would make a check already under way stale.
FIRST_LIBRARY_DELAY = 0.05

log = logging.getLogger("catalyst.lsp")


class CatalystServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("catalyst", __version__, protocol_cls=CatalystProtocol)
        from catalyst_dsl.actions.installed import builtin_catalog

        self.catalog = builtin_catalog()
        self._generation = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        #: Files whose last publication had findings, to clear them when fixed or gone.
        self._published: set[str] = set()
        #: The last compilation of each open document that gave a playbook: while a line is
        #: half typed the file does not parse, and completion still knows its names.
        self._last_good: dict[str, object] = {}
        #: Kept between library checks, so that each checks only what a change touches.
        self.compilations = incremental.Compilations(inside=lambda path: self.path_of(Path(path).as_uri()) is not None)
        self._snapshot: incremental.Snapshot | None = None
        #: Processes started ahead for the shares of a large library's first check (`project.shards`).
        self.ready_shares: list = []
        self._checking = threading.Lock()
        #: The root of the project last checked.
        self._project_root: Path | None = None
        #: Looks at the library's files when the editor cannot watch them (watching.py).
        self.poller: watching.Poller | None = None
        #: The newest text of each edited document, checked by a worker thread.
        self.edits = NewestText(self.publish_file)

    # -- documents ------------------------------------------------------------------------------

    def path_of(self, uri: str) -> str | None:
        """The file a URI names, when it is a file inside the workspace (after following
        links); None otherwise. Without a workspace folder or root from the client, the
        workspace is the directory the server was started in."""
        try:
            parsed = urlparse(uri)
            if parsed.scheme != "file":
                return None
            path = Path(unquote(parsed.path)).resolve()
            return str(path) if self.workspace_root(path) is not None else None
        except (ValueError, OSError):  # a NUL byte, a loop of links: not a file of ours
            return None

    def workspace_root(self, path: Path) -> Path | None:
        """The innermost workspace folder holding `path` (resolved), or None."""
        roots = [Path(unquote(urlparse(f.uri).path)).resolve() for f in self.workspace.folders.values()]
        if self.workspace.root_path:
            roots.append(Path(self.workspace.root_path).resolve())
        holding = [root for root in roots or [Path.cwd().resolve()] if path == root or root in path.parents]
        return max(holding, key=lambda root: len(root.parts)) if holding else None

    def project(self, path: str):
        """The project of a file of the workspace, its settings looked for no higher than
        the workspace folder (whose root it is when it has none of its own)."""
        from catalyst_dsl.diagnostics.model import DiagnosticSink
        from catalyst_dsl.project.config import load_project

        return load_project(Path(path), DiagnosticSink(), ceiling=self.workspace_root(Path(path)))

    def open_document(self, uri: str):
        """The editor's document of `uri`, None when it is not open (pygls keeps them by
        their URI percent-decoded: `my%20book.yaml` as `my book.yaml`)."""
        return self.workspace.text_documents.get(unquote(uri))

    def compile_open(self, uri: str, text: str | None = None):
        """The document's source and its compilation: from `text`, else from the editor's
        text when it is open, else from its file (a request about a file not open, read
        within the size limit); (None, None) for a URI outside the workspace."""
        from catalyst_dsl.compiler import MAX_FILE_BYTES, Compiled, compile_bytes, read_playbook
        from catalyst_dsl.syntax.source import SourceFile

        path = self.path_of(uri)
        if path is None:
            return None, None
        document = self.open_document(uri) if text is None else None
        if text is not None or document is not None:
            data = (text if text is not None else document.source).encode("utf-8", "surrogatepass")
        else:
            from catalyst_dsl.project.library import never_read, refused

            # As the library check: never a pipe (which would hold the server), a link out
            # of the project or a file in `.git`.
            why_not = never_read(path, str(self.project(path).root))
            if why_not is not None:
                return SourceFile(path, ""), refused(path, why_not)
            data = read_playbook(path)
            if isinstance(data, Compiled):  # gone, unreadable or too large: its finding says which
                return SourceFile(path, ""), data
        if len(data) > MAX_FILE_BYTES:
            return SourceFile(path, ""), compile_bytes(data, path, self.catalog)  # C015, without reading it
        # A hover, a completion or a definition asks about the text the last edit compiled:
        # that compilation answers (a large file takes a while to compile, every request).
        compiled = self.compilations.recalled(path, data)
        if compiled is None:
            compiled = compile_bytes(data, path, self.catalog)
            self.compilations.keep(path, data, compiled)  # the library check need not compile it again
        if compiled.playbook is not None:
            self._last_good[uri] = compiled
        return compiled.source or SourceFile(path, data.decode("utf-8", "replace")), compiled

    def known(self, uri: str, compiled):
        """The compilation to answer from: this one, or the last that gave a playbook."""
        return (
            compiled if compiled is not None and compiled.playbook is not None else self._last_good.get(uri, compiled)
        )

    # -- diagnostics ----------------------------------------------------------------------------

    def publish_file(self, uri: str, version: int | None, text: str) -> None:
        """Check one text of an open document and publish its findings (on the worker
        thread, latest.py), unless a newer text came in meanwhile."""
        source, compiled = self.compile_open(uri, text)
        if compiled is None:
            self.publish(uri, [], version)
            return
        diagnostics = findings.own(source, compiled, self.project(source.path).config)
        if not self.publish(uri, diagnostics, version):
            return  # stale: the check of the newer text publishes, and starts the library's
        with self._lock:  # to be cleared by the library check if the file goes
            (self._published.add if diagnostics else self._published.discard)(source.path)
        self.schedule_library_check()

    def publish(self, uri: str, diagnostics: list[lsp.Diagnostic], version: int | None) -> bool:
        """Publish the findings of `uri` made from `version` of its text (None: its file on
        disk), unless the document is open at another version by now or was closed since:
        only the newest text's findings are sent, so an editor never sees those of an older
        version after a newer one's (the versions an editor sends only grow)."""
        with self._lock:  # held while sending, so that no other publication of it overtakes
            document = self.open_document(uri)
            current = document.version if document is not None else None
            if version != current:
                return False
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=current)
            )
            return True

    def edited(self, uri: str) -> None:
        """A document opened or changed: a library check under way is stale now (it drops
        its result), and the newest text is checked; its publication starts the next."""
        document = self.open_document(uri)
        if self.path_of(uri) is not None:  # (a URI outside schedules no library check)
            with self._lock:
                self._generation += 1
        if document is not None:
            self.edits.put(uri, document.version, document.source)

    def report_server_error(self, error: Exception, source) -> None:
        # pygls's reading loop reports here a body it could not decode (as JsonRpcException);
        # JSON-RPC answers that with a parse error, where pygls would show the editor's user
        # a message for each.
        if source is JsonRpcException and isinstance(error, (ValueError, RecursionError)):
            self.protocol.answer_unparsable(error)
            return
        super().report_server_error(error, source)

    def schedule_library_check(self) -> None:
        with self._lock:
            self._generation += 1
            generation = self._generation
            if self._timer is not None:
                self._timer.cancel()
            delay = FIRST_LIBRARY_DELAY if self._snapshot is None else LIBRARY_DELAY
            self._timer = threading.Timer(delay, self._check_library, args=(generation,))
            self._timer.daemon = True
            self._timer.start()

    def _check_library(self, generation: int) -> None:
        try:
            self._check_library_now(generation)
        except Exception:  # a bug in a check must not take the editor's server down
            log.exception("the library check failed")

    def _check_library_now(self, generation: int) -> None:
        from catalyst_dsl.compiler import collector_tuned_for_checking

        # The whole check is one batch of compilations: the library's files are compiled
        # (or read from the cache) before `check_project` is called, by the snapshot of
        # its calls, and under the thresholds this long-running process keeps, a cold
        # start of 2,000 playbooks spent a third of its time scanning the new IR for cycles.
        with collector_tuned_for_checking():
            self._check_library_in_batch(generation)

    def _check_library_in_batch(self, generation: int) -> None:
        from catalyst_dsl.compiler import discover
        from catalyst_dsl.project.check import check_project
        from catalyst_dsl.project.library import Library

        with self._checking:  # one check at a time: they share what is kept between them
            with self._lock:
                if generation != self._generation:
                    return  # an edit came in while this waited: its own check is scheduled
            versions = {
                key: doc.version for key, doc in list(self.workspace.text_documents.items())
            }  # of the buffers checked
            open_docs = self.open_buffers()
            # With nothing open (the last file closed, maybe deleted), the project of the
            # last check is checked again, so the findings of files gone are cleared.
            anchor = sorted(open_docs)[0] if open_docs else self._project_root
            if anchor is None:
                return
            project = self.project(str(anchor))
            if project.root != self._project_root or self.compilations.disk is None:
                self.compilations.disk = startup.disk_cache(project)  # also where each file's entry is
            self._project_root = project.root
            if self.poller is not None:
                self.poller.checking(project)
            folders = [str(project.resolve(d)) for d in project.config.playbook_dirs if project.resolve(d).is_dir()]
            files = sorted({*discover(folders), *open_docs})
            self.compilations.buffers = open_docs
            self.compilations.forget_others(set(files))
            if self._snapshot is None:  # the session's first check: maybe kept from the last
                ready, self.ready_shares = self.ready_shares, []  # shares' processes started ahead
                replayed = startup.replayed(self.compilations.disk, project, files, open_docs)
                if replayed is not None:
                    startup.finish_unused(ready, None)
                    if self._publish_checked(generation, replayed, set(files), project.config, versions):
                        now = startup.loaded(project, files, self.catalog, self.compilations)
                        with self._lock:
                            if generation == self._generation:  # else the next check is whole
                                self.compilations.take_changed()
                                self._snapshot = now
                    log.info("library check: %d files, from the cache", len(files))
                    return
            disk = self.compilations.disk
            if disk is not None:
                disk.deferred = []  # the entries are written once the findings are out
            with startup.recording(disk if self._snapshot is None else None, open_docs) as facts:
                library = Library(project, files, self.catalog, cache=self.compilations)
                result = now = None
                if self._snapshot is None:  # a large library's is split across processes
                    early = startup.Early(self, generation, library, project.config, open_docs)
                    # Taken before it starts, as it checks every file: a change that comes
                    # in while it runs is left for the next check.
                    taken = self.compilations.take_changed()
                    result = startup.split_check(project, files, open_docs, disk is not None, early, ready)
                    if result is None:
                        self.compilations.give_back(taken)
                if result is None:
                    if self._snapshot is None:
                        early.publish_as_compiled(files)
                    now = incremental.snapshot(library, project.config)
                    changed = self.compilations.take_changed()
                    checked = sorted(incremental.to_check(now, self._snapshot, changed))
                    result = check_project(project, checked, library=library)
            if facts is not None:  # first: a session that ends at once still leaves it
                startup.remember(disk, project, files, result, facts)
            published = self._publish_checked(generation, result, frozenset(library.files), project.config, versions)
            if now is None:  # split: the other shares' files loaded (their cache entries) for what follows
                startup.finish_split(result)
                changed, checked = taken, result.files
                if published:
                    now = incremental.snapshot(library, project.config)
                    seen = result.compiled_sources
                    self.compilations.settle({path: seen[path] for path in result.files if path in seen})
            if disk is not None:
                disk.write_deferred()
            if not published:
                self.compilations.give_back(changed)
                return  # an edit came in meanwhile: its own check will publish
            self._snapshot = now
            log.info("library check: %d of %d files", len(checked), len(files))

    def publish_early(self, generation: int, path: str, diagnostics: list[lsp.Diagnostic]) -> bool:
        """Publish a file's own findings during the first check (`startup.publish_as_compiled`);
        False, and nothing published, once an edit made that check stale."""
        with self._lock:
            if generation != self._generation:
                return False
        if self.publish(Path(path).as_uri(), diagnostics, None):
            with self._lock:  # cleared by the check's publication when the file goes
                self._published.add(path)
        return True

    def _publish_checked(self, generation: int, result, files: set[str], config, versions) -> bool:
        """Publish the findings of a library check (a `LibraryCheck`, or one replayed from
        the cache) for every file it checked, and clear those of files gone; False, and
        nothing published, when a newer edit made the check stale."""
        from catalyst_dsl.project.rules import reported

        with self._lock:
            if generation != self._generation:
                return False
        sources = result.sources
        by_file: dict[str, list] = {f: [] for f in result.files}
        for d in reported(result.diagnostics, [sources[f] for f in result.files if f in sources], config):
            if d.span is not None and d.span.file in by_file:
                by_file[d.span.file].append(findings.to_lsp(d, sources))
        stale = {p for p in self._published if p not in files}  # files gone since
        for path in set(by_file) | stale:
            uri = Path(path).as_uri()
            self.publish(uri, by_file.get(path, []), versions.get(unquote(uri)))
        with self._lock:
            self._published = (self._published - set(by_file) - stale) | {p for p, found in by_file.items() if found}
        return True

    # -- references -------------------------------------------------------------------------------

    def references_at(self, source, offset: int, playbook, include_declaration: bool) -> list[lsp.Location]:
        """Where the name, call or playbook under the cursor is defined and used: in this
        file for names and functions, in the whole library for calls and inputs."""
        path = source.path
        call = knowledge.called_playbook(source, offset)
        mention = None if call is not None else references.markdown_reference_at(source, offset, playbook)
        if call is not None or mention is not None or references.own_name_at(source, offset):
            library = self.library(path)
            target = (
                library.resolve_call(call, path)
                if call is not None
                else library.resolve_reference(mention, path)
                if mention is not None
                else path
            )
            if target is None:
                return []
            found = [self._location(library, edge.caller, edge.span) for edge in references.calls_of(library, target)]
            if include_declaration:
                declared = library.compiled(target).source
                found.insert(
                    0, self._location(library, target, references.name_span(declared) if declared is not None else None)
                )
            return [f for f in found if f is not None]
        name = references.find(source, offset, playbook, self.catalog)
        if name is None:
            return []
        spans = [*([name.definition] if include_declaration and name.definition is not None else []), *name.uses]
        found = [lsp.Location(uri=Path(s.file).as_uri(), range=to_range(source, s)) for s in spans]
        if name.kind == "input":
            library = self.library(path)
            found += [
                self._location(library, span.file, span) for span in references.inputs_passed(library, path, name.name)
            ]
        return [f for f in found if f is not None]

    def mention_at(self, source, offset: int, compiled):
        """(library, reference, the file it leads to or None) for the Markdown `@` path
        under the cursor; None when there is none."""
        playbook = compiled.playbook if compiled is not None else None
        reference = references.markdown_reference_at(source, offset, playbook) if playbook is not None else None
        if reference is None:
            return None
        library = self.library(source.path, with_calls=False)
        found = library.resolve_reference(reference, source.path)
        return library, reference, found if found is not None and self.path_of(Path(found).as_uri()) else None

    def library(self, path: str, with_calls: bool = True):
        """The library `path` belongs to, with every open buffer in place of its file (and,
        `with_calls`, every playbook's calls worked out)."""
        from catalyst_dsl.project.library import Library

        self.compilations.buffers = self.open_buffers()
        library = Library(self.project(path), [path], self.catalog, cache=self.compilations)
        for file in library.files if with_calls else ():
            library.edges(file)
        return library

    def open_buffers(self) -> dict[str, bytes]:
        return {
            path: doc.source.encode("utf-8", "surrogatepass")
            for uri, doc in list(self.workspace.text_documents.items())
            if (path := self.path_of(uri)) is not None
        }

    def _location(self, library, path: str, span) -> lsp.Location | None:
        """A place in a library file, or None for one outside the workspace."""
        uri = Path(path).as_uri()
        if self.path_of(uri) is None:
            return None
        if span is None:
            return lsp.Location(
                uri=uri, range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
            )
        return lsp.Location(uri=uri, range=to_range(library.compiled(path).source, span))


def build() -> CatalystServer:
    server = CatalystServer()

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: CatalystServer, params: lsp.InitializedParams) -> None:
        # Files changed outside the editor (a checkout, a pull, a rename) are checked again:
        # the editor watches the playbooks and settings for the server when it can, else
        # the server looks at them itself (watching.py).
        if watching.can_register(ls.client_capabilities):
            ls.client_register_capability(watching.registration())
        else:
            ls.poller = watching.Poller(ls.schedule_library_check)
            ls.poller.start()
        folders = [unquote(urlparse(f.uri).path) for f in ls.workspace.folders.values()]
        ls.ready_shares = startup.start_shares(Path(next(iter(folders), ls.workspace.root_path or Path.cwd())))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: CatalystServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        # What changed is found by the check itself (each file's bytes against those it
        # compiled), so any change inside the workspace is enough to start one.
        if any(ls.path_of(change.uri) is not None for change in params.changes):
            ls.schedule_library_check()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CatalystServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.edited(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CatalystServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.edited(params.text_document.uri)  # pygls has applied the change already

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CatalystServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.schedule_library_check()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CatalystServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls._last_good.pop(params.text_document.uri, None)
        ls.edits.drop(params.text_document.uri)
        ls.schedule_library_check()  # its file on disk counts again

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["{", ".", " ", "-", "@", "/"])
    )
    def complete(ls: CatalystServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        source, compiled = ls.compile_open(params.text_document.uri)
        if source is None:
            return lsp.CompletionList(is_incomplete=False, items=[])
        kinds = {
            "action": lsp.CompletionItemKind.Function,
            "name": lsp.CompletionItemKind.Variable,
            "member": lsp.CompletionItemKind.Field,
            "playbook": lsp.CompletionItemKind.Module,
            "key": lsp.CompletionItemKind.Property,
            "value": lsp.CompletionItemKind.EnumMember,
            "file": lsp.CompletionItemKind.File,
            "input": lsp.CompletionItemKind.Variable,
        }
        dialect = dialect_completion.dialect_of(source.path)
        if dialect == "kai":
            found = dialect_completion.kai_completions(
                source,
                to_offset(source, params.position),
                ls.known(params.text_document.uri, compiled),
                ls.workspace_root(Path(source.path)),
            )
        elif dialect == "cleo":
            found = dialect_completion.cleo_completions(
                source, to_offset(source, params.position), ls.known(params.text_document.uri, compiled)
            )
        else:
            found = completion.completions(
                source,
                to_offset(source, params.position),
                ls.known(params.text_document.uri, compiled),
                ls.catalog,
                lambda: ls.library(source.path, with_calls=False),
            )
        items = [
            lsp.CompletionItem(
                label=s.label,
                kind=kinds[s.kind],
                detail=s.detail or None,
                documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=s.documentation)
                if s.documentation
                else None,
            )
            for s in found
        ]
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: CatalystServer, params: lsp.HoverParams) -> lsp.Hover | None:
        source, compiled = ls.compile_open(params.text_document.uri)
        if source is None:
            return None
        dialect = dialect_completion.dialect_of(source.path)
        if dialect == "kai":
            text = dialect_hover.kai_hover(
                source, to_offset(source, params.position), ls.workspace_root(Path(source.path))
            )
        elif dialect == "cleo":
            text = dialect_hover.cleo_hover(source, to_offset(source, params.position), ls.catalog)
        else:
            known = ls.known(params.text_document.uri, compiled)
            mention = ls.mention_at(source, to_offset(source, params.position), known)
            text = (
                mentions.hover(*mention)
                if mention is not None
                else knowledge.hover(source, to_offset(source, params.position), known, ls.catalog)
            )
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text)) if text else None

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: CatalystServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        source, compiled = ls.compile_open(params.text_document.uri)
        if source is None:
            return None
        offset = to_offset(source, params.position)
        dialect = dialect_completion.dialect_of(source.path)
        if dialect is not None:
            found = dialect_names.definition(source, offset, dialect, ls.workspace_root(Path(source.path)))
            return _dialect_location(ls, source, found) if found is not None else None
        target = knowledge.called_playbook(source, offset)
        mention = ls.mention_at(source, offset, ls.known(params.text_document.uri, compiled))
        if target is not None or mention is not None:
            path = _resolve_call(ls, source.path, target) if mention is None else mention[2]
            if path is not None and ls.path_of(Path(path).as_uri()) is not None:
                return lsp.Location(
                    uri=Path(path).as_uri(),
                    range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
                )
            return None
        span = knowledge.definition_of(source, offset, ls.known(params.text_document.uri, compiled))
        return lsp.Location(uri=params.text_document.uri, range=to_range(source, span)) if span is not None else None

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def find_references(ls: CatalystServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        uri = params.text_document.uri
        source, compiled = ls.compile_open(uri)
        compiled = ls.known(uri, compiled)
        dialect = dialect_completion.dialect_of(source.path) if source is not None else None
        if dialect is not None:  # names within the file, as its dialect reads them
            found = dialect_names.references(
                source, to_offset(source, params.position), dialect, params.context.include_declaration
            )
            return [lsp.Location(uri=uri, range=to_range(source, span)) for span in found]
        if source is None or compiled is None or compiled.playbook is None:
            return []
        return ls.references_at(
            source, to_offset(source, params.position), compiled.playbook, params.context.include_declaration
        )

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: CatalystServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        source, compiled = ls.compile_open(params.text_document.uri)
        compiled = ls.known(params.text_document.uri, compiled)
        cleo = source is not None and dialect_completion.dialect_of(source.path) == "cleo"
        if not cleo and (compiled is None or compiled.playbook is None):
            return []

        def convert(symbol: knowledge.Symbol) -> lsp.DocumentSymbol:
            where = to_range(source, symbol.span)
            return lsp.DocumentSymbol(
                name=symbol.name,
                detail=symbol.detail,
                kind=lsp.SymbolKind.Function,
                range=where,
                selection_range=where,
                children=[convert(c) for c in symbol.children] or None,
            )

        if cleo:  # from the cantbook itself, also when its graph cannot run
            return [convert(s) for s in knowledge.cleo_outline(source)]
        return [convert(s) for s in knowledge.outline(compiled.playbook)]

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION)
    def code_actions(ls: CatalystServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        source, compiled = ls.compile_open(uri)
        if source is None:
            return []
        compiled = ls.known(uri, compiled)
        actions = []
        for diagnostic in params.context.diagnostics:
            if diagnostic.source != "catalyst" or not isinstance(diagnostic.code, str):
                continue
            data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
            replacement = data.get("replacement")
            if isinstance(replacement, str):
                edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(range=diagnostic.range, new_text=replacement)]})
                actions.append(
                    lsp.CodeAction(
                        title=f"Replace with '{replacement}'",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=edit,
                        is_preferred=True,
                    )
                )
            start = diagnostic.range.start
            line = start.line + 1
            if diagnostic.code == UNCHECKED_SHELL_WRITES and compiled is not None and compiled.playbook is not None:
                column = code_point_column(source.line_text(line), start.character)
                found = edits.missing_writes(source, compiled.playbook, line, column)
                if found is not None:
                    actions.append(_action(source, uri, found, diagnostic, preferred=True))
            found = edits.suppression(source, diagnostic.code, line)
            if found is not None:
                actions.append(_action(source, uri, found, diagnostic))
        return actions

    return server


def _action(
    source, uri: str, insertion: edits.Insertion, diagnostic: lsp.Diagnostic, preferred: bool = False
) -> lsp.CodeAction:
    """A quick fix that inserts text, its column turned into the client's UTF-16 units."""
    line_text = source.line_text(insertion.line + 1)
    at = lsp.Position(line=insertion.line, character=utf16_column(line_text, insertion.column + 1))
    edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(range=lsp.Range(start=at, end=at), new_text=insertion.text)]})
    return lsp.CodeAction(
        title=insertion.title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=edit,
        is_preferred=preferred or None,
    )


def _dialect_location(ls: CatalystServer, source, found: tuple) -> lsp.Location | None:
    """A place dialect_names found: a span of this file, or the start of another file of the workspace."""
    path, span = found
    uri = Path(path).as_uri()
    if ls.path_of(uri) is None:
        return None
    if span is not None:
        return lsp.Location(uri=uri, range=to_range(source, span))
    return lsp.Location(
        uri=uri, range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
    )


def _resolve_call(ls: CatalystServer, path: str, target: str) -> str | None:
    return ls.library(path, with_calls=False).resolve_call(target, path)


def serve() -> None:
    import sys

    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("pygls.server").addFilter(UnparsableLoggedOnce())
    wire = GuardedInput(sys.stdin.buffer)
    server = build()
    server.edits.busy = wire.pending
    server.start_io(stdin=wire)
