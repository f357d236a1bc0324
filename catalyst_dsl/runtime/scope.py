"""Variables of a running playbook, and the environment expressions see.

Scoping follows the checker (`checks/scope.py`): a body (`if` branch, loop, `try`,
function) gets a child scope; a `var` whose name exists in an outer scope updates it
there; named step results are defined where the step runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from catalyst_dsl.runtime.errors import StepError

_MISSING = object()


class Scope:
    __slots__ = ("values", "parent")

    def __init__(self, parent: "Scope | None" = None, values: dict[str, Any] | None = None) -> None:
        self.values: dict[str, Any] = values if values is not None else {}
        self.parent = parent

    def lookup(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            value = scope.values.get(name, _MISSING)
            if value is not _MISSING:
                return value
            scope = scope.parent
        raise KeyError(name)

    def define(self, name: str, value: Any) -> None:
        self.values[name] = value

    def assign(self, name: str, value: Any) -> None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.values:
                scope.values[name] = value
                return
            scope = scope.parent
        self.values[name] = value


class RunEnv:
    """What `{{ }}` and `${{ }}` can reach: inputs, variables, `get()`, `logs()`, protocols."""

    def __init__(self, scope: Scope, inputs: dict[str, Any], scratch: Path, logs: Callable[[], list[dict]]) -> None:
        self.scope = scope
        self.inputs = inputs
        self.scratch = scratch
        self._logs = logs

    def lookup(self, name: str) -> Any:
        try:
            return self.scope.lookup(name)
        except KeyError:
            if name == "inputs":
                return self.inputs
            if name in self.inputs:
                return self.inputs[name]
            raise

    def get(self, path: str) -> Any:
        from catalyst_dsl.runtime.jsvalues import UNDEFINED, UNKNOWN

        root, *segments = str(path).split(".")
        try:
            value = self.lookup(root)
        except KeyError:
            return UNDEFINED
        for segment in segments:
            if value is UNKNOWN:
                return UNKNOWN
            if isinstance(value, dict):
                value = value.get(segment, UNDEFINED)
            elif isinstance(value, (list, str)) and segment == "length":
                value = len(value)
            elif isinstance(value, list) and segment.isdigit():
                index = int(segment)
                value = value[index] if index < len(value) else UNDEFINED
            else:
                return UNDEFINED
        return value

    def logs(self) -> list[dict]:
        return self._logs()

    def protocol(self, protocol: str, path: str) -> str:
        if protocol == "xe":
            return ".xe/" + path
        if protocol == "temp":
            return "temp://" + path  # the gateway maps it into the run's scratch space
        raise StepError("PathNotAvailable", f"{protocol}://{path} cannot be read here: catalyst:// resources are not bundled with this version")
