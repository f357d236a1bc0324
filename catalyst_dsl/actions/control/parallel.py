"""`parallel`: run steps at the same time, each in its own thread.

People answer every branch's `checkpoint: before` question before any branch starts.
When branches fail, the first branch's failure is raised (in branch order, so a resume
that raises them again gives a `catch` the same one), the others riding along; a pause,
a cancel or Ctrl-C wins over step failures. A what-if runs the branches one after
another: a plan is the same every time.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import NUMBER, STEPS, obj, opt, req
import contextvars
from typing import TYPE_CHECKING, Any

from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
    from catalyst_dsl.actions.control.protocol import Engine, StepRun

#: How the engine treats the step (see actions/control/__init__.py).
REPORTS_FINISH = True
KEEPS_RESULT = False
NAMES_RESULT = True

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "parallel",
    "control",
    "Run steps concurrently; their writes may not overlap.",
    obj(steps=req(STEPS), maxConcurrency=opt(NUMBER)),
    "steps",
    obj(completed=NUMBER, failed=NUMBER),
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    steps, limit = _branches(engine, run, config)
    shared = run.child()
    for i, inner in enumerate(steps):
        engine.ask_first(inner, run.frame, shared, run.at("branch", i))
    failures = _run_branches(engine, run, steps, shared, limit)
    if failures:
        raise _first_failure(engine, [error for _, error in sorted(failures, key=lambda pair: pair[0])])
    shared.hand_out()
    return {"completed": len(steps), "failed": 0}


def simulate(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    steps, _ = _branches(engine, run, config)
    shared = run.child()
    for i, inner in enumerate(steps):
        engine.run_step(inner, run.frame, shared, run.at("branch", i))
    shared.hand_out()
    return {"completed": len(steps), "failed": 0}


def _branches(engine: Engine, run: StepRun, config: dict[str, Any] | None) -> tuple[tuple[ir.Step, ...], Any]:
    """The branches, and how many may run at once (None: all of them)."""
    from catalyst_dsl.ir import nodes as ir

    body = run.step.config.get("steps")
    steps = body.steps if isinstance(body, ir.StepsV) else ()
    limit = engine.entry(run, "maxConcurrency", config)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit < 1):
        import json  # here: only a run's error needs it, and a check must not load it

        given = json.dumps(limit, default=str)  # as the playbook wrote it, not Python's spelling
        raise engine.error("InvalidConfig", f"maxConcurrency must be a number of at least 1, got {given}")
    return steps, limit


def _run_branches(
    engine: Engine, run: StepRun, steps: tuple[ir.Step, ...], shared: Any, limit: Any
) -> list[tuple[int, BaseException]]:
    """Each branch in a thread of its own; what each that failed raised."""
    from concurrent.futures import ThreadPoolExecutor, wait  # only parallel groups need threads

    failures: list[tuple[int, BaseException]] = []
    running = _Running()

    def branch(i: int, inner: ir.Step) -> None:
        running.begin()
        try:
            engine.run_step(inner, run.frame, shared, run.at("branch", i))
        except BaseException as error:  # collected and re-raised by the caller, in the run's thread
            failures.append((i, error))
        finally:
            running.end()

    pool = ThreadPoolExecutor(max_workers=int(limit or len(steps) or 1))
    try:
        futures = [pool.submit(contextvars.copy_context().run, branch, i, s) for i, s in enumerate(steps)]
        while wait(futures, timeout=WAIT_SECONDS).not_done:
            pass
    except BaseException:
        # Ctrl-C reaches only this thread: stop the branches, then stop the run.
        running.stop(engine)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return failures


#: The longest the run's thread waits for the branches at a time. Ctrl-C or SIGTERM handed
#: by the kernel to another thread (a branch's, one reading a program's output) runs its
#: handler only once the run's thread runs Python again: a wait without end would keep it
#: pending until every branch has ended.
WAIT_SECONDS = 0.1
#: How long a stopping group waits for its branches to end before it stops their programs again.
STOP_AGAIN_SECONDS = 0.05


class _Running:
    """The branches of a group running now. They count themselves, in their own threads,
    where Python never runs a signal's handler: the count holds wherever Ctrl-C interrupts
    the run's thread, even while it is still handing the branches to the pool."""

    def __init__(self) -> None:
        import threading

        self.changed = threading.Condition()
        self.count = 0

    def begin(self) -> None:
        with self.changed:
            self.count += 1

    def end(self) -> None:
        with self.changed:
            self.count -= 1
            self.changed.notify_all()

    def stop(self, engine: Engine) -> None:
        """Let no branch start another step, and stop the branches' programs until every
        branch has ended. Once is not enough: a branch may be past the engine's check and
        starting its program as the stop comes, and that program, not running yet when the
        others were stopped, would otherwise run to its end while the group waits for it. A
        branch that has not counted itself yet meets the engine's check and starts nothing."""
        while True:
            engine.stop_everything()
            with self.changed:
                if not self.count:
                    return
                self.changed.wait(timeout=STOP_AGAIN_SECONDS)


def _first_failure(engine: Engine, errors: list[BaseException]) -> BaseException:
    """What the group raises: a pause or a cancel first (the run must stop cleanly), else
    the first branch's failure, whichever finished first, with the others' beside it."""
    for kind in engine.STOPS:
        for error in errors:
            if isinstance(error, kind):
                return error
    first, *others = errors
    if isinstance(first, engine.StepError):
        first.also = tuple(e for e in others if isinstance(e, engine.StepError))
    return first


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The steps walked in one scope; every branch ends before what follows, so all they
    define is defined after the group."""
    from catalyst_dsl.ir import nodes as ir

    steps = step.config.get("steps")
    branches = checker.inner(scope)
    if isinstance(steps, ir.StepsV):
        checker.walk(steps.steps, branches)
    checker.flow_out(scope, [(branches, None, None)], step.span)
    return checker.catalog.get(step.action).result
