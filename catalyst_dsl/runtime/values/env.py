"""What an expression can read: the `Env` the interpreter supplies to the evaluator.

A protocol of its own, so that the built-ins (`jsbuiltins.py`), which `evaluate.py`
calls, can name what they are given without importing the evaluator.
"""

from __future__ import annotations

from typing import Protocol


class Env(Protocol):
    """What an expression can read; the interpreter supplies it."""

    def lookup(self, name: str) -> object:
        """The value of a name; raises KeyError(name) when it is not defined."""

    def get(self, path: str) -> object:
        """`get('a.b.0')`: a dotted path, UNDEFINED when absent."""

    def logs(self) -> list[dict]:
        """`logs()`: the run's log entries."""

    def protocol(self, protocol: str, path: str) -> object:
        """`{{xe://a/b}}`: the path a protocol path names."""

    def read(self, protocol: str, path: str) -> object:
        """`get('xe://a/b')`: what the file holds, UNDEFINED when there is no such file."""
