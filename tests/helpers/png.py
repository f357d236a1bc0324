"""Read the pixels of a PNG (what a headless browser's screenshot is), without a library:
8-bit RGB or RGBA, not interlaced, as Chromium writes them."""

from __future__ import annotations

import struct
import zlib


class Picture:
    def __init__(self, width: int, height: int, rows: list[bytes], channels: int) -> None:
        self.width, self.height, self.rows, self.channels = width, height, rows, channels

    def pixel(self, x: float, y: float) -> tuple[int, int, int]:
        row, at = self.rows[int(y)], int(x) * self.channels
        return row[at], row[at + 1], row[at + 2]

    def colours(self) -> set[tuple[int, int, int]]:
        return {self.pixel(x, y) for y in range(0, self.height, 3) for x in range(0, self.width, 3)}


def read_png(data: bytes) -> Picture:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, chunks, header = 8, [], None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and not interlace, f"unsupported PNG: depth {depth}, colour type {colour}"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return Picture(width, height, rows, channels)
