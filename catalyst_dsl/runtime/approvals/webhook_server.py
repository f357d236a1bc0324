"""The webhook receiver's HTTP server: uvicorn parses HTTP, catalyst keeps its limits.

HTTP/1.1 is parsed by uvicorn (with h11, pure Python: no compiled extras needed), a
well-kept server that teams already deploy, rather than by code of our own. catalyst
serves it one plain ASGI application: two routes do not need a framework. uvicorn does not
bound slow or numerous clients by itself (its documentation sends that to a proxy), so the
receiver adds the limits it has always had (`Limits`), at two places:

- **per connection** (`_guarded`, a subclass of uvicorn's h11 protocol): at most
  `per_client` connections from one address and `max_connections` in all, an excess one
  answered 503 and closed before anything of it is read; the head (request line and
  headers) must arrive within `head_seconds` of the connection, a deadline for the whole
  head (408, then closed); a head of at most `max_head` bytes (431); a request h11 cannot
  read is 400;
- **per request** (`ReceiverServer._app`): a length stated up front (411: no chunked
  bodies), a body of at most `max_body` (413), the bodies being read at once under
  `bodies_in_flight` bytes together (503), the body within `body_seconds` of the head
  (408); the delivery is then answered by a pool of `workers` threads, of which at most
  `queued` requests may wait (503).

`GET /healthz` answers 200 while the receiver serves, for a load balancer or an
orchestrator. Stopping (`shutdown`, or SIGINT/SIGTERM when serving on the main thread) is
uvicorn's graceful shutdown: no new connection is taken, and the deliveries being answered
are finished first (for at most `grace_seconds`).

One request per connection (`Connection: close`): GitHub sends one delivery each.
"""

from __future__ import annotations

import asyncio
import http
import json
import logging
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from catalyst_dsl._internal.records import record

#: GitHub's deliveries are at most 25 MB; a review's is a few KB.
MAX_BODY = 1024 * 1024
#: More digits than any body limit has (a stated length is refused as too long unread).
_MAX_DIGITS = 18
#: How long the rest of a refused request is read and dropped before the answer.
LINGER_SECONDS = 1.0


@record
class Limits:
    head_seconds: float = 10.0
    body_seconds: float = 30.0
    max_connections: int = 256
    per_client: int = 16
    max_head: int = 16 * 1024
    max_body: int = MAX_BODY
    #: The bodies being read at once may hold at most this many bytes together.
    bodies_in_flight: int = 8 * MAX_BODY
    workers: int = 1
    queued: int = 32
    #: How long a stop waits for the deliveries being answered.
    grace_seconds: float = 10.0


@record
class Request:
    method: str
    path: str
    #: Header names in lower case; a repeated header keeps its last value.
    headers: dict[str, str]
    body: bytes
    client: str

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@record
class Response:
    status: int
    body: dict[str, Any]


#: Answers a whole request; runs on a worker thread of the pool.
Responder = Callable[[Request], Response]


class _Book:
    """What the server holds now, shared by every connection (all on the loop's thread)."""

    def __init__(self, limits: Limits, log: Callable[[str], None]) -> None:
        self.limits = limits
        self.log = log
        self.total = 0
        self.open: dict[str, int] = {}
        #: Addresses told once that they hold too many connections (until they hold none).
        self.warned: set[str] = set()
        self.body_bytes = 0
        self.waiting = 0

    def admit(self, client: str) -> bool:
        limits = self.limits
        if self.total < limits.max_connections and self.open.get(client, 0) < limits.per_client:
            self.total += 1
            self.open[client] = self.open.get(client, 0) + 1
            return True
        if client not in self.warned:
            self.warned.add(client)
            held = self.open.get(client, 0)
            why = (
                f"{held} connections from it are open (at most {limits.per_client})"
                if held >= limits.per_client
                else f"{self.total} connections are open (at most {limits.max_connections})"
            )
            self.log(f"refusing connections from {client}: {why}")
        return False

    def leave(self, client: str) -> None:
        self.total -= 1
        self.open[client] -= 1
        if not self.open[client]:
            del self.open[client]
            self.warned.discard(client)


def _guarded(book: _Book):
    """uvicorn's h11 protocol with the per-connection limits (the module docstring)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Guarded(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._address = str(self.client[0]) if self.client else "-"
            self._admitted = book.admit(self._address)
            self._head_timer = None
            self._unreadable = 400
            #: The bytes of the head so far (one request per connection: then no more).
            self._head = bytearray()
            if not self._admitted:
                transport.write(_encode(Response(503, {"error": "too many connections; try again later"})))
                transport.close()
                return
            self._head_timer = self.loop.call_later(book.limits.head_seconds, self._head_late)
            read = self.conn.next_event

            def next_event():
                try:
                    return read()
                except h11.RemoteProtocolError as error:  # what h11 says of it (431: the head is too long)
                    self._unreadable = error.error_status_hint
                    raise

            self.conn.next_event = next_event

        def data_received(self, data: bytes) -> None:
            if not self._admitted:
                return
            if self.cycle is None:
                # h11 bounds a head still arriving; one that arrives whole in one read is
                # measured here, so every head over the limit is refused alike.
                self._head += data
                end = self._head.find(b"\r\n\r\n")
                if (end + 4 if end >= 0 else len(self._head)) > book.limits.max_head:
                    self._unreadable = 431
                    self.send_400_response("")
                    return
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and self._head_timer is not None:
                self._head_timer.cancel()  # the head is in: the body has a deadline of its own
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self.cycle is None and not self.transport.is_closing():
                seconds = book.limits.head_seconds
                late = Response(408, {"error": f"the request's head did not arrive within {seconds:g}s"})
                self.transport.write(_encode(late))
                self.transport.close()

        def send_400_response(self, msg: str) -> None:
            if self._unreadable == 431:
                refused = Response(431, {"error": f"the request's head is longer than {book.limits.max_head} bytes"})
            else:
                refused = Response(400, {"error": "not an HTTP/1.1 request this receiver can read"})
            self.transport.write(_encode(refused))
            self.transport.close()

        def connection_lost(self, exc) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            if self._admitted:
                self._admitted = False
                book.leave(self._address)
            super().connection_lost(exc)

    return Guarded


class ReceiverServer:
    """Bound on creation (port 0 picks a free one, see `server_address`); `serve_forever`
    serves on the calling thread until `shutdown` (from another thread) or, on the main
    thread, SIGINT or SIGTERM."""

    def __init__(
        self,
        host: str,
        port: int,
        respond: Responder,
        *,
        log: Callable[[str], None] = lambda line: None,
        limits: Limits | None = None,
    ) -> None:
        import uvicorn

        self.limits = limits or Limits()
        self._respond = respond
        self._log = log
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.create_server((host, port), family=family, backlog=128)
        self.server_address = self.socket.getsockname()[:2]
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.limits.workers), thread_name_prefix="catalyst-webhook")
        self._book = _Book(self.limits, log)
        # uvicorn's own lines (its start, its stop) are not the receiver's log; its errors
        # still reach Python's logging.
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
        config = uvicorn.Config(
            self._app,
            http=_guarded(self._book),
            interface="asgi3",
            # The address a connection comes from is the one the limits count, never a
            # header a client could write (behind a proxy, that is the proxy's: docs/teams.md).
            proxy_headers=False,
            loop="asyncio",
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            date_header=False,
            h11_max_incomplete_event_size=self.limits.max_head,
            timeout_graceful_shutdown=max(1, round(self.limits.grace_seconds)),
        )
        self._server = uvicorn.Server(config)
        self._done = threading.Event()
        self._done.set()

    #: What the server holds now (for tests and the log).
    @property
    def _total(self) -> int:
        return self._book.total

    @property
    def _body_bytes(self) -> int:
        return self._book.body_bytes

    # -- lifecycle

    def serve_forever(self) -> None:
        self._done.clear()
        try:
            if not self._server.should_exit:
                self._server.run(sockets=[self.socket])
        finally:
            self._done.set()

    def shutdown(self) -> None:
        """Stop `serve_forever` gracefully and wait until it has returned."""
        self._server.should_exit = True
        self._done.wait()

    def server_close(self) -> None:
        self._pool.shutdown(wait=False)
        self.socket.close()

    # -- one request

    async def _app(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        client = str(scope["client"][0]) if scope.get("client") else "-"
        try:
            request = await self._read(scope, receive, client)
            if isinstance(request, Request):
                response = await self._answer(request)
            else:
                response = request
                await self._drop_body(receive)
        except _Gone:
            return  # the client went away: nobody to answer
        data = json.dumps(response.body).encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": [
                    (b"server", b"catalyst-webhooks"),
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(data)).encode("ascii")),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})

    async def _read(self, scope, receive, client: str) -> Request | Response:
        """The whole request, or the answer that refuses it."""
        limits, book = self.limits, self._book
        method, path = scope["method"], scope["path"]
        if path == "/healthz":
            return Response(200, {"ok": True}) if method in ("GET", "HEAD") else Response(405, {"error": "GET it"})
        if method != "POST":
            return Response(405, {"error": "GitHub posts deliveries to /github"})
        if path != "/github":
            return Response(404, {"error": "deliveries go to /github"})
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        stated = (headers.get("content-length") or "").strip()
        if not stated.isascii() or not stated.isdigit() or "transfer-encoding" in headers:
            return Response(411, {"error": "a delivery must state its length (Content-Length)"})
        digits = stated.lstrip("0") or "0"
        length = int(digits) if len(digits) <= _MAX_DIGITS else limits.max_body + 1
        if length > limits.max_body:
            return Response(413, {"error": f"a delivery may be at most {limits.max_body} bytes"})
        if book.body_bytes + length > limits.bodies_in_flight:
            return Response(503, {"error": "too many large deliveries are arriving at once; try again later"})
        book.body_bytes += length
        try:
            body = bytearray()
            async with asyncio.timeout(limits.body_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise _Gone()
                    body += message.get("body", b"")
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return Response(408, {"error": f"the body did not arrive within {limits.body_seconds:g}s"})
        finally:
            book.body_bytes -= length
        return Request(method, path, headers, bytes(body), client)

    async def _drop_body(self, receive) -> None:
        """Read and drop, briefly, what a refused client is still sending: closing at once
        would reset the connection under its upload, and it would never see the answer."""
        dropped = 0
        try:
            async with asyncio.timeout(LINGER_SECONDS):
                while dropped <= self.limits.max_body:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    dropped += len(message.get("body", b""))
                    if not message.get("more_body", False):
                        return
        except TimeoutError:
            pass

    async def _answer(self, request: Request) -> Response:
        book = self._book
        if book.waiting >= self.limits.queued:
            return Response(503, {"error": "too many deliveries are waiting; try again later"})
        book.waiting += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, self._respond, request)
        except Exception as error:  # a bug of ours: the client gets 500, the receiver keeps serving
            self._log(f"internal error answering {request.client}: {type(error).__name__}: {error}")
            return Response(500, {"error": "internal error of the receiver"})
        finally:
            book.waiting -= 1


class _Gone(Exception):
    """The client disconnected before its request was whole."""


def _encode(response: Response) -> bytes:
    """A whole answer as bytes, for the refusals made before uvicorn has a request to answer."""
    data = json.dumps(response.body).encode("utf-8")
    try:
        phrase = http.HTTPStatus(response.status).phrase
    except ValueError:
        phrase = ""
    head = (
        f"HTTP/1.1 {response.status} {phrase}\r\nServer: catalyst-webhooks\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + data
