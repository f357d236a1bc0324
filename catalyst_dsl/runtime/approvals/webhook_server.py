"""The webhook receiver's HTTP server: one event loop holds every connection, a fixed pool answers.

A thread per connection lets a thousand slow clients take a thousand threads. Here a
connection costs a socket and its buffers on one asyncio loop; only a whole request (head
and body read in time) reaches the pool of `workers` threads, and only `queued` of them
may wait for it. The limits (`Limits`):

- the head (request line and headers) must arrive within `head_seconds` of the connection
  and the body within `body_seconds` after it: these are deadlines for the whole part,
  so a client sending a byte a second is cut off at the deadline like a silent one
  (408, then closed);
- at most `per_client` connections from one address and `max_connections` in all; an
  excess connection is answered 503 and closed at once, before anything of it is read;
- a head of at most `max_head` bytes (431), a body of at most `max_body` (413), and a
  length stated up front (411: no chunked bodies); the bodies being read at once stay
  under `bodies_in_flight` bytes together (503), so slow bodies cannot pile up memory.

One request per connection (`Connection: close`): GitHub sends one delivery each.
"""

from __future__ import annotations

import asyncio
import http
import json
import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from catalyst_dsl._internal.records import record

#: GitHub's deliveries are at most 25 MB; a review's is a few KB.
MAX_BODY = 1024 * 1024
_DIGITS = re.compile(r"[0-9]+")
#: How long an answered connection is read from (and what it sends dropped) before it is closed.
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


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.body)
        self.response = response


class ReceiverServer:
    """Bound on creation (port 0 picks a free one, see `server_address`); `serve_forever`
    serves on the calling thread until `shutdown` (from another thread) or Ctrl-C."""

    def __init__(
        self,
        host: str,
        port: int,
        respond: Responder,
        *,
        log: Callable[[str], None] = lambda line: None,
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._respond = respond
        self._log = log
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.create_server((host, port), family=family, backlog=128)
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()[:2]
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.limits.workers), thread_name_prefix="catalyst-webhook")
        self._open: dict[str, int] = {}
        self._total = 0
        self._waiting = 0
        self._body_bytes = 0
        #: Addresses told once that they hold too many connections (until they hold none).
        self._warned: set[str] = set()
        self._tasks: set[asyncio.Task] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = threading.Event()
        self._done = threading.Event()

    # -- lifecycle

    def serve_forever(self) -> None:
        self._done.clear()
        try:
            asyncio.run(self._serve())
        finally:
            self._done.set()

    def shutdown(self) -> None:
        """Stop `serve_forever` and wait until it has returned."""
        self._stopping.set()
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:
                pass  # the loop has ended already
            self._done.wait()

    def server_close(self) -> None:
        self._pool.shutdown(wait=False)
        self.socket.close()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self._stopping.is_set():
            return
        server = await asyncio.start_server(self._connection, sock=self.socket, limit=self.limits.max_head)
        try:
            await self._stop.wait()
        finally:
            server.close()
            # Connections still open end as if their clients had gone: no task is left to be
            # cancelled mid-read (asyncio 3.11 logs those as errors).
            for writer in list(self._writers):
                writer.transport.abort()
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=5)
            self._loop = None

    # -- one connection

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        client = str(peer[0]) if peer else "-"
        limits = self.limits
        if self._total >= limits.max_connections or self._open.get(client, 0) >= limits.per_client:
            self._refuse(writer, client)
            return
        self._total += 1
        self._open[client] = self._open.get(client, 0) + 1
        task = asyncio.current_task()
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            try:
                request = await self._read(reader, client)
                response = await self._answer(request)
            except _Refused as refused:
                response = refused.response
            except (asyncio.IncompleteReadError, OSError):
                return  # the client went away (reset, or a socket no longer connected)
            await self._send(reader, writer, response)
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            self._total -= 1
            self._open[client] -= 1
            if not self._open[client]:
                del self._open[client]
                self._warned.discard(client)
            writer.close()

    def _refuse(self, writer: asyncio.StreamWriter, client: str) -> None:
        """Answer 503 without reading anything, and close: no task waits on this client."""
        if client not in self._warned:
            self._warned.add(client)
            held = self._open.get(client, 0)
            why = (
                f"{held} connections from it are open (at most {self.limits.per_client})"
                if held >= self.limits.per_client
                else f"{self._total} connections are open (at most {self.limits.max_connections})"
            )
            self._log(f"refusing connections from {client}: {why}")
        writer.write(_encode(Response(503, {"error": "too many connections; try again later"})))
        writer.close()

    async def _read(self, reader: asyncio.StreamReader, client: str) -> Request:
        limits = self.limits
        try:
            async with asyncio.timeout(limits.head_seconds):
                head = await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise _Refused(
                Response(408, {"error": f"the request's head did not arrive within {limits.head_seconds:g}s"})
            ) from None
        except asyncio.LimitOverrunError:
            raise _Refused(
                Response(431, {"error": f"the request's head is longer than {limits.max_head} bytes"})
            ) from None
        method, path, headers = _parse_head(head)
        if method != "POST":
            raise _Refused(Response(405, {"error": "GitHub posts deliveries to /github"}))
        if path.split("?", 1)[0] != "/github":
            raise _Refused(Response(404, {"error": "deliveries go to /github"}))
        stated = (headers.get("content-length") or "").strip()
        # ASCII digits only: str.isdigit() also passes "²", which int() refuses.
        if not _DIGITS.fullmatch(stated) or "transfer-encoding" in headers:
            raise _Refused(Response(411, {"error": "a delivery must state its length (Content-Length)"}))
        digits = stated.lstrip("0") or "0"
        # More digits than any body limit has: too long, without asking int() (it refuses past 4300 digits).
        length = int(digits) if len(digits) <= 18 else limits.max_body + 1
        if length > limits.max_body:
            raise _Refused(Response(413, {"error": f"a delivery may be at most {limits.max_body} bytes"}))
        if self._body_bytes + length > limits.bodies_in_flight:
            raise _Refused(Response(503, {"error": "too many large deliveries are arriving at once; try again later"}))
        self._body_bytes += length
        try:
            async with asyncio.timeout(limits.body_seconds):
                body = await reader.readexactly(length)
        except TimeoutError:
            raise _Refused(
                Response(408, {"error": f"the body did not arrive within {limits.body_seconds:g}s"})
            ) from None
        finally:
            self._body_bytes -= length
        return Request(method, path, headers, body, client)

    async def _answer(self, request: Request) -> Response:
        if self._waiting >= self.limits.queued:
            return Response(503, {"error": "too many deliveries are waiting; try again later"})
        self._waiting += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, self._respond, request)
        except Exception as error:  # a bug of ours: the client gets 500, the receiver keeps serving
            self._log(f"internal error answering {request.client}: {type(error).__name__}: {error}")
            return Response(500, {"error": "internal error of the receiver"})
        finally:
            self._waiting -= 1

    async def _send(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, response: Response) -> None:
        writer.write(_encode(response))
        try:
            async with asyncio.timeout(self.limits.head_seconds):
                await writer.drain()  # a client that reads nothing cannot hold the answer forever
            if writer.can_write_eof():
                writer.write_eof()
            # A client refused before its body was read may still be sending it; closing now
            # would reset the connection and lose the answer. Read and drop what comes, briefly.
            async with asyncio.timeout(LINGER_SECONDS):
                dropped = 0
                while dropped <= self.limits.max_body:
                    chunk = await reader.read(64 * 1024)
                    if not chunk:
                        break
                    dropped += len(chunk)
        except OSError:
            # A timeout, or the client gone before the answer was all sent: a reset, or (its
            # reset seen by the kernel before the loop) a socket that is no longer connected
            # when it is shut down for writing. The client gets nothing more either way.
            pass


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _Refused(Response(400, {"error": "not an HTTP/1.x request"}))
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise _Refused(Response(400, {"error": "a header line is malformed"}))
        headers[name.lower()] = value.strip()
    return parts[0], parts[1], headers


def _encode(response: Response) -> bytes:
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
