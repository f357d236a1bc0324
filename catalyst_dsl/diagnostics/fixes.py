"""Replacements a diagnostic's help offers: a did-you-mean whose span holds the misspelt word.

SARIF fixes and editors' quick fixes are both made from this, so a help text is turned
into an edit in one place only.
"""

from __future__ import annotations

import difflib
import re

from catalyst_dsl._internal.records import record

from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.syntax.source import SourceFile, Span

_DID_YOU_MEAN = re.compile(r"did you mean '([^'\n]+)'\?")
#: What a replaced word may look like: a key, a name or a dotted reference, never text
#: with spaces or template braces (whose span covers more than the word).
_WORD = re.compile(r"[A-Za-z0-9_.$@/-]+")


@record
class Replacement:
    span: Span
    text: str
    #: The help it came from, e.g. "did you mean 'description'?".
    description: str


def replacement(diagnostic: Diagnostic, source: SourceFile | None) -> Replacement | None:
    """The edit a did-you-mean help proposes, when the diagnostic's span is exactly the
    word to replace (one line, a word close to the suggestion); None otherwise."""
    span, help_text = diagnostic.span, diagnostic.help
    if span is None or help_text is None or source is None or span.line != span.end_line:
        return None
    match = _DID_YOU_MEAN.search(help_text)
    if match is None:
        return None
    line = source.line_text(span.line)
    word = line[span.col - 1 : span.end_col - 1]
    wanted = match.group(1)
    # A quoted value's span holds its quotes (`error_policy: "stpo"`): the word is inside
    # them, and the replacement keeps them.
    quote = word[0] if len(word) > 2 and word[0] == word[-1] and word[0] in "'\"" else ""
    if quote:
        word = word[1:-1]
        if not _WORD.fullmatch(wanted):
            return None  # written inside the quotes as it is, it might need escapes
    if not _WORD.fullmatch(word):
        return None
    scope = ""
    if "." in word and "." not in wanted:
        # A name under a scope (`inputs.featur`, suggested `feature`): the scope stays, or
        # the reference would mean something else (a variable of that name). A word that
        # is the suggestion misspelt whole (`file.write` for `file-write`) is replaced whole.
        prefix, _, last = word.rpartition(".")
        if _likeness(last, wanted) > _likeness(word, wanted):
            scope, word = prefix + ".", last
    if word == wanted:
        return None
    # The span must be the misspelling itself, not a larger node the help talks about.
    if _likeness(word, wanted) < 0.6:
        return None
    return Replacement(span, f"{quote}{scope}{wanted}{quote}", help_text)


def _likeness(word: str, wanted: str) -> float:
    return difflib.SequenceMatcher(None, word, wanted).ratio()
