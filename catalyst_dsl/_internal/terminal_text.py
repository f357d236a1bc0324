"""Untrusted text made safe to print on a terminal.

Messages, paths and log lines carry text from playbooks, programs and AIs; a control
character in it could move the cursor, recolour or rewrite what the user reads. Both the
reports and the run's log write text through `safe_text`.
"""

from __future__ import annotations

from catalyst_dsl._internal.lazy_pattern import LazyPattern

#: Characters that must not reach a terminal as they are: C0 and C1 controls (ESC starts
#: the sequences that move the cursor, recolour or retitle the terminal; CR and BS can
#: overwrite what was printed), DEL, line and paragraph separators, and the bidirectional
#: controls that make text display in another order than it is read ("Trojan source":
#: the Arabic letter mark U+061C is one of them, as the left-to-right and right-to-left
#: marks are). Tab is not here: it is shown as a space.
UNSAFE_CHARACTERS = "\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
UNSAFE = LazyPattern(f"[{UNSAFE_CHARACTERS}]")


def escape_character(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """`text` with every character that could drive the terminal written as an escape (\\x1b)."""
    if text.isprintable():
        return text  # each character of UNSAFE is unprintable: no pattern to compile or run
    return UNSAFE.sub(lambda m: escape_character(m.group()), text)


def _columns(char: str) -> int:
    """Columns a terminal gives `char`: two for wide (CJK, most emoji), none for a mark
    that combines with the one before."""
    import unicodedata

    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cut_to_columns(text: str, columns: int) -> str:
    """`text` in at most `columns` terminal columns, ending in `…` when cut: a line longer
    than the terminal wraps, and a carriage return then goes back to its last row only."""
    if text.isascii() and len(text) <= columns:
        return text
    used, kept = 0, []
    for char in text:
        width = _columns(char)
        if used + width > columns - 1:
            rest = sum(_columns(c) for c in text[len(kept) :])
            return text if used + rest <= columns else "".join(kept) + "…"
        used += width
        kept.append(char)
    return text


def is_terminal(stream: object) -> bool:
    """Whether `stream` is a terminal: False for a stream Python has none of (a command
    started with its standard input or output closed sets it to None) or one closed since."""
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
