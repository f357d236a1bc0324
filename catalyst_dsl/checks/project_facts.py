"""What the library's rules ask of the project's files and of the machine.

Some rules look past the playbooks: for a slash command's file, kai's index and the
files it lists, the allowed-signers file, a program on PATH. A replayed check gives
their findings back only while every such answer still holds, so the rules ask through
this interface, which the library hands them (`Library.facts`) and the project's
recorder of those answers implements (project/observed.py).
"""

from __future__ import annotations

import os
from typing import Protocol


class ProjectFacts(Protocol):
    def is_file(self, path: str | os.PathLike) -> bool: ...

    def listdir(self, path: str | os.PathLike) -> list[str] | None:
        """The names in a directory, or None when it is not one."""
        ...

    def read_bytes(self, path: str | os.PathLike, limit: int | None = None) -> bytes: ...

    def resolved(self, path: str | os.PathLike) -> str:
        """The path with its links followed, as the file system gives it."""
        ...

    def which(self, program: str) -> str | None:
        """Where a program on PATH is, or None when it is not installed."""
        ...
