"""The server's stdin reader on its own (framing.GuardedInput), over a real pipe."""

from __future__ import annotations

import os
import threading
import time

from catalyst_dsl.lsp.framing import MAX_HEADER_LINE, REFUSED, GuardedInput


def _pipe(data: bytes, close: bool = True) -> tuple[GuardedInput, int]:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    if close:
        os.close(write_end)
    return GuardedInput(os.fdopen(read_end, "rb")), write_end


def test_pending_says_whether_input_waits() -> None:
    wire, write_end = _pipe(b"", close=False)
    assert not wire.pending()
    os.write(write_end, b"Content-Length: 2\r\n\r\n{}")
    assert wire.pending()  # in the pipe, not read yet
    assert wire.readline() == b"Content-Length: 2\r\n"
    assert wire.pending()  # read into the buffer, not handled yet
    assert wire.readline() == b"\r\n" and wire.read(2) == b"{}"
    assert not wire.pending()
    os.close(write_end)


def test_lines_and_lengths_past_the_limits() -> None:
    wire, _ = _pipe(
        b"x" * (3 * MAX_HEADER_LINE) + b"\r\n" + b"junk}Content-Length: 7\r\n" + b"y" * (2 * MAX_HEADER_LINE)
    )
    assert wire.readline() == b"(dropped)\r\n"  # an overlong line: dropped, and not taken for the end
    assert wire.readline() == b"Content-Length: 7\r\n"  # found after the leftovers before it
    assert wire.read(10**15) == REFUSED  # never allocated
    assert wire.readline() == b""  # an overlong line cut by the end of input: the end


def test_a_message_begun_but_never_finished_is_not_pending() -> None:
    # Garbage without an end, or a client slow to send a body: the reader waits for the
    # rest, and the checks must not wait for it too.
    wire, write_end = _pipe(b"Content-Length: 2\r\n\r\n{", close=False)
    assert wire.readline() == b"Content-Length: 2\r\n" and wire.readline() == b"\r\n"
    body: list[bytes] = []
    reader = threading.Thread(target=lambda: body.append(wire.read(2)))
    reader.start()
    deadline = time.monotonic() + 30  # a bound against a hang only
    while wire.pending() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not wire.pending()
    os.write(write_end, b"}")
    reader.join(30)
    assert body == [b"{}"]
    os.close(write_end)
