"""`try`: run steps; on a failure run the first `catch` clause that matches its code;
always run `finally` once the block ended (failed, caught or returned), but not when the
run pauses or is cancelled inside it: the run resumes there later."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ArrayT, NULL, STEPS, STRING, obj, opt, req, union
from catalyst_dsl.actions.control.return_ import Return
from catalyst_dsl import expr_builtins as B
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
    from catalyst_dsl.actions.control.protocol import Engine, Simulator, StepRun

#: How the engine treats the step (see actions/control/__init__.py).
REPORTS_FINISH = True
KEEPS_RESULT = False
NAMES_RESULT = True

#: One clause of `catch`: the code it matches and the steps it runs.
CATCH_CLAUSE = obj(code=req(STRING, "error code to match; `default` matches any"), steps=req(STEPS))

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "try",
    "control",
    "Run steps; on an error run the first matching catch; always run finally.",
    obj(steps=req(STEPS), catch=opt(ArrayT(CATCH_CLAUSE)), finally_=opt(STEPS)),
    "steps",
    obj(outcome=STRING, caughtError=union(STRING, NULL)),
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    return _block(engine, run, lambda returned: None)


def simulate(engine: Simulator, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    """A what-if: the steps, then every `catch` clause's steps as conditional, then `finally`.
    Whether a step of the block fails is not known to a plan (it starts no program, asks
    no AI), so what a handler would do is shown, as the branches of an `if` whose condition
    cannot be known are; a failure the plan predicts runs its clause as a run would."""
    handled = False

    def ended(returned: bool) -> str | None:
        nonlocal handled
        # Only a `try` with clauses is a catcher of its own (Simulator._control); after a
        # `return`, a step before it may still have failed.
        foreseen = engine.foreseen_failure() if caught_codes(run.step) and not returned else None
        if foreseen is not None and _catch(engine, run, foreseen):
            return foreseen.code  # a failure the plan predicts: its clause, as a run
        handled = _may_catch(engine, run)
        return None

    result = _block(engine, run, ended)
    if result["caughtError"] is None and handled:
        return engine.UNKNOWN  # whether a clause would take a failure is not known
    return result


def _block(engine: Engine, run: StepRun, ended: Callable[[bool], str | None]) -> dict[str, Any]:
    """The steps, the clause that takes a failure raised in them, then `finally`, for a run
    and a what-if alike. `ended(returned)`: what follows steps that ended without raising a
    failure (`returned`: by a `return`), the code of the failure a clause then took, or None."""
    from catalyst_dsl.ir import nodes as ir

    body = run.step.config.get("steps")
    outcome, caught = "completed", None
    steps_scope = run.child()
    try:
        try:
            if isinstance(body, ir.StepsV):
                try:
                    engine.run_steps(body.steps, run.frame, steps_scope, run.at("steps"))
                finally:
                    steps_scope.hand_out()  # what the steps defined before an error, too
        except engine.StepError as error:
            if not _catch(engine, run, error):
                raise
            outcome, caught = "caught", error.code
        except Return:
            ended(True)
            raise
        else:
            caught = ended(False)
            outcome = "caught" if caught else outcome
    except (engine.StepError, Return):
        _finally(engine, run)  # the block ended (failed or returned); a pause is not an end
        raise
    _finally(engine, run)
    return {"outcome": outcome, "caughtError": caught}


def _may_catch(engine: Simulator, run: StepRun) -> bool:
    """Each clause's steps, as conditional (Simulator.maybe_handled); whether there was one."""
    from catalyst_dsl.ir import nodes as ir

    handlers = []
    clauses = catch_clauses(run.step)
    for k, clause, code in clauses:
        if isinstance(clause.get("steps"), ir.StepsV):
            handlers.append((clause.get("steps").steps, run.at("catch", k)))
            if code is not None:
                engine.name_part(run.at("catch", k), code)
    engine.maybe_handled(handlers, run.frame, run.scope)
    return bool(clauses)


def catch_clauses(step: ir.Step) -> list[tuple[int, ir.MapV, str | None]]:
    """A `try` step's `catch` clauses, each with its index and its code (None when it is
    not a text)."""
    from catalyst_dsl.ir import nodes as ir

    clauses = step.config.get("catch") if step.action == "try" else None
    found = []
    for k, clause in enumerate(clauses.items if isinstance(clauses, ir.ListV) else ()):
        if isinstance(clause, ir.MapV):
            code = clause.get("code")
            found.append((k, clause, code.value if isinstance(code, ir.Lit) and isinstance(code.value, str) else None))
    return found


def caught_codes(step: ir.Step) -> tuple[str, ...]:
    """The codes a `try` step's `catch` clauses take (`default`: any); none for another
    step. A what-if asks, to tell a failure the run survives from one that ends it."""
    return tuple(code for _, _, code in catch_clauses(step) if code is not None)


def _catch(engine: Engine, run: StepRun, error: Any) -> bool:
    """Run the first clause that matches the error; whether one did."""
    from catalyst_dsl.ir import nodes as ir

    for k, clause, code_text in catch_clauses(run.step):
        if code_text == "default" or (code_text is not None and error.matches(code_text)):
            handler = clause.get("steps")
            engine.catching(run.at("catch"), error, run.label)
            engine.name_part(run.at("catch", k), code_text)
            if isinstance(handler, ir.StepsV):
                handling = run.child({"$error": error.as_value()})
                engine.run_steps(handler.steps, run.frame, handling, run.at("catch", k))
                handling.hand_out("$error")
            return True
    return False


def _finally(engine: Engine, run: StepRun) -> None:
    from catalyst_dsl.ir import nodes as ir

    final_steps = run.step.config.get("finally")
    if isinstance(final_steps, ir.StepsV):
        after = run.child()
        engine.run_steps(final_steps.steps, run.frame, after, run.at("finally"))
        after.hand_out()


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The steps walked, then each handler with `$error`, then the `finally` steps. Without
    a handler an error ends the run, so after the try its steps all ran; with handlers,
    what follows is reached through the steps or through a handler."""
    from catalyst_dsl.ir import nodes as ir

    cfg = step.config
    steps = cfg.get("steps")
    body = checker.inner(scope)
    if isinstance(steps, ir.StepsV):
        checker.walk(steps.steps, body)
    where = checker.line(step.span)
    paths_out = [(body, f"defined only when the steps of the try at {where} end without an error", None)]
    catch = cfg.get("catch")
    for clause in catch.items if isinstance(catch, ir.ListV) else ():
        if isinstance(clause, ir.MapV):
            handler = checker.inner(scope)
            handler.define(checker.binding("$error", B.ERROR_TYPE, "error", clause.span))
            clause_steps = clause.get("steps")
            if isinstance(clause_steps, ir.StepsV):
                checker.guarded(clause_steps.steps, handler)
            paths_out.append((handler, f"defined only when the try at {where} catches an error", None))
    checker.flow_out(scope, paths_out, step.span)
    final = cfg.get("finally")
    if isinstance(final, ir.StepsV):
        after = checker.inner(scope)
        checker.walk(final.steps, after)
        checker.flow_out(scope, [(after, None, None)], step.span)
    return checker.catalog.get(step.action).result
