"""What `catalyst runs export --full` adds to a run's audit view: each step's result, and
the change each commit the run made brought, as git shows it.

The diffs are read from the repository when the export is made (a run keeps its commits'
ids, not their content: git keeps that), so a commit this checkout does not have is
listed with why its diff is missing. Git is asked read-only, with no external diff or
text conversion program, no signature check (`log.showSignature` would run the
checkout's `gpg.program`), no submodule log, and no fetch of a missing object (a partial
clone's promisor remote can name an `uploadpack` program): exporting the audit of a run
in an untrusted checkout runs nothing that checkout configured. Each diff passes the
run's masker, as every line the run printed did, before it is cut to size (a cut must
not leave the first half of a secret readable).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Callable

#: A commit's diff is cut after this many bytes (a generated file can be megabytes); the
#: cut is said in the entry.
MAX_DIFF_BYTES = 1 << 20
#: Seconds `git show` may take for one commit.
GIT_SECONDS = 30
#: What is masked beyond the cut, so that a secret the cut goes through is masked whole.
MASK_MARGIN = 1 << 16
#: Settings that win over the checkout's own: none of them may start a program. No
#: transport is allowed, in case the git in use predates GIT_NO_LAZY_FETCH.
SAFE_SETTINGS = (
    "core.fsmonitor=false",
    "log.showSignature=false",
    "diff.submodule=short",
    "protocol.allow=never",
    *(f"protocol.{name}.allow=never" for name in ("file", "git", "ssh", "http", "https", "ext")),
)


def commits(
    root: Path, steps: list[dict[str, Any]], mask: Callable[[str], str], unknown_secrets: list[str] = ()
) -> list[dict[str, Any]]:
    """Each commit a `git-commit` step of the run made: the step, the commit, its files and
    its diff; none while a secret input of the run (`unknown_secrets`) is not known here."""
    found = []
    for entry in steps:
        result = entry.get("result")
        if entry.get("action") != "git-commit" or not isinstance(result, dict) or not result.get("sha"):
            continue
        sha = str(result["sha"])
        change: dict[str, Any] = {"step": entry.get("path"), "name": entry.get("name"), "sha": sha}
        change["files"] = list(result.get("files") or [])
        if unknown_secrets:
            change.update(diff=None, missing=_unknown(unknown_secrets))
        else:
            change.update(_diff(root, sha, mask))
        found.append(change)
    return found


def _unknown(names: list[str]) -> str:
    from catalyst_dsl.runtime.values.secrets import EnvSecretProvider

    given = ", ".join(EnvSecretProvider().variable(name) for name in names)
    return f"the run's secret inputs are not all known here, so the diff could show one unmasked (set {given})"


def _diff(root: Path, sha: str, mask: Callable[[str], str]) -> dict[str, Any]:
    if not all(c in "0123456789abcdef" for c in sha) or not 7 <= len(sha) <= 64:
        return {"diff": None, "missing": "the recorded commit id is not a commit id"}
    argv = ["git", "--no-pager", *[part for setting in SAFE_SETTINGS for part in ("-c", setting)]]
    argv += ["show", "--format=", "--patch", "--no-color", "--no-ext-diff", "--no-textconv", "--no-show-signature"]
    argv += ["--submodule=short", sha, "--"]
    env = {**os.environ, "GIT_NO_LAZY_FETCH": "1"}
    try:
        done = subprocess.run(
            argv, cwd=root, capture_output=True, timeout=GIT_SECONDS, stdin=subprocess.DEVNULL, env=env
        )
    except (OSError, subprocess.SubprocessError) as error:
        return {"diff": None, "missing": f"git could not be asked ({error})"}
    if done.returncode != 0:
        return {"diff": None, "missing": "this checkout does not have the commit (fetch it to see its diff)"}
    data = done.stdout
    cut = len(data) > MAX_DIFF_BYTES
    masked = mask(data[: MAX_DIFF_BYTES + MASK_MARGIN].decode("utf-8", errors="replace"))
    entry: dict[str, Any] = {"diff": masked[:MAX_DIFF_BYTES] if cut else masked}
    if cut:
        entry["truncated"] = f"the diff is {len(data)} bytes; the first {MAX_DIFF_BYTES} are shown"
    return entry
