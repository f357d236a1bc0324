"""How the tables read a command's words: a word's program name, whether it holds a value,
whether it is an option, and whether an option is one of a set (long options may be
abbreviated, short ones bundled).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from catalyst_dsl.syntax.expr.nodes import Part

#: Stands for the unknown rest of a word whose start is literal (`NAME=` of `NAME={{ v }}`).
UNKNOWN = "\0"


def program_name(word: str) -> str:
    """`/usr/bin/env` is `env`; a path names the program by its last part."""
    return word.rsplit("/", 1)[-1]


def argv_words(items: Iterable[str | tuple[Part, ...] | None]) -> list[str | None]:
    """An argv step's words as `refused_arguments` reads them, from each item's literal
    text, its template's parts, or None for any other value (`ir.nodes.text_or_parts`):
    the text of a literal word, None for one that holds a value."""
    from catalyst_dsl.syntax.expr import nodes as ast

    words: list[str | None] = []
    for item in items:
        if isinstance(item, str):
            words.append(item)
            continue
        head = item[0] if item else None
        known = head.text if isinstance(head, ast.TextPart) else ""
        # `NAME={{ v }}`, `--to-command={{ v }}`: the start is known, which `env` and options need.
        words.append(known + UNKNOWN if known else None)
    return words


def holds_value(word: str | None) -> bool:
    """A word whose text is not all known: it holds a value (or an expansion)."""
    return word is None or UNKNOWN in word


def is_option(word: str) -> bool:
    """`-x`, `--long`: not `-`, which names the standard input."""
    return word.startswith("-") and word != "-"


def long_option_matches(option: str, options) -> bool:
    """`--opt` is one of `options`, or an abbreviation of one (getopt_long takes `--to-c`)."""
    return (
        option in options
        or len(option) > 3
        and option.startswith("--")
        and any(o.startswith(option) for o in options if o.startswith("--"))
    )


def option_carries(options, letters: str, word: str) -> str | None:
    """Whether the option `word` is (or may be) one of `options`: "next" when its argument is
    the next word, "here" when it is in the word itself, None when it is another option.
    A word holding a value may be completed into one."""
    if word.startswith("--"):
        option, has_value = word.split("=", 1)[0], "=" in word
        if UNKNOWN in option:
            head = option.split(UNKNOWN, 1)[0]
            return "here" if any(o.startswith(head) for o in options if o.startswith("--")) else None
        if not long_option_matches(option, options):
            return None
        return "here" if has_value else "next"
    for option in sorted((o for o in options if not o.startswith("--") and len(o) > 2), key=len, reverse=True):
        if word.startswith(option):  # `zip -TT CMD`
            return "next" if word == option else "here"
    for at, letter in enumerate(word[1:], 1):
        if letter == UNKNOWN:
            return "here"  # the value may go on with a letter that runs programs
        if "-" + letter in options:
            return "next" if at + 1 == len(word) else "here"
        if letter in letters:
            return None  # the rest of the word is that option's argument
    return None
