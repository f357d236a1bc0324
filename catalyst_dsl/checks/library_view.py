"""What the library's rules read: the library of compiled playbooks and their calls, the
project's settings they compare with, and the project's files and the machine.

The rules (checks/rules/library_rules.py) are handed a `LibraryView`, which the project's
library implements (project/library.py): they read what it found and resolved, and never
find or compile a file themselves. A call, as found and resolved, is an `Edge`, made by
the library and read by the rules and the listing.

The project's files and the machine are asked through `ProjectFacts` (`LibraryView.facts`):
some rules look past the playbooks, at a slash command's file, kai's index and the files
it lists, the allowed-signers file, a program on PATH. A replayed check gives their
findings back only while every such answer still holds, so the rules ask through this
interface, which the project's recorder of those answers implements (project/observed.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Protocol, Sequence

from catalyst_dsl.checks.call_sites import CallSite
from catalyst_dsl._internal.records import field, record
from catalyst_dsl.syntax.source import Span

if TYPE_CHECKING:
    from catalyst_dsl.actions.catalog import Catalog
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax.source import SourceFile


@record
class Edge:
    """One call from a playbook to another, as written, with where it resolved to."""

    caller: str
    target: str
    kind: str  # "playbook" (a YAML step) | "markdown-ref"
    span: Span | None = field(eq=False)
    #: The file called, or None when nothing matches (or the target is computed at run time).
    callee: str | None = None
    #: Under an `if`, a loop, a catch handler or a `condition`.
    guarded: bool = False
    dynamic: bool = False
    site: CallSite | None = field(default=None, eq=False)


def twins(one: str, other: str) -> bool:
    """Whether two files are one playbook in two forms: a Markdown file and a YAML file with
    the same stem in the same folder."""
    a, b = Path(one), Path(other)
    return a.parent == b.parent and a.stem == b.stem and {a.suffix == ".md", b.suffix == ".md"} == {True, False}


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


class CompiledFile(Protocol):
    """A file of the library as compiled: its text, and its playbook unless it has none."""

    source: SourceFile | None
    playbook: ir.Playbook | None


class Settings(Protocol):
    """The project's settings a rule compares with (project/config.py's `ProjectConfig`)."""

    roles: Sequence[str]
    approvers: Mapping[str, Sequence[str]]
    signed_approvals: bool
    allowed_signers: str
    max_depth: int
    state_dir: str


class ProjectView(Protocol):
    root: Path
    config: Settings

    def resolve(self, relative: str) -> Path:
        """A project-relative path under the root."""
        ...


class LibraryView(Protocol):
    project: ProjectView
    catalog: Catalog
    facts: ProjectFacts
    #: Every playbook file of the project, and the files named to be checked.
    files: list[str]

    def compiled(self, path: str) -> CompiledFile:
        """The file compiled (once; on the first ask)."""
        ...

    def loaded(self) -> Mapping[str, CompiledFile]:
        """The files compiled so far: those checked and everything they call."""
        ...

    def edges(self, path: str) -> list[Edge]:
        """The calls the playbook in `path` makes, resolved."""
        ...

    def callers(self, path: str) -> list[Edge]:
        """The calls into the file `path` from the library's other files."""
        ...

    def names(self) -> list[str]:
        """The names a call by name may use (the files' stems)."""
        ...

    def unalias(self, target: str) -> str:
        """A Markdown `@` reference with its alias prefix rewritten."""
        ...

    def is_path(self, target: str) -> bool:
        """Whether a call target is written as a path rather than a playbook name."""
        ...

    def searched_folders(self) -> str:
        """The playbook folders a name is looked up in, as the user finds them."""
        ...
