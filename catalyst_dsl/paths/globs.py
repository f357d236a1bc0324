"""Write-path globs: which paths a pattern names, where two patterns meet, and whether
grants cover a pattern.

This module reads pattern text (normalising it, rejecting absolute and `..` patterns)
and answers the checker's questions; `automata.py` does the exact work on NFAs, so
answers never come from comparing text. Users' view of the semantics: docs/globs.md.
"""

from __future__ import annotations

import functools
import itertools
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.expr.templates import find_expression_end

from catalyst_dsl.paths import candidates
from catalyst_dsl.paths.automata import (
    GLOBSTAR,
    STAR,
    Nfa,
    Segment,
    Token,
    accepts,
    build_nfa,
    common_path,
    uncovered_path,
)
from catalyst_dsl.paths.charsets import MAX_CODE, SEGMENT_CHAR, Spans, complement, contains, intersect, merge, single
from catalyst_dsl._internal.records import field, record


# -- reading patterns and paths ---------------------------------------------------------


class GlobError(ValueError):
    """An invalid write pattern; `offset` is the character it was found at."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at character {offset})")
        self.message = message
        self.offset = offset


_DRIVE = LazyPattern(r"[A-Za-z]:[\\/]")


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


#: What gives a character of a segment a meaning of its own; without any, each is itself.
_SEGMENT_SPECIAL = LazyPattern(r"[\\*?\[]")


def _parse_segment(text: str, start: int, end: int) -> tuple[Token, ...]:
    if _SEGMENT_SPECIAL.search(text, start, end) is None:
        return tuple(map(single, text[start:end]))  # a plain name, most segments: no loop
    tokens: list[Token] = []
    i = start
    while i < end:
        char = text[i]
        if char == "\\":
            if i + 1 >= end:
                if end < len(text):
                    raise GlobError("`/` cannot be escaped: it always separates directories", i)
                raise GlobError("the `\\` at the end escapes nothing", i)
            tokens.append(single(text[i + 1]))
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
            tokens.append(single(char))  # an unclosed `[` is itself
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
    spans = merge(members)
    spans = complement(spans) if negated else spans
    return intersect(spans, SEGMENT_CHAR), i + 1


def _class_char(text: str, i: int, end: int) -> tuple[int | None, int]:
    if text[i] == "\\":
        return (ord(text[i + 1]), i + 2) if i + 1 < end else (None, i)
    return ord(text[i]), i + 1


@functools.lru_cache(maxsize=65536)
def _literal_text(tokens: tuple[Token, ...]) -> str | None:
    """The one text a segment matches, or None when it has a wildcard. Remembered: the
    patterns of a library share most of their segments."""
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
    negated = contains(token, MAX_CODE)  # type: ignore[arg-type]
    shown = intersect(complement(token), SEGMENT_CHAR) if negated else token  # type: ignore[arg-type]
    body = "".join(_class_item(lo) if lo == hi else f"{_class_item(lo)}-{_class_item(hi)}" for lo, hi in shown)
    return f"[{'!' if negated else ''}{body}]"


def _class_item(code: int) -> str:
    char = chr(code)
    return "\\" + char if char in "\\]-^!" else char


# -- the questions -----------------------------------------------------------------------


@record
class Glob:
    """A compiled write pattern. Globs are equal when their canonical `key`s are."""

    #: The pattern as written (templates included when made with `from_template`).
    text: str = field(eq=False)
    #: Canonical text: `./a//b/` and `a/b/**` share one.
    key: str
    segments: tuple[Segment, ...] = field(eq=False, repr=False)
    _shape: _Shape = field(eq=False, repr=False)
    #: The automaton, built on first use: most write patterns are placed by their text
    #: alone (a plain `dir/**` grant), so most never need one.
    _built: list = field(factory=list, eq=False, repr=False)

    @property
    def nfa(self) -> Nfa:
        if not self._built:
            self._built.append(build_nfa(self.segments))
        return self._built[0]

    @classmethod
    def compile(cls, text: str) -> Glob:
        """Raises GlobError for an empty, absolute or `..` pattern."""
        return _compile(text)

    @classmethod
    def from_template(cls, text: str) -> Glob:
        """A glob from a written path whose `{{ }}` / `${{ }}` parts are unknown.

        GlobError offsets point into `text`, not into the converted glob. Compiled once
        per text: a library repeats its patterns (a called playbook's writes are placed
        against every caller's grants).
        """
        return _from_template(text)

    def matches(self, path: str) -> bool:
        """Whether the pattern names `path` (normalised first; non-project paths never match)."""
        clean = normalise_path(path)
        return clean is not None and accepts(self.nfa, clean)

    @property
    def is_literal(self) -> bool:
        """True when the pattern names exactly one path: no wildcard of any kind."""
        return all(seg != GLOBSTAR and _literal_text(seg) is not None for seg in self.segments)  # type: ignore[arg-type]


#: Patterns that repeat (grants, shared folders) are compiled once; one seen once costs
#: its compilation only, so the caches stay small (a library's memory is mostly its IR).
@functools.lru_cache(maxsize=2048)
def _compile(text: str) -> Glob:
    segments = _parse(text)
    return Glob(text, _render(segments), segments, _Shape.of(segments))


@functools.lru_cache(maxsize=2048)
def _from_template(text: str) -> Glob:
    glob_text, origin = _convert_template(text)
    try:
        glob = _compile(glob_text)
    except GlobError as error:
        raise GlobError(error.message, origin[error.offset]) from None
    # The automaton is shared with the converted text's glob: it depends on segments only.
    return Glob(text, glob.key, glob.segments, glob._shape, glob._built)


@functools.lru_cache(maxsize=2048)
def template_segments(text: str) -> tuple[Segment, ...]:
    """The segments of a written path whose templates are unknown, as `Glob.from_template`
    reads them, raising the same GlobError (its offset into `text`).

    Parsing alone: a write checked for validity, then placed by its text under a plain
    `dir/**` grant, never needs the canonical text and shape a Glob works out as well.
    """
    glob_text, origin = _convert_template(text)
    try:
        return _parse(glob_text)
    except GlobError as error:
        raise GlobError(error.message, origin[error.offset]) from None


def check_template(text: str) -> None:
    """Raises the GlobError `Glob.from_template(text)` would raise; returns for a valid
    pattern, most of them without being parsed (see `_plain_names`)."""
    if _template_names(text) is None:
        template_segments(text)


@functools.lru_cache(maxsize=2048)
def _template_names(text: str) -> tuple[str, ...] | None:
    """`_plain_names` of the glob a written path stands for (its templates each a `*`).
    Remembered: a program's write is checked (`check_template`), then its prefix asked
    (`template_prefix`), and a playbook's writes again for each playbook calling it."""
    names = _plain_names(_convert_template(text)[0])
    return None if names is None else tuple(names)


def _plain_names(glob_text: str) -> list[str] | None:
    """The segments of a valid pattern without escapes or classes, as text: its names
    other than `.`, then `**` for a trailing `/`. None for any other pattern (`_parse`
    reads it, and knows what is wrong with it).

    Without `\\` or `[` no segment can be malformed, so such a pattern is valid unless it
    is absolute, names no path or has a `..` segment: a library's written paths are
    checked and placed without a parse.
    """
    if not glob_text or "\\" in glob_text or "[" in glob_text or glob_text.startswith("/") or _DRIVE.match(glob_text):
        return None
    names = [name for name in glob_text.split("/") if name and name != "."]
    if not names or ".." in names:
        return None
    if glob_text.endswith("/") and names[-1] != GLOBSTAR:
        names.append(GLOBSTAR)
    return names


@record
class _Shape:
    """Cheap facts that rule out most overlaps before any automaton runs."""

    #: The literal segments every matched path starts with.
    lead: tuple[str, ...]
    min_depth: int
    max_depth: int | None
    #: The literal text ending every matched path (None when the last segment is `**`).
    tail: str | None
    #: Texts two patterns' paths must agree on, one for one, each a prefix of the other
    #: (see candidates.py): empty for a pattern with `**`, whose segments do not line up.
    marks: tuple[str, ...] = ()

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
        return cls(
            tuple(lead), max(fixed, 1), None if unbounded else fixed, tail, () if unbounded else _marks(segments)
        )

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


def _marks(segments: tuple[Segment, ...]) -> tuple[str, ...]:
    """For a pattern of fixed depth: the depth, then each segment's literal head (the text
    every name it matches starts with) and its literal tail reversed (the text they end with)."""
    marks = [chr(len(segments))]
    for seg in segments:
        chars = [_literal_text((token,)) for token in seg]  # type: ignore[union-attr]
        head = "".join(itertools.takewhile(lambda c: c is not None, chars))  # type: ignore[arg-type]
        tail = "".join(itertools.takewhile(lambda c: c is not None, reversed(chars)))  # type: ignore[arg-type]
        marks += [head, tail]
    return tuple(marks)


def overlap(a: Glob, b: Glob) -> str | None:
    """A path both patterns match (short and readable), or None when no path can."""
    if not a._shape.may_meet(b._shape):
        return None
    return common_path(a.nfa, b.nfa)


def covers(grant: Glob, pattern: Glob) -> bool:
    """Whether every path `pattern` matches is matched by `grant`.

    False also when deciding needs more than `automata.COVERS_BUDGET` states (see there).
    """
    return uncovered_path(pattern.nfa, [grant.nfa]) is None


Placement = Literal["inside", "outside", "partly"]


def classify(grants: Sequence[Glob], pattern: Glob) -> Placement:
    """Where a write pattern falls against the grants.

    "inside": the grants together match every path the pattern does; "outside": no path
    of the pattern is granted; "partly": otherwise, or when coverage is undecided within
    `automata.COVERS_BUDGET`.
    """
    touching = [g for g in grants if overlap(g, pattern) is not None]
    if not touching:
        return "outside"
    # Grants that share no path with the pattern cannot help cover it: leave them out
    # of the union, whose determinised states are sets over all grants' states.
    return "inside" if uncovered_path(pattern.nfa, [g.nfa for g in touching]) is None else "partly"


@record
class Overlap:
    """Patterns that can write one path, `witness`: each pattern of `first` with each of
    `second` (indices, ascending). When equal patterns meet, `first` and `second` are the
    same indices, and a pattern is not paired with itself.

    Equal patterns are one group, whatever their number: a check asking which pairs
    overlap gets a list as long as the distinct patterns that meet, not their product.
    """

    first: tuple[int, ...]
    second: tuple[int, ...]
    witness: str

    @property
    def equal(self) -> bool:
        return self.first == self.second

    def pairs(self) -> Iterator[tuple[int, int]]:
        """Its pairs i < j, in ascending order."""
        if self.equal:
            for n, i in enumerate(self.first):
                for j in self.first[n + 1 :]:
                    yield i, j
            return
        firsts = set(self.first)  # unequal patterns: the two groups of indices are disjoint
        for i in sorted(self.first + self.second):
            others = self.second if i in firsts else self.first
            for j in others[bisect_right(others, i) :]:
                yield i, j


def overlap_groups(patterns: Sequence[Glob]) -> list[Overlap]:
    """Which patterns can write one path, grouped by equal patterns.

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
    found: list[Overlap] = []
    for glob in distinct:
        same = tuple(indices_of[glob.key])
        if len(same) > 1 and (witness := common_path(glob.nfa, glob.nfa)) is not None:
            found.append(Overlap(same, same, witness))
    for a, b in _candidate_pairs(distinct):
        witness = overlap(a, b)
        if witness is not None:
            found.append(Overlap(tuple(indices_of[a.key]), tuple(indices_of[b.key]), witness))
    return found


def find_overlaps(patterns: Sequence[Glob]) -> list[tuple[int, int, str]]:
    """Every pair i < j of patterns that can write one path, with such a path: as many
    as the pairs are (see `overlap_groups` for a bounded answer)."""
    found = [(i, j, group.witness) for group in overlap_groups(patterns) for i, j in group.pairs()]
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
        """Pairs among a subtree's patterns; returns all of them. Patterns filed at one
        node are paired through their segments' literal text (candidates.py), not each
        with each: patterns under an unknown directory all stop at the same node."""
        here = node.here
        shapes = [glob._shape for glob in here]
        pairs.extend((here[i], here[j]) for i, j in candidates.within(shapes))
        collected = list(here)
        for child in node.children.values():
            deeper = below(child)
            if here:
                both = shapes + [glob._shape for glob in deeper]
                left, right = range(len(here)), range(len(here), len(both))
                pairs.extend((here[i], deeper[j - len(here)]) for i, j in candidates.across(both, left, right))
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


_SPECIAL = LazyPattern(r"[\\{$*]")


def _convert_template(text: str) -> tuple[str, list[int]]:
    """The glob text and, for each of its characters (and its end), the offset in `text`."""
    out: list[str] = []
    origin: list[int] = []
    # Stars next to a template's `*` merge into it: `{{a}}{{b}}` must stay one segment,
    # `*`, never become the segment `**`. A written `**` alone is kept as written.
    last_star: Literal["template", "written"] | None = None
    i, n = 0, len(text)
    while i < n:
        plain = _SPECIAL.search(text, i)
        stop = n if plain is None else plain.start()
        if stop > i:
            # A run of ordinary characters is copied whole (never a `*`, so the merging
            # of stars below, which looks at single `*` items, is not affected).
            out.append(text[i:stop])
            origin.extend(range(i, stop))
            last_star = None
            i = stop
            continue
        if text[i] == "\\":
            # An escape pair is copied whole: `\{{` keeps its meaning of literal braces.
            out.append(text[i : i + 2])
            origin.extend(range(i, min(i + 2, n)))
            last_star = None
            i += 2
            continue
        opener = 3 if text.startswith("${{", i) else 2 if text.startswith("{{", i) else 0
        close = _template_end(text, i + opener, opener == 3) if opener else -1
        if close != -1:
            if last_star is None:
                out.append("*")
                origin.append(i)
            while len(out) > 1 and out[-1] == out[-2] == "*":  # `**{{a}}` is `*` too
                out.pop()
                origin.pop()
            last_star = "template"
            i = close + 2
            continue
        if text[i] == "*" and last_star == "template":
            i += 1
            continue
        out.append(text[i])
        origin.append(i)
        last_star = "written" if text[i] == "*" else None
        i += 1
    origin.append(n)
    return "".join(out), origin


def _template_end(text: str, i: int, expression: bool) -> int:
    """Index of the `}}` closing a template whose body starts at `i`; -1 when unclosed.

    The template parser decides where a `${{ }}` ends (strings and braces inside it).
    """
    return find_expression_end(text, i) if expression else text.find("}}", i)


def fixed_prefix(glob: Glob) -> str:
    """The directory a pattern's literal part names ("" for the project root): `out/**` and
    `out/*.txt` give `out`, `out/report.txt` gives `out` (its last segment may be a file),
    `*.md` gives "". Everything the pattern names lies beneath it."""
    return _segments_prefix(glob.segments)


def template_prefix(text: str) -> str:
    """`fixed_prefix(Glob.from_template(text))`, from the segments' text where the pattern
    is plain (see `_plain_names`), else from the parsed segments."""
    names = _template_names(text)
    if names is None:
        return _segments_prefix(template_segments(text))
    literal = []
    for index, name in enumerate(names):
        if index == len(names) - 1 or "*" in name or "?" in name:  # the last, or a wildcard
            break
        literal.append(name)
    return "/".join(literal)


def _segments_prefix(segments: tuple[Segment, ...]) -> str:
    literal = []
    for index, segment in enumerate(segments):
        text = None if segment == GLOBSTAR else _literal_text(segment)  # type: ignore[arg-type]
        if text is None or index == len(segments) - 1:
            break
        literal.append(text)
    return "/".join(literal)
