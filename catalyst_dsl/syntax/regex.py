"""Regular expressions written in playbooks, matched in time linear in the text (RE2).

A `regex` rule checks input values that anyone may supply, and Python's backtracking
engine takes exponential time on patterns such as `^(a+)+$` (28 characters took 16 s). RE2
never backtracks, so every match is linear; the price is that it has no backreferences and
no lookaround. A pattern that uses them is refused when the playbook is checked (C304),
with the reason, rather than accepted and then slow.

Patterns are written as JavaScript writes them, as the original engine reads them: `$`
is the end of the text (not "before a final newline", as in Python), unless the pattern
turns multiline mode on.
"""

from __future__ import annotations

import functools
import re


class PatternError(ValueError):
    """A pattern RE2 cannot take; `message` says why and, for a known construct, what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


#: RE2's words for what it lacks, and how we say it.
_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead (?=…) is not supported"),
    ("invalid perl operator: (?!", "negative lookahead (?!…) is not supported"),
    ("invalid perl operator: (?<", "lookbehind (?<=…, ?<!…) is not supported"),
    ("invalid escape sequence: \\1", "backreferences (\\1, \\2 …) are not supported"),
    ("invalid escape sequence: \\2", "backreferences (\\1, \\2 …) are not supported"),
)
_WHY = "catalyst matches patterns in time linear in the text (RE2), which has no backtracking"


def check_pattern(pattern: str) -> None:
    """PatternError when RE2 cannot take `pattern`: what a check asks. A plain pattern (see
    plain_regex.py) is told apart without loading RE2, which a cold check would pay for."""
    from catalyst_dsl.syntax.plain_regex import surely_accepted

    if not surely_accepted(pattern):
        compile_pattern(pattern)


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str):
    """`pattern` compiled by RE2 with JavaScript's `$`; PatternError when it cannot be."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own line on stderr for every refusal
    try:
        return re2.compile(_javascript_end(pattern), options)
    except re2.error as error:
        raise PatternError(_explain(error)) from None


def _explain(error: Exception) -> str:
    text = str(error)
    if text.startswith(("b'", 'b"')):
        text = text[2:-1].encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
    for words, said in _UNSUPPORTED:
        if text.startswith(words):
            return f"{said}: {_WHY}"
    return text


def _multiline(pattern: str) -> bool:
    """Whether the pattern turns multiline mode on (an inline `(?m)` flag)."""
    return re.search(r"\(\?[a-zA-Z]*m[a-zA-Z]*[):]", pattern) is not None


def _javascript_end(pattern: str) -> str:
    """`$` outside character classes as RE2's `\\z` (the end of the text), unless multiline."""
    if _multiline(pattern):
        return pattern
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            # A `]` right after `[` or `[^` is a literal, not the end of the class.
            j = i + 1 + (pattern[i + 1 : i + 2] == "^")
            if pattern[j : j + 1] == "]":
                out.append(pattern[i : j + 1])
                i = j + 1
                continue
        elif c == "$":
            c = r"\z"
        out.append(c)
        i += 1
    return "".join(out)
