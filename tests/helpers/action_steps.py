"""Running a step of action.yml as GitHub runs a `shell: bash` step."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def run_bash_step(script: Path, cwd: Path, env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess:
    """The step's script under `bash --noprofile --norc -eo pipefail`, as GitHub runs it
    (bash found on this process's PATH: a step's own environment may have none)."""
    return subprocess.run(
        [shutil.which("bash") or "/bin/bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
