"""Patterns RE2 is sure to accept, told without loading RE2.

A check only asks whether RE2 can take a playbook's pattern (C304, C612, C633); loading
RE2's module costs about 3 ms of a cold check, most of a start's budget for it. Most
patterns are plain: `^[a-z][a-z0-9-]*$`, `^v\\d+\\.\\d+$`, `^(main|release/.+)$`. This
module reads that plain kind: ASCII literals, `.`, classes of characters and ranges,
the escapes `\\d \\D \\w \\W \\s \\S` and escaped punctuation, groups (`(...)`, `(?:...)`)
with alternatives, anchors (`^ $ \\b \\B`) and the quantifiers `* + ? {n} {n,} {n,m}`,
greedy or lazy, counted ones on single items only and at most 1000 in all. It answers
True only when the whole pattern is of that kind, which RE2 always accepts (the tests
hold it to RE2 on generated patterns); anything else, valid or not, is for RE2 to judge.
"""

from __future__ import annotations

#: Punctuation that stands for itself after a backslash, in a class or out of one.
_ESCAPABLE = frozenset(".^$*+?()[]{}|\\/-")
#: Class escapes, usable in a class or out of one.
_CLASSES = frozenset("dDwWsS")
#: Characters that mean something outside a class.
_SPECIAL = frozenset("^$.|?*+()[]{}\\")
#: Where RE2 stops counting repetitions (a larger count is an error).
_MAX_REPEAT = 1000
#: Deeper nesting is left to RE2 (it allows far more; plain patterns need little).
_MAX_DEPTH = 20


def surely_accepted(pattern: str) -> bool:
    """Whether `pattern` is a plain pattern (see the module's docstring): then RE2 accepts
    it. False means only that RE2 must be asked."""
    reader = _Reader(pattern)
    return reader.alternatives(0) and reader.at == len(pattern)


class _Reader:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.counted = 0  # the sum of the counts of {n,m} quantifiers so far

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def alternatives(self, depth: int) -> bool:
        """seq ('|' seq)*, up to a `)` or the end."""
        if not self.sequence(depth):
            return False
        while self.peek() == "|":
            self.at += 1
            if not self.sequence(depth):
                return False
        return True

    def sequence(self, depth: int) -> bool:
        while self.peek() not in ("", "|", ")"):
            item = self.item(depth)
            if item is None:
                return False
            if not self.quantifier(item):
                return False
        return True

    def item(self, depth: int) -> str | None:
        """Reads one item; its kind ("anchor", "group", "one") or None when not plain."""
        c = self.peek()
        if c in ("^", "$"):
            self.at += 1
            return "anchor"
        if c == ".":
            self.at += 1
            return "one"
        if c == "(":
            if depth >= _MAX_DEPTH:
                return None
            self.at += 1
            if self.text.startswith("?:", self.at):
                self.at += 2
            elif self.peek() == "?":
                return None  # flags, named groups, lookaround: RE2 decides
            if not self.alternatives(depth + 1) or self.peek() != ")":
                return None
            self.at += 1
            return "group"
        if c == "[":
            return "one" if self.char_class() else None
        if c == "\\":
            after = self.text[self.at + 1 : self.at + 2]
            if after in ("b", "B"):
                self.at += 2
                return "anchor"
            if after and (after in _CLASSES or after in _ESCAPABLE):
                self.at += 2
                return "one"
            return None
        if _plain_char(c) and c not in _SPECIAL:
            self.at += 1
            return "one"
        return None

    def quantifier(self, item: str) -> bool:
        c = self.peek()
        if c in ("*", "+", "?"):
            if item == "anchor":
                return False
            self.at += 1
        elif c == "{":
            if item != "one":
                return False
            counts = self.counts()
            if counts is None:
                return False
            self.counted += counts
            if self.counted > _MAX_REPEAT:
                return False
        else:
            return True
        if self.peek() == "?":  # lazy
            self.at += 1
        return self.peek() not in ("*", "+", "?", "{")  # a quantifier of a quantifier: RE2 decides

    def counts(self) -> int | None:
        """`{n}`, `{n,}` or `{n,m}` with n <= m <= 1000: the larger count, else None."""
        close = self.text.find("}", self.at)
        if close == -1:
            return None
        low, comma, high = self.text[self.at + 1 : close].partition(",")
        if not (low.isdigit() and low.isascii() and len(low) <= 4):
            return None
        if comma and high and not (high.isdigit() and high.isascii() and len(high) <= 4):
            return None
        lo, hi = int(low), int(high) if high else int(low)
        if lo > hi or hi > _MAX_REPEAT:
            return None
        self.at = close + 1
        return hi

    def char_class(self) -> bool:
        """`[...]` or `[^...]` of plain characters, ranges in order, and escapes."""
        self.at += 1
        if self.peek() == "^":
            self.at += 1
        first = True
        while True:
            c = self.peek()
            if c == "]" and not first:
                self.at += 1
                return True
            if c in ("", "[", "]"):
                return False  # unclosed, `[:alpha:]`, or `[]...]`: RE2 decides
            if c == "\\":
                after = self.text[self.at + 1 : self.at + 2]
                if not after or not (after in _CLASSES or after in _ESCAPABLE):
                    return False
                self.at += 2
                if self.peek() == "-" and self.text[self.at + 1 : self.at + 2] != "]":
                    return False  # a range from an escape
            elif c == "-":
                if not (first or self.text[self.at + 1 : self.at + 2] == "]"):
                    return False  # a dash is plain only first or last
                self.at += 1
            elif _plain_char(c):
                self.at += 1
                if self.peek() == "-" and self.text[self.at + 1 : self.at + 2] not in ("]", ""):
                    end = self.text[self.at + 1]
                    if not _plain_char(end) or end in "[]\\-" or end < c:
                        return False
                    self.at += 2
            else:
                return False
            first = False


def _plain_char(c: str) -> bool:
    """Printable ASCII (what a plain pattern is written in)."""
    return len(c) == 1 and " " <= c <= "~"
