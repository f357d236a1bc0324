"""The step being run: the step, the playbook frame and scope it runs in, its journal
path and its id. One object instead of the five values every part of a step's life
needs; the control actions see it through actions/control/protocol.py."""

from __future__ import annotations

from typing import Any

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.engine import paths
from catalyst_dsl.runtime.engine.frames import Frame
from catalyst_dsl.runtime.engine.scope import Scope


class StepRun:
    __slots__ = ("step", "frame", "scope", "path", "sid")

    def __init__(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> None:
        self.step, self.frame, self.scope, self.path, self.sid = step, frame, scope, path, sid

    @property
    def label(self) -> str:
        """The step's name as the run shows it: its id (or the name its dialect gave it to
        be shown by, `display_name`), with the loop iteration it runs in."""
        return paths.step_label(self.step.display_name or self.sid, self.path)

    def label_at(self, *segments: object) -> str:
        """The name of something inside the step as the run shows it: the step's label, with
        the attempt it sits in (`retry-block@3 [attempt 2]` for `…/attempt/2/failed`)."""
        return paths.step_label(self.step.display_name or self.sid, self.at(*segments))

    def at(self, *segments: object) -> str:
        """The journal path of something inside the step (a branch, an iteration, a pause)."""
        return paths.join(self.path, *segments)

    def child(self, values: dict[str, Any] | None = None) -> Scope:
        """A new scope below the step's own, holding `values`."""
        return Scope(self.scope, values)

    def with_result(self, result: Any) -> Scope:
        """Where the step's `ensures:` and `bindings:` are evaluated: its own result
        readable by its name."""
        step = self.step
        return Scope(self.scope, {step.name: visible(step, result)}) if step.name else self.scope


def visible(step: ir.Step, result: Any) -> Any:
    """What a named step's result is to the playbook. A `script` step's is the value its code
    returned; the journal keeps its `set` values beside it, to apply them again on resume."""
    if step.action == "script" and isinstance(result, dict) and set(result) == {"result", "set"}:
        return result["result"]
    return result
