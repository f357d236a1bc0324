"""plain_regex.surely_accepted: a pattern it accepts is one RE2 accepts, and the plain
patterns playbooks write are accepted, so that checking them loads no RE2."""

from __future__ import annotations

import random

import pytest

from catalyst_dsl.syntax.plain_regex import surely_accepted
from catalyst_dsl.syntax.regex import PatternError, check_pattern, compile_pattern

PLAIN = [
    "",
    "abc",
    "^[a-z][a-z0-9-]*$",
    r"^v\d+\.\d+\.\d+$",
    "^(main|release/.+)$",
    r"^[A-Z][A-Za-z0-9]*$",
    r"^\S+@\S+\.\S+$",
    "(?:ab|cd)+?x{2,5}y{3}z{1,}",
    r"[-a-z_.\]]",
    "a|",
    "()",
    r"\bword\B",
    "[^/]+/[^/]+",
    "a{1000}",
    r"\(\)\[\]\{\}\|\\\/\-\.\*\+\?\^\$",
    "x?y*z+?",
]
#: Not plain: RE2 must judge them (whether it accepts them or not).
NOT_PLAIN = [
    "a**",
    "^*",
    "(?i)abc",
    "(?P<n>a)",
    "(?=a)",
    r"(a)\1",
    "[z-a]",
    "[a",
    "a{1001}",
    "a{2,1}",
    "(a{2}){3}",
    "{",
    "a{,3}",
    "[[:alpha:]]",
    "[]a]",
    r"\pL",
    "é",
    "a)",
    "(a",
    r"\z",
    "a{500}b{501}",
    "[a-\\d]",
    "[a-b-c]",
]


@pytest.mark.parametrize("pattern", PLAIN)
def test_plain_patterns_are_told_without_re2_and_re2_agrees(pattern: str) -> None:
    assert surely_accepted(pattern)
    compile_pattern(pattern)  # raises if RE2 refuses


@pytest.mark.parametrize("pattern", NOT_PLAIN)
def test_other_patterns_are_left_to_re2(pattern: str) -> None:
    assert not surely_accepted(pattern)


def test_a_refused_pattern_is_still_refused_through_re2() -> None:
    with pytest.raises(PatternError, match="lookahead"):
        check_pattern("a(?=b)")
    with pytest.raises(PatternError):
        check_pattern("[z-a]")
    check_pattern("^[a-z]+$")


def test_every_generated_pattern_accepted_here_is_accepted_by_re2() -> None:
    """Random strings over the characters and pieces that matter to the reader; whatever
    it accepts, RE2 must accept too (the reverse is not asked: RE2 takes much more)."""
    pieces = [
        "a",
        "z",
        "0",
        "9",
        "-",
        "_",
        " ",
        "/",
        ".",
        "^",
        "$",
        "|",
        "(",
        ")",
        "(?:",
        "[",
        "]",
        "[^",
        "\\",
        "\\d",
        "\\w",
        "\\s",
        "\\b",
        "\\.",
        "\\-",
        "*",
        "+",
        "?",
        "{",
        "}",
        "{2}",
        "{1,3}",
        "{0,}",
        "{3,1}",
        "{1000}",
        ",",
        "a-z",
        "z-a",
        "]",
        "\\]",
    ]
    rng = random.Random(16)
    accepted = 0
    for _ in range(20_000):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if surely_accepted(pattern):
            accepted += 1
            try:
                compile_pattern(pattern)
            except PatternError as error:
                pytest.fail(f"{pattern!r} was taken as plain, but RE2 refuses it: {error.message}")
    assert accepted > 1000  # the generator does reach the plain kind
