"""The playbooks a run calls (`playbook` steps): found in the library, or written by the
run itself to temp://, which `catalyst check` could not see and which is checked now.

A run records each call in its snapshot's permissions; a what-if (no snapshot) does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.project.config import relative_to_root
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.lifecycle.context import RunContext

if TYPE_CHECKING:
    from catalyst_dsl.runtime.engine.frames import Frame


def load_child(context: RunContext, state, frame: Frame, step: ir.Step, target: str) -> tuple[str, ir.Playbook]:
    """The file and playbook a `playbook` step calls; `state` None in a what-if."""
    if target.startswith("temp://"):
        return load_scratch_child(context, state, frame, step, target)
    resolved = context.library.resolve_call(target, frame.file)
    if resolved is None:
        raise StepError(
            "PlaybookNotFound",
            f"no playbook `{target}` was found",
            guidance="`catalyst list` shows the playbooks of the project",
        )
    compiled = context.library.compiled(resolved)
    if compiled.playbook is None or compiled.has_errors:
        raise StepError(
            "InvalidPlaybook",
            f"{relative_to_root(context.project, resolved)} has errors",
            guidance=f"run `catalyst check {relative_to_root(context.project, resolved)}`",
        )
    inherit = step.config.get("inheritPermissions")
    if state is None:  # a what-if: no snapshot to record the call in
        return resolved, compiled.playbook
    state.permissions.setdefault("calls", {})[compiled.playbook.name] = {
        "file": relative_to_root(context.project, resolved),
        "inheritPermissions": isinstance(inherit, ir.Lit) and inherit.value is True,
    }
    return resolved, compiled.playbook


def load_scratch_child(context: RunContext, state, frame: Frame, step: ir.Step, target: str) -> tuple[str, ir.Playbook]:
    """A playbook the run wrote to temp://: `catalyst check` could not see it (C808), so it
    is checked now, as a run checks its playbook, each time it is called."""
    from catalyst_dsl.project.check import check_project
    from catalyst_dsl.runtime.simulation.recording import Unknowable

    path = frame.gateway.scratch_path(target)
    if not path.is_file():
        if state is None:  # a what-if: the file exists only in the plan
            raise Unknowable(f"{target} is written during the run; the plan cannot check or run it")
        raise StepError(
            "PlaybookNotFound",
            f"no playbook `{target}` was found: the run has not written it",
            guidance="write the playbook to temp:// in an earlier step",
        )
    result = check_project(context.project, [str(path)], advice=False)
    compiled = result.library.compiled(str(path))
    if result.has_errors or compiled.playbook is None:
        first = next((d for d in result.diagnostics if d.severity.value == "error"), None)
        detail = f": {first.message}" if first is not None else ""
        raise StepError("InvalidPlaybook", f"{target} has errors{detail}", guidance="fix the step that writes it")
    if state is not None:
        inherit = step.config.get("inheritPermissions")
        state.permissions.setdefault("calls", {})[compiled.playbook.name] = {
            "file": target,
            "inheritPermissions": isinstance(inherit, ir.Lit) and inherit.value is True,
        }
    return str(path), compiled.playbook
