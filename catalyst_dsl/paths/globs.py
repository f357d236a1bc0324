"""Write-path globs: which paths a pattern names, where two patterns meet, and whether
grants cover a pattern.

Every question is answered on automata, never on the pattern text. A glob compiles to a
small NFA over characters (`*`, `?` and classes never read `/`; a `**` segment loops over
whole segments), and

* `overlap` walks the product of two NFAs, so "no overlap" is a proof and "overlap"
  comes with a path both patterns match;
* `covers` walks the pattern's NFA against the grants determinised on the fly (a state
  is the set of grant states), looking for a path the pattern allows and no grant does.

Both walks also run a four-state automaton (`_path_step`) that admits only real paths:
no empty, `.` or `..` segments. Without it `a/*` would "match" `a/`.

Character sets are sorted tuples of inclusive code-point spans, so classes, negated
classes and "anything but `/`" intersect and split exactly without listing Unicode.
The semantics are described for users in docs/globs.md.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import re
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Final, Literal, Union

import attrs

# -- character sets ----------------------------------------------------------------------

MAX_CODE: Final = 0x10FFFF
SLASH: Final = ord("/")
DOT: Final = ord(".")

#: A set of characters: sorted, disjoint, non-touching inclusive code-point spans.
Spans = tuple[tuple[int, int], ...]

#: Any one character of a segment: everything but `/`.
SEGMENT_CHAR: Final[Spans] = ((0, SLASH - 1), (SLASH + 1, MAX_CODE))
SEPARATOR: Final[Spans] = ((SLASH, SLASH),)
_PLAIN_CHAR: Final[Spans] = ((0, DOT - 1), (SLASH + 1, MAX_CODE))  # neither `.` nor `/`; DOT + 1 == SLASH

#: Witnesses use these for wildcards when allowed, so they read like real paths.
_READABLE: Final = "xabcdefghijklmnopqrstuvwyz0123456789_-"


def _single(char: str) -> Spans:
    return ((ord(char), ord(char)),)


def _merge(spans: Iterable[tuple[int, int]]) -> Spans:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _intersect(a: Spans, b: Spans) -> Spans:
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


def _complement(a: Spans) -> Spans:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in a:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE:
        out.append((start, MAX_CODE))
    return tuple(out)


def _contains(spans: Spans, code: int) -> bool:
    for lo, hi in spans:
        if code < lo:
            return False
        if code <= hi:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _sample(spans: Spans) -> str:
    """A readable character of a non-empty set: `x` when allowed, else a letter or digit."""
    if len(spans) == 1 and spans[0][0] == spans[0][1]:
        return chr(spans[0][0])
    for char in _READABLE:
        if _contains(spans, ord(char)):
            return char
    for lo, hi in spans:
        for code in range(lo, min(hi, lo + 256) + 1):
            if chr(code).isprintable() and not chr(code).isspace():
                return chr(code)
    return chr(spans[0][0])


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
    plain = _intersect(spans, _PLAIN_CHAR)
    if plain:
        choices.append(_sample(plain))
    if _contains(spans, DOT):
        choices.append(".")
    if _contains(spans, SLASH):
        choices.append("/")
    return tuple(choices)


def normalise_path(path: str) -> str | None:
    """The canonical form of a project-relative path, or None when it is not one.

    Drops `.` segments and repeated or trailing `/`; absolute paths, `..` segments and
    paths naming nothing are None.
    """
    if path.startswith("/") or _DRIVE.match(path):
        return None
    segments = [s for s in path.split("/") if s and s != "."]
    if not segments or ".." in segments:
        return None
    return "/".join(segments)


# -- parsing -----------------------------------------------------------------------------


class GlobError(ValueError):
    """An invalid write pattern; `offset` is the character it was found at."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at character {offset})")
        self.message = message
        self.offset = offset


class _Star:
    """`*` inside a segment: any run of characters other than `/`."""

    def __repr__(self) -> str:
        return "STAR"


STAR: Final = _Star()
#: A whole `**` segment: zero or more whole segments.
GLOBSTAR: Final = "**"
#: One token reads one character from a set, or is a `*`.
Token = Union[Spans, _Star]
Segment = Union[tuple[Token, ...], str]

_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


def _parse(text: str) -> tuple[Segment, ...]:
    if not text:
        raise GlobError("the pattern is empty", 0)
    if text.startswith("/"):
        raise GlobError("the pattern is absolute; write paths are relative to the project root", 0)
    if _DRIVE.match(text):
        raise GlobError("the pattern is an absolute Windows path; write paths are relative to the project root", 0)
    segments: list[Segment] = []
    start = 0
    for piece in text.split("/"):
        # `/` always separates: it cannot be escaped and a class cannot hold it, so
        # splitting first is safe.
        end = start + len(piece)
        if piece == "**":
            if not segments or segments[-1] != GLOBSTAR:
                segments.append(GLOBSTAR)
        elif piece:
            tokens = _parse_segment(text, start, end)
            literal = _literal_text(tokens)
            if literal == "..":
                raise GlobError("a `..` segment leaves the directory; write the path from the project root", start)
            if literal != ".":
                segments.append(tokens)
        start = end + 1
    if text.endswith("/") and (not segments or segments[-1] != GLOBSTAR):
        segments.append(GLOBSTAR)  # `dir/` is everything under dir
    if not segments:
        raise GlobError("the pattern names no path", 0)
    return tuple(segments)


def _parse_segment(text: str, start: int, end: int) -> tuple[Token, ...]:
    tokens: list[Token] = []
    i = start
    while i < end:
        char = text[i]
        if char == "\\":
            if i + 1 >= end:
                if end < len(text):
                    raise GlobError("`/` cannot be escaped: it always separates directories", i)
                raise GlobError("the `\\` at the end escapes nothing", i)
            tokens.append(_single(text[i + 1]))
            i += 2
        elif char == "*":
            if not tokens or tokens[-1] is not STAR:  # `a**b` is `a*b`
                tokens.append(STAR)
            i += 1
        elif char == "?":
            tokens.append(SEGMENT_CHAR)
            i += 1
        elif char == "[" and (parsed := _parse_class(text, i, end)) is not None:
            tokens.append(parsed[0])
            i = parsed[1]
        else:
            tokens.append(_single(char))  # an unclosed `[` is itself
            i += 1
    return tuple(tokens)


def _parse_class(text: str, open_at: int, end: int) -> tuple[Spans, int] | None:
    """The set of a `[...]` class and the index after it; None when it never closes."""
    i = open_at + 1
    negated = i < end and text[i] in "!^"
    if negated:
        i += 1
    members: list[tuple[int, int]] = []
    while True:
        if i >= end:
            return None
        if text[i] == "]" and members:  # a `]` first in the class is a member
            break
        at = i
        lo, i = _class_char(text, i, end)
        if lo is None:
            return None
        hi = lo
        if i + 1 < end and text[i] == "-" and text[i + 1] != "]":
            hi, i = _class_char(text, i + 1, end)
            if hi is None:
                return None
            if hi < lo:
                raise GlobError(f"the range {chr(lo)}-{chr(hi)} is empty; write the lower end first", at)
        members.append((lo, hi))
    spans = _merge(members)
    spans = _complement(spans) if negated else spans
    return _intersect(spans, SEGMENT_CHAR), i + 1


def _class_char(text: str, i: int, end: int) -> tuple[int | None, int]:
    if text[i] == "\\":
        return (ord(text[i + 1]), i + 2) if i + 1 < end else (None, i)
    return ord(text[i]), i + 1


def _literal_text(tokens: tuple[Token, ...]) -> str | None:
    """The one text a segment matches, or None when it has a wildcard."""
    chars = []
    for token in tokens:
        if token is STAR or len(token) != 1 or token[0][0] != token[0][1]:  # type: ignore[arg-type]
            return None
        chars.append(chr(token[0][0]))  # type: ignore[index]
    return "".join(chars)


def _render(segments: tuple[Segment, ...]) -> str:
    """Canonical text: equal for patterns that differ only in spelling (`a/` vs `a/**`)."""
    return "/".join(GLOBSTAR if seg == GLOBSTAR else "".join(map(_render_token, seg)) for seg in segments)


def _render_token(token: Token) -> str:
    if token is STAR:
        return "*"
    if token == SEGMENT_CHAR:
        return "?"
    if len(token) == 1 and token[0][0] == token[0][1]:  # type: ignore[arg-type,index]
        char = chr(token[0][0])  # type: ignore[index]
        return "\\" + char if char in "\\*?[" else char
    # Negated classes reach the top of Unicode; ordinary ones never do.
    negated = _contains(token, MAX_CODE)  # type: ignore[arg-type]
    shown = _intersect(_complement(token), SEGMENT_CHAR) if negated else token  # type: ignore[arg-type]
    body = "".join(_class_item(lo) if lo == hi else f"{_class_item(lo)}-{_class_item(hi)}" for lo, hi in shown)
    return f"[{'!' if negated else ''}{body}]"


def _class_item(code: int) -> str:
    char = chr(code)
    return "\\" + char if char in "\\]-^!" else char


# -- automata ----------------------------------------------------------------------------


@attrs.frozen
class _Nfa:
    """Start state 0; `edges[s]` lists (characters, next state); no empty moves."""

    edges: tuple[tuple[tuple[Spans, int], ...], ...]
    accepting: frozenset[int]


def _automaton(segments: tuple[Segment, ...]) -> _Nfa:
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


def _freeze(edges: list[list[tuple[Spans, int]]], accepting: set[int]) -> _Nfa:
    return _Nfa(tuple(tuple(e) for e in edges), frozenset(accepting))


def _accepts(nfa: _Nfa, text: str) -> bool:
    states = {0}
    for char in text:
        code = ord(char)
        states = {target for s in states for spans, target in nfa.edges[s] if _contains(spans, code)}
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


def _meet(a: _Nfa, b: _Nfa) -> str | None:
    """The cheapest real path both automata accept, or None: Dijkstra on their product.

    At most |a| x |b| x 4 states, each expanded once: polynomial whatever the patterns.
    """
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
                common = _intersect(left, right)
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


#: Most states one coverage question may visit. The grant side is determinised, and a
#: grant with `?` or classes after a `*` (`*a???????`) can have exponentially many
#: state sets; past this bound `covers` answers "not covered", which is the safe answer.
COVERS_BUDGET: Final = 20_000


class _GaveUp:
    """The coverage search hit COVERS_BUDGET."""


GAVE_UP: Final = _GaveUp()


def _escape(pattern: _Nfa, grants: Sequence[_Nfa], budget: int = COVERS_BUDGET) -> str | None | _GaveUp:
    """A real path `pattern` accepts and no grant does; None when there is none."""
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
                nxt = (p2, path2, frozenset(t for spans, t in moves if _contains(spans, lo)))
                if nxt in came:
                    continue
                if len(came) >= budget:
                    return GAVE_UP
                came[nxt] = (state, _sample(((lo, hi),)))
                queue.append(nxt)
    return None


def _union(nfas: Sequence[_Nfa]) -> tuple[list[tuple[tuple[Spans, int], ...]], frozenset[int], frozenset[int]]:
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


# -- the public API ----------------------------------------------------------------------


@attrs.frozen
class Glob:
    """A compiled write pattern. Globs are equal when their canonical `key`s are."""

    #: The pattern as written (templates included when made with `from_template`).
    text: str = attrs.field(eq=False)
    #: Canonical text: `./a//b/` and `a/b/**` share one.
    key: str
    segments: tuple[Segment, ...] = attrs.field(eq=False, repr=False)
    nfa: _Nfa = attrs.field(eq=False, repr=False)
    _shape: _Shape = attrs.field(eq=False, repr=False)

    @classmethod
    def compile(cls, text: str) -> Glob:
        """Raises GlobError for an empty, absolute or `..` pattern."""
        return _compile(text)

    @classmethod
    def from_template(cls, text: str) -> Glob:
        """A glob from a written path whose `{{ }}` / `${{ }}` parts are unknown.

        GlobError offsets point into `text`, not into the converted glob.
        """
        glob_text, origin = _convert_template(text)
        try:
            glob = _compile(glob_text)
        except GlobError as error:
            raise GlobError(error.message, origin[error.offset]) from None
        return attrs.evolve(glob, text=text)

    def matches(self, path: str) -> bool:
        """Whether the pattern names `path` (normalised first; non-project paths never match)."""
        clean = normalise_path(path)
        return clean is not None and _accepts(self.nfa, clean)

    @property
    def is_literal(self) -> bool:
        """True when the pattern names exactly one path: no wildcard of any kind."""
        return all(seg != GLOBSTAR and _literal_text(seg) is not None for seg in self.segments)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=16384)
def _compile(text: str) -> Glob:
    segments = _parse(text)
    return Glob(text, _render(segments), segments, _automaton(segments), _Shape.of(segments))


@attrs.frozen
class _Shape:
    """Cheap facts that rule out most overlaps before any automaton runs."""

    #: The literal segments every matched path starts with.
    lead: tuple[str, ...]
    min_depth: int
    max_depth: int | None
    #: The literal text ending every matched path (None when the last segment is `**`).
    tail: str | None

    @classmethod
    def of(cls, segments: tuple[Segment, ...]) -> _Shape:
        lead = []
        for seg in segments:
            literal = None if seg == GLOBSTAR else _literal_text(seg)  # type: ignore[arg-type]
            if literal is None:
                break
            lead.append(literal)
        fixed = sum(1 for seg in segments if seg != GLOBSTAR)
        unbounded = GLOBSTAR in segments
        tail = None
        if segments[-1] != GLOBSTAR:
            chars = []
            for token in reversed(segments[-1]):
                literal = _literal_text((token,))
                if literal is None:
                    break
                chars.append(literal)
            tail = "".join(reversed(chars))
        return cls(tuple(lead), max(fixed, 1), None if unbounded else fixed, tail)

    def may_meet(self, other: _Shape) -> bool:
        if self.max_depth is not None and self.max_depth < other.min_depth:
            return False
        if other.max_depth is not None and other.max_depth < self.min_depth:
            return False
        common = min(len(self.lead), len(other.lead))
        if self.lead[:common] != other.lead[:common]:
            return False
        if self.tail is not None and other.tail is not None:
            return self.tail.endswith(other.tail) or other.tail.endswith(self.tail)
        return True


def overlap(a: Glob, b: Glob) -> str | None:
    """A path both patterns match (short and readable), or None when no path can."""
    if not a._shape.may_meet(b._shape):
        return None
    return _meet(a.nfa, b.nfa)


def covers(grant: Glob, pattern: Glob) -> bool:
    """Whether every path `pattern` matches is matched by `grant`.

    False also when the question needs more than COVERS_BUDGET states (see there).
    """
    return _escape(pattern.nfa, [grant.nfa]) is None


Placement = Literal["inside", "outside", "partly"]


def classify(grants: Sequence[Glob], pattern: Glob) -> Placement:
    """Where a write pattern falls against the grants.

    "inside": the grants together match every path the pattern does; "outside": no path
    of the pattern is granted; "partly": otherwise (or undecided within COVERS_BUDGET).
    """
    touching = [g for g in grants if overlap(g, pattern) is not None]
    if not touching:
        return "outside"
    # Grants that share no path with the pattern cannot help cover it: leave them out
    # of the union, whose determinised states are sets over all grants' states.
    return "inside" if _escape(pattern.nfa, [g.nfa for g in touching]) is None else "partly"


def find_overlaps(patterns: Sequence[Glob]) -> list[tuple[int, int, str]]:
    """Every pair i < j of patterns that can write one path, with such a path.

    Patterns are grouped by their literal leading segments (a trie), so patterns under
    different directories are never compared; equal patterns are compared once.
    """
    indices_of: dict[str, list[int]] = {}
    distinct: list[Glob] = []
    for index, glob in enumerate(patterns):
        if glob.key not in indices_of:
            indices_of[glob.key] = []
            distinct.append(glob)
        indices_of[glob.key].append(index)

    found: list[tuple[int, int, str]] = []

    def report(a: Glob, b: Glob, witness: str) -> None:
        for i in indices_of[a.key]:
            for j in indices_of[b.key]:
                found.append((min(i, j), max(i, j), witness))

    for glob in distinct:
        same = indices_of[glob.key]
        if len(same) > 1 and (witness := _meet(glob.nfa, glob.nfa)) is not None:
            found.extend((i, j, witness) for n, i in enumerate(same) for j in same[n + 1 :])
    for a, b in _candidate_pairs(distinct):
        witness = overlap(a, b)
        if witness is not None:
            report(a, b, witness)
    found.sort()
    return found


class _TrieNode:
    __slots__ = ("children", "here")

    def __init__(self) -> None:
        self.children: dict[str, _TrieNode] = {}
        self.here: list[Glob] = []


def _candidate_pairs(globs: Sequence[Glob]) -> Iterable[tuple[Glob, Glob]]:
    """Pairs whose literal leading segments agree as far as both have them.

    A pattern is filed under its leading literal segments (a fully literal pattern also
    under an end mark, so `a/b` is not filed with `a/b/c`); it can only meet patterns
    filed on the path to its node or below it.
    """
    root = _TrieNode()
    end_mark = "/"  # no segment is "/"
    for glob in globs:
        node = root
        keys = glob._shape.lead + ((end_mark,) if glob.is_literal else ())
        for key in keys:
            node = node.children.setdefault(key, _TrieNode())
        node.here.append(glob)

    def below(node: _TrieNode) -> list[Glob]:
        """Pairs among a subtree's patterns; returns all of them."""
        collected = list(node.here)
        for n, glob in enumerate(node.here):
            pairs.extend((glob, other) for other in node.here[n + 1 :])
        for child in node.children.values():
            deeper = below(child)
            pairs.extend((glob, other) for glob in node.here for other in deeper)
            collected.extend(deeper)
        return collected

    pairs: list[tuple[Glob, Glob]] = []
    below(root)
    return pairs


# -- templates ---------------------------------------------------------------------------


def glob_from_template(text: str) -> str:
    """A written path with each `{{ ... }}` / `${{ ... }}` replaced by `*`.

    The rest is kept as written: it is already glob text. `\\{{` stays literal.
    """
    return _convert_template(text)[0]


def _convert_template(text: str) -> tuple[str, list[int]]:
    """The glob text and, for each of its characters (and its end), the offset in `text`."""
    out: list[str] = []
    origin: list[int] = []
    after_star = False  # two stars in a row would make a segment `**`
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\":
            # An escape pair is copied whole: `\{{` keeps its meaning of literal braces.
            out.append(text[i : i + 2])
            origin.extend(range(i, min(i + 2, n)))
            after_star = False
            i += 2
            continue
        opener = 3 if text.startswith("${{", i) else 2 if text.startswith("{{", i) else 0
        close = _template_end(text, i + opener, opener == 3) if opener else -1
        if close != -1 or text[i] == "*":
            if not after_star:
                out.append("*")
                origin.append(i)
            after_star = True
            i = close + 2 if close != -1 else i + 1
            continue
        out.append(text[i])
        origin.append(i)
        after_star = False
        i += 1
    origin.append(n)
    return "".join(out), origin


def _template_end(text: str, i: int, expression: bool) -> int:
    """Index of the `}}` closing a template whose body starts at `i`; -1 when unclosed.

    Inside `${{ }}` quoted strings and object braces may hold `}}`.
    """
    if not expression:
        return text.find("}}", i)
    depth = 0
    quote = ""
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            if depth == 0 and text.startswith("}}", i):
                return i
            depth = max(0, depth - 1)
        i += 1
    return -1
