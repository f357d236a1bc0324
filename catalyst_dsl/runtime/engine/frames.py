"""The playbook being run (`Frame`), what the engine needs from the session around it
(`Hooks`), and what a playbook declares about its boundary: the paths it may write and
the outputs it must return."""

from __future__ import annotations

from typing import Any, Callable

from catalyst_dsl._internal import records
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.gateway import EffectsGateway
from catalyst_dsl.runtime.values.jsvalues import UNKNOWN, to_text
from catalyst_dsl.runtime.engine.scope import RunEnv, Scope


@records.record(frozen=False)
class Frame:
    """One playbook being run: the top one, or one called by a `playbook` step."""

    playbook: ir.Playbook
    file: str
    inputs: dict[str, Any]
    gateway: EffectsGateway
    depth: int = 0
    functions: dict[str, tuple[ir.Step, Scope]] = records.factory(dict)


@records.record(frozen=False)
class Hooks:
    """What the engine needs from around it, supplied by the session (`runtime/lifecycle/session.py`)."""

    #: record_step(StepRecord-like dict[, save=True]) then save, unless told not to; save() alone.
    record_step: Callable[..., None]
    save: Callable[[], None]
    #: set_in_flight(path, recovers) then save: `recovers`, the step's `ensures:` may prove it
    #: done after catalyst died, even by a power cut, so that save must survive one.
    set_in_flight: Callable[[str | None, bool], None]
    #: record_failure(error, step id, attempt, seconds, the step's label as the run shows it).
    record_failure: Callable[[StepError, str, int, float, str], None]
    #: approval_for(path[, subject][, roles=]) -> approval dict that released the pause at path
    #: (for that subject, when given), or None; ChangesRequested when a reviewer held it back.
    #: `roles`: those the pause requires, which decide whether the approval must be signed.
    approval_for: Callable[..., dict | None]
    #: approve(path, via, role, by, comment, released, selected[, subject][, step=label])
    approve: Callable[..., None]
    #: ask(message, options, default) -> (selected, text) on a terminal, or None without one.
    ask: Callable[[str, list, Any], tuple[Any, str | None] | None] | None
    cancel_requested: Callable[[], bool]
    #: load(frame, step, target) -> (file, playbook) for a `playbook` step.
    load_playbook: Callable[[Frame, ir.Step, str], tuple[str, ir.Playbook]]
    #: adapter(name) -> AIAdapter
    adapter: Callable[[str | None], Any]
    mask: Callable[[Any], Any]
    #: secret(name) -> a value from the secret providers, or None.
    secret: Callable[[str], str | None] = lambda name: None
    #: terminal_approver(required roles) -> (who, role) for the person at this terminal, or
    #: None when they may not release such a pause (then the run pauses for `catalyst approve`).
    terminal_approver: Callable[[list[str]], tuple[str, str | None] | None] = lambda roles: (_current_user(), None)
    #: autonomous_releases(required roles) -> whether catalyst may approve such a pause by
    #: itself: autonomous mode, approval rules, `approved: true` (not when approvals must be
    #: signed and a role is needed).
    autonomous_releases: Callable[[list[str]], bool] = lambda roles: True
    #: result_cache() -> the ResultCache of `cache:` steps (runtime/state/result_cache.py), or
    #: None where results are never reused (a what-if).
    result_cache: Callable[[], Any] = lambda: None
    #: input_scripts(playbook, values) -> the problems the inputs' validation scripts find
    #: in the values a `playbook` step passes (runtime/lifecycle/input_scripts.py); none in a what-if.
    input_scripts: Callable[[ir.Playbook, dict], list] = lambda playbook, values: []


def _current_user() -> str:
    """Who is at this terminal, for an approval given there (runtime/machine.py, imported
    then: a what-if asks no one)."""
    from catalyst_dsl.runtime.machine import current_user

    return current_user()


def granted_paths(playbook: ir.Playbook, env: RunEnv) -> list[str] | None:
    """The playbook's allowedWritePaths plus artifacts, rendered; None when it declares none."""
    from catalyst_dsl.runtime.values.evaluate import materialize

    if playbook.allowed_write_paths is None:
        return None
    texts = []
    for value in (*playbook.allowed_write_paths, *playbook.artifacts):
        try:
            texts.append(to_text(materialize(value, env)))
        except StepError:
            continue
    return texts


def check_outputs(playbook: ir.Playbook, outputs: dict[str, Any]) -> None:
    """Declared outputs must be returned with their declared type (the playbook's `outputs:`)."""
    problems = []
    for decl in playbook.outputs:
        if decl.name not in outputs:
            problems.append(f"output `{decl.name}` was not returned")
        elif outputs[decl.name] is not UNKNOWN and not _fits(outputs[decl.name], decl.type):
            problems.append(f"output `{decl.name}` should be {decl.type}, got {type(outputs[decl.name]).__name__}")
    if problems:
        raise StepError(
            "OutputMissing",
            f"{playbook.name}: " + "; ".join(problems),
            guidance="return every declared output with a `return` step",
        )


def _fits(value: Any, declared: str) -> bool:
    kinds = {"string": str, "number": (int, float), "boolean": bool, "array": list, "object": dict}
    kind = kinds.get(declared)
    if kind is None:
        return True
    if declared == "number" and isinstance(value, bool):
        return False
    return isinstance(value, kind)
