"""Automata behind write-path globs: building them, matching, product and coverage.

A pattern compiles to an NFA over characters without empty moves (`*`, `?` and classes
never read `/`; a `**` segment loops over whole segments). Then

* `common_path` walks the product of two NFAs, so "no overlap" is a proof and "overlap" comes
  with a path both accept;
* `uncovered_path` walks one NFA against the union of others determinised on the fly (a state is
  a set of their states), looking for a path the first accepts and none of the others do.

Both walks also run a four-state automaton (`_path_step`) that admits only real paths:
no empty, `.` or `..` segments. Without it `a/*` would "match" `a/`.
"""

from __future__ import annotations

import bisect
import functools
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Final, Union

from catalyst_dsl.paths.charsets import (
    DOT,
    PLAIN_CHAR,
    SEGMENT_CHAR,
    SEPARATOR,
    SLASH,
    Spans,
    contains,
    intersect,
    sample,
)
from catalyst_dsl._internal.records import record

# -- the path automaton ------------------------------------------------------------------

# Its states: at a segment's start, after ".", after "..", inside a real segment.
_SEGMENT_START, _ONE_DOT, _TWO_DOTS, _IN_SEGMENT = range(4)


def _path_step(state: int, code: int) -> int | None:
    """Read one character of a path; None when the text can no longer be a real path."""
    if code == SLASH:
        return _SEGMENT_START if state == _IN_SEGMENT else None
    if code == DOT and state < _TWO_DOTS:
        return state + 1
    return _IN_SEGMENT


@functools.lru_cache(maxsize=4096)
def _path_choices(spans: Spans) -> tuple[str, ...]:
    """One character of `spans` for each way the path automaton can read it."""
    choices = []
    plain = intersect(spans, PLAIN_CHAR)
    if plain:
        choices.append(sample(plain))
    if contains(spans, DOT):
        choices.append(".")
    if contains(spans, SLASH):
        choices.append("/")
    return tuple(choices)


# -- pattern automata --------------------------------------------------------------------


class _Star:
    """`*` inside a segment: any run of characters other than `/`."""

    def __repr__(self) -> str:
        return "STAR"


STAR: Final = _Star()
#: A whole `**` segment: zero or more whole segments.
GLOBSTAR: Final = "**"
#: One token reads one character from a set, or is a `*`.
Token = Union[Spans, _Star]
#: A compiled pattern is a tuple of segments: tokens, or GLOBSTAR.
Segment = Union[tuple[Token, ...], str]


@record
class Nfa:
    """Start state 0; `edges[s]` lists (characters, next state); no empty moves."""

    edges: tuple[tuple[tuple[Spans, int], ...], ...]
    accepting: frozenset[int]


def build_nfa(segments: tuple[Segment, ...]) -> Nfa:
    """The NFA of a parsed pattern: as many states as it has characters, plus a few."""
    edges: list[list[tuple[Spans, int]]] = [[]]

    def step(source: int, spans: Spans) -> int:
        edges.append([])
        edges[source].append((spans, len(edges) - 1))
        return len(edges) - 1

    def loop_segments(source: int) -> int:
        """Read one whole segment (one or more characters) from `source`; its end state."""
        inner = step(source, SEGMENT_CHAR)
        edges[inner].append((SEGMENT_CHAR, inner))
        return inner

    current = 0
    needs_separator = False
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == GLOBSTAR and index == last:
            if index == 0:  # `**` alone: X(/X)*
                inner = loop_segments(current)
                edges[step(inner, SEPARATOR)].append((SEGMENT_CHAR, inner))
                return _freeze(edges, {inner})
            # `A/**` is A(/X)*: A itself too, since `**` may match no segment.
            after = step(current, SEPARATOR)
            inner = loop_segments(after)
            edges[inner].append((SEPARATOR, after))
            return _freeze(edges, {current, inner})
        if needs_separator:
            current = step(current, SEPARATOR)
        if segment == GLOBSTAR:  # `**/` before more segments is (X/)*
            edges[loop_segments(current)].append((SEPARATOR, current))
            needs_separator = False
            continue
        for token in segment:
            if token is STAR:
                edges[current].append((SEGMENT_CHAR, current))
            else:
                current = step(current, token)  # type: ignore[arg-type]
        needs_separator = True
    return _freeze(edges, {current})


def _freeze(edges: list[list[tuple[Spans, int]]], accepting: set[int]) -> Nfa:
    return Nfa(tuple(tuple(e) for e in edges), frozenset(accepting))


def accepts(nfa: Nfa, text: str) -> bool:
    states = {0}
    for char in text:
        code = ord(char)
        states = {target for s in states for spans, target in nfa.edges[s] if contains(spans, code)}
        if not states:
            return False
    return not nfa.accepting.isdisjoint(states)


def _trace(came: dict, state: object) -> str:
    chars = []
    while came[state] is not None:
        state, char = came[state]
        chars.append(char)
    return "".join(reversed(chars))


#: A segment that starts with `.` costs this much more in a witness: `src/x.md` reads
#: better than the shorter `src/.md`, which is a hidden file.
_HIDDEN_SEGMENT_COST: Final = 1000


def common_path(a: Nfa, b: Nfa) -> str | None:
    """The cheapest real path both automata accept, or None: Dijkstra on their product.

    At most |a| x |b| x 4 states, each expanded once: polynomial whatever the patterns.
    Costs prefer paths without hidden segments, then shorter ones.
    """
    import heapq  # only a witness needs it, not matching or overlap (about 0.3 ms)

    start = (0, 0, _SEGMENT_START)
    best = {start: 0}
    came: dict = {start: None}
    heap = [(0, 0, start)]
    pushed = 0
    while heap:
        cost, _, state = heapq.heappop(heap)
        if cost > best[state]:
            continue
        p, q, path = state
        if path == _IN_SEGMENT and p in a.accepting and q in b.accepting:
            return _trace(came, state)
        for left, p2 in a.edges[p]:
            for right, q2 in b.edges[q]:
                common = intersect(left, right)
                for char in _path_choices(common) if common else ():
                    path2 = _path_step(path, ord(char))
                    if path2 is None:
                        continue
                    nxt = (p2, q2, path2)
                    cost2 = cost + (_HIDDEN_SEGMENT_COST if path == _SEGMENT_START and char == "." else 1)
                    if cost2 < best.get(nxt, cost2 + 1):
                        best[nxt] = cost2
                        came[nxt] = (state, char)
                        pushed += 1
                        heapq.heappush(heap, (cost2, pushed, nxt))
    return None


#: Most states one coverage question may visit. A state is (pattern state, path state,
#: set of grant states); for grants of literals, `*` and `**` the sets reached stay few
#: (the benchmark's questions each need under 100 states), but `?` or classes after a
#: `*` (`*a??????????`) can make them exponentially many. Past this bound `covers`
#: answers "not covered", the safe answer for a permission check.
COVERS_BUDGET: Final = 20_000


class GaveUp:
    """The coverage search hit its budget: the answer is unknown."""


GAVE_UP: Final = GaveUp()


def uncovered_path(pattern: Nfa, grants: Sequence[Nfa], budget: int = COVERS_BUDGET) -> str | None | GaveUp:
    """A real path `pattern` accepts and no grant does; None when there is none.

    Breadth first, so the path found is a shortest one; GAVE_UP past `budget` states.
    """
    edges, accepting, starts = _union(grants)
    moves_of: dict[frozenset[int], tuple[list[tuple[Spans, int]], list[int]]] = {}
    start = (0, _SEGMENT_START, starts)
    came: dict = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        p, path, held = state
        if path == _IN_SEGMENT and p in pattern.accepting and accepting.isdisjoint(held):
            return _trace(came, state)
        if held not in moves_of:
            moves = [move for g in held for move in edges[g]]
            moves_of[held] = moves, _cuts(moves)
        moves, cuts = moves_of[held]
        for label, p2 in pattern.edges[p]:
            # Within one piece every grant move reads all characters or none.
            for lo, hi in _pieces(label, cuts):
                path2 = _path_step(path, lo)
                if path2 is None:
                    continue
                nxt = (p2, path2, frozenset(t for spans, t in moves if contains(spans, lo)))
                if nxt in came:
                    continue
                if len(came) >= budget:
                    return GAVE_UP
                came[nxt] = (state, sample(((lo, hi),)))
                queue.append(nxt)
    return None


def _union(nfas: Sequence[Nfa]) -> tuple[list[tuple[tuple[Spans, int], ...]], frozenset[int], frozenset[int]]:
    edges: list[tuple[tuple[Spans, int], ...]] = []
    accepting: set[int] = set()
    starts: set[int] = set()
    for nfa in nfas:
        base = len(edges)
        starts.add(base)
        accepting.update(base + s for s in nfa.accepting)
        edges.extend(tuple((spans, base + t) for spans, t in out) for out in nfa.edges)
    return edges, frozenset(accepting), frozenset(starts)


def _cuts(moves: list[tuple[Spans, int]]) -> list[int]:
    """Code points where some move's set, or the path automaton's view, changes."""
    points = {SLASH, SLASH + 1, DOT, DOT + 1}
    for spans, _ in moves:
        for lo, hi in spans:
            points.add(lo)
            points.add(hi + 1)
    return sorted(points)


def _pieces(label: Spans, cuts: list[int]) -> Iterable[tuple[int, int]]:
    for lo, hi in label:
        at = bisect.bisect_right(cuts, lo)
        while at < len(cuts) and cuts[at] <= hi:
            yield lo, cuts[at] - 1
            lo = cuts[at]
            at += 1
        yield lo, hi
