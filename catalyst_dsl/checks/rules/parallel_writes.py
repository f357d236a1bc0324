"""Which branches of one `parallel` group may write one path: the first pairs of branches
one by one, the rest counted.

n branches that each write one templated pattern (`out/{{x}}/*.md`, every branch the
glob `out/*/*.md`) make n(n-1)/2 such pairs: listing each made a check of 1,000 branches
take 49 s and 3 GB for half a million diagnostics no one reads past the first few. The
pairs are drawn in order from the overlap groups (equal patterns are one group, see
paths/globs.py), skipping whole runs of writes that would add nothing (two writes of one
branch, a pair of branches already shown), and the rest is counted by arithmetic, never
listed.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter
from typing import TYPE_CHECKING, Iterator, Sequence

from catalyst_dsl._internal.records import record

if TYPE_CHECKING:
    from catalyst_dsl.paths.globs import Overlap

#: Pairs of branches of one parallel group reported one by one; the rest are counted.
MAX_SHOWN_PAIRS = 10


@record
class BranchOverlaps:
    #: For each pair of branches shown, its first pair of writes (i < j) and a path both write.
    shown: list[tuple[int, int, str]]
    #: Pairs of writes in different branches that may write one path, beyond the branches shown.
    more: int


def branch_overlaps(
    branch_of: Sequence[int], groups: Sequence[Overlap], limit: int = MAX_SHOWN_PAIRS
) -> BranchOverlaps:
    """`branch_of[i]` is the branch of write i, never decreasing with i (writes are listed
    branch by branch); `groups` are the writes' overlaps."""
    end_of: dict[int, int] = {}  # a branch -> the index after its last write
    for index, branch in enumerate(branch_of):
        end_of[branch] = index + 1
    shown_pairs: set[tuple[int, int]] = set()
    shown: list[tuple[int, int, str]] = []
    streams = [_pairs(group, branch_of, end_of, shown_pairs) for group in groups]
    for i, j, witness in heapq.merge(*streams):
        if len(shown) == limit:
            break
        pair = (branch_of[i], branch_of[j])
        if pair not in shown_pairs:
            shown_pairs.add(pair)
            shown.append((i, j, witness))
    more = sum(_count(group, branch_of, shown_pairs) for group in groups) if len(shown) == limit else 0
    return BranchOverlaps(shown, more)


def _pairs(
    group: Overlap, branch_of: Sequence[int], end_of: dict[int, int], shown: set[tuple[int, int]]
) -> Iterator[tuple[int, int, str]]:
    """The group's pairs of writes i < j in different branches, ascending, less those of a
    pair of branches already shown: each skipped run is one bisection, not its length."""
    firsts = set(group.first)
    for i in sorted(set(group.first + group.second)):
        others = group.first if group.equal or i not in firsts else group.second
        k = bisect_right(others, i)
        while k < len(others):
            j = others[k]
            branch = branch_of[j]
            if branch != branch_of[i] and (branch_of[i], branch) not in shown:
                yield i, j, group.witness
            k = bisect_left(others, end_of[branch], k)  # the rest of j's branch pairs the same branches


def _count(group: Overlap, branch_of: Sequence[int], shown: set[tuple[int, int]]) -> int:
    """The group's pairs of writes in different branches, less those of the branches shown."""
    first = Counter(branch_of[i] for i in group.first)
    if group.equal:
        n = len(group.first)
        pairs = n * (n - 1) // 2 - sum(c * (c - 1) // 2 for c in first.values())
        return pairs - sum(first[a] * first[b] for a, b in shown)
    second = Counter(branch_of[i] for i in group.second)
    pairs = len(group.first) * len(group.second) - sum(c * second[b] for b, c in first.items())
    return pairs - sum(first[a] * second[b] + first[b] * second[a] for a, b in shown)
