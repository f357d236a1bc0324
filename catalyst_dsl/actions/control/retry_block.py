"""`retry-block`: run a block of steps again, from its first, when it fails.

Only failures with a code of `retryOn` (and from a step of `retryFrom`) start another
attempt, up to `maxAttempts` in the whole run; `__lastError` holds the failure that
started the attempt. Each attempt's steps have their own paths (`…/attempt/N/i`) and
each failed attempt is journaled (`…/attempt/N/failed`), so a resumed run goes on with
the attempt it was in. A what-if shows one attempt: it cannot know whether one fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ArrayT, NUMBER, STEPS, STRING, obj, opt, req
from catalyst_dsl.ir.journal import ATTEMPT_FAILED
from catalyst_dsl.ir.language import LAST_ERROR, MAX_BLOCK_ATTEMPTS
from catalyst_dsl import expr_builtins as B
from catalyst_dsl.diagnostics.ids import ERROR_CODE_CASE, RETRY_BLOCK_ATTEMPTS, RETRY_FROM_UNKNOWN_STEP
from catalyst_dsl.diagnostics.suggest import suggest
from catalyst_dsl.ir import types as t
from catalyst_dsl._internal.lazy_pattern import LazyPattern

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
    from catalyst_dsl.actions.control.protocol import Engine, StepRun

#: How the engine treats the step (see actions/control/__init__.py): the journal keeps
#: how many attempts it took.
REPORTS_FINISH = True
KEEPS_RESULT = True
NAMES_RESULT = True

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "retry-block",
    "control",
    "Run steps again, from the first, when they fail with one of the codes in `retryOn` (any code without it), "
    "at most `maxAttempts` times in the whole run; `__lastError` holds the failure that started the attempt; "
    "IterationCapExceeded once they are spent.",
    obj(
        steps=req(STEPS),
        maxAttempts=req(NUMBER, "attempts in all, 1 to 10"),
        retryOn=opt(ArrayT(STRING), "the error codes that start another attempt"),
        retryFrom=opt(
            ArrayT(STRING), "the steps of the block whose failure starts another attempt (any step's when absent)"
        ),
    ),
    "steps",
    obj(attempts=NUMBER),
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    cap, codes, sources = _limits(engine, run)
    attempt, last = 1, None
    while (kept := engine.replay.get(run.at("attempt", attempt, "failed"))) is not None:
        last = engine.StepError.from_record((kept.get("result") or {}).get("error") or {})
        attempt += 1
    while True:
        if attempt > cap:
            raise _attempts_spent(engine, run.label, int(cap), last)
        try:
            return _attempt(engine, run, attempt, last)
        except engine.StepError as error:
            if (codes is not None and not any(error.matches(c) for c in codes)) or (
                sources is not None and error.step not in sources
            ):
                raise
            _failed(engine, run, attempt, int(cap), error)
            attempt, last = attempt + 1, error


def simulate(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    _limits(engine, run)
    return _attempt(engine, run, 1, None)


def _limits(engine: Engine, run: StepRun) -> tuple[Any, list[str] | None, set[str] | None]:
    """The attempts allowed, and the codes and steps whose failures start another."""
    config = run.step.config
    cap = engine.value(run, config.get("maxAttempts"))
    if (
        isinstance(cap, bool)
        or not isinstance(cap, (int, float))
        or cap != int(cap)
        or not 1 <= cap <= MAX_BLOCK_ATTEMPTS
    ):
        raise engine.error(
            "InvalidConfig",
            f"maxAttempts must be a whole number from 1 to {MAX_BLOCK_ATTEMPTS}, got {_as_written(cap)}",
        )
    codes_value = config.get("retryOn")
    codes = [str(c) for c in engine.value(run, codes_value) or ()] if codes_value is not None else None
    sources_value = config.get("retryFrom")
    sources = {str(s) for s in engine.value(run, sources_value) or ()} if sources_value is not None else None
    return cap, codes, sources


def _attempt(engine: Engine, run: StepRun, attempt: int, last: Any) -> dict[str, Any]:
    from catalyst_dsl.ir import nodes as ir

    body = run.step.config.get("steps")
    steps = body.steps if isinstance(body, ir.StepsV) else ()
    block = run.child({LAST_ERROR: last.as_value() if last is not None else None})
    engine.run_steps(steps, run.frame, block, run.at("attempt", attempt))
    return {"attempts": attempt}


def _failed(engine: Engine, run: StepRun, attempt: int, cap: int, error: Any) -> None:
    """Journal the failed attempt (a resume goes on with the next), and say so."""
    engine.bookkeep(
        run.at("attempt", attempt, "failed"),
        ATTEMPT_FAILED,
        {"error": engine.masked(error.as_record())},
        f"{error.code} from {error.step}",
        run.label_at("attempt", attempt, "failed"),
    )
    if attempt < cap:
        engine.events.message(
            "warning",
            f"{run.label}: attempt {attempt} of {cap} failed ({error.code}: {error.message}); the block runs again",
            run.label,
            depth=run.frame.depth,
        )


def _attempts_spent(engine: Engine, sid: str, cap: int, last: Any) -> Any:
    detail = f" (the last: {last.code}: {last.message})" if last is not None else ""
    return engine.error(
        "IterationCapExceeded",
        f"{sid}: all {cap} attempt(s) of the block failed{detail}",
        guidance="fix what fails and start a new run: the attempts are counted for the whole run, resumes included",
        metadata={"attempts": cap, "lastError": last.as_value() if last is not None else None},
    )


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


_PASCAL = LazyPattern(r"^[A-Z][A-Za-z0-9]*$")


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """Its attempts bound (C613), its codes PascalCase (C309), its body with `__lastError`,
    and the steps `retryFrom` names found in the block (C615)."""
    from catalyst_dsl.ir import nodes as ir

    cap = step.config.get("maxAttempts")
    checker.value(cap, scope)
    if isinstance(cap, ir.Lit) and isinstance(cap.value, (int, float)) and not isinstance(cap.value, bool):
        if cap.value != int(cap.value) or not 1 <= cap.value <= MAX_BLOCK_ATTEMPTS:
            checker.sink.report(
                RETRY_BLOCK_ATTEMPTS,
                f"maxAttempts is {cap.value}; a retry-block has from 1 to {MAX_BLOCK_ATTEMPTS} attempts",
                cap.span,
                help="attempts are counted for the whole run; a block that needs more should fail and be looked at",
            )
    _error_codes(checker, step, scope)
    body = checker.inner(scope)
    body.define(checker.binding(LAST_ERROR, t.union(B.ERROR_TYPE, t.NULL), "error", step.span))
    steps = step.config.get("steps")
    if isinstance(steps, ir.StepsV):
        checker.walk(steps.steps, body)
    _retry_from(checker, step, scope, steps)
    return checker.catalog.get(step.action).result


def _error_codes(checker: Checker, step: ir.Step, scope: Scope) -> None:
    from catalyst_dsl.ir import nodes as ir

    codes = step.config.get("retryOn")
    checker.value(codes, scope)
    for code in codes.items if isinstance(codes, ir.ListV) else ():
        if isinstance(code, ir.Lit) and isinstance(code.value, str) and not _PASCAL.match(code.value):
            checker.sink.report(
                ERROR_CODE_CASE,
                f"the error code '{code.value}' is not PascalCase",
                code.span,
                help="error codes look like PostconditionFailed",
            )


def _retry_from(checker: Checker, step: ir.Step, scope: Scope, steps: ir.Value | None) -> None:
    from catalyst_dsl.ir import nodes as ir

    sources = step.config.get("retryFrom")
    checker.value(sources, scope)
    if isinstance(sources, ir.ListV) and isinstance(steps, ir.StepsV):
        names = {inner.name for top in steps.steps for inner in ir.steps_within(top) if inner.name}
        for source in sources.items:
            if isinstance(source, ir.Lit) and isinstance(source.value, str) and source.value not in names:
                checker.sink.report(
                    RETRY_FROM_UNKNOWN_STEP,
                    f"retryFrom names '{source.value}', which is not a step of this block",
                    source.span,
                    help=suggest(source.value, names) or "name a step inside the block (its `name:`)",
                )


def _as_written(value: Any) -> str:
    """A config value as the playbook writes it (JSON), for a message."""
    import json  # here: only a run's error needs it, and a check must not load it

    return json.dumps(value, default=str)
