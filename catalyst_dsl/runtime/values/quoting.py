"""PowerShell's quoting: the characters each quoting context escapes, and every form a
text takes once escaped.

`escaping.escape` writes values into PowerShell scripts with these tables, and the
secret masker (`secrets.py`) masks each escaped form of a secret, since a secret escaped
into a script is still the secret. They are here, apart from `escaping.py`, because the
masker sits below the evaluator that `escaping.py` needs: importing it from there would
close a cycle.
"""

from __future__ import annotations

# The characters each quoting context escapes, one by one (str.translate: no pattern to
# compile, and one pass over the text).
#: PowerShell's quote characters include the typographic ones: doubled in single quotes,
#: a backtick before each in double quotes and in a here-string.
PS_SINGLE = str.maketrans({c: c + c for c in "'\u2018\u2019\u201a\u201b"})
PS_DOUBLE = str.maketrans({c: "`" + c for c in '`$"\u201c\u201d\u201e'})
PS_HEREDOC = str.maketrans({c: "`" + c for c in "`$"})


def escaped_forms(text: str) -> set[str]:
    """Every way `escaping.escape` can write `text` inside its quotes, for the secret
    masker: a secret escaped into a script is still the secret."""
    return {text.translate(PS_SINGLE), text.translate(PS_DOUBLE), text.translate(PS_HEREDOC)}
