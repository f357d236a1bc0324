"""What a control action sees of the engine that runs it.

Control actions run other steps, so they need the engine; but the engine sits above them
(runtime/ imports actions/, never the reverse). The engine passes itself and the step
being run into these modules, which call back only what these Protocols name: the types
here say what the control actions depend on, without importing the run-time.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from catalyst_dsl.ir import nodes as ir


class StepRun(Protocol):
    """The step being run, with where it runs (runtime/engine/step_run.py)."""

    step: ir.Step
    frame: Any
    scope: Any
    path: str
    sid: str
    #: The step's name as a person sees it: `sid` with the loop iteration it runs in.
    label: str

    def label_at(self, *segments: object) -> str: ...

    def at(self, *segments: object) -> str:
        """The journal path of something inside the step (a branch, an iteration)."""

    def child(self, values: dict[str, Any] | None = None) -> Any:
        """A new scope below the step's own, holding `values`."""


class Engine(Protocol):
    """The engine as a control action calls it back (runtime/engine/engine.py)."""

    #: The failure of a step, raised and caught by control actions (runtime/errors.py).
    StepError: type[Any]
    #: A value a what-if cannot know.
    UNKNOWN: Any
    #: The exceptions that stop a run rather than fail a step, strongest first.
    STOPS: tuple[type[BaseException], ...]
    #: path -> journal entry of the run being resumed.
    replay: dict[str, dict]
    max_depth: int
    events: Any

    def truthy(self, value: Any) -> bool: ...

    def entry(self, run: StepRun, key: str, config: dict[str, Any] | None) -> Any: ...

    def value(self, run: StepRun, value: ir.Value) -> Any: ...

    def config(self, run: StepRun) -> dict[str, Any]: ...

    def error(self, code: str, message: str, **details: Any) -> Any: ...

    def run_steps(self, steps: Sequence[ir.Step], frame: Any, scope: Any, prefix: str) -> None: ...

    def run_step(self, step: ir.Step, frame: Any, scope: Any, path: str) -> None: ...

    def scope(self, parent: Any, values: dict[str, Any] | None = None) -> Any: ...

    def catching(self, where: str, error: Any, label: str) -> None: ...

    def same_item(self, path: str, index: int, item: Any) -> None: ...

    def bookkeep(self, path: str, action: str, result: dict, reason: str | None, label: str) -> None: ...

    def masked(self, value: Any) -> Any: ...

    def ask_first(self, step: ir.Step, frame: Any, scope: Any, path: str) -> None: ...

    def stop_everything(self) -> None: ...

    def function_inputs(self, name: str, declared: ir.Value | None, given: dict[str, Any]) -> dict[str, Any]: ...

    def call_playbook(self, run: StepRun, config: dict[str, Any]) -> Any: ...

    def answer(self, path: str, sid: str, message: str, options: list, default: Any, frame: Any, **how: Any) -> Any: ...

    def approval_policy(self, value: ir.Value | None) -> Any: ...

    def cancelled(self, by: str | None, reason: str) -> BaseException: ...


class Simulator(Engine, Protocol):
    """The engine of a what-if (runtime/simulation/simulator.py): steps go into a plan."""

    plan: Any

    def foreseen_failure(self) -> Any: ...

    def maybe_handled(self, handlers: list, frame: Any, scope: Any) -> None: ...
