"""Source files and spans: every position a diagnostic can point at."""

from __future__ import annotations

import bisect
import re

import attrs

#: Half of a UTF-16 surrogate pair standing alone: what undecodable bytes become on a
#: command line (surrogateescape) or a `\ud800` escape; no text can be saved or passed on
#: with one in it.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@attrs.frozen(order=True)
class Span:
    """A range in a file: 1-based lines and columns, end-exclusive."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "endLine": self.end_line,
            "endCol": self.end_col,
        }


@attrs.define
class SourceFile:
    """The text of one file, with the line table that turns offsets into positions.

    Offsets are character offsets into `text` (libyaml's marks count characters too).
    """

    path: str
    text: str
    _line_starts: list[int] = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        starts = [0]
        find = self.text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._line_starts = starts

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    def offset(self, line: int, col: int) -> int:
        """Offset of a 1-based line and column."""
        line = max(1, min(line, len(self._line_starts)))
        return min(self._line_starts[line - 1] + col - 1, len(self.text))

    def span(self, start: int, end: int | None = None) -> Span:
        end = start if end is None else max(end, start)
        line, col = self.position(start)
        end_line, end_col = self.position(end)
        return Span(self.path, line, col, end_line, end_col)

    def line_text(self, line: int) -> str:
        if line < 1 or line > len(self._line_starts):
            return ""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r")
