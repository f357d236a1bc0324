"""`Engine`: runs a playbook's steps, each from its condition to its result.

A step's life: restored from the journal when a resumed run did it already; its
condition; its recovery when it was in flight as the run stopped; its gate before; the
approval its effects need; its attempts (attempts.py) between its checks; the pauses
after it (pauses.py). The control actions call back the methods under "for the control
actions" (actions/control/protocol.py says which).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from catalyst_dsl.actions.catalog import ActionSpec, Catalog
from catalyst_dsl.actions.control import CONTROL
from catalyst_dsl.actions.control.return_ import Return
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir.language import BINDINGS
from catalyst_dsl.runtime.engine import paths, step_checks
from catalyst_dsl.runtime.engine.attempts import Attempts
from catalyst_dsl.runtime.engine.calls import Calls, script_action
from catalyst_dsl.runtime.engine.frames import Frame, Hooks, check_outputs, granted_paths
from catalyst_dsl.runtime.engine.journal import RERUN_ON_RESUME, Journal
from catalyst_dsl.runtime.engine.pauses import Pauses
from catalyst_dsl.runtime.engine.signals import STOPS, Cancelled, RetryStep, check_deadline
from catalyst_dsl.runtime.engine.step_run import StepRun, visible
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.events import Events
from catalyst_dsl.runtime.effects.grants import Grants
from catalyst_dsl.runtime.values.inputs import resolve_inputs
from catalyst_dsl.runtime.values.jsvalues import UNKNOWN, a_kind, as_json_data, contains_unknown, truthy
from catalyst_dsl.runtime.engine.scope import RunEnv, Scope

#: The actions whose result is an AI's answer (runtime/actions/ai.py).
AI_ACTIONS = frozenset({"ai-prompt", "markdown"})

#: An argument not given: a value the callee evaluates itself (None and UNKNOWN are values).
_UNEVALUATED = object()


class Engine(Calls, Attempts, Pauses):
    #: What the control actions raise, compare and catch (actions/control/protocol.py).
    StepError = StepError
    UNKNOWN = UNKNOWN
    STOPS = STOPS

    def __init__(
        self,
        *,
        run_id: str,
        catalog: Catalog,
        plugins: Callable[[str], Any],
        events: Events,
        hooks: Hooks,
        mode: str,
        scratch: Path,
        max_depth: int,
        replay: dict[str, dict] | None = None,
        settings: Any = None,
        recovering: str | None = None,
    ) -> None:
        self.run_id = run_id
        self.catalog = catalog
        #: The catalog's answer for each action met (a step asks several times; a function's
        #: name, which no catalog declares, would ask the installed plugins each time).
        self._specs: dict[str, ActionSpec | None] = {}
        self.plugins = plugins
        self.events = events
        self.hooks = hooks
        self.mode = mode
        self.scratch = scratch
        self.max_depth = max_depth
        self._asking = threading.Lock()
        self._lock = threading.RLock()
        self.journal = Journal(hooks, replay or {}, self._lock)
        #: path -> journal entry of a run being resumed.
        self.replay = self.journal.replay
        #: Set when the run is being interrupted: no step starts any more.
        self._stopping = False
        #: The project's settings, for actions that need them (GitHub URL, protected branches…).
        self.settings = settings
        #: The path of the step that was in flight when the resumed run stopped: recovered
        #: without running again when it has `ensures:` and they hold (see _recovered).
        self.recovering = recovering
        #: (scope, frame, the RunEnv made for them): see `env`.
        self._last_env: tuple[Any, Any, Any] = (None, None, None)

    # -- frames ------------------------------------------------------------------------------------------

    def run_playbook(self, frame: Frame, prefix: str = "") -> dict[str, Any]:
        """Run a playbook's steps, then `catch` on failure and always `finally`; its outputs."""
        scope = Scope(None, {BINDINGS: {}})  # what steps merge in with `bindings:`, for this playbook alone
        outputs: dict[str, Any] = {}
        final = lambda: self.run_steps(frame.playbook.finally_, frame, scope, paths.join(prefix, "finally"))  # noqa: E731
        try:
            try:
                self.run_steps(frame.playbook.steps, frame, scope, paths.join(prefix, "steps"))
            except Return as done:
                outputs = done.values
                self._steps_ended(frame, scope, prefix)  # a step before the `return` may have failed
            except StepError as error:
                handled = self._top_catch(frame, scope, prefix, error)
                if handled is None:
                    raise
                outputs = handled
            else:
                self._steps_ended(frame, scope, prefix)
        except StepError:
            # `finally` runs when the playbook ends, failed or not; a pause, a cancel or
            # Ctrl-C is not an end (the run resumes later), so it does not run then.
            final()
            raise
        final()
        return outputs

    def _steps_ended(self, frame: Frame, scope: Scope, prefix: str) -> None:
        """The playbook's steps ended without a failure: a run has nothing more to do (a
        what-if, which cannot know that, shows what `catch` would do)."""

    def _top_catch(self, frame: Frame, scope: Scope, prefix: str, error: StepError) -> dict[str, Any] | None:
        for k, clause in enumerate(frame.playbook.catch):
            if clause.code == "default" or error.matches(clause.code):
                self.catching(paths.join(prefix, "catch"), error, f"playbook {frame.playbook.name}")
                self.name_part(paths.join(prefix, "catch", k), clause.code)
                handler = Scope(scope, {"$error": error.as_value()})
                try:
                    self.run_steps(clause.steps, frame, handler, paths.join(prefix, "catch", k))
                except Return as done:
                    return done.values
                return {}
        return None

    def run_steps(self, steps: Sequence[ir.Step], frame: Frame, scope: Scope, prefix: str) -> None:
        for i, step in enumerate(steps):
            self.run_step(step, frame, scope, f"{prefix}/{i}")

    # -- one step -------------------------------------------------------------------------------------------

    def step_id(self, step: ir.Step) -> str:
        if step.name:
            return step.name
        line = step.span.line if step.span is not None else "?"
        return f"{step.action}@{line}"

    def env(self, frame: Frame, scope: Scope) -> RunEnv:
        """What the step's templates can reach. A step asks several times (its condition,
        config, checks, bindings) with the same scope: the last one made is given again
        while the scope and frame are the same objects (a RunEnv holds nothing else that
        changes; one tuple, read and replaced whole, so threads never see half of one)."""
        last = self._last_env
        if last[0] is scope and last[1] is frame:
            return last[2]
        env = RunEnv(scope, frame.inputs, self.scratch, self._log_entries, frame.gateway)
        self._last_env = (scope, frame, env)
        return env

    def _log_entries(self) -> list[dict]:
        return self.events.entries

    def run_step(self, step: ir.Step, frame: Frame, scope: Scope, path: str) -> None:
        if self._stopping:
            raise KeyboardInterrupt
        if self.hooks.cancel_requested():
            raise Cancelled()
        record = self.replay.get(path)
        caught, caught_at = self.journal.caught.get(path, (None, -1))
        if (
            record is not None
            and record["status"] in ("completed", "skipped", "failed")
            and step.action not in RERUN_ON_RESUME
            and step.action not in CONTROL
        ):
            self._restore(StepRun(step, frame, scope, path, self.step_id(step)), record, caught, caught_at)
            return
        if caught is not None and record is None:
            raise caught
        run = StepRun(step, frame, scope, path, self.step_id(step))
        if record is None and self._inquired(run):
            return
        # `retry`: the step runs again below (the answer counts once: a new failure asks anew).
        check_deadline()
        self._perform(run)

    def _restore(self, run: StepRun, record: dict, caught: StepError | None, caught_at: int) -> None:
        """Done before the run stopped: restore what it left, never do it twice."""
        step, status = run.step, record["status"]
        if step.name and status != "skipped":
            run.scope.define(step.name, visible(step, record.get("result")))
        if step.action == "script" and status == "completed":
            script_action().apply_set(run.scope.assign, record.get("result"))
        if status == "completed":
            self._bind(run, record.get("result"))  # the bindings are rebuilt from the journal
        if caught is not None and caught_at > record.get("seq", 0):
            raise caught  # it failed after it completed (a review asked for changes), and a catch took that
        if status != "skipped":
            self._pauses_after(run, record.get("result") if status == "completed" else None)

    def _inquired(self, run: StepRun) -> bool:
        """Whether the step failed before the run paused, and a reviewer approved going on
        past it (then it is done) or answered `abort` (Cancelled)."""
        inquiry = self.hooks.approval_for(run.at("inquire"), roles=list(run.frame.playbook.reviewers.required))
        chosen = (inquiry.get("selected") or "continue") if inquiry is not None else None
        if chosen == "abort":
            raise Cancelled(str(inquiry.get("by") or "an approver"), f"{run.label}: answered abort after its failure")
        if chosen != "continue":
            return False
        step = run.step
        if step.name:
            run.scope.define(step.name, None)
        self.journal.step(run, "failed", 1, time.monotonic(), None, "failed; approved to continue past it")
        self.events.step_finished(  # recorded, then shown
            run.label, step.action, "continued", 0.0, run.frame.depth, "failure accepted by approval"
        )
        return True

    def _perform(self, run: StepRun) -> None:
        """The step, once it is to run: its condition, its gate before, its approval, its attempts."""
        step = run.step
        if step.condition is not None and not self._guarded(run, lambda: self._condition_holds(run)):
            return
        if run.path == self.recovering and step.ensures is not None and step.ensures.recovers and self._recovered(run):
            return
        if step.gate is not None and step.gate.when == "before":
            # Nobody is asked to let a step run whose `requires:` do not hold yet (the
            # attempt checks them again: the answer may come much later).
            if step.requires is not None and self._guarded(run, lambda: self._requires(run)) is False:
                return
            if not self._gate_before(run):
                return
        if self._guarded(run, lambda: self._approve_effects(run)) is False:
            return  # refused or failing, and its error policy went on past the step
        while True:
            try:
                result = self._attempts(run)
                break
            except RetryStep:
                continue  # answered `retry` at a terminal after the step failed
        self._pauses_after(run, result)

    def _condition_holds(self, run: StepRun, value: Any = _UNEVALUATED) -> bool:
        """Whether the step's condition holds (else the step is skipped); `value`: the
        condition's value, when the caller evaluated it already."""
        env = self.env(run.frame, run.scope)
        if value is _UNEVALUATED:
            value = self._value(run.step.condition, env)
        if value is UNKNOWN:
            return True  # only in a what-if: the step is simulated as one that may run
        if truthy(value):
            return True
        self._skipped(run, self._explain_false(run.step.condition, env))
        return False

    def _skipped(self, run: StepRun, reason: str) -> None:
        self.journal.step(run, "skipped", 0, time.monotonic(), None, reason)  # recorded, then shown
        self.events.step_skipped(run.label, run.step.action, reason, run.frame.depth)

    def _checked(self, run: StepRun) -> Any:
        """One attempt: the step between its checks, `requires:` before and `ensures:` after,
        so a retry runs the checks again with the step and a failed check is the step's;
        then its `bindings:`, merged only when all passed."""
        self._requires(run)
        result = self._execute(run)
        step = run.step
        step_checks.enforce(step.ensures, self.env(run.frame, run.with_result(result)), "ensures", step.timeout)
        self._bind(run, result)  # a binding that cannot be computed fails the attempt
        return result

    def _text_answer_cause(self, run: StepRun) -> tuple[str, str]:
        from catalyst_dsl.runtime.actions.ai import text_answer_cause

        try:
            adapter = self.hooks.adapter(self.config(run).get("provider"))
        except Exception:  # noqa: BLE001 - the step got an answer from it: it was usable then
            adapter = None
        return text_answer_cause(adapter)

    def _requires(self, run: StepRun) -> None:
        """The step's `requires:` hold, or it fails (a step without them passes)."""
        step_checks.enforce(run.step.requires, self.env(run.frame, run.scope), "requires", run.step.timeout)

    def _bind(self, run: StepRun, result: Any) -> None:
        """Merge the step's `bindings:` into the playbook's `bindings` object, once it completed."""
        if run.step.bindings is None:
            return
        values = self._value(run.step.bindings, self.env(run.frame, run.with_result(result)))
        if not isinstance(values, dict) and not contains_unknown(values):
            message = f"the step's bindings must be an object to merge, but the value is {a_kind(values)}"
            guidance = "give `bindings:` a mapping of names, or an expression whose value is an object"
            if isinstance(result, str) and run.step.action in AI_ACTIONS:
                # The answer was text: who gave it is the cause, not the playbook's bindings.
                cause, guidance = self._text_answer_cause(run)
                message = f"{message}: the AI's answer is text, not a JSON object; {cause}"
            raise StepError("InvalidBindings", message, guidance=guidance)
        if values is UNKNOWN:
            # A what-if does not know which keys an object it cannot compute would bring.
            run.scope.assign(BINDINGS, UNKNOWN)
            return
        target = run.scope.lookup(BINDINGS)
        if isinstance(target, dict) and isinstance(values, dict):
            with self._lock:
                target.update(values)

    def _recovered(self, run: StepRun) -> bool:
        """The step was in flight when the run stopped: when its `ensures:` hold now, what it
        was doing got done, so it is completed without running again (with no result). A
        step without `ensures:` always runs again: nothing says it finished."""
        self.recovering = None
        step, sid, depth = run.step, run.label, run.frame.depth
        started = time.monotonic()
        try:
            failed = step_checks.failing(step.ensures, self.env(run.frame, run.with_result(None)), step.timeout)
        except StepError as error:
            self.events.message(
                "warning",
                f"{sid} was interrupted and its ensures cannot be checked ({error.code}: {error.message}); "
                "it runs again",
                sid,
                depth=depth,
            )
            return False
        if failed is not None:
            message = f"{sid} was interrupted and its ensures do not hold ({failed.shown}); it runs again"
            self.events.message("info", message, sid, depth=depth)
            return False
        if step.name:
            run.scope.define(step.name, None)
        self._bind(run, None)
        reason = "interrupted; its ensures held on resume, so it was not run again"
        self.events.step_finished(sid, step.action, "completed", 0.0, depth, reason)
        self.journal.step(run, "completed", 1, started, None, reason)
        return True

    # -- for the control actions (actions/control/protocol.py) ---------------------------------------------

    @staticmethod
    def truthy(value: Any) -> bool:
        return truthy(value)

    def entry(self, run: StepRun, key: str, config: dict[str, Any] | None) -> Any:
        """The value of the step's config entry `key`: from `config`, its entries rendered
        already, else rendered now (None when the step has no such entry)."""
        if config is not None:
            return config.get(key)
        return self._value(run.step.config.get(key), self.env(run.frame, run.scope))

    def value(self, run: StepRun, value: ir.Value) -> Any:
        return self._value(value, self.env(run.frame, run.scope))

    def config(self, run: StepRun) -> dict[str, Any]:
        return self._config(run.step, self.env(run.frame, run.scope))

    @staticmethod
    def error(code: str, message: str, **details: Any) -> StepError:
        return StepError(code, message, **details)

    @staticmethod
    def scope(parent: Scope, values: dict[str, Any] | None = None) -> Scope:
        return Scope(parent, values)

    def catching(self, where: str, error: StepError, label: str) -> None:
        self.journal.catching(where, error, label)

    def name_part(self, path: str, name: str) -> None:
        """The steps at `path` are a catch clause or a route branch named `name` (its code,
        its label or its `when`): a plan addresses them by it; a run has no use for it."""

    def same_item(self, path: str, index: int, item: Any) -> None:
        self.journal.same_item(self, path, index, item)

    def bookkeep(self, path: str, action: str, result: dict, reason: str | None, label: str) -> None:
        self.journal.bookkeep(path, action, result, reason, label=label)

    def masked(self, value: Any) -> Any:
        return self.hooks.mask(as_json_data(value))

    def stop_everything(self) -> None:
        """Ctrl-C during a parallel group: no step starts any more, and the programs running stop."""
        self._stopping = True
        # Programs are started only through runtime/effects/process.py: not imported, none runs
        # (and a second Ctrl-C cannot land in an import here). Half imported (a branch is
        # importing it as the stop comes), none runs either: other threads wait for the whole
        # module, and the parallel group stops again until its branches have ended.
        stop = getattr(sys.modules.get("catalyst_dsl.runtime.effects.process"), "stop_all_processes", None)
        if stop is not None:
            stop()

    def function_inputs(self, name: str, declared: ir.Value | None, given: dict[str, Any]) -> dict[str, Any]:
        """A function call's inputs, checked against what the function declares."""
        decls = declared.inputs if isinstance(declared, ir.InputsV) else ()
        values, problems = resolve_inputs(decls, given, from_text=False)
        if problems:
            raise StepError("InvalidInputs", f"{name}: " + "; ".join(p.message for p in problems))
        return values

    def call_playbook(self, run: StepRun, config: dict[str, Any]) -> Any:
        """A `playbook` step's call: the playbook loaded, its inputs checked, run in a frame
        of its own with its own grants; its outputs, checked against what it declares."""
        frame = run.frame
        file, child = self.hooks.load_playbook(frame, run.step, str(config.get("name")))
        given = dict(config.get("inputs") or {})
        unknown = {k for k, v in given.items() if contains_unknown(v)}  # only in a what-if
        values, problems = resolve_inputs(
            child.inputs, {k: v for k, v in given.items() if k not in unknown}, from_text=False
        )
        problems = [p for p in problems if p.input not in unknown]
        values.update({k: UNKNOWN for k in unknown})
        if not problems:
            # Scripts last, as when a run starts: only values the other rules let through.
            problems = self.hooks.input_scripts(child, {k: v for k, v in values.items() if k not in unknown})
        if problems:
            raise StepError(
                "InvalidInputs",
                f"{child.name}: " + "; ".join(p.message for p in problems),
                guidance="pass the inputs the called playbook declares",
            )
        inherit = bool(config.get("inheritPermissions"))
        grants = Grants.of(child.name, granted_paths(child, RunEnv(Scope(), values, self.scratch, lambda: [])))
        child_frame = Frame(child, file, values, frame.gateway.child(grants, inherit), frame.depth + 1)
        outputs = self.run_playbook(child_frame, run.at("call"))
        check_outputs(child, outputs)
        return outputs
