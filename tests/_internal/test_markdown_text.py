"""An author's text in Markdown: its inline Markdown kept, nothing in it reaching past it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalyst_dsl._internal.markdown_text import (
    AUTHOR_CHARS,
    AUTHOR_LINES,
    CUT_MARK,
    author_markdown,
    code_span,
    fenced,
    strong_name,
)

#: (the author's text, what the Markdown says): the first ones are kept as written.
CASES = [
    ("Publishes the *release* notes with `make notes`", "Publishes the *release* notes with `make notes`"),
    ("See [the guide](https://example.com/guide).", "See [the guide](https://example.com/guide)."),
    ("A `<tag>` and a ``` `` ``` in code stay code", "A `<tag>` and a ``` `` ``` in code stay code"),
    ("first line\nsecond line", "first line  \nsecond line"),
    ("one\n\n\n\ntwo", "one\n\ntwo"),
    # A fence never opens: it would swallow everything after the description.
    ("```\nswallowed", "\\`\\`\\`  \nswallowed"),
    ("~~~ sh", "\\~~~ sh"),
    ("an unclosed `tick", "an unclosed \\`tick"),
    # Blocks are text: headings, quotes, lists, breaks, setext underlines, indented code.
    ("# Heading", "\\# Heading"),
    ("> quoted", "\\> quoted"),
    ("- item\n+ item\n* item", "\\- item  \n\\+ item  \n\\* item"),
    ("1. first\n2) second", "1\\. first  \n2\\) second"),
    ("text\n---", "text  \n\\---"),
    ("text\n===", "text  \n\\==="),
    ("* * *", "\\* * *"),
    ("    indented code", "indented code"),
    # A table, a link reference definition, HTML and images are text too.
    ("| a | b |\n|---|---|", "\\| a \\| b \\|  \n\\|---\\|---\\|"),
    ("[inputs]: https://example.com", "\\[inputs]: https://example.com"),
    ("<details><summary>more", "\\<details>\\<summary>more"),
    ("end --> <!-- start", "end --> \\<!-- start"),
    ("</script><script>alert(1)</script>", "\\</script>\\<script>alert(1)\\</script>"),
    ("![pixel](https://example.com/p.png)", "\\![pixel](https://example.com/p.png)"),
    # What the author escaped stays escaped: no second backslash that would undo it.
    ("\\<b> and \\`", "\\<b> and \\`"),
    ("\\```", "\\`\\`\\`"),
    # Controls are shown, not obeyed.
    ("red\x1b[31m and \u202eevil", "red\\x1b[31m and \\u202eevil"),
]


@pytest.mark.parametrize(("text", "shown"), CASES, ids=[repr(text)[:40] for text, _ in CASES])
def test_author_text_in_markdown(text: str, shown: str) -> None:
    assert author_markdown(text) == shown


def test_on_one_line_for_a_list_item() -> None:
    assert author_markdown("the version\n\n# to publish\n- now", one_line=True) == "the version \\# to publish \\- now"


def test_an_overlong_text_is_cut_with_a_mark() -> None:
    long = author_markdown("word " * 1000)
    assert long.endswith("word" + CUT_MARK) and len(long) <= AUTHOR_CHARS + len(CUT_MARK)
    lines = author_markdown("\n".join(f"line {n}" for n in range(100)))
    assert lines.count("\n") == AUTHOR_LINES - 1 and lines.endswith("line 19" + CUT_MARK)
    assert author_markdown("x" * 5000).endswith("x" + CUT_MARK)  # no space to cut at: cut in the word


def test_nothing_to_show() -> None:
    assert author_markdown(None) == author_markdown("") == author_markdown("\n  \n") == ""


def test_fences_and_code_spans_hold_any_text() -> None:
    assert fenced("a ```` b", "yaml") == "`````yaml\na ```` b\n`````"
    assert code_span("`x`") == "`` `x` ``"
    assert code_span("a|b", cell=True) == "`a\\|b`"


_UNESCAPED = re.compile(r"(?<!\\)(?:\\\\)*[<|]")


@given(st.text(alphabet=st.sampled_from(list("ab `\\<|#>-=*_~[]:!1.\n\t "))))
def test_no_line_can_start_a_block_or_open_html(text: str) -> None:
    for line in author_markdown(text).split("\n"):
        line = line.removesuffix("  ")
        assert not re.match(r"\s|#{1,6}(\s|$)|>|[-+*](\s|$)|```|~~~|\d+[.)](\s|$)|[-=]+\s*$", line), line
        outside_code = re.sub(r"(?<!\\)(`+).*?(?<!`)\1(?!`)", "", line)
        assert not _UNESCAPED.search(outside_code), line


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("fix-tests", "**fix-tests**"),
        ("claude-sonnet-4.5", "**claude-sonnet-4.5**"),
        ("_private_", "**`_private_`**"),
        ("https://example.com/x", "**`https://example.com/x`**"),
        ("www.example.com", "**`www.example.com`**"),
        ("ops@example.com", "**`ops@example.com`**"),
        ("checkpoint@10", "**checkpoint@10**"),
        ("/speckit.plan", "**/speckit.plan**"),
        ("a**b", "**`a**b`**"),
        ("x`y", "**``x`y``**"),
        ("<img src=x>", "**`<img src=x>`**"),
        ("two\nlines", "**`two\\x0alines`**"),
        ("red\x1b[31m", "**`red\\x1b[31m`**"),
        ("w" * 130, "**`" + "w" * 120 + "…`**"),
    ],
)
def test_a_name_in_bold_never_restyles_what_follows(name: str, shown: str) -> None:
    assert strong_name(name) == shown
