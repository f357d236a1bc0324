"""Where each character of a scalar's value was written in the file.

A scalar's value is not its source text: quotes, escapes, block indentation and line
folding all stand between them. Expressions inside a scalar are parsed from the value,
so to point a diagnostic at the right column we align the value with the source.
"""

from __future__ import annotations

from catalyst_dsl.syntax.yaml_nodes import YScalar

_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_LENGTH = {"x": 2, "u": 4, "U": 8}


def _units(raw: str, style: str) -> list[tuple[str, int]]:
    """The source split into (decoded text, offset) units, in order."""
    units: list[tuple[str, int]] = []
    i, n = 0, len(raw)
    if style == '"':
        while i < n:
            c = raw[i]
            if c == "\\" and i + 1 < n:
                e = raw[i + 1]
                if e in _HEX_LENGTH:
                    width = _HEX_LENGTH[e]
                    digits = raw[i + 2 : i + 2 + width]
                    try:
                        units.append((chr(int(digits, 16)), i))
                    except ValueError:
                        units.append(("", i))
                    i += 2 + width
                    continue
                if e == "\n":  # an escaped line break joins the lines
                    units.append(("", i))
                    i += 2
                    continue
                units.append((_ESCAPES.get(e, e), i))
                i += 2
                continue
            units.append((c, i))
            i += 1
        return units
    if style == "'":
        while i < n:
            if raw[i] == "'" and raw[i + 1 : i + 2] == "'":
                units.append(("'", i))
                i += 2
                continue
            units.append((raw[i], i))
            i += 1
        return units
    return [(c, i) for i, c in enumerate(raw)]


class ScalarMap:
    """Maps an index in the scalar's value to a character offset in the file."""

    # What it needs of the node, not the node: a template keeps its map for as long as the
    # IR lives, and holding the node would keep the whole YAML tree of the file alive. The
    # two offsets share one integer, and a plain scalar's map is no list (`_offsets` True).
    __slots__ = ("source", "value", "style", "_at", "_offsets")

    def __init__(self, node: YScalar) -> None:
        self.source = node.source
        self.value = node.text
        self.style = node.style
        self._at = node.start << 32 | node.end
        self._offsets: list[int] | bool | None = None

    def _begin(self) -> int:
        """Where the scalar's text begins in the file: after its opening quote, if any."""
        return (self._at >> 32) + (self.style in ("'", '"'))

    def _raw(self) -> tuple[str, int]:
        """The scalar's source inside its quotes, and where that begins."""
        start, end = self._at >> 32, self._at & 0xFFFFFFFF
        raw = self.source.text[start:end]
        if self.style in ("'", '"'):
            return raw[1:-1], start + 1
        return raw, start

    def _build(self) -> list[int] | bool:
        value = self.value
        raw, start = self._raw()
        if raw == value:  # the common case: a plain one-line scalar, mapped by adding its start
            return True
        units = _units(raw, self.style)
        offsets: list[int] = []
        u = 0
        last = start
        for ch in value:
            j = u
            while j < len(units):
                text, _ = units[j]
                if text == ch:
                    break
                # A folded line break is a space or newline in the value.
                if ch in " \n" and text == "\n":
                    break
                j += 1
            if j < len(units):
                last = start + units[j][1]
                u = j + 1
            offsets.append(last)
        offsets.append(start + units[u][1] if u < len(units) else start + len(raw))
        return offsets

    def offset(self, index: int) -> int:
        if self._offsets is None:
            self._offsets = self._build()
        offsets = self._offsets
        if offsets is True:
            return self._begin() + max(0, min(index, len(self.value)))
        return offsets[max(0, min(index, len(offsets) - 1))]

    def span(self, start: int, end: int):
        """The file span of value[start:end]."""
        first = self.offset(start)
        last = self.offset(end - 1) + 1 if end > start else first
        return self.source.span(first, max(last, first))
