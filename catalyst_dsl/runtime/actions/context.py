"""What an action sees of the run: its config, the gateway, the log and the AI adapters.

Built-in and plugin actions get the same context; it is their only way to act.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

import attrs

from catalyst_dsl.paths.protocols import place
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.gateway import EffectsGateway


@attrs.define
class ActionContext:
    run_id: str
    #: How the step is named in messages: its name, or `action` at its line.
    step_id: str
    action: str
    gateway: EffectsGateway
    #: The step's declared `writes:`, rendered.
    writes: tuple[str, ...]
    #: Seconds the step may take, or None.
    timeout: float | None
    #: log(level, message, data) into the run's log and console.
    log: Callable[[str, str, Any], None]
    #: output(stream, line): a line of a program's output, streamed.
    output: Callable[[str, str], None]
    #: adapter(name_or_None) -> AIAdapter, by the documented precedence.
    adapter: Callable[[str | None], Any]
    #: The project's settings (catalyst_dsl.project.config.ProjectConfig).
    settings: Any = None
    #: secret(name) -> the value from the secret providers (environment, secrets-file), or None.
    secret: Callable[[str], str | None] = lambda name: None
    #: Where the step sits in the run (its journal path), stable across resumes.
    path: str = ""
    #: variables() -> the names the step can see, as plain data (for `script`'s get()).
    variables: Callable[[], dict] | None = None
    started: float = attrs.field(factory=time.monotonic)

    @property
    def root(self) -> Path:
        return self.gateway.root

    def remaining(self) -> float | None:
        """Seconds left before the step's timeout, or None when it has none."""
        if self.timeout is None:
            return None
        return max(0.0, self.timeout - (time.monotonic() - self.started))

    def check_deadline(self) -> None:
        if self.timeout is not None and time.monotonic() - self.started > self.timeout:
            raise StepError("StepTimeout", f"the step took longer than its timeout of {self.timeout:g}s")

    def read_path(self, written: str) -> Path:
        """A path to read: inside the project or the run's scratch space, never elsewhere."""
        placed = place(written)
        if placed.problem:
            raise StepError("FileNotFound", f"cannot read '{written}': {placed.problem}")
        if placed.scratch:
            return self.gateway.scratch_path(written)
        if "\0" in written:
            raise StepError("FileNotFound", f"cannot read {written!r}: the path holds a NUL character")
        text = placed.path or written
        real = Path(os.path.realpath(self.root / text))
        if os.path.isabs(text) or not (real == self.gateway.real_root or self.gateway.real_root in real.parents):
            raise StepError("PermissionDenied", f"cannot read '{written}': it is outside the project",
                            guidance="playbooks read files inside the project root")
        return real
