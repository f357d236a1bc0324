"""YAML nodes with spans: what the loader produces and the dialects read."""

from __future__ import annotations

from typing import Union

from catalyst_dsl._internal.records import field, record
from catalyst_dsl.syntax.source import SourceFile, Span


@record(frozen=False, eq=False)
class YScalar:
    """A scalar with its YAML 1.2 core value and the text as written.

    `text` is the decoded string (escapes applied, lines folded); `value` is what the
    YAML 1.2 core schema makes of it (a plain `7` is an int, a quoted `"7"` a str).
    """

    value: object
    text: str
    style: str  # "" plain, "'" / '"' quoted, "|" literal, ">" folded
    start: int
    end: int
    source: SourceFile = field(repr=False)
    tag: str | None = None  # an explicit tag such as !!str, if any

    @property
    def span(self) -> Span:
        return self.source.span(self.start, self.end)

    @property
    def is_plain(self) -> bool:
        return self.style == ""

    @property
    def kind(self) -> str:
        return "scalar"


@record(frozen=False, eq=False)
class YSeq:
    items: list["YNode"]
    start: int
    end: int
    source: SourceFile = field(repr=False)
    flow: bool = False

    @property
    def span(self) -> Span:
        return self.source.span(self.start, self.end)

    @property
    def kind(self) -> str:
        return "list"


@record(frozen=False, eq=False)
class YMap:
    """A mapping; `pairs` keeps order and the key nodes (duplicates are reported, not kept)."""

    pairs: list[tuple[YScalar, "YNode"]]
    start: int
    end: int
    source: SourceFile = field(repr=False)
    flow: bool = False

    @property
    def span(self) -> Span:
        return self.source.span(self.start, self.end)

    @property
    def kind(self) -> str:
        return "mapping"

    def get(self, key: str) -> "YNode | None":
        for k, v in self.pairs:
            if k.text == key:
                return v
        return None

    def key_node(self, key: str) -> YScalar | None:
        for k, _ in self.pairs:
            if k.text == key:
                return k
        return None


YNode = Union[YScalar, YSeq, YMap]


def head_span(node: YNode) -> Span:
    """A short span for a node: a scalar whole, a collection only its first line."""
    if isinstance(node, YScalar):
        return node.span
    source = node.source
    text = source.text
    start = node.start
    size = len(text)
    # Where the first line's text ends (before its newline and carriage returns), found by
    # looking forward from the start, not through the line table: every step's span is one.
    # An end at or before the start gives the one character after the start anyway. The
    # bounds are compared here, not with min() and max(): every step's span is one.
    at = 0 if start < 0 else size if start > size else start
    line_end = text.find("\n", at)
    if line_end == -1:
        line_end = size
    while line_end > at and text[line_end - 1] == "\r":
        line_end -= 1
    if line_end <= start:
        line_end = start + 1
    return source.span(start, node.end if node.end < line_end else line_end)


def to_python(node: YNode | None) -> object:
    """Plain Python data from a node tree (for defaults, literals and tests)."""
    if node is None:
        return None
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [to_python(item) for item in node.items]
    return {k.text: to_python(v) for k, v in node.pairs}
