"""Which files a scan for playbooks passes over: `.gitignore`d paths and `exclude` globs.

`.gitignore` files are read the way git reads them (pathspec's GitIgnoreSpec implements
git's rules: negation, anchoring, directory-only patterns): each one speaks for the
paths under its own directory, and a deeper file's decision wins over a shallower one's.
They apply to directory scans only: a file named on the command line is checked even if
git ignores it. `exclude` globs apply to every path, named or found.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from catalyst_dsl.project.config import Project, relative_to_root

if TYPE_CHECKING:
    import pathspec

    from catalyst_dsl.paths.globs import Glob


class ScanFilter:
    """Answers "is this path skipped?" for one project, reading each `.gitignore` once."""

    def __init__(self, project: Project) -> None:
        self.root = project.root.resolve()
        self.project = project
        self.excludes = _globs(project.config.exclude)
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def excluded(self, path: str) -> bool:
        """Whether an `exclude` glob names `path` (or a directory above it)."""
        if not self.excludes:
            return False
        rel = relative_to_root(self.project, path)
        if rel.startswith("/"):  # outside the project: no project glob names it
            return False
        parts = rel.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        return any(glob.matches(p) for glob in self.excludes for p in prefixes)

    def skipped(self, path: str, is_dir: bool) -> bool:
        """Whether a directory scan passes over `path`: excluded, or ignored by git."""
        return self.excluded(path) or self.git_ignored(path, is_dir)

    def git_ignored(self, path: str, is_dir: bool) -> bool:
        # The directory's real path (the root is resolved too), the file's own name: a
        # symlinked playbook is ignored or not where it appears, as git sees it.
        parent, name = os.path.split(os.path.abspath(path))
        absolute = Path(os.path.realpath(parent)) / name
        try:
            rel = absolute.relative_to(self.root)
        except ValueError:
            return False
        verdict = None
        # From the root down to the path's own directory: the deepest file that has a
        # say decides (git's precedence). Its patterns see the path relative to it.
        directory = self.root
        for part in (None, *rel.parts[:-1]):
            if part is not None:
                directory = directory / part
            if directory not in self._specs:
                self._specs[directory] = _spec(directory)
            spec = self._specs[directory]
            if spec is None:
                continue
            inner = absolute.relative_to(directory).as_posix() + ("/" if is_dir else "")
            include = spec.check_file(inner).include
            if include is not None:
                verdict = include
        return bool(verdict)


def _globs(patterns: tuple[str, ...]) -> list[Glob]:
    """The `exclude` globs; the glob compiler is loaded only when there are some."""
    if not patterns:
        return []
    from catalyst_dsl.paths.globs import Glob

    return [Glob.compile(p) for p in patterns]


def _spec(directory: Path) -> pathspec.GitIgnoreSpec | None:
    ignore = directory / ".gitignore"
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec

    # Like git, a pattern that is not valid (`!` alone, a trailing `\`, a bad range) is
    # passed over, not an error: a .gitignore is read by many tools, each as it can.
    usable = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line], backend=_BACKEND)
        except Exception:  # noqa: BLE001 - pathspec raises several kinds, re.error among them
            continue
        usable.append(line)
    return pathspec.GitIgnoreSpec.from_lines(usable, backend=_BACKEND)


#: Matching runs on RE2 (google-re2, a dependency already), in time linear in the path:
#: with Python's backtracking engine a pattern like `*a*a*a…b` from a checked repository
#: takes time growing as a power of a file name's length.
_BACKEND = "re2"
