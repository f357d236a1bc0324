"""Variables of a running playbook, and the environment expressions see.

Scoping follows the checker (`checks/references/`): a body (`if` branch, loop, `try`,
function) gets a child scope; a `var` whose name exists in an outer scope updates it
there; named step results are defined where the step runs. When a block other than a
function body ends, the names it defined are handed out to the enclosing scope, so steps
after the block see them (the checker warns, C508, where only some paths define one).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from catalyst_dsl.runtime.errors import StepError

if TYPE_CHECKING:
    from catalyst_dsl.runtime.effects.gateway import EffectsGateway

_MISSING = object()
#: `get('xe://…')` reads files up to this size, as `file-read` does.
MAX_READ_BYTES = 50 * 1024 * 1024


class Scope:
    __slots__ = ("values", "parent")

    def __init__(self, parent: "Scope | None" = None, values: dict[str, Any] | None = None) -> None:
        self.values: dict[str, Any] = values if values is not None else {}
        self.parent = parent

    def lookup(self, name: str) -> Any:
        value = self.find(name)
        if value is _MISSING:
            raise KeyError(name)
        return value

    def find(self, name: str) -> Any:
        """`lookup` without the KeyError: `_MISSING` when no scope defines the name (an
        input's name, read through RunEnv, is not a variable: no exception per read)."""
        scope: Scope | None = self
        while scope is not None:
            value = scope.values.get(name, _MISSING)
            if value is not _MISSING:
                return value
            scope = scope.parent
        return _MISSING

    def define(self, name: str, value: Any) -> None:
        self.values[name] = value

    def hand_out(self, *own: str) -> None:
        """Define in the parent every name this block scope defined, but its `own` (a
        loop's item and index, a handler's $error), which belong to the block."""
        if self.parent is None:
            return
        for name, value in self.values.items():
            if name not in own:
                self.parent.values[name] = value

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

    def __init__(
        self,
        scope: Scope,
        inputs: dict[str, Any],
        scratch: Path,
        logs: Callable[[], list[dict]],
        gateway: "EffectsGateway | None" = None,
    ) -> None:
        self.scope = scope
        self.inputs = inputs
        self.scratch = scratch
        self._logs = logs
        #: The frame's gateway, through which protocol paths are found and read; None
        #: where no file is looked at (inputs and grants are rendered before any step).
        self.gateway = gateway

    @property
    def masker(self):
        """The run's masker, known from a secret input's marked value; None in a run without secrets."""
        from catalyst_dsl.runtime.values.taint import SecretText

        return next((v.masker for v in self.inputs.values() if isinstance(v, SecretText)), None)

    def lookup(self, name: str) -> Any:
        value = self.scope.find(name)
        if value is not _MISSING:
            return value
        if name == "inputs":
            return self.inputs
        if name in self.inputs:
            return self.inputs[name]
        raise KeyError(name)

    def get(self, path: str) -> Any:
        """`get('a.b.0')`: like `{{a.b.0}}`, but lenient: a missing step is `undefined`."""
        from catalyst_dsl.runtime.values.evaluate import member
        from catalyst_dsl.runtime.values.jsvalues import UNDEFINED, UNKNOWN, Fault

        root, *segments = str(path).split(".")
        try:
            value = self.lookup(root)
        except KeyError:
            return UNDEFINED
        for segment in segments:
            if value is UNKNOWN:
                return UNKNOWN
            try:
                value = member(value, segment)
            except Fault:  # a step into null or undefined
                return UNDEFINED
        return value

    def logs(self) -> list[dict]:
        return self._logs()

    def protocol(self, protocol: str, path: str) -> str:
        """`{{xe://a}}`: the path itself, with the extension it is found with (`.xe/product.md`).

        A resource (`{{catalyst://a}}`) is its file's path: project-relative when the
        resources are inside the project, else absolute.
        """
        written = f"{protocol}://{path}"
        if self.gateway is not None:
            from catalyst_dsl.runtime.actions.context import located

            written = located(self.gateway, written)
        if protocol == "xe":
            return ".xe/" + written[len("xe://") :]
        if protocol == "catalyst":
            if self.gateway is None:
                raise StepError("PathNotAvailable", f"{written} cannot be placed before the run starts")
            from catalyst_dsl.runtime.effects.beneath import is_within

            resource = self.gateway.resource_path(written)
            if is_within(resource, self.gateway.real_root):
                return resource.relative_to(self.gateway.real_root).as_posix()
            return str(resource)
        return written  # the gateway maps temp:// into the run's scratch space

    def read(self, protocol: str, path: str) -> Any:
        """`get('xe://a')`: the file's text, `undefined` when there is no such file."""
        from catalyst_dsl.runtime.actions.context import read_target
        from catalyst_dsl.runtime.effects.gateway import FileTooLarge
        from catalyst_dsl.runtime.values.jsvalues import UNDEFINED

        if self.gateway is None:
            raise StepError("PathNotAvailable", f"{protocol}://{path} cannot be read before the run starts")
        try:
            data = self.gateway.read_file(read_target(self.gateway, f"{protocol}://{path}"), MAX_READ_BYTES)
        except FileTooLarge:
            raise StepError(
                "FileTooLarge", f"{protocol}://{path} is larger than {MAX_READ_BYTES // 1024 // 1024} MiB"
            ) from None
        except (IsADirectoryError, NotADirectoryError):
            return UNDEFINED
        except OSError as error:  # unreadable, a symbolic link loop, …
            raise StepError("FileReadError", f"cannot read {protocol}://{path}: {error.strerror or error}") from None
        if data is None:
            return UNDEFINED
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise StepError("FileReadError", f"cannot decode {protocol}://{path} as utf-8: {error}") from None
