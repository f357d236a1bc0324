"""Regular expressions of our own compiled where they are first used, not at import.

Python compiles a pattern in Python code (0.05 to 0.3 ms each); a module-level
`re.compile` is paid by every process that imports the module, though a one-file check
uses few of them: the YAML reader's nesting scan (for a file with many brackets) and
tag reader, the escaping of findings for the terminal (when there are findings) and the
Markdown suppression comments (for a .md file) are not used by most checks. A
`LazyPattern` stands where the compiled pattern stood and compiles on the first
attribute asked for; it then keeps the compiled pattern's methods as its own
attributes, so later calls cost what they did before.
"""

from __future__ import annotations

import re

#: What callers may use: the methods and attributes of `re.Pattern`.
_KEPT = (
    "match",
    "fullmatch",
    "search",
    "sub",
    "subn",
    "split",
    "findall",
    "finditer",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class LazyPattern:
    """`re.compile(pattern, flags)`, done on first use."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        # Reached only for what the instance does not hold yet: the first use.
        if name not in _KEPT:
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for kept in _KEPT:
            setattr(self, kept, getattr(compiled, kept))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"
