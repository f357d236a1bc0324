"""Write-path globs: matching, invalid patterns, overlaps, coverage and templates.

The property tests check the automata against brute force over every short path on
{a, b, /}, and `matches` against an independent regex translation of the same patterns.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from catalyst_dsl.paths.automata import GAVE_UP, uncovered_path
from catalyst_dsl.paths.globs import (
    Glob,
    GlobError,
    classify,
    covers,
    find_overlaps,
    glob_from_template,
    normalise_path,
    overlap,
)

G = Glob.compile

# -- matching ----------------------------------------------------------------------------

MATCHES = [
    # `*`: any run within one segment, empty included, dotfiles included
    ("*.md", "a.md", True),
    ("*.md", ".md", True),
    ("*.md", "a/b.md", False),
    ("*", ".env", True),
    ("a*", "a", True),
    ("a*b*c", "aXbYc", True),
    ("a*b*c", "aXcYb", False),
    # `?`: exactly one character, never `/`
    ("?", "a", True),
    ("?", "ab", False),
    ("a?c", "abc", True),
    ("a?c", "a/c", False),
    # classes, ranges, negation, literal `]`, unclosed `[`
    ("[abc].txt", "b.txt", True),
    ("[abc].txt", "d.txt", False),
    ("[a-c]x", "cx", True),
    ("[a-cx-z]", "y", True),
    ("[a-c]x", "dx", False),
    ("[!a-c]x", "dx", True),
    ("[!a-c]x", "bx", False),
    ("[^a-c]x", "ax", False),
    ("[]]", "]", True),
    ("[]a]", "a", True),
    ("[!]]", "a", True),
    ("[!]]", "]", False),
    ("[a\\]]", "]", True),
    ("[a-]", "-", True),
    ("a[", "a[", True),
    ("a[b", "a[b", True),
    ("a[/b]", "a[/b]", True),
    ("x[!a]y", "x/y", False),
    # escapes
    ("\\*", "*", True),
    ("\\*", "a", False),
    ("\\?", "?", True),
    ("a\\[b]", "a[b]", True),
    ("\\\\", "\\", True),
    ("{a,b}", "{a,b}", True),
    # `**` at the start, in the middle, at the end, alone, inside a segment
    ("**", "a", True),
    ("**", "a/b/c", True),
    ("**", ".xe/x", True),
    ("**/b", "b", True),
    ("**/b", "a/x/b", True),
    ("**/b", "a/xb", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "ab", False),
    ("a/**/b", "a/x/y/c", False),
    ("a/**", "a", True),
    ("a/**", "a/x/y", True),
    ("a/**", "ab", False),
    ("a/**/**/b", "a/b", True),
    ("a**b", "axyb", True),
    ("a**b", "ax/yb", False),
    ("**/*.md", ".xe/x.md", True),
    # a trailing `/` is `/**`
    ("a/", "a/x", True),
    ("a/", "a/x/y", True),
    ("a/", "a", True),
    ("a/", "b/x", False),
    ("./", "anything/at/all", True),
    # normalisation of pattern and path
    ("./a//b", "a/b", True),
    ("a/./b", "a/b", True),
    ("a/b", "./a/b/", True),
    ("a/b", "/a/b", False),
    ("*", "..", False),
    ("a/*/b", "a/../b", False),
    ("*", "", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), MATCHES)
def test_matches(pattern: str, path: str, expected: bool) -> None:
    assert G(pattern).matches(path) is expected


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("", 0),
        ("/x", 0),
        ("C:\\x", 0),
        ("c:/x", 0),
        ("a/../b", 2),
        ("..", 0),
        ("x/\\.\\.", 2),
        ("a\\", 1),
        ("a\\/b", 1),
        (".", 0),
        ("./.", 0),
        ("[z-a]", 1),
        ("ab/[!z-a]", 5),
    ],
)
def test_invalid_patterns(text: str, offset: int) -> None:
    with pytest.raises(GlobError) as caught:
        G(text)
    assert caught.value.offset == offset
    assert caught.value.message


@pytest.mark.parametrize(
    ("a", "b"),
    [("a/", "a/**"), ("./a//b", "a/b"), ("a/**/**/b", "a/**/b"), ("a**", "a*"), ("[a]", "a"), ("[!]]", "[^]]")],
)
def test_equal_spellings_share_a_key(a: str, b: str) -> None:
    assert G(a) == G(b)
    assert G(G(a).key) == G(a)


@pytest.mark.parametrize(
    ("text", "literal"),
    [("a/b.md", True), ("a/[b]", True), ("a/*", False), ("a/", False), ("a/?", False), ("\\*", True)],
)
def test_is_literal(text: str, literal: bool) -> None:
    assert G(text).is_literal is literal


def test_normalise_path() -> None:
    assert normalise_path("./a//b/") == "a/b"
    assert normalise_path("/a") is None
    assert normalise_path("a/../b") is None
    assert normalise_path("./") is None


# -- overlap -----------------------------------------------------------------------------

OVERLAPS = [
    ("src/**/*.md", "src/a/*.txt", None),
    ("docs/*.md", "docs/[a-c]*", "docs/a.md"),
    ("a/*", "a/b", "a/b"),
    ("a/*", "b/*", None),
    ("a/**", "a", "a"),
    ("*.py", "*.md", None),
    ("**/*.py", "src/x/y.py", "src/x/y.py"),
    ("src/**/*.md", "src/**", "src/x.md"),
    ("[!a]", "[a]", None),
    ("?", "??", None),
    ("a/*/c", "a/b/*", "a/b/c"),
    ("*a*a*a*a*a*a*b", "*a*a*a*a*a*c", None),
    ("*a*a*a*a*a*a*b", "*a*a*a*a*a*b", "aaaaaab"),
    (".?", "?.", None),  # the only common text is "..", which is not a path
    ("**", "**", "x"),
    (".xe/features/*/spec.md", ".xe/**/spec.md", ".xe/features/x/spec.md"),
    ("out/", "out", "out"),
    ("a/*", "a", None),
]


@pytest.mark.parametrize(("a", "b", "witness"), OVERLAPS)
def test_overlap(a: str, b: str, witness: str | None) -> None:
    found = overlap(G(a), G(b))
    assert found == witness
    if found is not None:
        assert G(a).matches(found) and G(b).matches(found)
    assert (overlap(G(b), G(a)) is None) is (witness is None)


def test_find_overlaps_pairs_and_duplicates() -> None:
    patterns = [G(t) for t in ["docs/*.md", "src/a.py", "docs/[a-c]*", "src/**", "docs/*.md", "build/"]]
    found = find_overlaps(patterns)
    assert [(i, j) for i, j, _ in found] == [(0, 2), (0, 4), (1, 3), (2, 4)]
    for i, j, witness in found:
        assert patterns[i].matches(witness) and patterns[j].matches(witness)


def test_find_overlaps_agrees_with_every_pair() -> None:
    texts = [
        "a/b",
        "a/b/**",
        "a/b/c",
        "a/*",
        "a/*/c",
        "*",
        "**",
        "**/c",
        "b/",
        "b/x.md",
        "b/*.py",
        "a/b",
        "[ab]/c",
        "a/[!b]/c",
        ".xe/*/spec.md",
        ".xe/f1/spec.md",
        ".xe/f1/plan.md",
        "a/b/c/d",
    ]
    patterns = [G(t) for t in texts]
    expected = {(i, j) for i, j in itertools.combinations(range(len(patterns)), 2) if overlap(patterns[i], patterns[j])}
    assert {(i, j) for i, j, _ in find_overlaps(patterns)} == expected


# -- coverage ----------------------------------------------------------------------------

COVERS = [
    ("src/**", "src/a/*.py", True),
    ("src/*", "src/**", False),
    ("src/*.py", "src/[a-c].py", True),
    ("src/[!a].py", "src/?.py", False),
    ("a/**", "a", True),
    ("a/", "a/b/", True),
    ("*", "**", False),
    ("**", "*/*/x", True),
    ("*a*", "*aa*", True),
    ("*aa*", "*a*", False),
    ("[a-z]*", "[b-d]x", True),
    ("*a*a*a*a*a*a*b", "*a*a*a*a*a*c", False),
    ("*a*a*a*a*a*c", "*a*a*a*a*a*a*c", True),
    ("?*", "*", True),  # segments are never empty
    ("[!.]*", "*", False),
    ("**/*.md", "docs/x.md", True),
]


@pytest.mark.parametrize(("grant", "pattern", "expected"), COVERS)
def test_covers(grant: str, pattern: str, expected: bool) -> None:
    assert covers(G(grant), G(pattern)) is expected


CLASSIFY = [
    (["src/a/**", "src/b/**"], "src/[ab]/x", "inside"),  # only the union covers it
    (["src/a/**"], "src/*/x", "partly"),
    (["src/**"], "docs/*", "outside"),
    (["a/*.md", "a/[!x]*"], "a/*", "partly"),
    (["a/*.md", "a/[!x]*", "a/x*"], "a/*", "inside"),
    (["*"], "x/y", "outside"),
    ([], "x", "outside"),
    ([".xe/features/**"], ".xe/features/*/spec.md", "inside"),
]


@pytest.mark.parametrize(("grants", "pattern", "expected"), CLASSIFY)
def test_classify(grants: list[str], pattern: str, expected: str) -> None:
    assert classify([G(g) for g in grants], G(pattern)) == expected


def test_coverage_gives_up_safely() -> None:
    # Determinising `*a` + 20 `?` needs about 2**20 state sets; past the budget the
    # answer is the safe "not covered", not a long wait.
    grant = G("*a" + "?" * 20)
    assert uncovered_path(grant.nfa, [grant.nfa]) is GAVE_UP
    assert covers(grant, grant) is False
    small = G("*a" + "?" * 6)
    assert covers(small, small) is True


# -- templates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "glob"),
    [
        (".xe/features/{{feature-id}}/spec.md", ".xe/features/*/spec.md"),
        ("out/${{ get('run') + '}}' }}.json", "out/*.json"),
        ("a/{{x}}{{y}}/b", "a/*/b"),  # never a `**` segment
        ("a/{{x}}*", "a/*"),
        ("a/*{{x}}", "a/*"),
        ("a/*{{x}}*/b", "a/*/b"),
        ("a/**{{x}}", "a/*"),
        ("a/\\*{{x}}", "a/\\**"),  # an escaped star is a character, not a wildcard
        ("src/**/{{name}}.md", "src/**/*.md"),  # a written `**` stays
        ("a/**", "a/**"),
        ("a/\\{{x}}", "a/\\{{x}}"),  # escaped braces stay literal
        ("a/{{x", "a/{{x"),  # unclosed: literal text
        ("plain/path.md", "plain/path.md"),
    ],
)
def test_glob_from_template(written: str, glob: str) -> None:
    assert glob_from_template(written) == glob


def test_template_globs() -> None:
    spec = Glob.from_template(".xe/features/{{feature-id}}/spec.md")
    assert spec.text == ".xe/features/{{feature-id}}/spec.md"
    assert spec.matches(".xe/features/42/spec.md")
    assert not spec.matches(".xe/features/a/b/spec.md")
    assert Glob.from_template("a/\\{{x}}").matches("a/{{x}}")
    assert overlap(spec, G(".xe/features/f1/*")) == ".xe/features/f1/spec.md"


@pytest.mark.parametrize(("written", "offset"), [("{{dir}}/../x", 8), ("/{{a}}", 0), ("{{a}}/x\\", 7)])
def test_template_errors_point_into_the_written_text(written: str, offset: int) -> None:
    with pytest.raises(GlobError) as caught:
        Glob.from_template(written)
    assert caught.value.offset == offset


# -- properties: brute force over short paths ---------------------------------------------

PATHS = [
    "".join(chars)
    for length in range(1, 7)
    for chars in itertools.product("ab/", repeat=length)
    if normalise_path("".join(chars)) == "".join(chars)
]
TOKENS = ["a", "b", "/", "*", "?", "**", "[ab]", "[!a]"]
PROPERTY = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
# A leading `/` makes a pattern absolute (tested above); drop it so examples stay valid.
texts = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=6).map(lambda tokens: "".join(tokens).lstrip("/") or "*")


def compiled(text: str) -> Glob:
    try:
        return G(text)
    except GlobError:
        assume(False)
        raise


def reference(text: str) -> re.Pattern[str]:
    """An independent regex reading of the property patterns (tokens above only)."""
    parts = [p for p in text.split("/") if p and p != "."] + (["**"] if text.endswith("/") else [])
    segments = [p for n, p in enumerate(parts) if not (p == "**" and n and parts[n - 1] == "**")]
    pieces = {"[!a]": "[^/a]", "[ab]": "[ab]", "*": "[^/]*", "?": "[^/]", "a": "a", "b": "b"}
    token = re.compile(r"\[!a\]|\[ab\]|.")
    out = ""
    for n, seg in enumerate(segments):
        joined = n > 0 and segments[n - 1] != "**"
        if seg != "**":
            out += ("/" if joined else "") + "".join(pieces[t] for t in token.findall(seg))
        elif len(segments) == 1:
            out = "[^/]+(?:/[^/]+)*"
        elif n == len(segments) - 1:
            out += "(?:/[^/]+)*"
        else:
            out += ("/" if joined else "") + "(?:[^/]+/)*"
    return re.compile(out)


@PROPERTY
@given(texts)
def test_matches_agrees_with_a_regex_reading(text: str) -> None:
    glob = compiled(text)
    regex = reference(text)
    for path in PATHS:
        assert glob.matches(path) is bool(regex.fullmatch(path)), path


@PROPERTY
@given(texts, texts)
def test_overlap_agrees_with_brute_force(a_text: str, b_text: str) -> None:
    a, b = compiled(a_text), compiled(b_text)
    witness = overlap(a, b)
    if any(a.matches(p) and b.matches(p) for p in PATHS):
        assert witness is not None
    if witness is not None:
        assert a.matches(witness) and b.matches(witness)


@PROPERTY
@given(texts, texts)
def test_covers_agrees_with_brute_force(grant_text: str, pattern_text: str) -> None:
    grant, pattern = compiled(grant_text), compiled(pattern_text)
    if any(pattern.matches(p) and not grant.matches(p) for p in PATHS):
        assert covers(grant, pattern) is False
    example = uncovered_path(pattern.nfa, [grant.nfa])
    if isinstance(example, str):
        assert pattern.matches(example) and not grant.matches(example)


@PROPERTY
@given(st.lists(texts, min_size=1, max_size=3), texts)
def test_classify_agrees_with_brute_force(grant_texts: list[str], pattern_text: str) -> None:
    grants = [compiled(t) for t in grant_texts]
    pattern = compiled(pattern_text)
    mine = [p for p in PATHS if pattern.matches(p)]
    granted = [any(g.matches(p) for g in grants) for p in mine]
    placement = classify(grants, pattern)
    if any(granted):
        assert placement != "outside"
    if not all(granted):
        assert placement != "inside"


@PROPERTY
@given(st.lists(texts, min_size=2, max_size=8))
def test_find_overlaps_agrees_with_every_pair_of_random_patterns(pattern_texts: list[str]) -> None:
    patterns = [compiled(t) for t in pattern_texts]
    expected = {(i, j) for i, j in itertools.combinations(range(len(patterns)), 2) if overlap(patterns[i], patterns[j])}
    found = find_overlaps(patterns)
    assert {(i, j) for i, j, _ in found} == expected
    for i, j, witness in found:
        assert patterns[i].matches(witness) and patterns[j].matches(witness)


@pytest.mark.parametrize(
    "pattern, prefix",
    [
        ("out/**", "out"),
        ("out/", "out"),
        ("out/*.txt", "out"),
        ("out/report.txt", "out"),
        ("a/b/c/**", "a/b/c"),
        ("a/*/c", "a"),
        ("README.md", ""),
        ("*.md", ""),
        ("**", ""),
        ("a/[bc]/d", "a"),
    ],
)
def test_fixed_prefix_is_the_directory_the_literal_part_names(pattern, prefix):
    from catalyst_dsl.paths.globs import fixed_prefix

    assert fixed_prefix(Glob.compile(pattern)) == prefix


def _glob_or_none(text: str) -> Glob | None:
    try:
        return G(text)
    except GlobError:
        return None


@PROPERTY
@given(st.lists(texts, min_size=9, max_size=40))
def test_find_overlaps_misses_no_pair_of_many_patterns(pattern_texts: list[str]) -> None:
    """Past eight patterns filed together, candidate pairs come from the patterns' literal
    heads and tails (candidates.py), not every pair: none that meets may be left out."""
    patterns = [g for g in map(_glob_or_none, pattern_texts) if g is not None]
    expected = {(i, j) for i, j in itertools.combinations(range(len(patterns)), 2) if overlap(patterns[i], patterns[j])}
    assert {(i, j) for i, j, _ in find_overlaps(patterns)} == expected


@PROPERTY
@given(st.data())
def test_find_overlaps_misses_no_pair_under_an_unknown_directory(data: st.DataObject) -> None:
    """Many patterns of one depth under `out/*/`, told apart only by their later segments."""
    names = st.lists(st.sampled_from(["a", "b", "ab", "ba", "*", "a*", "*b", "a*b", "?", "**"]), min_size=1, max_size=3)
    texts_ = data.draw(st.lists(names.map(lambda parts: "out/*/" + "/".join(parts)), min_size=9, max_size=40))
    patterns = [g for g in map(_glob_or_none, texts_) if g is not None]
    expected = {(i, j) for i, j in itertools.combinations(range(len(patterns)), 2) if overlap(patterns[i], patterns[j])}
    assert {(i, j) for i, j, _ in find_overlaps(patterns)} == expected
