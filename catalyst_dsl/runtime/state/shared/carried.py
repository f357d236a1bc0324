"""The files a run wrote, carried with it when it pauses, so that the checkout that resumes
it, on any machine, finds them.

**What is carried.** When a run kept in the shared store pauses, the files of its checkout
that differ from the commit it runs at (`git status`: changed, added, untracked, deleted)
and that its write grants cover (`allowedWritePaths`; the whole project when it declares
none) are its files: the resume happens at the same commit (store.ensure_same_commit), so
the commit and these files are all the run has seen. `.git` and the state directory are
never carried. A link is carried as nothing: only regular files travel.

**How.** Each file's bytes are kept once per repository, named by their SHA-256
(`catalyst_files`), and the run's *manifest*, the list of (path, SHA-256, or nothing for a
deleted file), in `catalyst_carried`, replaced at each pause. The manifest is MACed with
the run key over the run's id and its text, so that rows written by anyone without the
key are refused; the bytes are checked against their hash when read.

**Restoring.** A resume puts the manifest back before the first step runs, through the
run's effects gateway: every write and delete is checked against the run's grants and
made beneath the project root (runtime/effects/beneath.py), so that a manifest, however
it was made, can write nothing the run itself could not. A file already as the manifest
says is left alone, so resuming in the checkout that paused changes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import posixpath
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalyst_dsl.paths import reserved
from catalyst_dsl.runtime.errors import EXIT_STATE, RunAbort, StepError
from catalyst_dsl.runtime.effects import beneath
from catalyst_dsl.runtime.state.shared.database import Database

if TYPE_CHECKING:
    from catalyst_dsl.runtime.state.integrity.run_key import RunKey

#: A file bigger than this is not carried: the pause says so and stops the run (exit 3).
FILE_LIMIT = 256 * 1024 * 1024

_DOMAIN = b"catalyst-carried/1\n"


def changed_files(root: Path, grants: list[str] | None, state_dir: Path) -> list[str]:
    """The paths (relative, POSIX) under `root` that differ from its commit and that the
    grants cover; empty outside git."""
    from catalyst_dsl.runtime.effects.grants import Grants

    try:
        done = subprocess.run(
            ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignored=no"],
            cwd=root,
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    allowed = Grants.of("run", grants)
    try:
        state = Path(state_dir).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        state = None
    found = []
    for entry in done.stdout.split(b"\0"):
        if len(entry) < 4:
            continue
        path = entry[3:].decode("utf-8", "surrogateescape")
        if reserved.git_segment(path) is not None or (state and (path == state or path.startswith(state + "/"))):
            continue
        if allowed.allows(path):
            found.append(path)
    return sorted(set(found))


def manifest_mac(key: RunKey, run_id: str, text: str) -> str:
    return hmac.new(key.secret, _DOMAIN + run_id.encode() + b"\n" + text.encode(), hashlib.sha256).hexdigest()


class Carrier:
    """The carried files of the runs of `repository` (the module docstring says how)."""

    def __init__(self, database: Database, repository: str, root: Path, state_dir: Path) -> None:
        self.database = database
        self.repository = repository
        self.root = Path(root)
        self.state_dir = Path(state_dir)

    def carry(self, run_id: str, grants: list[str] | None, key: RunKey) -> int:
        """Keep the run's files (at its pause); how many there are."""
        entries: list[list[Any]] = []
        blobs: dict[str, bytes] = {}
        for path in changed_files(self.root, grants, self.state_dir):
            try:
                data = beneath.read(self.root, path, FILE_LIMIT)
            except beneath.FileTooLarge:
                raise RunAbort(
                    EXIT_STATE,
                    f"the run wrote {path}, which is over {FILE_LIMIT // (1024 * 1024)} MiB:"
                    " too big to carry to the checkout that resumes it",
                    help="make the step write it elsewhere (outside the run's grants), or keep runs in files",
                ) from None
            except (OSError, beneath.Escape):
                continue  # a link, a directory, a device: not a file to carry
            if data is None:
                entries.append([path, None])
                continue
            sha = hashlib.sha256(data).hexdigest()
            blobs[sha] = data
            entries.append([path, sha])
        text = json.dumps(entries, separators=(",", ":"), ensure_ascii=True)
        with self.database.transaction("keeping the files the run wrote") as connection:
            for sha, data in blobs.items():
                connection.execute(
                    "INSERT INTO catalyst_files (repository, sha, data) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    (self.repository, sha, data),
                )
            connection.execute(
                "INSERT INTO catalyst_carried (repository, run_id, manifest, mac) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (repository, run_id) DO UPDATE SET manifest = excluded.manifest, mac = excluded.mac",
                (self.repository, run_id, text, manifest_mac(key, run_id, text)),
            )
        return len(entries)

    def bring_back(self, run_id: str, key: RunKey, gateway) -> list[str]:
        """Put the run's carried files back in this checkout through `gateway`; the paths
        written or deleted. RunAbort when the manifest does not verify."""
        rows = self.database.execute(
            "reading the files the run wrote",
            "SELECT manifest, mac FROM catalyst_carried WHERE repository = %s AND run_id = %s",
            (self.repository, run_id),
        )
        if not rows:
            return []
        text, mac = rows[0]
        if not hmac.compare_digest(manifest_mac(key, run_id, text), mac):
            raise RunAbort(
                EXIT_STATE,
                f"the list of files run {run_id} wrote, in {self.database.shown}, was not written by catalyst"
                " with this run key: it is edited, or from another run",
                help="resume the run in the checkout that paused it, or start a new run",
            )
        changed = []
        for path, sha in _entries(text):
            current = _current(self.root, path)
            try:
                if sha is None:
                    if current is not None and gateway.delete_file(path):
                        changed.append(path)
                    continue
                if current == sha:
                    continue
                gateway.write_file(path, self._blob(run_id, path, sha))
            except StepError as refused:
                raise RunAbort(
                    EXIT_STATE,
                    f"the files run {run_id} wrote before it paused cannot be put back here: {refused.message}",
                    help="resume the run in the checkout that paused it, or start a new run",
                ) from None
            changed.append(path)
        return changed

    def _blob(self, run_id: str, path: str, sha: str) -> bytes:
        rows = self.database.execute(
            "reading a file the run wrote",
            "SELECT data FROM catalyst_files WHERE repository = %s AND sha = %s",
            (self.repository, sha),
        )
        data = bytes(rows[0][0]) if rows else None
        if data is None or hashlib.sha256(data).hexdigest() != sha:
            found = "missing" if data is None else "edited"
            raise RunAbort(
                EXIT_STATE,
                f"{path}, written by run {run_id}, is {found} in {self.database.shown}",
                help="resume the run in the checkout that paused it, or start a new run",
            )
        return data

    def forget(self, run_id: str) -> None:
        self.database.execute(
            "forgetting the files the run wrote",
            "DELETE FROM catalyst_carried WHERE repository = %s AND run_id = %s",
            (self.repository, run_id),
        )


def _entries(text: str) -> list[tuple[str, str | None]]:
    """The manifest's entries; only relative paths that stay inside and well-formed hashes."""
    found = []
    for item in json.loads(text):
        path, sha = item
        if not isinstance(path, str) or posixpath.isabs(path) or ".." in path.split("/"):
            continue
        if sha is not None and not (isinstance(sha, str) and len(sha) == 64):
            continue
        found.append((path, sha))
    return found


def _current(root: Path, path: str) -> str | None:
    """The SHA-256 of the file at `path` now; None when there is none (or it is no file)."""
    try:
        data = beneath.read(root, path, FILE_LIMIT)
    except (OSError, beneath.Escape):
        return None
    return hashlib.sha256(data).hexdigest() if data is not None else None
