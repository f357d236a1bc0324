"""Sets of characters as sorted tuples of inclusive code-point spans.

Classes, negated classes and "anything but `/`" intersect, complement and split exactly
this way without listing Unicode; a literal character is a one-point span.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Final

MAX_CODE: Final = 0x10FFFF
SLASH: Final = ord("/")
DOT: Final = ord(".")

#: A set of characters: sorted, disjoint, non-touching inclusive code-point spans.
Spans = tuple[tuple[int, int], ...]

#: Any one character of a segment: everything but `/`.
SEGMENT_CHAR: Final[Spans] = ((0, SLASH - 1), (SLASH + 1, MAX_CODE))
SEPARATOR: Final[Spans] = ((SLASH, SLASH),)
PLAIN_CHAR: Final[Spans] = ((0, DOT - 1), (SLASH + 1, MAX_CODE))  # neither `.` nor `/`; DOT + 1 == SLASH

#: Witnesses use these for wildcards when allowed, so they read like real paths.
READABLE: Final = "xabcdefghijklmnopqrstuvwyz0123456789_-"


@functools.lru_cache(maxsize=4096)
def single(char: str) -> Spans:
    # One shared tuple per character: a library's patterns hold tens of thousands.
    return ((ord(char), ord(char)),)


def merge(spans: Iterable[tuple[int, int]]) -> Spans:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def intersect(a: Spans, b: Spans) -> Spans:
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def complement(a: Spans) -> Spans:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in a:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE:
        out.append((start, MAX_CODE))
    return tuple(out)


def contains(spans: Spans, code: int) -> bool:
    for lo, hi in spans:
        if code < lo:
            return False
        if code <= hi:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def sample(spans: Spans) -> str:
    """A readable character of a non-empty set: `x` when allowed, else a letter or digit."""
    if len(spans) == 1 and spans[0][0] == spans[0][1]:
        return chr(spans[0][0])
    for char in READABLE:
        if contains(spans, ord(char)):
            return char
    for lo, hi in spans:
        for code in range(lo, min(hi, lo + 256) + 1):
            if chr(code).isprintable() and not chr(code).isspace():
                return chr(code)
    return chr(spans[0][0])
