"""The Markdown reader's patterns: what they take, and that a long run of what they scan
is read in one pass (each case below took seconds, growing with the square of its size,
before the patterns were written so; the test counts no time, it runs them at a size
where the old patterns took minutes)."""

from __future__ import annotations

import pytest

from catalyst_dsl.dialects.native.markdown import AT_REF, HEADING, heading_title
from catalyst_dsl.lsp.completion import _OPEN_TEMPLATE


@pytest.mark.parametrize(
    "text, found",
    [
        ("see @docs/a.md.", ["docs/a.md"]),
        ("(@a.yaml)", ["a.yaml"]),
        ("@shared/b.yml, then", ["shared/b.yml"]),
        ("mail me@x.md", []),
        ("@a.yaml.bak", []),
        ("@a.md-old", []),
        ("x.@a.md and -@b.md", []),
        ("@@a.md", []),
        ("@" + ".@" * 200_000 + "a.md", []),
        ("-@" * 200_000, []),
    ],
)
def test_at_references(text: str, found: list[str]) -> None:
    assert [m.group(1) for m in AT_REF.finditer(text)] == found


@pytest.mark.parametrize(
    "line, level, title",
    [
        ("# Title", 1, "Title"),
        ("## Title ##", 2, "Title"),
        ("### C#", 3, "C"),
        ("# Title #tag", 1, "Title #tag"),
        ("# #", 1, "#"),
        ("# a" + " " * 200_000 + "b", 1, "a" + " " * 200_000 + "b"),
        ("# a" + " " * 200_000, 1, "a"),
    ],
)
def test_headings(line: str, level: int, title: str) -> None:
    match = HEADING.match(line)
    assert match is not None and len(match.group(1)) == level and heading_title(match) == title


def test_an_open_template_is_found_at_the_end_of_a_line_of_many() -> None:
    assert _OPEN_TEMPLATE.search("{{ a }} ${{ b").group(1) == " b"
    assert _OPEN_TEMPLATE.search("{{ " * 200_000).group(1) == " "
    assert _OPEN_TEMPLATE.search("{{ a }}") is None
