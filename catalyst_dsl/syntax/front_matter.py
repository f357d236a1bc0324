"""Where a Markdown playbook's YAML front matter ends: the one rule the compiler, the
suppression comments and the editor's edits share, so that all three agree on which lines
are YAML (where a comment starts with `#`) and which are Markdown (`<!-- -->`)."""

from __future__ import annotations

import re

from catalyst_dsl._internal.lazy_pattern import LazyPattern

_CLOSE = LazyPattern(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def front_matter_end(text: str) -> int | None:
    """The offset of the line that closes the front matter (its YAML is `text[4:end]`);
    None when the text opens none or never closes it."""
    if not (text.startswith("---\n") or text == "---"):
        return None
    close = _CLOSE.search(text, 4)
    return None if close is None else close.start()
