"""A unified diff of two texts, line by line, in time close to linear in their size.

difflib's SequenceMatcher looks for the longest matching run again and again, and where
many lines each repeat a few hundred times (a playbook of generated steps) that is
quadratic: 20,000 lines with 50 one-line fixes took 11 s, 80,000 lines 202 s. Here the
lines found exactly once on each side anchor the match (patience diffing), the stretches
between anchors are matched the same way in turn, and only a stretch small enough is
handed to difflib. A stretch without such lines (the same few lines over and over) is
walked instead: its equal runs are taken and, after each difference, the nearest place
where the two sides agree again for a few lines is looked for close by, where local edits
leave it. A budget proportional to the input bounds the whole search: a stretch still
unmatched when it runs out is shown as removed and added, a diff that is still right,
only longer than it could be.
"""

from __future__ import annotations

import bisect
import difflib
from typing import Iterator, Sequence

#: What difflib may be given at most: its search looks for the longest run again after
#: each run it finds, each time among the pairs of equal lines, so on repeated lines it
#: costs up to the product of the two sides times the shorter; this bounds that product.
#: A whole input within it gets difflib's own answer (about 160 lines a side at worst).
DIFFLIB_WORK = 4_000_000
#: How far apart (in lines of each side) a walk looks for the two sides to agree again,
#: and for how many lines they must agree.
RESYNC_REACH = 40
RESYNC_LINES = 3
#: The search may spend this many steps a line of input, beyond a fixed allowance.
STEPS_PER_LINE = 40
ALLOWANCE = 400_000

NO_NEWLINE = "\\ No newline at end of file\n"


def unified_text(before: str, after: str, old_name: str, new_name: str, context: int = 3) -> str:
    """The unified diff of two texts, `---`/`+++` headers naming the two sides; "" when
    they are the same. Lines end at `\n` only: U+2028 and the other separators that
    `str.splitlines` also cuts at are text inside a line, or the patch would not apply."""
    out = []
    for line in unified(lines(before), lines(after), old_name, new_name, context):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)


def lines(text: str) -> list[str]:
    """`text`'s lines, each with its `\n`; the last without one when the text has none there."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified(
    before: Sequence[str], after: Sequence[str], old_name: str, new_name: str, context: int = 3
) -> Iterator[str]:
    """The lines of a unified diff, as `difflib.unified_diff` writes them."""
    hunks = list(_hunks(_opcodes(matching_blocks(before, after), len(before), len(after)), context))
    if not hunks:
        return
    yield f"--- {old_name}\n"
    yield f"+++ {new_name}\n"
    for hunk in hunks:
        first, last = hunk[0], hunk[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                yield from (" " + line for line in before[i1:i2])
                continue
            yield from ("-" + line for line in before[i1:i2])
            yield from ("+" + line for line in after[j1:j2])


def _range(start: int, stop: int) -> str:
    """A hunk's side as the unified format writes it: the first line (counted from 1) and
    how many; the count left out when it is 1; an empty side names the line before it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def matching_blocks(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int]]:
    """Runs of equal lines (i, j, size), in order, adjacent runs joined."""
    if _difflib_cost(0, len(a), 0, len(b)) <= DIFFLIB_WORK:
        # difflib.unified_diff's own answer, its popular lines taken for junk as it does.
        matcher = difflib.SequenceMatcher(None, a, b)
        return [tuple(block) for block in matcher.get_matching_blocks() if block[2]]
    budget = [STEPS_PER_LINE * (len(a) + len(b)) + ALLOWANCE]
    found: list[tuple[int, int, int]] = []
    pending = [(0, len(a), 0, len(b))]
    while pending:
        found += _match_stretch(a, b, *pending.pop(), budget, pending)
    found.sort()
    joined: list[tuple[int, int, int]] = []
    for i, j, size in found:
        if joined and joined[-1][0] + joined[-1][2] == i and joined[-1][1] + joined[-1][2] == j:
            pi, pj, psize = joined[-1]
            joined[-1] = (pi, pj, psize + size)
        else:
            joined.append((i, j, size))
    return joined


def _match_stretch(a, b, alo: int, ahi: int, blo: int, bhi: int, budget: list[int], pending: list) -> list:
    """The matches between a[alo:ahi] and b[blo:bhi] found at once; the stretches between
    its anchors go onto `pending`."""
    found = []
    start = alo
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        alo, blo = alo + 1, blo + 1
    if alo > start:
        found.append((start, blo - (alo - start), alo - start))
    end = ahi
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi, bhi = ahi - 1, bhi - 1
    if ahi < end:
        found.append((ahi, bhi, end - ahi))
    budget[0] -= (alo - start) + (end - ahi) + 1
    if alo == ahi or blo == bhi or budget[0] <= 0:
        return found
    cost = _difflib_cost(alo, ahi, blo, bhi)
    if cost <= budget[0] and cost <= DIFFLIB_WORK // 8:
        budget[0] -= cost
        return found + [(i + alo, j + blo, size) for i, j, size in _difflib_blocks(a, b, alo, ahi, blo, bhi) if size]
    budget[0] -= (ahi - alo) + (bhi - blo)
    anchors = _anchors(a, b, alo, ahi, blo, bhi)
    if not anchors:
        return found + _walk(a, b, alo, ahi, blo, bhi, budget, pending)
    budget[0] -= len(anchors)
    i0, j0 = alo, blo
    for i, j in anchors:
        found.append((i, j, 1))
        pending.append((i0, i, j0, j))
        i0, j0 = i + 1, j + 1
    pending.append((i0, ahi, j0, bhi))
    return found


def _walk(a, b, alo: int, ahi: int, blo: int, bhi: int, budget: list[int], pending: list) -> list:
    """The equal runs of a stretch taken in order, each difference between them left on
    `pending` (small: difflib's); what follows a difference with no agreement within reach
    is a replacement."""
    found = []
    i, j = alo, blo
    while budget[0] > 0:
        start = i
        while i < ahi and j < bhi and a[i] == b[j]:
            i, j = i + 1, j + 1
        if i > start:
            found.append((start, j - (i - start), i - start))
        budget[0] -= i - start + 1
        if i == ahi or j == bhi:
            break
        again = _agree_again(a, b, i, ahi, j, bhi, budget)
        if again is None:
            break
        pending.append((i, again[0], j, again[1]))
        i, j = again
    return found


def _agree_again(a, b, i: int, ahi: int, j: int, bhi: int, budget: list[int]) -> tuple[int, int] | None:
    """The nearest (fewest lines skipped on both sides together) place past a difference
    at (i, j) where a and b agree for RESYNC_LINES lines, or as far as both go."""
    for skipped in range(1, 2 * RESYNC_REACH + 1):
        budget[0] -= skipped
        # As many lines skipped on each side first (a line replaced), then fewer on one:
        # in text that repeats every few lines several places agree, and the one that
        # replaces lines keeps the two sides in step for the edits after it.
        low, high = max(0, skipped - RESYNC_REACH), min(skipped, RESYNC_REACH)
        for di in sorted(range(low, high + 1), key=lambda di: abs(2 * di - skipped)):
            x, y = i + di, j + skipped - di
            if x >= ahi or y >= bhi or a[x] != b[y]:
                continue
            agree = 1
            while agree < RESYNC_LINES and x + agree < ahi and y + agree < bhi and a[x + agree] == b[y + agree]:
                agree += 1
            if agree == RESYNC_LINES or x + agree == ahi or y + agree == bhi:
                return x, y
    return None


def _anchors(a, b, alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """Lines found once in each side of the stretch, paired, the longest run of pairs in
    the same order on both sides (so that no two cross)."""
    seen: dict[str, int] = {}  # line -> its index in a, or -1 once it repeats
    for i in range(alo, ahi):
        seen[a[i]] = -1 if a[i] in seen else i
    in_b: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        if seen.get(line, -1) >= 0:
            in_b[line] = -1 if line in in_b else j
    pairs = sorted((seen[line], j) for line, j in in_b.items() if j >= 0)
    # The longest increasing run of j: tails[k] is the smallest j that ends a run of k + 1.
    tails: list[int] = []
    ends: list[int] = []  # the index into pairs of each tail
    before: list[int] = []  # each pair's predecessor in its run
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        before.append(ends[k - 1] if k else -1)
        if k == len(tails):
            tails.append(j)
            ends.append(index)
        else:
            tails[k], ends[k] = j, index
    run = []
    at = ends[-1] if ends else -1
    while at >= 0:
        run.append(pairs[at])
        at = before[at]
    run.reverse()
    return run


def _difflib_cost(alo: int, ahi: int, blo: int, bhi: int) -> int:
    """What difflib may cost on a stretch at worst (DIFFLIB_WORK)."""
    m, n = ahi - alo, bhi - blo
    return m * n * min(m, n)


def _difflib_blocks(a, b, alo: int, ahi: int, blo: int, bhi: int):
    return difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False).get_matching_blocks()


def _opcodes(blocks: list[tuple[int, int, int]], n: int, m: int) -> list[tuple[str, int, int, int, int]]:
    """What turns a into b, between and around the matching runs."""
    codes = []
    i = j = 0
    for bi, bj, size in [*(block for block in blocks if block[2]), (n, m, 0)]:
        if i < bi and j < bj:
            codes.append(("replace", i, bi, j, bj))
        elif i < bi:
            codes.append(("delete", i, bi, j, bj))
        elif j < bj:
            codes.append(("insert", i, bi, j, bj))
        if size:
            codes.append(("equal", bi, bi + size, bj, bj + size))
        i, j = bi + size, bj + size
    return codes


def _hunks(codes: list[tuple[str, int, int, int, int]], context: int) -> Iterator[list]:
    """The changes in groups, each with up to `context` equal lines around it; changes
    closer than twice that share a group."""
    if not any(code[0] != "equal" for code in codes):
        return
    hunk: list = []
    last = len(codes) - 1
    for index, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag != "equal":
            hunk.append((tag, i1, i2, j1, j2))
            continue
        if index == 0:  # the lines before the first change: only its context
            keep = min(context, i2 - i1)
            hunk.append((tag, i2 - keep, i2, j2 - keep, j2))
        elif index == last:  # after the last change
            keep = min(context, i2 - i1)
            hunk.append((tag, i1, i1 + keep, j1, j1 + keep))
        elif i2 - i1 > 2 * context:  # a gap: this hunk ends, the next begins
            hunk.append((tag, i1, i1 + context, j1, j1 + context))
            yield hunk
            hunk = [(tag, i2 - context, i2, j2 - context, j2)]
        else:
            hunk.append((tag, i1, i2, j1, j2))
    yield hunk
