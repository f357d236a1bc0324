"""A language server in this process, spoken to over pipes, for the `lsp` fuzz target.

Starting `catalyst lsp` for every input would leave time for a few inputs a second; one
server takes them all, as an editor's session does. An input is a document's text, then
message bodies, separated by NUL bytes; `$URI` in a body stands for the document's URI.
The document is opened, the messages are sent (each framed with its Content-Length), the
document is closed, and a request the server must answer follows. The input broke the
server when that answer does not come within `ANSWER_SECONDS`, or when a handler, the
checking thread or the message reader failed with a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import tempfile
import threading
from pathlib import Path

#: Long enough for a check of a large document on a busy machine, short enough for a fuzzer.
ANSWER_SECONDS = 20.0
#: Messages that would end the session or start it again: not sent.
SESSION_METHODS = {"initialize", "shutdown", "exit"}


class ServerBroke(AssertionError):
    """The input made the server fail: the message says how."""


class _Failures(logging.Handler):
    """Log records with a traceback, from the server's threads."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.found.append(self.format(record))


class Session:
    def __init__(self) -> None:
        from catalyst_dsl.lsp.framing import GuardedInput
        from catalyst_dsl.lsp.server import build

        self.project = Path(tempfile.mkdtemp(prefix="catalyst-fuzz-lsp-"))
        (self.project / "catalyst.toml").write_text("", encoding="utf-8")
        (self.project / "playbooks").mkdir()
        read_in, self._write_in = os.pipe()
        read_out, write_out = os.pipe()
        wire = GuardedInput(os.fdopen(read_in, "rb", buffering=0))
        self.server = build()
        self.server.edits.busy = wire.pending
        self.errors: list[str] = []
        reported = self.server.report_server_error

        def report(error: Exception, source) -> None:
            from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

            # The client's mistakes, answered as JSON-RPC says: an unknown method, a body
            # that is not JSON (server.py answers it with a parse error).
            answered = isinstance(error, JsonRpcMethodNotFound) or (
                source is JsonRpcException and isinstance(error, (ValueError, RecursionError))
            )
            if not answered:
                self.errors.append(f"{getattr(source, '__name__', source)}: {error!r}")
            reported(error, source)

        self.server.report_server_error = report
        self.failures = _Failures()
        uncaught = threading.excepthook

        def died(args) -> None:  # a thread of the server ended on an exception
            self.errors.append(f"the thread {args.thread.name if args.thread else '?'} died: {args.exc_type.__name__}")
            uncaught(args)

        threading.excepthook = died
        logging.getLogger().addHandler(self.failures)
        logging.getLogger("pygls").setLevel(logging.CRITICAL)  # its warnings are the fuzzer's noise
        logging.getLogger("catalyst.lsp").setLevel(logging.ERROR)
        self._answers: queue.Queue = queue.Queue()
        self._out = os.fdopen(read_out, "rb", buffering=0)
        self._serving = threading.Thread(
            target=self.server.start_io,
            kwargs={"stdin": wire, "stdout": os.fdopen(write_out, "wb", buffering=0)},
            name="fuzz-lsp-server",
            daemon=True,
        )
        self._serving.start()
        threading.Thread(target=self._read_answers, name="fuzz-lsp-client", daemon=True).start()
        self._next_id = 0
        self._version = 0
        self._ask("initialize", {"capabilities": {}, "rootUri": self.project.as_uri()})
        self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def take(self, data: bytes) -> None:
        text, *bodies = data.split(b"\0")
        name = "fuzz.md" if text.startswith((b"---\n", b"#")) else "fuzz.yaml"
        uri = (self.project / "playbooks" / name).as_uri()
        self._version += 1
        document = {"uri": uri, "languageId": "yaml", "version": self._version}
        document["text"] = text.decode("utf-8", "replace")
        self._send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}})
        for body in bodies:
            body = body.replace(b"$URI", uri.encode())
            if not _ends_the_session(body):
                self._frame(body)
        close = {"textDocument": {"uri": uri}}
        self._send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": close})
        # A request the server answers without reading any file: it still reads messages.
        self._ask(
            "textDocument/hover", {"textDocument": {"uri": "untitled:ping"}, "position": {"line": 0, "character": 0}}
        )
        broken = self.errors + self.failures.found
        self.errors.clear()
        self.failures.found.clear()
        if broken:
            raise ServerBroke("\n".join(broken))

    def close(self) -> None:
        """End the server's input: its reading thread (from Python's own pool, which is
        joined when the interpreter exits) returns instead of waiting for ever."""
        os.close(self._write_in)
        self._serving.join(timeout=10)

    def _ask(self, method: str, params: dict) -> None:
        self._next_id += 1
        ident = f"fuzz-{self._next_id}"
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            try:
                answer = self._answers.get(timeout=ANSWER_SECONDS)
            except queue.Empty:
                raise ServerBroke(f"no answer to {method} within {ANSWER_SECONDS:.0f} s") from None
            if answer is None:
                raise ServerBroke("the server closed its output")
            if answer.get("id") == ident:
                return

    def _send(self, message: dict) -> None:
        self._frame(json.dumps(message).encode("utf-8"))

    def _frame(self, body: bytes) -> None:
        os.write(self._write_in, b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _read_answers(self) -> None:
        """Every message the server writes, decoded, as it comes (None at the end)."""
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = self._out.read(1)
                if not byte:
                    self._answers.put(None)
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            body = b""
            while len(body) < length:
                body += self._out.read(length - len(body))
            message = json.loads(body)
            if isinstance(message, dict) and "id" in message and "method" not in message:
                self._answers.put(message)


def _ends_the_session(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    messages = message if isinstance(message, list) else [message]
    # A method may be any JSON value in a hostile message: only a name can end the session.
    return any(
        isinstance(m, dict) and isinstance(m.get("method"), str) and m["method"] in SESSION_METHODS for m in messages
    )


_SESSION: list[Session] = []


def shared_session() -> Session:
    """The one session of this process, started on first use."""
    if not _SESSION:
        _SESSION.append(Session())
    return _SESSION[0]


def close_shared_session() -> None:
    """End the session, if one was started (a test process ends it before it exits)."""
    while _SESSION:
        _SESSION.pop().close()
