"""Pairs of write patterns that might meet, found without comparing every pair.

Patterns under an unknown directory (`out/{{x}}/3-*.md`, the glob `out/*/3-*.md`) share
no literal leading segment, and comparing each with each made a `parallel` group of
1,000 such branches take 19 s. Two patterns of fixed depth can name one path only if,
segment by segment, the literal text each segment starts with (its head) is a prefix of
the other's or the other way round, and likewise the text each ends with. A pattern's
`marks` (globs.py) are those texts in order, tails reversed so that both are prefixes.

The patterns are split like the nodes of a trie, one character of one mark at a time:
patterns that differ at a character are never paired, and a pattern whose mark has
ended (its text is a prefix of every other's there) is paired with the rest only
through the marks that follow. Each pattern is looked at once per character of its
marks, so patterns that differ somewhere cost time linear in their number; a pair that
survives is only a candidate, decided exactly by the automata.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

#: Groups at most this large are paired outright: splitting them costs more than it saves.
SMALL = 8


class _Marked(Protocol):
    @property
    def marks(self) -> tuple[str, ...]: ...


def within(items: Sequence[_Marked]) -> Iterator[tuple[int, int]]:
    """Indices i < j of the items that might meet."""
    work: list[tuple[list[int], list[int] | None, int, int]] = [(list(range(len(items))), None, 0, 0)]
    while work:
        left, right, mark, at = work.pop()
        if right is None:
            yield from _split_one(items, left, mark, at, work)
        else:
            for i, j in _split_two(items, left, right, mark, at, work):
                yield (i, j) if i < j else (j, i)


def across(items: Sequence[_Marked], left: Sequence[int], right: Sequence[int]) -> Iterator[tuple[int, int]]:
    """Pairs (i, j), i from `left` and j from `right` (disjoint), that might meet."""
    work: list[tuple[list[int], list[int] | None, int, int]] = [(list(left), list(right), 0, 0)]
    while work:
        one, two, mark, at = work.pop()
        assert two is not None
        yield from _split_two(items, one, two, mark, at, work)


def _text(items: Sequence[_Marked], i: int, mark: int) -> str:
    marks = items[i].marks
    return marks[mark] if mark < len(marks) else ""


def _split_one(items, group: list[int], mark: int, at: int, work: list) -> Iterator[tuple[int, int]]:
    """Pairs within `group`, whose texts agree on the marks before `mark` and on the first
    `at` characters of `mark`; the rest of the splitting is queued on `work`."""
    while len(group) > SMALL and any(mark < len(items[i].marks) for i in group):
        ended, going = _by_character(items, group, mark, at)
        if not going:
            mark, at = mark + 1, 0
            continue
        if ended:
            work.append((ended, None, mark + 1, 0))
            work.append((ended, [i for bucket in going.values() for i in bucket], mark + 1, 0))
        for bucket in going.values():
            work.append((bucket, None, mark, at + 1))
        return
    for n, i in enumerate(group):
        for j in group[n + 1 :]:
            yield (i, j) if i < j else (j, i)


def _split_two(items, left: list[int], right: list[int], mark: int, at: int, work: list) -> Iterator[tuple[int, int]]:
    """Pairs of `left` with `right`, as `_split_one` for two groups."""
    while left and right and len(left) * len(right) > SMALL * SMALL:
        if not any(mark < len(items[i].marks) for i in (*left, *right)):
            break
        left_ended, left_going = _by_character(items, left, mark, at)
        right_ended, right_going = _by_character(items, right, mark, at)
        if not left_going and not right_going:
            mark, at = mark + 1, 0
            continue
        if left_ended:
            work.append((left_ended, right, mark + 1, 0))
        if right_ended:
            work.append((sorted(i for bucket in left_going.values() for i in bucket), right_ended, mark + 1, 0))
        for char, bucket in left_going.items():
            if char in right_going:
                work.append((bucket, right_going[char], mark, at + 1))
        return
    for i in left:
        for j in right:
            yield i, j


def _by_character(items, group: list[int], mark: int, at: int) -> tuple[list[int], dict[str, list[int]]]:
    """The group's items whose text at `mark` has ended by `at`, and the others by their character there."""
    ended: list[int] = []
    going: dict[str, list[int]] = {}
    for i in group:
        text = _text(items, i, mark)
        if len(text) > at:
            going.setdefault(text[at], []).append(i)
        else:
            ended.append(i)
    return ended, going
