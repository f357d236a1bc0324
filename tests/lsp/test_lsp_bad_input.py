"""The language server under bad input: garbage on the wire, a document that is not a
playbook, a 5 MB buffer, files deleted while open, URIs outside the workspace (also
through a link), a storm of 1,000 edits. It logs, answers, never dies, and never reads
outside the workspace."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.helpers.lsp_session import ROOT, session

GOOD = "name: good\ndescription: Good\nowner: Engineer\nsteps:\n  - display: hi\n"
BROKEN = "name: broken\ndescription: Broken\nowner: Engineer\nsteps:\n  - display: '{{ nowhere }}'\n"


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(stream) -> dict | None:
    headers = {}
    while line := stream.readline().strip():
        key, _, value = line.decode("ascii").partition(":")
        headers[key.lower()] = value.strip()
    return json.loads(stream.read(int(headers["content-length"]))) if headers else None


class _Replies:
    """The server's messages, read as they come by a thread, so that a request never
    answered fails the test instead of hanging it."""

    def __init__(self, stream) -> None:
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:
        while (message := _read(stream)) is not None:
            self._queue.put(message)
        self._queue.put(None)

    def answer(self, number, passed: list | None = None) -> dict:
        """The response to request `number`, past the notifications and other answers
        the server sends meanwhile (kept in `passed`)."""
        while True:
            try:
                message = self._queue.get(timeout=60)  # a bound against a hang only
            except queue.Empty:
                raise AssertionError(f"request {number} was never answered") from None
            assert message is not None, f"the server closed its output before answering request {number}"
            if message.get("id") == number:
                return message
            if passed is not None:
                passed.append(message)


def _start(tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    return subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
    )


def test_garbage_on_the_wire_is_logged_and_answered(tmp_path: Path) -> None:
    (tmp_path / "catalyst.toml").write_text("")
    server = _start(tmp_path)
    replies = _Replies(server.stdout)
    try:

        def request(number: int, method: str, params) -> dict:
            server.stdin.write(
                _frame(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}).encode())
            )
            server.stdin.flush()
            return replies.answer(number)

        for garbage in (
            b"{{{{",
            b"\xff\xfe not text",
            b"[1, 2, 3]",
            b'{"jsonrpc": "2.0", "id": 7}',
            b'"just a string"',
        ):
            server.stdin.write(_frame(garbage))
        started = request(1, "initialize", {"capabilities": {}, "rootUri": tmp_path.as_uri()})
        assert "capabilities" in started["result"]
        assert request(2, "no/such-method", {})["error"]["code"] == -32601
        # A request whose parameters have the wrong shape: an error naming what is wrong.
        wrong = request(3, "textDocument/hover", {"nonsense": True})["error"]
        assert wrong == {
            "code": -32602,
            "message": "textDocument/hover: invalid params: required field missing at params.textDocument; "
            "required field missing at params.position",
        }
        # A document never opened, whose file does not exist: an answer, not a crash.
        gone = {"textDocument": {"uri": (tmp_path / "gone.yaml").as_uri()}, "position": {"line": 0, "character": 0}}
        assert request(4, "textDocument/hover", gone) == {"id": 4, "jsonrpc": "2.0", "result": None}
        assert request(5, "textDocument/completion", gone)["result"]["items"] == []
        assert request(6, "shutdown", None)["result"] is None
        server.stdin.write(_frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        server.stdin.flush()
        assert server.wait(30) == 0
        logged = server.stderr.read().decode("utf-8", "replace")
        assert "Expecting value" in logged or "Expecting property name" in logged  # the garbage was logged
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_every_request_is_answered_whatever_came_before(tmp_path: Path) -> None:
    (tmp_path / "catalyst.toml").write_text("")
    server = _start(tmp_path)
    replies = _Replies(server.stdout)
    passed: list[dict] = []
    try:

        def send(message: dict) -> None:
            server.stdin.write(_frame(json.dumps(message).encode()))
            server.stdin.flush()

        def request(number, method: str, params=None, **fields) -> dict:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": method,
                    **({} if params is None else {"params": params}),
                    **fields,
                }
            )
            return replies.answer(number, passed)

        # Bytes that are no message, each framed or misframed in its own way.
        server.stdin.write(_frame(b"{{{{"))  # not JSON: a parse error, with a null id
        server.stdin.write(_frame(b"[1, 2]"))  # JSON, no message: an invalid request
        server.stdin.write(_frame(b"[" * 100_000 + b"]" * 100_000))  # nested past the decoder's depth
        server.stdin.write(b"Content-Length: ten\r\n\r\n{}")  # no length: the body is dropped before the next header
        server.stdin.write(b"Content-Length: 999999999999999\r\n\r\n" + b"x" * 100)  # refused, never allocated
        server.stdin.write(b"X-Padding: " + b"y" * 1_000_000 + b"\r\n")  # a header line of a megabyte
        server.stdin.write(
            _frame(b'{"jsonrpc": "2.0", "id": 90, "method": "shutdown"}')[:-30].replace(b"Length: 50", b"Length: 20")
        )
        # Before initialize, LSP's answer: not initialized (a notification is dropped).
        early = {"textDocument": {"uri": (tmp_path / "a.yaml").as_uri()}, "position": {"line": 0, "character": 0}}
        assert request(30, "textDocument/hover", early)["error"] == {
            "code": -32002,
            "message": "textDocument/hover: the server is not initialized yet: the first request is initialize",
        }
        send({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": early})
        # ... then a valid request, after a body shorter than its length said: answered.
        assert "capabilities" in request(1, "initialize", {"capabilities": {}, "rootUri": tmp_path.as_uri()})["result"]
        assert [(m["id"], m["error"]["code"]) for m in passed] == [
            (None, -32700),
            (None, -32600),
            (None, -32700),
            (None, -32700),
            (None, -32700),
        ]

        # Requests of the wrong shape: each answered with what is wrong in it.
        gone = {"textDocument": {"uri": (tmp_path / "gone.yaml").as_uri()}, "position": {"line": 0, "character": 0}}
        errors = {
            2: request(2, "textDocument/hover", {**gone, "position": "x"}),
            3: request(3, "textDocument/completion", {"position": gone["position"]}),
            4: request(4, "textDocument/hover", [1, 2]),
            5: request(5, "textDocument/definition"),
            6: request(6, "textDocument/hover", {**gone, "position": {"line": -1, "character": 0}}),
            # Numbers that are no line: a fraction, a boolean, text (each was read as a line).
            8: request(8, "textDocument/hover", {**gone, "position": {"line": 4.5, "character": 0}}),
            9: request(9, "textDocument/hover", {**gone, "position": {"line": True, "character": 0}}),
            10: request(10, "textDocument/hover", {**gone, "position": {"line": "4", "character": 0}}),
        }
        assert {n: e["error"]["code"] for n, e in errors.items()} == dict.fromkeys(errors, -32602)
        assert errors[2]["error"]["message"] == (
            "textDocument/hover: invalid params: invalid value for type, expected int at params.position.line; "
            "invalid value for type, expected int at params.position.character"
        )
        assert (
            errors[3]["error"]["message"]
            == "textDocument/completion: invalid params: required field missing at params.textDocument"
        )
        assert "expected TextDocumentIdentifier at params.textDocument" in errors[4]["error"]["message"]
        assert (
            errors[5]["error"]["message"] == "textDocument/definition: invalid params: required field missing at params"
        )
        assert (
            "Position.line should be in range [0:2147483647], but was -1 at params.position"
            in errors[6]["error"]["message"]
        )
        for n, shown in ((8, "4.5"), (9, "True"), (10, "'4'")):
            assert errors[n]["error"]["message"] == (
                f"textDocument/hover: invalid params: {shown} is not a whole number at params.position.line"
            )
        assert request(7, "textDocument/hover", gone, jsonrpc="1.0")["error"]["code"] == -32600
        assert request(11, "no/such-method")["error"]["code"] == -32601  # params left out, as JSON-RPC allows
        send({"id": 12, "method": "textDocument/hover", "params": gone})  # no "jsonrpc": answered by its id
        assert replies.answer(12)["error"]["code"] == -32600
        # A method that is no name (JSON-RPC wants a string): an invalid request, by its id;
        # as a notification, only logged.
        for number, method, kind in [
            (13, {"textDocument": {"uri": "x"}}, "an object"),
            (14, ["shutdown"], "an array"),
            (15, 7, "a number"),
            (16, None, "null"),
            (17, {"jsonrpc": "2.0", "method": "exit"}, "an object"),  # a message inside, never read as one
        ]:
            send({"jsonrpc": "2.0", "id": number, "method": method})
            assert replies.answer(number)["error"] == {
                "code": -32600,
                "message": f"the method must be a string, not {kind}",
            }
        send({"jsonrpc": "2.0", "method": {"not": "a name"}, "params": {}})
        # A command the server does not have; a cancellation of an id no request can have.
        assert request(18, "workspace/executeCommand", {"command": "rm -rf", "arguments": [{}]})["error"] == {
            "code": -32602,
            "message": "workspace/executeCommand: the server has no command 'rm -rf'",
        }
        send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": {"not": "an id"}}})
        # An id that is neither a number nor a string cannot be answered by it: a null id.
        send({"jsonrpc": "2.0", "id": {"not": "an id"}, "method": "textDocument/hover", "params": gone})
        # A notification of the wrong shape is only logged; a response to nothing, too.
        send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 5}})
        send({"jsonrpc": "2.0", "id": "never-asked"})
        send({"method": "textDocument/didSave", "params": gone})  # a notification without "jsonrpc": no answer
        # A change to a document never opened: nothing to apply it to, no error shown.
        send(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": gone["textDocument"]["uri"], "version": 2},
                    "contentChanges": [{"text": "x"}],
                },
            }
        )
        passed.clear()
        assert request(8, "textDocument/hover", gone) == {"id": 8, "jsonrpc": "2.0", "result": None}
        assert [(m.get("id"), m.get("error", {}).get("code")) for m in passed] == [
            (None, -32600)
        ]  # no window/showMessage
        assert request(9, "shutdown")["result"] is None
        assert request(10, "textDocument/hover", gone)["error"] == {
            "code": -32600,
            "message": "textDocument/hover: the server is shutting down",
        }
        server.stdin.write(_frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        server.stdin.flush()
        assert server.wait(30) == 0
        logged = server.stderr.read().decode("utf-8", "replace")
        for what in (
            "bytes was dropped (the limit is 4096)",
            "a message of 999999999999999 bytes was refused",
            "notification ignored, textDocument/didOpen: invalid params",
            "notification ignored: the method must be a string, not an object",
            "textDocument/didSave before initialize, ignored",
            "$/cancelRequest ignored: the id must be a number or a string, not {'not': 'an id'}",
            "a response that cannot be read was ignored",
            "gone.yaml, which is not open, was ignored",
        ):
            assert what in logged
        assert "Traceback" not in logged  # the client's mistakes, told in one line each
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


async def _requests(editor, uri: str) -> dict:
    """Every kind of request about `uri`, answered."""
    client = editor.client
    where = {"text_document": lsp.TextDocumentIdentifier(uri=uri), "position": lsp.Position(line=0, character=1)}
    return {
        "hover": await client.text_document_hover_async(lsp.HoverParams(**where)),
        "completion": await client.text_document_completion_async(lsp.CompletionParams(**where)),
        "definition": await client.text_document_definition_async(lsp.DefinitionParams(**where)),
        "references": await client.text_document_references_async(
            lsp.ReferenceParams(**where, context=lsp.ReferenceContext(include_declaration=True))
        ),
        "symbols": await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=where["text_document"])
        ),
    }


async def _hostile_session(workspace: Path, outside: Path) -> None:
    async with session(workspace) as editor:
        good = editor.open(workspace / "playbooks" / "good.yaml")
        broken = (workspace / "playbooks" / "broken.yaml").as_uri()
        await editor.until(broken, lambda ds: [d.code for d in ds] == ["C501"])

        # Not a playbook: ordinary YAML, Markdown prose, text that is not YAML at all.
        for name, text in (
            ("data.yaml", "items: [1, 2\n"),
            ("notes.md", "# Notes\n\nNothing to run.\n"),
            ("noise.yaml", "\x00\x01 }{ :: - -\n"),
        ):
            uri = editor.open(workspace / "playbooks" / name, text)
            await editor.until(uri, lambda ds: True)
            answers = await _requests(editor, uri)
            assert answers["hover"] is None and answers["definition"] is None

        # Names the file system refuses: one too long is a buffer of the workspace all the
        # same, checked; one holding a NUL names no file (as an `untitled:` one): nothing to say.
        for name, codes in (("a" * 300 + ".yaml", ["C501"]), ("nul%00.yaml", [])):
            uri = (workspace / "playbooks").as_uri() + "/" + name
            editor.client.text_document_did_open(
                lsp.DidOpenTextDocumentParams(
                    text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=BROKEN)
                )
            )
            assert [d.code for d in await editor.until(uri, lambda ds: ds is not None)] == codes
            assert (await _requests(editor, uri))["definition"] is None

        # A 5 MB buffer: the size finding, as catalyst check gives it, and every request answered.
        big = editor.open(workspace / "playbooks" / "big.yaml", GOOD + "# " + "x" * (5 * 1024 * 1024) + "\n")
        assert [d.code for d in await editor.until(big, lambda ds: len(ds) > 0)] == ["C015"]
        answers = await _requests(editor, big)
        assert answers["hover"] is None and not answers["completion"].items and not answers["symbols"]

        # URIs outside the workspace, directly and through a link inside it: nothing is
        # answered, and the file there is never opened (a FIFO: reading it would block, and
        # a writer could then open it).
        for uri in (
            (outside / "trap.yaml").as_uri(),
            (workspace / "playbooks" / "link.yaml").as_uri(),
            "file:///etc/passwd",
            "untitled:Untitled-1",
        ):
            editor.client.text_document_did_open(
                lsp.DidOpenTextDocumentParams(
                    text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=GOOD)
                )
            )
            answers = await _requests(editor, uri)
            assert answers["hover"] is None and answers["definition"] is None
            assert not answers["completion"].items and not answers["references"] and not answers["symbols"]
            # Nothing of its own; the library check (whenever it runs) may say of the link
            # what catalyst check says of it.
            found = await editor.until(uri, lambda ds: True)
            # (the language server's own words, or the library check's, whichever ran last)
            assert all(
                "links to a file outside the workspace" in d.message
                or "link that leads outside the project" in d.message
                for d in found
            ) and (not found or "link" in uri)

        # A storm of edits: the diagnostics that stay are those of the last text.
        for i in range(1000):
            editor.change(good, GOOD + f"  - display: '{{{{ edit{i} }}}}'\n")
        final = await editor.until(
            good, lambda ds: [d.message for d in ds] == ["'edit999' is not defined"], timeout=120
        )
        assert final[0].range.start.line == 5

        # Deleted while open, and deleted while not open: their findings go once the
        # library is checked again; the server keeps answering.
        (workspace / "playbooks" / "good.yaml").unlink()
        (workspace / "playbooks" / "broken.yaml").unlink()
        editor.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=good))
        )
        await editor.until(good, lambda ds: len(ds) == 0)
        await editor.until(broken, lambda ds: len(ds) == 0)
        assert (await _requests(editor, good))["hover"] is None

    # Never read outside: nobody ever opened the FIFO for reading.
    with pytest.raises(OSError) as no_reader:
        os.open(outside / "trap.yaml", os.O_WRONLY | os.O_NONBLOCK)
    assert no_reader.value.errno == errno.ENXIO


@pytest.mark.slow
def test_the_server_survives_hostile_documents(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    (workspace / "playbooks").mkdir(parents=True)
    outside.mkdir()
    (workspace / "catalyst.toml").write_text("")
    (workspace / "playbooks" / "good.yaml").write_text(GOOD)
    (workspace / "playbooks" / "broken.yaml").write_text(BROKEN)
    os.mkfifo(outside / "trap.yaml")
    (workspace / "playbooks" / "link.yaml").symlink_to(outside / "trap.yaml")
    asyncio.run(_hostile_session(workspace, outside))
