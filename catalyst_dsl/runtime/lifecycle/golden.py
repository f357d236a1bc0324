"""Golden plans planned again: the plan of a golden plan's playbook today, with the inputs
the golden plan recorded, for the golden test (pytest_plugin.py) and the pull-request
comment (report/pr_comment.py) to compare or show.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Mapping


class ReplanError(Exception):
    """A golden plan cannot be re-planned: the project or the playbook has a problem the user can fix."""


def problem(golden: Any, shown: str) -> str | None:
    """Why `golden` (a golden plan's JSON, read) cannot be planned again, or None: a re-plan
    needs its `playbook.file` (a string) and its `inputs` (an object)."""
    playbook = golden.get("playbook") if isinstance(golden, dict) else None
    if isinstance(playbook, dict) and isinstance(playbook.get("file"), str) and isinstance(golden.get("inputs"), dict):
        return None
    return (
        f"{shown} is not a what-if plan: it needs `playbook.file` (a string) and `inputs` (an object) "
        "to be planned again; write it again with `catalyst run NAME --what-if --what-if-report FILE`"
    )


def replan(root: Path, golden: Mapping[str, Any]) -> dict[str, Any]:
    """The plan of the golden plan's playbook today, with the inputs the golden plan recorded.

    Raises ReplanError when the golden plan lacks what a re-plan needs (`problem`), the
    project settings or the playbook have errors, or an input no longer fits: the golden
    test reports it rather than a traceback.
    """
    wrong = problem(golden, "the golden plan")
    if wrong is not None:
        raise ReplanError(wrong)
    # Imported when a golden plan is checked: pytest loads this module's plugin on every run.
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.runtime.errors import RunAbort
    from catalyst_dsl.runtime.lifecycle.context import RunOptions
    from catalyst_dsl.runtime.lifecycle.session import Session

    sink = DiagnosticSink()
    project = load_project(root, sink)
    errors = [d for d in sink.items if d.severity.value == "error"]
    if errors:
        raise ReplanError("the project settings have errors: " + "; ".join(d.message for d in errors))
    session = Session(project, RunOptions(out=io.StringIO(), interactive=False))
    file = str(root / golden["playbook"]["file"])
    try:
        return session.plan(file, golden["inputs"], from_text=False)
    except RunAbort as abort:
        raise ReplanError("\n".join([abort.message, *abort.details, *([abort.help] if abort.help else [])])) from None


def inside_any(path: Path, bases: list[Path]) -> bool:
    """Whether `path` (links resolved) is in one of `bases`; a path no file can have (a NUL
    in it, a name too long) is in none."""
    from catalyst_dsl.runtime.effects.beneath import is_within

    try:
        real = path.resolve()
    except (OSError, ValueError):
        return False
    return any(real != base and is_within(real, base) for base in bases)
