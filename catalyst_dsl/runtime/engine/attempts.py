"""A step's attempts: its retries, its timeout over the steps it runs, and its error
policy once it failed for good (stop, go on, suspend, or ask a person: Inquire).

`Attempts` is a part of the Engine (engine.py), kept apart for its size.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

from catalyst_dsl.actions.catalog import Effect
from catalyst_dsl.actions.control import CONTROL, names_result
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.engine import paths
from catalyst_dsl.runtime.engine.frames import Frame
from catalyst_dsl.runtime.engine.signals import DEADLINE, Cancelled, Paused, RetryStep
from catalyst_dsl.runtime.engine.step_run import StepRun, visible
from catalyst_dsl.runtime.errors import StepError

#: First retry waits this long; each further one twice as long (docs/running.md, Errors, retries, timeouts).
RETRY_BASE_SECONDS = float(os.environ.get("CATALYST_RETRY_BASE_SECONDS", "0.5"))
RETRY_MAX_SECONDS = 30.0

#: The answers to an Inquire (a failure a person must decide about): go on past the
#: failed step, run it again, or cancel the run.
INQUIRE_OPTIONS = [
    {"key": "continue", "label": "go on past the failed step"},
    {"key": "retry", "label": "run the step again"},
    {"key": "abort", "label": "cancel the run", "cancel": True},
]


class Attempts:
    def _attempts(self, run: StepRun) -> Any:
        """Run the step with its retries; its result, or None when it failed (the policy decided)."""
        step, frame, sid = run.step, run.frame, run.label
        control = CONTROL.get(step.action)
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            if control is None and self._effect(step.action) not in (Effect.PURE, Effect.READ):
                # Written ahead: a crash now re-runs this step, or recovers it by its `ensures:`.
                recovers = step.ensures is not None and step.ensures.recovers
                self.hooks.set_in_flight(run.path, recovers)
            self.events.step_started(sid, step.action, frame.depth)
            deadline = None
            if step.timeout is not None and (control is not None or step.action in frame.functions):
                # A step that runs other steps: they must all finish within its timeout.
                deadline = DEADLINE.set(min(DEADLINE.get(), time.monotonic() + step.timeout))
            try:
                result = self._checked(run)
            except StepError as error:
                if deadline is not None and error.code == "StepTimeout" and time.monotonic() >= DEADLINE.get():
                    error = StepError("StepTimeout", f"{sid} took longer than its timeout of {step.timeout:g}s")
                if self._retried(run, error, attempt, started):
                    continue
                return None
            finally:
                if deadline is not None:
                    DEADLINE.reset(deadline)
            seconds = time.monotonic() - started
            if step.name and names_result(step.action):
                run.scope.define(step.name, visible(step, result))
            # Recorded first, shown after: a step is shown done only once its record is
            # durable, so a save that fails (a full disk) never leaves a step shown done that
            # a resume would run again.
            self.journal.step(run, "completed", attempt, started, result, None)
            if control is None or control.REPORTS_FINISH:
                self.events.step_finished(sid, step.action, "completed", seconds, frame.depth)
            return result

    def _retried(self, run: StepRun, error: StepError, attempt: int, started: float) -> bool:
        """A failed attempt: True when another follows (after its wait), else its policy applied."""
        sid = run.label
        error.step = error.step or run.sid
        seconds = time.monotonic() - started
        policy = self._policy(run.step, run.frame, error)
        self.hooks.record_failure(error, run.sid, attempt, seconds, run.label)
        if attempt <= policy.retry_count:
            delay = min(RETRY_BASE_SECONDS * 2 ** (attempt - 1), RETRY_MAX_SECONDS)
            self.events.message(
                "warning",
                f"{sid} failed ({error.code}: {error.message}); "
                f"attempt {attempt + 1} of {policy.retry_count + 1} in {delay:g}s",
                sid,
                depth=run.frame.depth,
            )
            time.sleep(delay)
            return True
        self._apply_policy(policy.action, error, run, attempt, started, policy.message)
        return False

    def _guarded(self, run: StepRun, work: Callable[[], Any]) -> Any:
        """Work around a step (its condition, its checkpoint flag) whose errors are the step's:
        they go through the step's error policy, without retries."""
        while True:
            started = time.monotonic()
            try:
                return work()
            except StepError as error:
                error.step = error.step or run.sid
                self.hooks.record_failure(error, run.sid, 1, time.monotonic() - started, run.label)
                policy = self._policy(run.step, run.frame, error)
                try:
                    self._apply_policy(policy.action, error, run, 1, started, policy.message)
                except RetryStep:
                    continue  # answered `retry` at a terminal: try it again
                return False

    def _apply_policy(
        self, action: str, error: StepError, run: StepRun, attempt: int, started: float, message: str | None = None
    ) -> None:
        seconds = time.monotonic() - started
        detail = f"{error.code}: {error.message}"
        if message:
            # The policy's own words: the fix of a failure that stops the run, else beside it.
            if action in ("Stop", "SilentlyContinue"):
                error.guidance = self.hooks.mask(message)
            else:
                detail = f"{detail} ({self.hooks.mask(message)})"
        if action == "Inquire":
            self._inquire(run, detail, seconds)
            action = "Continue"
        step, sid, depth = run.step, run.label, run.frame.depth
        if action == "Suspend":
            self.events.step_finished(sid, step.action, "failed", seconds, depth, detail)
            raise Paused(
                run.path,
                sid,
                "suspend",
                f"{sid} failed ({detail}); the run is suspended, resume runs the step again",
                [],
                [],
            )
        if action in ("Continue", "SilentlyContinue", "Ignore"):
            # The run goes on; a process's result (with its exitCode) stays readable.
            result = error.metadata if isinstance(error.metadata, dict) else None
            if step.name:
                run.scope.define(step.name, result)
            status = "completed" if action == "Ignore" else "failed"
            if status == "completed":
                self._bind(run, result)  # as a resume would, from the journal
            self.journal.step(run, status, attempt, started, result, detail)  # recorded, then shown
            if action == "Continue":
                self.events.step_finished(
                    sid, step.action, "continued", seconds, depth, f"{detail} (errorPolicy Continue)"
                )
            return
        # Not journaled: the step did not complete, so resuming a failed run runs it again
        # (unless a `catch` handles it: see Journal.catching).
        self.events.step_finished(sid, step.action, "failed", seconds, depth, detail)
        if error.path is None:
            error.path, error.fingerprint = run.path, paths.fingerprint(step)
        raise error

    def _inquire(self, run: StepRun, detail: str, seconds: float) -> None:
        """Only a person accepts a failure: autonomous mode pauses here too, since going on
        by itself would turn the failure into a success nobody decided. Returns when they
        answered `continue` at the terminal."""
        sid, frame = run.label, run.frame
        inquiry = run.at("inquire")
        answer = None
        who = (
            self.hooks.terminal_approver(list(frame.playbook.reviewers.required))
            if self.hooks.ask is not None
            else None
        )
        if who is not None:
            with self._asking:
                answer = self.hooks.ask(
                    self.hooks.mask(f"{sid} failed ({detail}). What now?"), INQUIRE_OPTIONS, "continue"
                )
        if answer is None:
            # On resume, an approval of this inquiry continues past the step without running
            # it again, runs it again (`retry`) or cancels the run (`abort`): see run_step.
            self.events.step_finished(sid, run.step.action, "failed", seconds, frame.depth, detail)
            raise Paused(
                inquiry,
                sid,
                "inquire",
                f"{sid} failed ({detail}); approve to continue past it, or choose retry or abort",
                frame.playbook.reviewers.required,
                INQUIRE_OPTIONS,
                person=True,
            )
        chosen, text = answer
        self.hooks.approve(
            inquiry, "terminal", who[1], who[0], text or f"answered {chosen} after a failure", True, chosen, step=sid
        )
        if chosen == "abort":
            raise Cancelled(who[0], f"{sid}: answered abort after its failure")
        if chosen == "retry":
            self.events.message("info", f"{sid} runs again: answered retry after its failure", sid, depth=frame.depth)
            raise RetryStep()

    def _policy(self, step: ir.Step, frame: Frame, error: StepError) -> ir.PolicyAction:
        for policy in (step.error_policy, frame.playbook.error_policy):
            if policy is None:
                continue
            for name, action in policy.by_code:
                if error.matches(name):
                    return action
            if policy.default is not None:
                return policy.default
        return ir.PolicyAction("Stop")
