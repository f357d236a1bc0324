"""LazyPattern: compiled on first use, then the compiled pattern's own methods."""

from __future__ import annotations

import re

import pytest

from catalyst_dsl._internal.lazy_pattern import LazyPattern


def test_nothing_is_compiled_until_the_pattern_is_used(monkeypatch) -> None:
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *args: compiled.append(args) or real(*args))
    lazy = LazyPattern(r"a(b+)", re.I)
    assert compiled == []
    assert lazy.search("xABb").group(1) == "Bb"
    assert lazy.fullmatch("ab") and not lazy.match("b")
    assert compiled == [(r"a(b+)", re.I)]  # once, then the methods are the instance's own
    assert lazy.sub("-", "abab") == "--" and lazy.pattern == r"a(b+)" and lazy.groups == 1
    assert [m.span() for m in lazy.finditer("ab ab")] == [(0, 2), (3, 5)]
    assert compiled == [(r"a(b+)", re.I)]


def test_what_a_pattern_does_not_have_is_an_attribute_error() -> None:
    lazy = LazyPattern("x")
    with pytest.raises(AttributeError):
        lazy.no_such_method
    assert lazy.match("x")
