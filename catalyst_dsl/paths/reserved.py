"""Reserved paths: `.git`, which file actions write only where a grant names it in plain text.

A repository's `.git` holds its configuration and hooks: a file written there (say
`core.fsmonitor` in `.git/config`) is a command the next git step runs. So a write into
any `.git` directory (the project's own, a nested repository's or a submodule's) needs a
grant whose plain prefix, before any wildcard, reaches through that `.git` segment
(`.git/hooks/**`); `**` or `*/config` never names it. The segment is compared without
case and without trailing dots and spaces, as case-folding file systems compare names.
"""

from __future__ import annotations

import functools

GIT = ".git"

_WILDCARDS = ("*", "?", "[", "{", "\\")


def is_git(segment: str) -> bool:
    return segment.rstrip(". ").casefold() == GIT


def git_segment(path: str) -> int | None:
    """The index of the last `.git` segment of a /-separated path, or None."""
    found = None
    for index, segment in enumerate(path.split("/")):
        if is_git(segment):
            found = index
    return found


def plain_prefix(pattern: str) -> list[str]:
    """The segments of a write pattern before its first wildcard or template."""
    prefix = []
    for segment in pattern.split("/"):
        if segment in ("", "."):
            continue
        if any(w in segment for w in _WILDCARDS):
            break
        prefix.append(segment)
    return prefix


def names_git(pattern: str) -> bool:
    """Whether a grant names a `.git` directory in plain text, before any wildcard."""
    return any(is_git(segment) for segment in plain_prefix(pattern))


@functools.lru_cache(maxsize=4096)
def writes_git(pattern: str) -> bool:
    """Whether a write pattern surely writes into a `.git` directory: a segment of it is
    `.git` (a wildcard or template elsewhere does not change that). Remembered: a
    playbook's writes are asked again for each playbook that calls it, and case folding
    goes over the whole text."""
    if ".git" not in pattern.casefold():
        # Nearly every pattern: case folding goes character by character, so a segment
        # that folds to `.git` (trailing dots and spaces aside) puts `.git` in the whole.
        return False
    return any(is_git(segment) for segment in pattern.split("/"))


def grant_names(pattern: str, path: str) -> bool:
    """Whether grant `pattern` names the `.git` directories of `path` explicitly: its plain
    prefix reaches through the path's last `.git` segment (matching is checked apart)."""
    index = git_segment(path)
    return index is None or len(plain_prefix(pattern)) > index
