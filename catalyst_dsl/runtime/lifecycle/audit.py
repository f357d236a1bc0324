"""What `catalyst runs export --full` adds to a run's audit view: each step's result, and
the change each commit the run made brought, as git shows it.

The diffs are read from the repository when the export is made (a run keeps its commits'
ids, not their content: git keeps that), so a commit this checkout does not have is
listed with why its diff is missing. Git is asked read-only, with no external diff or
text conversion program: exporting the audit of a run in an untrusted checkout runs
nothing that checkout configured. Each diff passes the run's masker, as every line the
run printed did.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Callable

#: A commit's diff is cut after this many bytes (a generated file can be megabytes); the
#: cut is said in the entry.
MAX_DIFF_BYTES = 1 << 20
#: Seconds `git show` may take for one commit.
GIT_SECONDS = 30


def commits(root: Path, steps: list[dict[str, Any]], mask: Callable[[str], str]) -> list[dict[str, Any]]:
    """Each commit a `git-commit` step of the run made: the step, the commit, its files and its diff."""
    found = []
    for entry in steps:
        result = entry.get("result")
        if entry.get("action") != "git-commit" or not isinstance(result, dict) or not result.get("sha"):
            continue
        sha = str(result["sha"])
        change: dict[str, Any] = {"step": entry.get("path"), "name": entry.get("name"), "sha": sha}
        change["files"] = list(result.get("files") or [])
        change.update(_diff(root, sha, mask))
        found.append(change)
    return found


def _diff(root: Path, sha: str, mask: Callable[[str], str]) -> dict[str, Any]:
    if not all(c in "0123456789abcdef" for c in sha) or not 7 <= len(sha) <= 64:
        return {"diff": None, "missing": "the recorded commit id is not a commit id"}
    argv = ["git", "-c", "core.fsmonitor=false", "show", "--format=", "--patch", "--no-color"]
    argv += ["--no-ext-diff", "--no-textconv", sha, "--"]
    try:
        done = subprocess.run(argv, cwd=root, capture_output=True, timeout=GIT_SECONDS, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as error:
        return {"diff": None, "missing": f"git could not be asked ({error})"}
    if done.returncode != 0:
        return {"diff": None, "missing": "this checkout does not have the commit (fetch it to see its diff)"}
    data = done.stdout
    cut = len(data) > MAX_DIFF_BYTES
    text = data[:MAX_DIFF_BYTES].decode("utf-8", errors="replace")
    entry: dict[str, Any] = {"diff": mask(text)}
    if cut:
        entry["truncated"] = f"the diff is {len(data)} bytes; the first {MAX_DIFF_BYTES} are shown"
    return entry
