"""Source files and spans: every position a diagnostic can point at."""

from __future__ import annotations

import bisect
from array import array

from catalyst_dsl._internal.lazy_pattern import LazyPattern

#: Half of a UTF-16 surrogate pair standing alone: what undecodable bytes become on a
#: command line (surrogateescape) or a `\ud800` escape; no text can be saved or passed on
#: with one in it.
LONE_SURROGATE = LazyPattern("[\ud800-\udfff]")

#: A lazy span's two offsets share one integer: the end in the low bits, the start above.
#: Files are at most a few MiB (compiler.MAX_FILE_BYTES), far below 2**32 characters.
_SHIFT = 32
_MASK = (1 << _SHIFT) - 1


class Span:
    """A range in a file: 1-based lines and columns, end-exclusive.

    A span made by `SourceFile.span` keeps its source and its two offsets, packed in one
    integer, and works out its lines and columns when first asked: a check makes a span
    for every node, and only the few that end up in a diagnostic are ever shown. A library
    of 2,000 playbooks holds about 300,000 spans, so each is kept small (two slots and one
    integer, where a tuple of offsets cost twice that). Equal, ordered and hashed by file
    and position, and immutable, like the attrs class it replaces: what it shows (`file`,
    `line`, `col`, `end_line`, `end_col`) are properties without setters, and it has no
    other attributes. Its two private slots are set by plain assignment, only here: a class
    that refuses every assignment in a `__setattr__` of its own makes each one of them a
    call, and a check makes a span for nearly every node it reads.
    """

    #: Before it is positioned: (the SourceFile, start << _SHIFT | end). After: (the
    #: file's path, (line, col, end line, end col)); the text is not needed any more.
    __slots__ = ("_src", "_at")

    def __init__(self, file: str, line: int, col: int, end_line: int, end_col: int) -> None:
        self._src = file
        self._at = (line, col, end_line, end_col)

    @staticmethod
    def _within(source: SourceFile, start: int, end: int) -> Span:
        if start < 0 or end > _MASK:  # positions clamp to the text anyway; packing needs it
            start, end = max(0, start), max(0, min(end, _MASK))
        return Span._packed(source, start << _SHIFT | end)

    @staticmethod
    def _packed(source: SourceFile, at: int) -> Span:
        """A lazy span of `source` from its two offsets packed in `at` (see `_SHIFT`).

        Made without `__init__`, its slots assigned directly: a check makes a span per node
        and the check cache reads thousands back."""
        span = _new(Span)
        span._src = source
        span._at = at
        return span

    @property
    def file(self) -> str:
        src = self._src
        return src if type(src) is str else src.path

    def _where(self) -> tuple[int, int, int, int]:
        at = self._at
        if type(at) is int:
            source = self._src
            at = (*source.position(at >> _SHIFT), *source.position(at & _MASK))
            self._src = source.path
            self._at = at
        return at

    def offsets_in(self, source: SourceFile) -> tuple[int, int] | None:
        """The span's offsets into `source`, while it has not been positioned; else None."""
        at = self.packed_in(source)
        return None if at is None else (at >> _SHIFT, at & _MASK)

    def packed_in(self, source: SourceFile) -> int | None:
        """`offsets_in` as one whole number, which `SourceFile.unpack` makes a span again
        (the check cache keeps thousands: one number each is the cheapest to read back)."""
        at = self._at
        return at if type(at) is int and self._src is source else None

    @property
    def line(self) -> int:
        at = self._at
        if type(at) is int:
            # Not positioned yet: the start line alone, the one bisection it needs. A run
            # names each unnamed step by its line (`action@line`) and asks nothing else
            # of its span; positioning all four numbers was most of that.
            return self._src.line_at(at >> _SHIFT)
        return at[0]

    col = property(lambda self: self._where()[1])
    end_line = property(lambda self: self._where()[2])
    end_col = property(lambda self: self._where()[3])

    def _key(self) -> tuple:
        return (self.file, *self._where())

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if type(other) is Span else NotImplemented

    def __lt__(self, other: Span) -> bool:
        return self._key() < other._key() if type(other) is Span else NotImplemented

    def __le__(self, other: Span) -> bool:
        return self._key() <= other._key() if type(other) is Span else NotImplemented

    def __gt__(self, other: Span) -> bool:
        return self._key() > other._key() if type(other) is Span else NotImplemented

    def __ge__(self, other: Span) -> bool:
        return self._key() >= other._key() if type(other) is Span else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        line, col, end_line, end_col = self._where()
        return f"Span(file={self.file!r}, line={line!r}, col={col!r}, end_line={end_line!r}, end_col={end_col!r})"

    def __reduce__(self):
        return (Span, self._key())

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "endLine": self.end_line,
            "endCol": self.end_col,
        }


_new = object.__new__


class SourceFile:
    """The text of one file, with the line table that turns offsets into positions.

    Offsets are character offsets into `text` (libyaml's marks count characters too).
    Equal by path and text; not hashable, as it can be changed.
    """

    __slots__ = ("path", "text", "_line_starts")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        # The line table is made when a position is first asked for (`__getattr__`): most
        # files of a library are checked without a finding, and none of theirs is.

    def __repr__(self) -> str:
        return f"SourceFile(path={self.path!r}, text={self.text!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.path, self.text) == (other.path, other.text)

    def __reduce__(self):
        # The path and the text: the line table is made again where a position is asked for.
        return (SourceFile, (self.path, self.text))

    def __getattr__(self, name: str):
        # Called only when the slot is not set yet: after the first, no cost at all.
        if name != "_line_starts":
            raise AttributeError(name)
        self._index()
        return self._line_starts

    def _index(self) -> None:
        starts = [0]
        find = self.text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        # Machine integers, not Python ones: a library holds every file's table.
        self._line_starts = array("q", starts)

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = self.line_at(offset)
        return line, offset - self._line_starts[line - 1] + 1

    def line_at(self, offset: int) -> int:
        """The 1-based line of `offset` (clamped to the text), `position(offset)[0]`."""
        return bisect.bisect_right(self._line_starts, max(0, min(offset, len(self.text))))

    def offset(self, line: int, col: int) -> int:
        """Offset of a 1-based line and column."""
        line = max(1, min(line, len(self._line_starts)))
        return min(self._line_starts[line - 1] + col - 1, len(self.text))

    def span(self, start: int, end: int | None = None) -> Span:
        if end is None or end < start:
            end = start
        if start < 0 or end > _MASK:
            return Span._within(self, start, end)
        # `Span._packed` written out: a check makes a span for nearly every node it reads.
        span = _new(Span)
        span._src = self
        span._at = start << _SHIFT | end
        return span

    def unpack(self, packed: object) -> Span | None:
        """The span `Span.packed_in(self)` gave `packed` for, or None when `packed` is no
        such number (not a whole number, offsets out of order or past the text's end)."""
        if (
            type(packed) is not int
            or packed < 0
            or (packed >> _SHIFT) > (packed & _MASK)
            or (packed & _MASK) > len(self.text)
        ):
            return None
        return Span._packed(self, packed)

    def line_text(self, line: int) -> str:
        if line < 1 or line > len(self._line_starts):
            return ""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r")
