"""Did you mean ...?": the closest known word to a misspelt one.

Its own module so that what reports findings (suppressions, settings) can suggest
without loading the dialects that lower playbooks.
"""

from __future__ import annotations


def suggest(word: str, candidates, *, prefix: str = "did you mean ") -> str | None:
    import difflib  # only when a finding asks for a suggestion

    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"{prefix}'{matches[0]}'?" if matches else None
