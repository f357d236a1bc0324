"""The plan a what-if builds: one entry per step, in the order the steps would run.

The interpreter opens an entry when a step starts and files the steps it runs inside
that entry (branches, loop bodies, a called playbook's steps). Entries hold only what
is the same on every machine and every day: no times, no run ids, no absolute paths.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator

from catalyst_dsl.runtime.jsvalues import as_json_data
from catalyst_dsl.runtime.taint import placeholders

#: The list new entries go into: the plan's top level, or the `steps` of the step running them.
PARENT: contextvars.ContextVar[list | None] = contextvars.ContextVar("catalyst_plan_parent", default=None)
#: True inside a step whose running depends on a value the plan cannot know.
CONDITIONAL: contextvars.ContextVar[bool] = contextvars.ContextVar("catalyst_plan_conditional", default=False)

#: When a step has several effects, the one that names it (the most destructive).
_WEIGHT = {"delete": 4, "modify": 3, "create": 2, "no-op": 1}


class PlanRecorder:
    def __init__(self, mask: Callable[[Any], Any]) -> None:
        self.mask = mask
        self.steps: list[dict[str, Any]] = []

    def open(self, path: str, step: str, action: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "path": path, "step": step, "action": action, "change": None, "reason": None,
            "conditional": CONDITIONAL.get(), "config": {}, "effects": [], "writes": [],
            "approval": None, "request": None, "steps": [],
        }
        parent = PARENT.get()
        (self.steps if parent is None else parent).append(entry)
        return entry

    @contextlib.contextmanager
    def inside(self, entry: dict[str, Any]) -> Iterator[None]:
        token = PARENT.set(entry["steps"])
        try:
            yield
        finally:
            PARENT.reset(token)

    @staticmethod
    @contextlib.contextmanager
    def conditional() -> Iterator[None]:
        token = CONDITIONAL.set(True)
        try:
            yield
        finally:
            CONDITIONAL.reset(token)

    def shown(self, value: Any) -> Any:
        """A config value as the plan shows it: unknowns named, secrets and values computed
        from them as placeholders (`<secret-derived:token>`), other secrets masked, JSON only."""
        return self.mask(placeholders(as_json_data(value)))

    @staticmethod
    def settle(entry: dict[str, Any], effects: list[dict[str, Any]], fallback: str) -> None:
        """Fill in the entry's change from its effects, unless a handler already decided."""
        entry["effects"] = effects
        entry["writes"] = [{"path": e["path"], "allowed": True} for e in effects] + entry["writes"]
        if entry["change"] is None:
            changes = [e["change"] for e in effects]
            entry["change"] = max(changes, key=_WEIGHT.__getitem__) if changes else fallback
