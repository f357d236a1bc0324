"""A real LSP client (pygls's) driving `catalyst lsp` over stdio, for the language-server tests."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).parents[2]


class Editor:
    """A client session: diagnostics as they arrive, by file, and the server's log messages."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.arrived = asyncio.Event()
        self.versions: dict[str, int] = {}
        #: What the server asked the editor to send it (`client/registerCapability`).
        self.registrations: list[lsp.Registration] = []

        @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def register(params: lsp.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

        #: What the server wrote on stderr (its log), once the session is over.
        self.log = ""
        #: How many times each file's diagnostics were published.
        self.publications: dict[str, int] = {}
        #: The document version each publication of a file was made from, in arrival order.
        self.published_versions: dict[str, list[int | None]] = {}
        #: The codes of each publication of a file, in arrival order.
        self.published_codes: dict[str, list[list[str]]] = {}

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = params.diagnostics
            self.publications[params.uri] = self.publications.get(params.uri, 0) + 1
            self.published_versions.setdefault(params.uri, []).append(params.version)
            self.published_codes.setdefault(params.uri, []).append(sorted(str(d.code) for d in params.diagnostics))
            self.arrived.set()

    async def _publication(self, ready, failure: str, timeout: float) -> None:
        """Wait until `ready()` holds after a publication (a bound against a hang only)."""

        async def wait():
            while not ready():
                self.arrived.clear()
                await self.arrived.wait()

        try:
            await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(failure()) from None

    async def until(self, uri: str, test, timeout: float = 30) -> list[lsp.Diagnostic]:
        """Wait for the diagnostics of `uri` to pass `test`."""
        await self._publication(
            lambda: uri in self.diagnostics and test(self.diagnostics[uri]),
            lambda: f"the diagnostics of {uri} never passed the test: {self.diagnostics.get(uri)}",
            timeout,
        )
        return self.diagnostics[uri]

    async def settled(self, uri: str, timeout: float = 30) -> list[lsp.Diagnostic]:
        """Wait for the diagnostics of the last version sent: the server checks only the
        newest text of a burst of edits, so a version edited over at once is never checked
        (nor remembered as the last that compiled)."""
        await self._publication(
            lambda: self.published_versions.get(uri, [None])[-1] == self.versions[uri],
            lambda: f"version {self.versions[uri]} of {uri} never got its diagnostics",
            timeout,
        )
        return self.diagnostics[uri]

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8") if text is None else text
        self.versions[uri] = 1
        language = "markdown" if path.suffix == ".md" else "yaml"
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str) -> None:
        self.versions[uri] = self.versions.get(uri, 0) + 1
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def complete(self, uri: str, line: int, character: int) -> list[str]:
        found = await self.client.text_document_completion_async(
            lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=character)
            )
        )
        return [item.label for item in found.items]


@contextlib.asynccontextmanager
async def session(project: Path, capabilities: lsp.ClientCapabilities | None = None):
    """A server started on `project` and initialised; shut down cleanly at the end."""
    client = LanguageClient("test-editor", "1")
    editor = Editor(client)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    await client.start_io(sys.executable, "-m", "catalyst_dsl", "lsp", env=env)
    await asyncio.wait_for(
        client.initialize_async(
            lsp.InitializeParams(
                capabilities=capabilities or lsp.ClientCapabilities(),
                root_uri=project.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=project.as_uri(), name="project")],
            )
        ),
        60,
    )
    client.initialized(lsp.InitializedParams())
    server = client._server  # the process, for what it logged (pygls keeps no public handle)
    try:
        yield editor
    except BaseException:
        editor.log = await _shut_down(client, server)
        print(f"the server logged:\n{editor.log}", file=sys.stderr)  # shown with the failure
        raise
    editor.log = await _shut_down(client, server)


async def _shut_down(client: LanguageClient, server) -> str:
    """Shut the server down cleanly (when it still answers) and return what it logged."""
    try:
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
    except Exception:  # noqa: BLE001 - the failure being reported matters more
        pass
    try:  # a server that does not end by itself is stopped: a test never waits without end
        await asyncio.wait_for(client.stop(), 30)
    except (asyncio.TimeoutError, RuntimeError):
        with contextlib.suppress(ProcessLookupError):
            server.kill()
        return "the server did not exit within 30 s of its shutdown and was killed"
    return (
        (await server.stderr.read()).decode("utf-8", "replace")
        if server is not None and server.stderr is not None
        else ""
    )


def where(location: lsp.Location) -> tuple[str, int, int, int]:
    """A location as (file name, line, start character, end character), 0-based as in LSP."""
    return (
        Path(location.uri.removeprefix("file://")).name,
        location.range.start.line,
        location.range.start.character,
        location.range.end.character,
    )
