"""Reading a file whole, up to a limit, without paying for the limit.

A buffered `read(limit)` sets aside `limit` bytes before it reads a byte (five
megabytes for a playbook of two kilobytes, given back at once): in a library of
thousands of files that was a large part of reading them. The file's size from the
file system sizes the first read instead; a file that grew meanwhile, or one with no
meaningful size (a pipe, a device), is read on until its end or the limit.
"""

from __future__ import annotations

import os

#: Opening a file to read it: bytes as they are on every system (O_BINARY is Windows's).
READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
#: A read after the first, when the file turned out larger than its size said.
_CHUNK = 1 << 16


def read_up_to(fd: int, limit: int, size: int) -> bytes:
    """At most `limit` bytes of the open file `fd` from where it stands, to its end;
    `size` is what the file system says it holds (`st_size`)."""
    chunks = []
    got = 0
    # One byte past the size: its end is then seen without a read that finds nothing.
    want = min(limit, max(size, 0) + 1)
    while got < limit:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        if len(chunk) < want and size > 0:
            break  # a short read of a file with a size: its end
        want = min(limit - got, _CHUNK)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_file(path: str, limit: int) -> tuple[bytes, int]:
    """At most `limit` bytes of the file at `path`, and its size as the file system gives
    it (0 for a pipe or a device). Raises OSError as `open` does."""
    fd = os.open(path, READ_FLAGS)
    try:
        size = os.fstat(fd).st_size
        return read_up_to(fd, limit, size), size
    finally:
        os.close(fd)
