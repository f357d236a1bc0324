"""Where the expression grammar is: one file, read by the parser (to check the shipped
tables were made from it) and by the tables' generator (to make them).

Its own module so that neither of those two has to import the other for it.
"""

from __future__ import annotations

from pathlib import Path

GRAMMAR_FILE = "expressions.lark"


def grammar_path() -> Path:
    """The grammar: inside the installed package, or at the top of a source checkout.

    Looked for beside this file, not through importlib.resources: the package is always
    files on disk (the path is read as one), and importing and asking importlib.resources
    cost the first expression of a run 2 to 3 ms."""
    package = Path(__file__).resolve().parents[2]
    packaged = package / "grammar" / GRAMMAR_FILE
    if packaged.is_file():
        return packaged
    return package.parent / "grammar" / GRAMMAR_FILE
