"""What a what-if may read and show of the project's files: the repository is untrusted.

A what-if plans a pull request's playbooks, often on a CI machine, and its plan is posted
as a pull-request comment (`catalyst what-if-comment`). A playbook nobody has reviewed
yet must not make that plan carry a secret of the machine: the token `actions/checkout`
saves in `.git/config`, a `.env` left in the working tree, a key outside the project. So
the plan's reads obey three rules, decided on the real path (every link resolved):

- nothing in a `.git` directory is read at all;
- nothing outside the project is read, unless it lies in a directory the user's own
  configuration named (`resources-dir` from ~/.config/catalyst/config.toml);
- a file's content is shown only when git tracks the file: what the repository itself
  holds is already public to whoever reads the pull request, anything else may not be.

A project that is not in a git repository at all (no `.git` at its root or above) has no
tracked set to go by: its files are the user's own, and their content is shown.
"""

from __future__ import annotations

import os
from pathlib import Path

from catalyst_dsl.paths import reserved

#: git is asked once per plan; a repository that takes longer to list is treated as one
#: whose tracked files cannot be known (nothing is shown).
LS_FILES_TIMEOUT = 60

#: What a plan says instead of a file's content it does not show.
NOT_SHOWN = "the file is not tracked by git, so a what-if does not show its content"


class TrackedFiles:
    """The read rules of one what-if (module docstring), for the project at `root`.

    `trusted`: real directories outside the project whose files may be read and shown (named
    by the user's own configuration, never by the repository).
    """

    def __init__(self, root: Path, trusted: tuple[Path, ...] = ()) -> None:
        self.root = Path(os.path.realpath(root))
        self.trusted = tuple(Path(os.path.realpath(d)) for d in trusted)
        self._loaded = False
        #: Project-relative paths git tracks; None when the project is in no repository.
        self._tracked: frozenset[str] | None = None
        #: Why the tracked files are not known although there is a repository (git failed).
        self._problem: str | None = None

    def refusal(self, path: Path) -> str | None:
        """Why a what-if never reads the real path `path`, or None when it may read it."""
        relative = self._relative(path)
        if relative is None:
            if any(path == d or d in path.parents for d in self.trusted):
                return None
            return "leads outside the project, which a what-if never reads"
        if reserved.git_segment(relative) is not None:
            return (
                "leads into a .git directory, which a what-if never reads"
                " (it holds the repository's credentials and configuration)"
            )
        return None

    def hidden(self, path: Path) -> str | None:
        """Why the content of the real path `path` (readable by `refusal`) is not shown, or None."""
        relative = self._relative(path)
        if relative is None:  # a trusted directory of the user's own
            return None
        self._load()
        if self._problem is not None:
            return (
                f"git could not list the tracked files ({self._problem}), so a what-if does not show any file's content"
            )
        if self._tracked is None or relative in self._tracked:
            return None
        return NOT_SHOWN

    def _relative(self, path: Path) -> str | None:
        real = Path(os.path.realpath(path))
        if real != self.root and self.root not in real.parents:
            return None
        return real.relative_to(self.root).as_posix()

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if not any(os.path.lexists(d / ".git") for d in (self.root, *self.root.parents)):
            return  # no repository: every file of the project is the user's own
        self._tracked = frozenset()
        import subprocess  # only for a plan that reads a file: most plans start no program at all

        try:
            # fsmonitor is a program git would start; the repository's own config must not pick it.
            listed = subprocess.run(
                ["git", "-c", "core.fsmonitor=false", "ls-files", "-z", "--cached"],
                cwd=self.root,
                capture_output=True,
                timeout=LS_FILES_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError) as error:
            self._problem = f"git cannot be run: {getattr(error, 'strerror', None) or error}"
            return
        if listed.returncode != 0:
            said = listed.stderr.decode("utf-8", "replace").strip().splitlines()
            self._problem = said[0] if said else f"git ls-files exited with {listed.returncode}"
            return
        self._tracked = frozenset(os.fsdecode(name) for name in listed.stdout.split(b"\0") if name)
