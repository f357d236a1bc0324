"""Which repository a checkout is, so that every checkout of it shares its runs.

A CI job, a developer's clone and a worker's checkout of one repository have different
paths but the same remote: the name is the `origin` remote's URL reduced to host and path
(`github.com/acme/app`: no scheme, user, password, port or `.git`, so that HTTPS and SSH
clones agree). A repository with no remote is named by its first commit, which every
clone has (a shallow clone does not, and names itself by its path). `CATALYST_REPOSITORY`
overrides all of it, for set-ups where the remote differs between machines (a mirror).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPOSITORY_ENV = "CATALYST_REPOSITORY"

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d+)?(?P<path>/.*)?$", re.I)


def repository_name(root: Path) -> str:
    """The name this checkout's runs are kept under (the module docstring says which)."""
    given = os.environ.get(REPOSITORY_ENV, "").strip()
    if given:
        return given
    remote = _git(root, "remote", "get-url", "origin")
    if remote:
        return normal_remote(remote)
    first = _git(root, "rev-list", "--max-parents=0", "HEAD")
    if first:
        return "commit:" + first.split()[0]
    return "path:" + str(Path(root).resolve())


def normal_remote(url: str) -> str:
    """A remote's URL as host/path, lower-case host, without credentials, port or `.git`."""
    url = url.strip()
    found = _URL.match(url) or _SCP_LIKE.match(url)
    if found is None:
        return url.removesuffix("/").removesuffix(".git")
    path = (found["path"] or "").strip("/").removesuffix(".git").strip("/")
    return f"{found['host'].lower()}/{path}"


def current_commit(root: Path) -> str | None:
    """The commit checked out at `root`; None outside git or before the first commit."""
    return _git(root, "rev-parse", "--verify", "-q", "HEAD") or None


def current_branch(root: Path) -> str | None:
    """The branch checked out at `root` (it may have no commit yet); None when HEAD is
    detached, or outside git."""
    return _git(root, "symbolic-ref", "--quiet", "--short", "HEAD") or None


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
