"""A real HTTP(S) server on 127.0.0.1 for the http-* tests, serving from a thread.

Routes (any method):

| path | answers |
| --- | --- |
| `/echo` | 200, JSON: method, path, query, headers, body (text) and json (the body parsed, or null) |
| `/json` | 200, `{"name": "widget", "count": 3, "tags": ["a", "b"]}` |
| `/text` | 200, `text/plain` "hello, world" |
| `/latin1` | 200, `text/plain; charset=iso-8859-1` "café" |
| `/status/CODE` | CODE with `{"message": "status CODE"}` (3xx also with `Location: /echo`) |
| `/slow?seconds=S` | 200 after S seconds |
| `/flaky/KEY?fail=N&status=500` | STATUS for the first N requests with KEY, then 200 `{"attempts": n}` |
| `/limited/KEY?times=N&after=S` | 429 with `Retry-After: S` N times, then 200 |
| `/drop` | headers promising 100 bytes, 11 of them, then the connection is closed |
| `/hangup` | the connection is closed before any answer |
| `/odd-length` | 200 whose `Content-Length` is `²` (a digit to str.isdigit(), not to int()), then closed |
| `/redirect/CODE` | CODE with `Location: /echo` |

`server.hits` lists every request as `{method, path, headers, body}`.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "LocalServer"

    def log_message(self, format, *args):  # noqa: A002 - the signature of the base class
        pass

    def do_GET(self):
        self._route()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

    def _route(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        segments = [s for s in parts.path.split("/") if s]
        with self.server.lock:
            self.server.hits.append(
                {"method": self.command, "path": parts.path, "headers": dict(self.headers.items()), "body": body}
            )
        route = segments[0] if segments else ""
        argument = segments[1] if len(segments) > 1 else ""
        if route == "echo":
            text = body.decode("utf-8", "replace")
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = None
            self._json(
                200,
                {
                    "method": self.command,
                    "path": parts.path,
                    "query": query,
                    "headers": dict(self.headers.items()),
                    "body": text,
                    "json": parsed,
                },
            )
        elif route == "json":
            self._json(200, {"name": "widget", "count": 3, "tags": ["a", "b"]})
        elif route == "text":
            self._send(200, b"hello, world", "text/plain")
        elif route == "latin1":
            self._send(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif route == "status":
            code = int(argument)
            extra = {"Location": "/echo"} if 300 <= code <= 399 else {}
            self._json(code, {"message": f"status {code}"}, extra)
        elif route == "slow":
            self.server.closing.wait(float(query.get("seconds", "2")))
            self._json(200, {"slow": True})
        elif route == "flaky":
            count = self.server.count(argument)
            if count <= int(query.get("fail", "1")):
                self._json(int(query.get("status", "500")), {"message": f"failure {count}"})
            else:
                self._json(200, {"attempts": count})
        elif route == "limited":
            count = self.server.count(argument)
            if count <= int(query.get("times", "1")):
                self._json(429, {"message": "slow down"}, {"Retry-After": query.get("after", "1")})
            else:
                self._json(200, {"attempts": count})
        elif route == "drop":
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"partial\":"
            )
            self.wfile.flush()
            self._hang_up()
        elif route == "hangup":
            self._hang_up()
        elif route == "odd-length":
            self.wfile.write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \u00b2\r\n\r\n{}".encode(
                    "latin-1"
                )
            )
            self.wfile.flush()
            self._hang_up()
        elif route == "redirect":
            self._json(int(argument), {"moved": True}, {"Location": "/echo"})
        else:
            self._json(404, {"message": "no such route"})

    def _json(self, status: int, value, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(value).encode("utf-8"), "application/json", headers)

    def _send(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _hang_up(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.tls = tls
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.hits: list[dict] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self._counters: dict[str, int] = {}
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.server_address[1]}"

    def count(self, key: str) -> int:
        with self.lock:
            self._counters[key] = self._counters.get(key, 0) + 1
            return self._counters[key]

    def handle_error(self, request, client_address) -> None:
        pass  # a client that gave up (a timeout test) is expected

    def __enter__(self) -> "LocalServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closing.set()
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


def wait_for(predicate, seconds: float = 2.0) -> bool:
    """Poll until `predicate()` holds (a request a server thread records) or the time is up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


class Logged(list):
    """What an action logged, as (level, message, data) tuples."""

    def text(self) -> str:
        return "\n".join(f"{level} {message} {data!r}" for level, message, data in self)


def action_context(
    tmp_path,
    action: str = "http-get",
    *,
    timeout: float | None = None,
    settings=None,
    secrets: dict[str, str] | None = None,
    performer=None,
    path: str = "steps/0",
    run_id: str = "20260101-000000-t-001",
):
    """An ActionContext over a throwaway project (writes allowed anywhere in it), and its log."""
    from pathlib import Path

    from catalyst_dsl.runtime.actions.context import ActionContext
    from catalyst_dsl.runtime.effects.gateway import EffectsGateway, RealPerformer
    from catalyst_dsl.runtime.effects.grants import Grants

    root = Path(tmp_path) / "project"
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tmp_path) / "scratch"
    scratch.mkdir(exist_ok=True)
    gateway = EffectsGateway(root, scratch, (Grants.of("t", None),), performer or RealPerformer())
    logged = Logged()
    ctx = ActionContext(
        run_id,
        action,
        action,
        gateway,
        (),
        timeout,
        lambda level, message, data: logged.append((level, message, data)),
        lambda stream, line: None,
        lambda name: None,
        settings=settings,
        secret=lambda name: (secrets or {}).get(name),
        path=path,
    )
    return ctx, logged
