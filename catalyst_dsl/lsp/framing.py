"""The server's stdin, read so that no header or length a client sends can stall or kill it.

pygls's reading loop asks its input for header lines (`readline`) until a blank one, then
for the body (`read(n)`, n from `Content-Length`). Given the raw stream, a header line of
gigabytes is read whole into memory, a `Content-Length` of 10^15 makes `read` allocate
it (the MemoryError ends the server), and a body shorter than its stated length leaves
the rest of it in front of the next header, so that header is missed. `GuardedInput`
stands in for the stream:

- a header line longer than `MAX_HEADER_LINE` is read and dropped a piece at a time;
- a `Content-Length` above `MAX_BODY` is refused without reading: the body's bytes are
  then taken for header lines and dropped, up to the next header;
- a header glued to the end of leftover bytes (`...}Content-Length: 52`) is found there.

A refused or dropped message is logged; the body given to pygls in its place is not JSON,
so it is answered as any unreadable body is (messages.py).

It reads the descriptor through a buffer of its own, so it can also tell whether input is
waiting that the server has not handled yet (`pending`): the checks of edits wait for a
burst of them to be read (latest.py).
"""

from __future__ import annotations

import logging
import os
import re
import select
from typing import BinaryIO

log = logging.getLogger("catalyst.lsp")

#: Longer than any header a client sends (`Content-Type: application/vscode-jsonrpc; ...`).
MAX_HEADER_LINE = 4096
#: A message that opens a 5 MB file (the largest catalyst reads) is about that much JSON,
#: more when its text needs escapes.
MAX_BODY = 64 * 1024 * 1024
#: What pygls decodes in place of a message that was refused: not JSON, so it is
#: answered with a parse error.
REFUSED = b"(refused)"

_HEADER = b"Content-Length:"
_LENGTH = re.compile(rb"Content-Length: \d+\r\n\Z")  # as pygls reads it


class GuardedInput:
    """stdin, read through a buffer of its own: it also tells whether more input is
    waiting (`pending`), so the checks of edits can wait for a burst to be read."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream  # kept open: its descriptor is read directly
        self._fd = stream.fileno()
        self._buffer = bytearray()
        self._ended = False
        #: Whether the reader is waiting for the rest of a line or body it has begun.
        self._waiting = False

    def pending(self) -> bool:
        """Whether bytes the server has not handled yet are waiting, read or not. The
        beginning of a message whose rest has not come is not: it may never come."""
        if self._buffer and not self._waiting:
            return True
        if self._ended:
            return False
        try:
            return bool(select.select([self._fd], [], [], 0)[0])
        except (OSError, ValueError):  # a pipe select cannot watch (Windows): no knowing
            return False

    def readline(self) -> bytes:
        line = self._line(MAX_HEADER_LINE)
        if len(line) == MAX_HEADER_LINE and not line.endswith(b"\n"):
            line = self._drop_long_line(line)
        glued = line.rfind(_HEADER)
        if glued > 0:  # leftover bytes of a message whose length was wrong, then a header
            log.warning(
                "%d bytes before a header were dropped (a message shorter or longer than its Content-Length?)", glued
            )
            return line[glued:]
        return line

    def read(self, size: int) -> bytes:
        if size > MAX_BODY:
            log.warning("a message of %d bytes was refused: more than the %d the server reads", size, MAX_BODY)
            return REFUSED
        while len(self._buffer) < size and self._fill():
            pass
        return self._take(size)

    def _line(self, limit: int) -> bytes:
        """Up to the next newline, at most `limit` bytes; b"" at the end of input."""
        while True:
            end = self._buffer.find(b"\n", 0, limit)
            if end >= 0:
                return self._take(end + 1)
            if len(self._buffer) >= limit or not self._fill():
                return self._take(limit)

    def _fill(self) -> bool:
        if self._ended:
            return False
        self._waiting = True
        try:
            chunk = os.read(self._fd, 65536)
        finally:
            self._waiting = False
        self._buffer += chunk
        self._ended = not chunk
        return bool(chunk)

    def _take(self, size: int) -> bytes:
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    def _drop_long_line(self, start: bytes) -> bytes:
        """Read the rest of an overlong line a piece at a time, keeping only its end (where
        a header may be glued on). Never empty, which would read as the end of input."""
        dropped, tail, piece = len(start), start, start
        while piece and not piece.endswith(b"\n"):
            piece = self._line(MAX_HEADER_LINE)
            dropped += len(piece)
            tail = (tail + piece)[-MAX_HEADER_LINE:]
        log.warning("a header line of %d bytes was dropped (the limit is %d)", dropped, MAX_HEADER_LINE)
        at = tail.rfind(_HEADER)
        if at >= 0 and _LENGTH.match(tail, at):
            return tail[at:]
        return b"(dropped)\r\n" if piece else b""  # at the end of input: end, as the stream would
