"""What a playbook lets its steps write, and the check of a step's declared writes.

`Grants` are one playbook's `allowedWritePaths` (docs/running.md, Permissions at run time); the effects
gateway holds one layer of them per playbook on the call stack, and a write must be
allowed by every layer. A shell-like step declares what it writes (`writes:`) before it
runs: `check_declared_write` checks such a pattern against every layer, and
`granted_patterns` says which of a frame's own grants pass, for an AI agent given
writing tools. They are here, apart from the gateway, because they read the grants alone.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Sequence

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl._internal.terminal_text import UNSAFE_CHARACTERS, escape_character
from catalyst_dsl.paths import reserved
from catalyst_dsl.paths.protocols import place
from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.errors import StepError

# The glob machinery (paths/globs.py and its automata) is imported where a grant or a
# declared `writes:` pattern is compiled: a playbook with neither does not load it.
if TYPE_CHECKING:
    from catalyst_dsl.paths.globs import Glob


@record
class Grants:
    """What one playbook on the call stack lets its steps write.

    `patterns` None means anywhere in the project (a playbook without
    `allowedWritePaths`); an empty tuple means nothing (a child called without
    `inheritPermissions`).
    """

    owner: str
    patterns: tuple[Glob, ...] | None

    @classmethod
    def of(cls, owner: str, texts: Sequence[str] | None) -> "Grants":
        if texts is None:
            return cls(owner, None)
        from catalyst_dsl.paths.globs import Glob, GlobError

        globs = []
        for text in texts:
            try:
                globs.append(Glob.compile(place(text).path or text))
            except GlobError:
                continue  # reported by `catalyst check` (C812); a bad grant grants nothing
        return cls(owner, tuple(globs))

    def allows(self, relative: str) -> bool:
        return self.patterns is None or any(g.matches(relative) for g in self.patterns)

    def names_git(self, relative: str) -> bool:
        """Whether a grant names the `.git` directory `relative` lies in, in plain text."""
        return self.patterns is not None and any(
            g.matches(relative) and reserved.grant_names(g.text, relative) for g in self.patterns
        )

    def names_file(self, relative: str) -> bool:
        """Whether a grant is exactly `relative`, in plain text."""
        return self.patterns is not None and any(posixpath.normpath(g.text) == relative for g in self.patterns)

    def names_git_pattern(self, pattern: Glob) -> bool:
        """Whether the grants that name a `.git` directory in plain text cover `pattern`."""
        from catalyst_dsl.paths.globs import classify

        naming = [g for g in self.patterns or () if reserved.names_git(g.text)]
        return bool(naming) and classify(naming, pattern) == "inside"

    def allows_pattern(self, pattern: Glob) -> bool:
        from catalyst_dsl.paths.globs import classify

        return self.patterns is None or (bool(self.patterns) and classify(self.patterns, pattern) == "inside")

    def describe(self) -> str:
        if self.patterns is None:
            return f"{self.owner} may write anywhere in the project"
        if not self.patterns:
            return f"{self.owner} may write nothing (called without inheritPermissions: true)"
        return f"{self.owner} may write {', '.join(g.text for g in self.patterns)}"


def denied(message: str, help: str, written: str | None = None) -> StepError:
    """PermissionDenied; `metadata.path` names the path as the playbook wrote it."""
    return StepError(
        "PermissionDenied", message, guidance=help, metadata={"path": written} if written is not None else None
    )


#: What no name a step creates may hold: a tab, or a character that could drive a terminal
#: (terminal_text.UNSAFE_CHARACTERS).
_NOT_IN_NAMES = LazyPattern(f"[\t{UNSAFE_CHARACTERS}]")


def refuse_control_characters(written: str, what: str) -> None:
    """PermissionDenied when `written`, a name a step would create, holds a control
    character: a line break, a tab, an escape or a bidirectional control (from an input or
    an AI's answer) breaks every tool that lists names a line each, and makes a terminal
    show another name than the one on disk. `what` opens the message, before the name."""
    found = None if written.isprintable() else _NOT_IN_NAMES.search(written)  # each of them is unprintable
    if found is None:
        return
    shown = _NOT_IN_NAMES.sub(lambda m: escape_character(m.group()), written)
    raise denied(
        f"{what} '{shown}': the path holds a control character"
        f" ({escape_character(found.group())} at character {found.start() + 1})",
        "keep line breaks, tabs and escapes out of file names: check how the path is built"
        " (a value from an input or an AI's answer may hold them: `.trim()` or"
        " `.replaceAll(...)` it first)",
        written,
    )


def check_declared_write(layers: Sequence[Grants], written: str) -> None:
    """A shell-like step's declared `writes:` pattern: every path it names must be allowed
    by every layer of grants, and none holds a control character."""
    refuse_control_characters(written, "this step declares it writes")
    placed = place(written)
    if placed.problem:
        raise denied(
            f"this step declares it writes '{written}': {placed.problem}",
            "declare paths inside the project",
            written,
        )
    if placed.scratch:
        return
    from catalyst_dsl.paths.globs import Glob, GlobError

    try:
        glob = Glob.compile(placed.path or written)
    except GlobError as error:
        raise denied(
            f"this step declares it writes '{written}': {error.message}",
            "declare paths relative to the project root, without `..`",
            written,
        ) from None
    for layer in layers:
        if not layer.allows_pattern(glob):
            raise denied(
                f"this step declares it writes '{written}', but {layer.describe()}",
                "narrow the step's writes: or widen allowedWritePaths",
                written,
            )
        if reserved.writes_git(glob.text) and not layer.names_git_pattern(glob):
            raise denied(
                f"this step declares it writes '{written}', inside a .git directory, which {layer.owner} "
                "does not name in allowedWritePaths",
                "a grant that names it in plain text (such as `.git/hooks/**`) allows it; `**` does not",
                written,
            )


def granted_patterns(layers: Sequence[Grants]) -> list[str]:
    """The write patterns of the grants that every layer allows (`**` for a playbook
    without allowedWritePaths)."""
    patterns = []
    for layer in layers:
        for text in ("**",) if layer.patterns is None else (g.text for g in layer.patterns):
            try:
                check_declared_write(layers, text)
            except StepError:
                continue
            if text not in patterns:
                patterns.append(text)
    return patterns
