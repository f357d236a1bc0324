"""The interpreter: runs a playbook's IR step by step, exactly as written.

Steps run in definition order; only a step's own `condition` skips it. Each step's
outcome goes into the run's journal and the snapshot is saved after every step (and
before every effect and checkpoint), so a run killed at any instant resumes where it
stopped: completed steps are not run again, their recorded results are restored, and
the step that was in flight runs again. Pure and read steps (`var`, `file-read`…) are
re-run instead of restored, which keeps file contents out of the snapshot.

Control actions live here because they run other steps; every other action is an
implementation in `runtime/actions` (or a plugin) that acts only through the gateway.
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from catalyst_dsl import records
from catalyst_dsl.actions.catalog import ActionSpec, Catalog, Effect, WhatIf
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.paths.protocols import SCRATCH
from catalyst_dsl.runtime import paths
from catalyst_dsl.runtime.actions import IMPLEMENTATIONS
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.approval_policy import ApprovalPolicy, Command, policy_of, step_commands
from catalyst_dsl.runtime.config_check import check_config
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.events import Events
from catalyst_dsl.runtime.effects.gateway import EffectsGateway
from catalyst_dsl.runtime.effects.grants import Grants
from catalyst_dsl.runtime.values.jsvalues import UNKNOWN, a_kind, as_json_data, contains_unknown, to_text, truthy
from catalyst_dsl.runtime.planning import PlanRecorder
from catalyst_dsl.runtime.scope import RunEnv, Scope
from catalyst_dsl.runtime import step_checks
from catalyst_dsl.runtime.whatif import EFFECTS, Unknowable, record

#: Actions re-run on resume instead of restored: cheap, no effect, and their results
#: may hold file contents, which the snapshot never stores.
RERUN_ON_RESUME = frozenset({"var", "file-read", "file-exists", "file-list", "json-read", "function"})
#: An argument not given: a value the callee evaluates itself (None and UNKNOWN are values).
_UNEVALUATED = object()
CONTROL = frozenset(
    {"if", "for-each", "try", "parallel", "playbook", "return", "throw", "function", "var", "retry-block"}
)
#: The pause before a step whose effects need an approval (see Interpreter._approve_effects).
APPROVE_EFFECTS = "approve-effects"
#: The journal entry of a failure a `catch` handled (see Interpreter._catching).
CAUGHT = "catch"
#: The journal entry naming the item a loop iteration ran for (see Interpreter._same_item).
LOOP_ITEM = "for-each-item"
#: The pause after a step whose result asks for a review (see _review_wanted).
REVIEW = "review"
#: The journal entry of a failed attempt of a `retry-block` (see Interpreter._do_retry_block).
ATTEMPT_FAILED = "retry-block-attempt"

#: The most attempts a `retry-block` may have (the checker says so too: C613).
MAX_BLOCK_ATTEMPTS = 10
#: The object steps merge values into with `bindings:`, readable as `{{ bindings.x }}`.
BINDINGS = "bindings"
#: The name a `retry-block`'s steps read the failure that started their attempt by.
LAST_ERROR = "__lastError"

#: First retry waits this long; each further one twice as long (LANGUAGE.md section 8).
RETRY_BASE_SECONDS = float(os.environ.get("CATALYST_RETRY_BASE_SECONDS", "0.5"))
RETRY_MAX_SECONDS = 30.0


#: When the innermost step with a timeout that runs other steps must have finished
#: (a monotonic time); per thread of a `parallel` group through the context it copies.
DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("catalyst_deadline", default=float("inf"))


class Paused(Exception):
    """The run must wait for a person: unwinds to the top, where the snapshot is saved."""

    def __init__(
        self,
        path: str,
        step_id: str,
        kind: str,
        message: str,
        roles: Sequence[str],
        options: list,
        subject: str | None = None,
        person: bool = False,
    ) -> None:
        super().__init__(message)
        self.path, self.step_id, self.kind, self.message, self.roles, self.options = (
            path,
            step_id,
            kind,
            message,
            list(roles),
            options,
        )
        self.subject = subject
        #: Only a person releases it (an approval policy, an Inquire): autonomous mode does not.
        self.person = person


class Cancelled(Exception):
    """The run ends `cancelled`: `catalyst cancel` asked this live run to stop (no `by`: the
    request file says who), or a person answered a checkpoint with an option that cancels."""

    def __init__(self, by: str | None = None, reason: str | None = None) -> None:
        super().__init__(reason or "cancelled")
        self.by, self.reason = by, reason


class _Return(Exception):
    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__("return")
        self.values = values


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
    """What the interpreter needs from around it, supplied by the session (`runtime/session.py`)."""

    #: record_step(StepRecord-like dict[, save=True]) then save, unless told not to; save() alone.
    record_step: Callable[..., None]
    save: Callable[[], None]
    set_in_flight: Callable[[str | None], None]
    record_failure: Callable[[StepError, str, int, float], None]
    #: approval_for(path[, subject][, roles=]) -> approval dict that released the pause at path
    #: (for that subject, when given), or None; ChangesRequested when a reviewer held it back.
    #: `roles`: those the pause requires, which decide whether the approval must be signed.
    approval_for: Callable[..., dict | None]
    #: approve(path, via, role, by, comment, released, selected[, subject])
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


class Interpreter:
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
        plan: "PlanRecorder | None" = None,
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
        #: path -> journal entry of a run being resumed.
        self.replay = replay or {}
        self._asking = threading.Lock()
        #: Failures a `catch` handled before the run stopped, by the path of the step that
        #: failed: on resume that step fails the same way again instead of running, so the
        #: same handler picks up where it paused and nothing the body did runs twice.
        self._caught: dict[str, tuple[StepError, int]] = {}  # failing path -> (error, journal position)
        for entry in self.replay.values():
            if entry.get("action") == CAUGHT:
                for kept in caught_errors(entry.get("result")):
                    self._caught[kept["path"]] = (StepError.from_record(kept), entry.get("seq", 0))
        self._lock = threading.RLock()
        #: The prompt each AI step sent, by its journal path, until the step is journaled.
        self._prompts: dict[str, str] = {}
        #: Set when the run is being interrupted: no step starts any more.
        self._stopping = False
        #: A what-if: steps are simulated into this plan (runtime/planning.py).
        self.plan = plan
        #: The project's settings, for actions that need them (GitHub URL, protected branches…).
        self.settings = settings
        #: The path of the step that was in flight when the resumed run stopped: recovered
        #: without running again when it has `ensures:` and they hold (see _recovered).
        self.recovering = recovering
        # The evaluator, imported as a run starts rather than with this module (a check
        # imports it for its constants): not through a function-level import at each value
        # rendered (about 0.8 us each, several per step).
        from catalyst_dsl.runtime.values.evaluate import materialize

        self._materialize = materialize
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
            except _Return as done:
                outputs = done.values
            except StepError as error:
                handled = self._top_catch(frame, scope, prefix, error)
                if handled is None:
                    raise
                outputs = handled
        except StepError:
            # `finally` runs when the playbook ends, failed or not; a pause, a cancel or
            # Ctrl-C is not an end (the run resumes later), so it does not run then.
            final()
            raise
        final()
        return outputs

    def _top_catch(self, frame: Frame, scope: Scope, prefix: str, error: StepError) -> dict[str, Any] | None:
        for k, clause in enumerate(frame.playbook.catch):
            if clause.code == "default" or error.matches(clause.code):
                self._catching(paths.join(prefix, "catch"), error)
                handler = Scope(scope, {"$error": error.as_value()})
                try:
                    self.run_steps(clause.steps, frame, handler, paths.join(prefix, "catch", k))
                except _Return as done:
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
        caught, caught_at = self._caught.get(path, (None, -1))
        if (
            record is not None
            and record["status"] in ("completed", "skipped", "failed")
            and step.action not in RERUN_ON_RESUME
            and step.action not in CONTROL
        ):
            # Done before the run stopped: restore what it left, never do it twice.
            if step.name and record["status"] != "skipped":
                scope.define(step.name, _visible(step, record.get("result")))
            if step.action == "script" and record["status"] == "completed":
                _script_action().apply_set(scope.assign, record.get("result"))
            if record["status"] == "completed":
                self._bind(step, frame, scope, record.get("result"))  # the bindings are rebuilt from the journal
            if caught is not None and caught_at > record.get("seq", 0):
                raise caught  # it failed after it completed (a review asked for changes), and a catch took that
            if record["status"] != "skipped":
                self._pauses_after(
                    step, frame, scope, path, record.get("result") if record["status"] == "completed" else None
                )
            return
        if caught is not None and record is None:
            raise caught
        sid = self.step_id(step)
        # (a plan holds no approvals: Session.plan's hooks answer none, so it asks for none)
        inquiry = (
            self.hooks.approval_for(paths.join(path, "inquire"), roles=list(frame.playbook.reviewers.required))
            if record is None and self.plan is None
            else None
        )
        chosen = (inquiry.get("selected") or "continue") if inquiry is not None else None
        if chosen == "abort":
            raise Cancelled(str(inquiry.get("by") or "an approver"), f"{sid}: answered abort after its failure")
        if chosen == "continue":
            # It failed before the pause, and a reviewer approved going on past it.
            self.events.step_finished(sid, step.action, "continued", 0.0, frame.depth, "failure accepted by approval")
            if step.name:
                scope.define(step.name, None)
            self._journal(path, step, "failed", 1, time.monotonic(), None, "failed; approved to continue past it")
            return
        # `retry`: the step runs again below (the answer counts once: a new failure asks anew).
        self._check_deadline()
        if self.plan is not None:
            self._simulate(step, frame, scope, path, sid)
            return
        if step.condition is not None:
            holds = self._guarded(
                lambda: self._condition_holds(step, frame, scope, path, sid), step, frame, scope, path
            )
            if not holds:
                return
        if (
            path == self.recovering
            and step.ensures is not None
            and step.ensures.recovers
            and self._recovered(step, frame, scope, path, sid)
        ):
            return
        if step.gate is not None and step.gate.when == "before":
            # Nobody is asked to let a step run whose `requires:` do not hold yet (the
            # attempt checks them again: the answer may come much later).
            if (
                step.requires is not None
                and self._guarded(
                    lambda: step_checks.enforce(step.requires, self.env(frame, scope), "requires", step.timeout),
                    step,
                    frame,
                    scope,
                    path,
                )
                is False
            ):
                return
            if not self._gate_before(step, frame, scope, path, sid):
                return
        if (
            self._guarded(lambda: self._approve_effects(step, frame, scope, path, sid), step, frame, scope, path)
            is False
        ):
            return  # refused or failing, and its error policy went on past the step
        while True:
            try:
                result = self._attempts(step, frame, scope, path, sid)
                break
            except RetryStep:
                continue  # answered `retry` at a terminal after the step failed
        self._pauses_after(step, frame, scope, path, result)

    def _pauses_after(self, step: ir.Step, frame: Frame, scope: Scope, path: str, result: Any) -> None:
        """The pauses after a step: the review its result asks for (`waitForReview`), then
        its `checkpoint:` flag. Run again when a resume restores the step, where the
        approvals already given let them pass."""
        spec = self._spec(step.action)
        review = _review_wanted(result) if spec is not None and spec.pauses_for_review else None
        if review is not None:
            sid = self.step_id(step)
            message, url = review
            # The subject is what was opened: a review of it (a webhook finds the run by it) releases the pause.
            subject = self.hooks.mask(url) if url else None
            self._guarded(
                lambda: self.checkpoint(paths.join(path, REVIEW), sid, message, [], None, frame, subject),
                step,
                frame,
                scope,
                path,
            )
        if step.checkpoint:
            self._guarded(lambda: self._flag_checkpoint(step, frame, scope, path), step, frame, scope, path)
        if step.gate is not None and step.gate.when == "after":
            self._guarded(
                lambda: self._gate(step, step.gate, frame, scope, path, self.step_id(step)), step, frame, scope, path
            )

    # -- what-if -------------------------------------------------------------------------------------------

    def _simulate(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> None:
        """A step of a what-if: run what is safe, record what is not, never stop the plan."""
        maybe = False
        if step.condition is not None:
            try:
                value = self._value(step.condition, self.env(frame, scope))
                maybe = value is UNKNOWN
                if not maybe and not self._condition_holds(step, frame, scope, path, sid, value):
                    return
            except StepError as error:
                entry = self.plan.open(path, sid, step.action)
                entry["change"], entry["reason"] = "unknown", f"its condition would fail: {error.code}: {error.message}"
                return
        if maybe:
            with self.plan.conditional():
                self._simulate_entry(step, frame, scope, path, sid, maybe)
        else:
            self._simulate_entry(step, frame, scope, path, sid, maybe)

    def _simulate_entry(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str, maybe: bool) -> None:
        """`_simulate` once the step would run: its entry (with its approval and gates before
        it, its review and checkpoint flags after), its result defined and bound."""
        spec = self._spec(step.action)
        if step.gate is not None and step.gate.when == "before":
            self._plan_gate(step, step.gate, frame, scope, path, sid)
        self._plan_approval(step, frame, scope, path, sid)
        entry = self.plan.open(path, sid, step.action)
        if maybe:
            entry["reason"] = "runs only if its condition holds, which depends on a value the plan cannot know"
        effects: list[dict] = []
        token = EFFECTS.set(effects)
        result: Any = UNKNOWN
        try:
            if step.requires is not None:
                self._plan_checks(step.requires, "requires", frame, scope, sid, entry)
            if step.action in CONTROL or step.action in frame.functions:
                with self.plan.inside(entry):  # the steps it runs are filed in its entry
                    result = self._simulate_action(step, frame, scope, path, sid, entry)
            else:
                result = self._simulate_action(step, frame, scope, path, sid, entry)  # an action runs no steps
            if step.ensures is not None:
                unseen = (
                    f"{sid} itself, whose effects the plan cannot know,"
                    if entry["change"] == "unknown" and self._may_write_unseen(step, frame, scope)
                    else None
                )
                self._plan_checks(step.ensures, "ensures", frame, _with_result(step, scope, result), sid, entry, unseen)
        except Unknowable as unknown:
            entry["change"], entry["reason"] = "unknown", unknown.reason
        except StepError as error:
            if error.code == "PermissionDenied":
                entry["change"], entry["reason"] = "refused", error.message
                written = error.metadata.get("path") if isinstance(error.metadata, dict) else None
                entry["writes"].append({"path": written, "allowed": False, "refusal": error.message})
            else:
                entry["change"], entry["reason"] = "unknown", f"would fail: {error.code}: {error.message}"
        finally:
            EFFECTS.reset(token)
            self.plan.settle(entry, effects, "read" if spec is not None and spec.effect is Effect.READ else "no-op")
        if (
            self.plan.files_unknown is None
            and entry["change"] == "unknown"
            and self._may_write_unseen(step, frame, scope)
        ):
            self.plan.files_unknown = f"{sid} ({step.action}), whose effects the plan cannot know,"
        if step.name and step.action not in ("var", "function"):
            scope.define(step.name, result)
        try:
            self._bind(step, frame, scope, result)
        except StepError as error:
            entry["change"], entry["reason"] = "unknown", f"its bindings would fail: {error.code}: {error.message}"
        if spec is not None and spec.pauses_for_review and entry["config"].get("waitForReview") is True:
            flag = self.plan.open(paths.join(path, REVIEW), sid, "checkpoint")
            flag["change"] = "would-pause"
            flag["approval"] = {
                "message": "review the pull request before the run goes on",
                "roles": list(frame.playbook.reviewers.required),
            }
        if step.checkpoint:
            flag = self.plan.open(paths.join(path, "checkpoint"), sid, "checkpoint")
            message = step.checkpoint if isinstance(step.checkpoint, str) else f"review the result of {sid}"
            flag["change"] = "would-pause"
            flag["approval"] = {
                "message": self.plan.shown(self._safe_render(message, frame, scope)),
                "roles": list(frame.playbook.reviewers.required),
            }
        if step.gate is not None and step.gate.when == "after":
            self._plan_gate(step, step.gate, frame, scope, path, sid)

    def _may_write_unseen(self, step: ir.Step, frame: Frame, scope: Scope) -> bool:
        """Whether a step the plan could not simulate may change files it does not name:
        an AI given tools that change things, or a program that declares writes."""
        try:
            return self._unbounded_effects(step, frame, scope, frame.gateway) is not None
        except StepError:
            return False

    def _plan_gate(self, step: ir.Step, gate: ir.Gate, frame: Frame, scope: Scope, path: str, sid: str) -> None:
        """A gate's entry in a plan: it would pause (the plan goes on as if answered yes),
        or its approval rules would pass it by themselves."""
        flag = self.plan.open(paths.join(path, "before" if gate.when == "before" else "checkpoint"), sid, "checkpoint")
        policy = policy_of(gate.policy, self._project_rules())
        verdict = (
            policy.judge(policy.commands if policy.commands is not None else step_commands(step))
            if policy is not None
            else None
        )
        if verdict is not None and verdict.passes:
            flag["change"], flag["reason"] = "no-op", verdict.reason
            return
        written = (
            gate.message.text
            if isinstance(gate.message, ir.Tmpl)
            else gate.message.value
            if isinstance(gate.message, ir.Lit)
            else None
        )
        message = (
            self._safe_render(str(written), frame, scope)
            if written is not None
            else gate_message(gate, sid, self._shown_command(step, frame, scope))
        )
        flag["change"] = "would-pause"
        flag["approval"] = {
            "message": self.plan.shown(message),
            "roles": list(frame.playbook.reviewers.required),
            "options": list(gate.options),
        }
        if verdict is not None:
            flag["approval"]["policy"] = verdict.reason

    def _plan_checks(
        self,
        checks: ir.Checks | None,
        when: str,
        frame: Frame,
        scope: Scope,
        sid: str,
        entry: dict,
        unseen: str | None = None,
    ) -> None:
        """A step's checks in its plan entry, each with whether it holds now (`unknown` when
        that needs a program or a value the plan cannot know); a check that does not hold
        fails the step as in a run."""
        if checks is None:
            return
        env = self.env(frame, scope)
        outcomes = [step_checks.evaluate(check, env, simulated=True) for check in checks.checks]
        entry.setdefault("checks", []).extend(step_checks.plan_view([(when, o) for o in outcomes], self.plan.shown))
        failed = next((o for o in outcomes if o.holds is False), None)
        unseen = unseen or self.plan.files_unknown
        if failed is not None and unseen is not None and failed.check.kind != "expression":
            # It does not hold now, but may once that step has run: shown, not a failure.
            entry["reason"] = entry.get("reason") or f"a {when} check does not hold now; {unseen} may change that"
            return
        if failed is not None:
            raise StepError(
                failed.check.code or checks.code,
                f"a {when} check does not hold: {failed.shown}" + (f" ({failed.why})" if failed.why else ""),
            )

    def _plan_approval(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> None:
        """The approval a step's effects would wait for (a plan is of a manual run), as an
        entry just before the step's own."""
        try:
            what = self._unbounded_effects(step, frame, scope, frame.gateway)
        except StepError:
            return  # refused or failing: the step's own entry says so
        if what is not None:
            flag = self.plan.open(paths.join(path, APPROVE_EFFECTS), sid, "checkpoint")
            if _pre_approved(step, self.catalog) and self.hooks.autonomous_releases(
                list(frame.playbook.reviewers.required)
            ):
                flag["change"], flag["reason"] = (
                    "no-op",
                    f"pre-approved by the playbook's author (approved: true): it {what}",
                )
                return
            flag["change"] = "would-pause"
            flag["approval"] = {
                "message": self.plan.shown(f"approve before it {what}"),
                "roles": list(frame.playbook.reviewers.required),
            }

    def _safe_render(self, text: str, frame: Frame, scope: Scope) -> Any:
        from catalyst_dsl.runtime.values.evaluate import render

        try:
            return render(text, self.env(frame, scope))
        except StepError:
            return text

    def _simulate_action(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str, entry: dict) -> Any:
        action = step.action
        if action in CONTROL or action in frame.functions:
            env = self.env(frame, scope)
            values = None
            materialize = self._materialize
            try:
                values = {e.key: materialize(e.value, env) for e in step.config.entries}
                entry["config"] = self.plan.shown(_data_only(values))
            except StepError:
                values = None  # the step itself reports what fails, rendering its entries again
            # A function call renders its config as an action would (_config): the same
            # values, unless an action of that name declares a script entry.
            spec = self._spec(action) if action not in CONTROL else None
            return self._execute(step, frame, scope, path, sid, values if spec is None or spec.script is None else None)
        config = self._config(step, self.env(frame, scope))
        entry["config"] = self.plan.shown(config, entry)
        spec = self._spec(action)
        if action == "ai-prompt":
            from catalyst_dsl.runtime.actions.ai import planned_prompt

            prompt = planned_prompt(config)
            if prompt is not None:
                entry["prompt"] = self.plan.shown(prompt, entry)
        if spec is not None and spec.shell_like:
            # A program's declared writes are checked as in a real run, before it would start.
            declared = [
                w for w in self._declared_writes(step, self.env(frame, scope), frame.gateway) if isinstance(w, str)
            ]
            for written in declared:
                entry["writes"].append({"path": written, "allowed": True})
            # Where the kernel would let it write (a write path the plan cannot know is left out).
            entry["confinement"] = frame.gateway.confinement(declared).shown()
        if action == "checkpoint":
            policy = policy_of(step.config.get("policy"), self._project_rules())
            verdict = policy.judge(policy.commands or ()) if policy is not None else None
            if verdict is not None and verdict.passes:
                entry["change"], entry["reason"] = "no-op", verdict.reason
            else:
                entry["change"] = "would-pause"
                entry["approval"] = {
                    "message": self.plan.shown(config.get("message") or "approve to continue"),
                    "roles": list(frame.playbook.reviewers.required),
                }
                if verdict is not None:
                    entry["approval"]["policy"] = verdict.reason
            # Who would pass it is not known before the run.
            unknown = {"by": UNKNOWN, "role": UNKNOWN, "at": UNKNOWN, "comment": UNKNOWN, "via": UNKNOWN}
            return _selection(config.get("default"), list(config.get("options") or []), record=unknown)
        if spec is None:
            raise StepError("UnknownAction", f"no action `{action}` is installed")
        if spec.what_if is WhatIf.UNKNOWN:
            what = (
                "asks an AI, which a what-if never calls"
                if spec.group == "ai"
                else "runs a program, which a what-if never starts"
            )
            entry["change"], entry["reason"] = "unknown", f"`{action}` {what}"
            return UNKNOWN
        if spec.what_if is WhatIf.DESCRIBE:
            entry["change"], entry["reason"], entry["request"] = (
                "unknown",
                f"`{action}` would send this request",
                entry["config"],
            )
            return UNKNOWN
        if contains_unknown(config):
            targets = [config.get(w.key) for w in spec.writes if w.kind == "file"]
            if spec.what_if is WhatIf.DIFF and targets and all(isinstance(t, str) for t in targets):
                # Where it writes is known, what it writes is not: show the files, not a diff.
                for written in targets:
                    target = frame.gateway.target(written, follow_last=action != "file-delete")
                    exists = frame.gateway.read_file(target, 1 << 62) is not None
                    change = (
                        ("delete" if exists else "no-op")
                        if action == "file-delete"
                        else ("modify" if exists else "create")
                    )
                    record(
                        {
                            "change": change,
                            "path": target.relative or written,
                            "reason": "its content depends on a value the plan cannot know",
                        }
                    )
                entry["reason"] = "what it writes depends on a value the plan cannot know"
            else:
                entry["change"], entry["reason"] = "unknown", "its config depends on a value the plan cannot know"
            return UNKNOWN
        return self._execute(step, frame, scope, path, sid, config)  # the config rendered above, not rendered again

    def _ask_first(self, step: ir.Step, frame: Frame, scope: Scope, path: str) -> None:
        """Before a parallel group starts, the question of a branch's `checkpoint: before`,
        so that people answer every branch's question before any branch runs (a pause or
        `abort` then stops the group before it starts). Only a question the branch would
        ask now: its condition and `requires:` hold (checked without effects; else the
        branch meets them itself). The branch finds the answer recorded."""
        if (
            step.gate is None
            or step.gate.when != "before"
            or paths.join(path, "before") in self.replay
            or path in self.replay
        ):
            return
        env = self.env(frame, scope)
        try:
            if step.condition is not None and not truthy(self._value(step.condition, env)):
                return
            if step.requires is not None and step_checks.failing(step.requires, env, step.timeout) is not None:
                return
            self._gate(step, step.gate, frame, scope, path, self.step_id(step))
        except StepError:
            return  # the branch meets it again, under its error policy

    def _condition_holds(
        self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str, value: Any = _UNEVALUATED
    ) -> bool:
        """Whether the step's condition holds (else the step is skipped); `value`: the
        condition's value, when the caller evaluated it already."""
        env = self.env(frame, scope)
        if value is _UNEVALUATED:
            value = self._value(step.condition, env)
        if value is UNKNOWN:
            return True  # only in a what-if: the step is simulated as one that may run
        if truthy(value):
            return True
        reason = self._explain_false(step.condition, env)
        self.events.step_skipped(sid, step.action, reason, frame.depth)
        self._journal(path, step, "skipped", 0, time.monotonic(), None, reason)
        if self.plan is not None:
            entry = self.plan.open(path, sid, step.action)
            entry["change"], entry["reason"] = "skipped", reason
        return False

    def _guarded(self, work: Callable[[], Any], step: ir.Step, frame: Frame, scope: Scope, path: str) -> Any:
        """Work around a step (its condition, its checkpoint flag) whose errors are the step's:
        they go through the step's error policy, without retries."""
        while True:
            started = time.monotonic()
            try:
                return work()
            except StepError as error:
                sid = self.step_id(step)
                error.step = error.step or sid
                self.hooks.record_failure(error, sid, 1, time.monotonic() - started)
                policy = self._policy(step, frame, error)
                try:
                    self._apply_policy(policy.action, error, step, frame, scope, path, sid, 1, started, policy.message)
                except RetryStep:
                    continue  # answered `retry` at a terminal: try it again
                return False

    def _approve_effects(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> None:
        """A step whose effects no declaration bounds runs only once approved (LANGUAGE 7,
        FR-5.4): a program that declares writes, an AI given tools that change things. On a
        terminal ENTER approves; otherwise the run pauses for `catalyst approve`; autonomous
        mode approves by itself and records that it did. An approval covers every attempt."""
        what = self._unbounded_effects(step, frame, scope, frame.gateway)
        if what is not None:
            message = f"approve before it {what}"
            # Bound to what was shown and to the step as written: a resume after the playbook
            # or the values changed asks again instead of reusing the approval.
            subject = self.hooks.mask(f"{message} · step {paths.fingerprint(step)}")
            where = paths.join(path, APPROVE_EFFECTS)
            if _pre_approved(step, self.catalog) and self.hooks.autonomous_releases(
                list(frame.playbook.reviewers.required)
            ):
                # The author approved it in the playbook (reviewed like any code): recorded once.
                if self.hooks.approval_for(where, subject) is None:
                    self.hooks.approve(
                        where,
                        "playbook",
                        None,
                        "catalyst",
                        f"pre-approved by the playbook's author (approved: true): it {what}",
                        True,
                        None,
                        subject,
                    )
                return
            self.checkpoint(where, sid, message, [], None, frame, subject)

    def _declared_writes(self, step: ir.Step, env: RunEnv, gateway: EffectsGateway) -> list[Any]:
        """The step's `writes:` rendered, each checked against the grants before anything
        runs (PermissionDenied). A plan may not know a path (UNKNOWN); a run always does."""
        values = [self._value(value, env) for value in step.writes]
        for value in values:
            if isinstance(value, str):
                gateway.check_pattern(value)
            elif value is not UNKNOWN:
                raise StepError(
                    "InvalidConfig",
                    f"`writes:` holds paths, but one of them is {a_kind(value)}",
                    guidance="make each entry of writes: a path or a pattern",
                )
        return values

    def _unbounded_effects(self, step: ir.Step, frame: Frame, scope: Scope, gateway: EffectsGateway) -> str | None:
        """What a step may do that needs an approval first, in words, or None. Declared
        writes the grants refuse fail here (PermissionDenied): nobody approves a refusal."""
        spec = self._spec(step.action)
        if spec is None:
            return None
        if spec.shell_like and step.writes:
            written = [to_text(value) for value in self._declared_writes(step, self.env(frame, scope), gateway)]
            project = [w for w in written if not w.startswith(SCRATCH)]  # the run's own scratch space needs no approval
            if project:
                return f"runs a program that may write {', '.join(project)}"
        tools = step.config.get("tools") if spec.group == "ai" else None
        if tools is not None:
            from catalyst_dsl.actions.builtin import writing_tools

            granted = writing_tools(self._value(tools, self.env(frame, scope)))
            if granted:
                return f"gives the AI tools that change things ({', '.join(granted)})"
        return None

    def _flag_checkpoint(self, step: ir.Step, frame: Frame, scope: Scope, path: str) -> None:
        """`checkpoint: true` (or a message) next to an action: pause after the step."""
        from catalyst_dsl.runtime.values.evaluate import render

        sid = self.step_id(step)
        if isinstance(step.checkpoint, str):
            message = to_text(render(step.checkpoint, self.env(frame, scope)))
        else:
            message = f"review the result of {sid}"
        self.checkpoint(paths.join(path, "checkpoint"), sid, message, [], None, frame)

    def _attempts(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> Any:
        """Run the step with its retries; its result, or None when it failed (the policy decided)."""
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            effectful = step.action not in CONTROL and self._effect(step.action) not in (Effect.PURE, Effect.READ)
            if effectful:
                self.hooks.set_in_flight(path)  # written ahead: a crash now re-runs this step
            self.events.step_started(sid, step.action, frame.depth)
            deadline = None
            if step.timeout is not None and (step.action in CONTROL or step.action in frame.functions):
                # A step that runs other steps: they must all finish within its timeout.
                deadline = DEADLINE.set(min(DEADLINE.get(), time.monotonic() + step.timeout))
            try:
                result = self._checked(step, frame, scope, path, sid)
            except StepError as error:
                if deadline is not None and error.code == "StepTimeout" and time.monotonic() >= DEADLINE.get():
                    error = StepError("StepTimeout", f"{sid} took longer than its timeout of {step.timeout:g}s")
                error.step = error.step or sid
                seconds = time.monotonic() - started
                policy = self._policy(step, frame, error)
                self.hooks.record_failure(error, sid, attempt, seconds)
                if attempt <= policy.retry_count:
                    delay = min(RETRY_BASE_SECONDS * 2 ** (attempt - 1), RETRY_MAX_SECONDS)
                    self.events.message(
                        "warning",
                        f"{sid} failed ({error.code}: {error.message}); attempt {attempt + 1} of {policy.retry_count + 1} in {delay:g}s",
                        sid,
                        depth=frame.depth,
                    )
                    time.sleep(delay)
                    continue
                self._apply_policy(
                    policy.action, error, step, frame, scope, path, sid, attempt, started, policy.message
                )
                return None
            finally:
                if deadline is not None:
                    DEADLINE.reset(deadline)
            seconds = time.monotonic() - started
            if step.name and step.action not in ("var", "function"):
                scope.define(step.name, _visible(step, result))
            if step.action not in CONTROL or step.action in (
                "if",
                "for-each",
                "try",
                "parallel",
                "playbook",
                "retry-block",
            ):
                self.events.step_finished(sid, step.action, "completed", seconds, frame.depth)
            self._journal(path, step, "completed", attempt, started, result, None)
            return result

    def _checked(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> Any:
        """One attempt: the step between its checks, `requires:` before and `ensures:` after,
        so a retry runs the checks again with the step and a failed check is the step's;
        then its `bindings:`, merged only when all passed."""
        step_checks.enforce(step.requires, self.env(frame, scope), "requires", step.timeout)
        result = self._execute(step, frame, scope, path, sid)
        step_checks.enforce(step.ensures, self.env(frame, _with_result(step, scope, result)), "ensures", step.timeout)
        self._bind(step, frame, scope, result)  # a binding that cannot be computed fails the attempt
        return result

    def _bind(self, step: ir.Step, frame: Frame, scope: Scope, result: Any) -> None:
        """Merge the step's `bindings:` into the playbook's `bindings` object, once it completed."""
        if step.bindings is None:
            return
        values = self._value(step.bindings, self.env(frame, _with_result(step, scope, result)))
        if not isinstance(values, dict) and not contains_unknown(values):
            raise StepError(
                "InvalidBindings",
                f"the step's bindings must be an object to merge, but the value is {a_kind(values)}",
                guidance="give `bindings:` a mapping of names, or an expression whose value is an object",
            )
        if values is UNKNOWN:
            # A what-if does not know which keys an object it cannot compute would bring.
            scope.assign(BINDINGS, UNKNOWN)
            return
        target = scope.lookup(BINDINGS)
        if isinstance(target, dict) and isinstance(values, dict):
            with self._lock:
                target.update(values)

    def _recovered(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> bool:
        """The step was in flight when the run stopped: when its `ensures:` hold now, what it
        was doing got done, so it is completed without running again (with no result). A
        step without `ensures:` always runs again: nothing says it finished."""
        self.recovering = None
        started = time.monotonic()
        try:
            failed = step_checks.failing(step.ensures, self.env(frame, _with_result(step, scope, None)), step.timeout)
        except StepError as error:
            self.events.message(
                "warning",
                f"{sid} was interrupted and its ensures cannot be checked ({error.code}: {error.message}); it runs again",
                sid,
                depth=frame.depth,
            )
            return False
        if failed is not None:
            self.events.message(
                "info",
                f"{sid} was interrupted and its ensures do not hold ({failed.shown}); it runs again",
                sid,
                depth=frame.depth,
            )
            return False
        if step.name:
            scope.define(step.name, None)
        self._bind(step, frame, scope, None)
        reason = "interrupted; its ensures held on resume, so it was not run again"
        self.events.step_finished(sid, step.action, "completed", 0.0, frame.depth, reason)
        self._journal(path, step, "completed", 1, started, None, reason)
        return True

    def _check_deadline(self) -> None:
        if time.monotonic() > DEADLINE.get():
            raise StepError("StepTimeout", "the enclosing step's timeout passed before this step could start")

    def _apply_policy(
        self,
        action: str,
        error: StepError,
        step: ir.Step,
        frame: Frame,
        scope: Scope,
        path: str,
        sid: str,
        attempt: int,
        started: float,
        message: str | None = None,
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
            # Only a person accepts a failure: autonomous mode pauses here too, since going
            # on by itself would turn the failure into a success nobody decided.
            inquiry = paths.join(path, "inquire")
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
                # On resume, an approval of this inquiry continues past the step without
                # running it again, runs it again (`retry`) or cancels the run (`abort`):
                # see run_step.
                self.events.step_finished(sid, step.action, "failed", seconds, frame.depth, detail)
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
                inquiry, "terminal", who[1], who[0], text or f"answered {chosen} after a failure", True, chosen
            )
            if chosen == "abort":
                raise Cancelled(who[0], f"{sid}: answered abort after its failure")
            if chosen == "retry":
                self.events.message(
                    "info", f"{sid} runs again: answered retry after its failure", sid, depth=frame.depth
                )
                raise RetryStep()
            action = "Continue"
        if action == "Suspend":
            self.events.step_finished(sid, step.action, "failed", seconds, frame.depth, detail)
            raise Paused(
                path,
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
                scope.define(step.name, result)
            status = "completed" if action == "Ignore" else "failed"
            if status == "completed":
                self._bind(step, frame, scope, result)  # as a resume would, from the journal
            if action == "Continue":
                self.events.step_finished(
                    sid, step.action, "continued", seconds, frame.depth, f"{detail} (errorPolicy Continue)"
                )
            self._journal(path, step, status, attempt, started, result, detail)
            return
        # Not journaled: the step did not complete, so resuming a failed run runs it again
        # (unless a `catch` handles it: see _catching).
        self.events.step_finished(sid, step.action, "failed", seconds, frame.depth, detail)
        if error.path is None:
            error.path, error.fingerprint = path, paths.fingerprint(step)
        raise error

    def _project_rules(self) -> tuple[dict, ...]:
        """The `approval-rules` setting, for policies that say `rules: project`."""
        return tuple(getattr(self.settings, "approval_rules", ()) or ())

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

    def _journal(
        self, path: str, step: ir.Step, status: str, attempts: int, started: float, result: Any, reason: str | None
    ) -> None:
        if status == "completed" and path in self._caught:
            del self._caught[path]  # a later attempt succeeded: the old failure is not replayed
        if path in self.replay:
            return  # a step re-run on resume (a `var`, a read, a loop) is in the journal already
        keep = step.action not in RERUN_ON_RESUME and step.action not in (
            "if",
            "for-each",
            "try",
            "parallel",
            "return",
            "throw",
        )
        with self._lock:
            prompt = self._prompts.pop(path, None)
        entry = {
            "path": path,
            "name": step.name,
            "action": step.action,
            "status": status,
            "attempts": attempts,
            "startedAt": _wall_time_of(started),
            "duration": round(time.monotonic() - started, 6),
            "result": self.hooks.mask(as_json_data(result)) if keep else None,
            "reason": reason,
            "fingerprint": paths.fingerprint(step),
            "prompt": prompt,
        }
        with self._lock:
            self.hooks.record_step(entry)

    def _sent(self, path: str, prompt: str) -> None:
        with self._lock:
            self._prompts[path] = prompt  # the last attempt's, when a step is retried

    def _spec(self, action: str) -> ActionSpec | None:
        try:
            return self._specs[action]
        except KeyError:
            spec = self._specs[action] = self.catalog.get(action)
            return spec

    def _effect(self, action: str) -> Effect | None:
        spec = self._spec(action)
        return spec.effect if spec is not None else None

    # -- values ------------------------------------------------------------------------------------------

    def _value(self, value: ir.Value, env: RunEnv) -> Any:
        return self._materialize(value, env)

    def _config(self, step: ir.Step, env: RunEnv) -> dict[str, Any]:
        materialize = self._materialize
        spec = self._spec(step.action)
        script = spec.script if spec is not None else None
        if spec is not None and spec.url is not None:
            from catalyst_dsl.runtime.values.url_values import render_url

            return {
                e.key: render_url(e.value, env) if e.key == spec.url else materialize(e.value, env)
                for e in step.config.entries
            }
        if script is None:
            return {e.key: materialize(e.value, env) for e in step.config.entries}
        from catalyst_dsl.runtime.values.escaping import render_script

        from catalyst_dsl.syntax.shell import given_names

        key, language = script
        given = given_names(step.config.get("env"))
        config = {
            e.key: render_script(e.value, env, language, given) if e.key == key else materialize(e.value, env)
            for e in step.config.entries
        }
        by_reference = getattr(config.get(key), "env", None)
        if by_reference:
            # The values a bash script reads by reference go to its program in the
            # environment, after the step's own `env:` so none of them can be replaced.
            config["env"] = {**(config.get("env") or {}), **by_reference}
        return config

    def _entry(self, step: ir.Step, key: str, env: RunEnv, config: dict[str, Any] | None) -> Any:
        """The value of the step's config entry `key`: from `config`, its entries rendered
        already, else rendered now (None when the step has no such entry)."""
        if config is not None:
            return config.get(key)
        return self._value(step.config.get(key), env)

    def _explain_false(self, condition: ir.Value, env: RunEnv) -> str:
        from catalyst_dsl.runtime.values.evaluate import explain

        if not isinstance(condition, ir.Tmpl):
            return f"condition is {condition.value!r}" if isinstance(condition, ir.Lit) else "condition is false"
        lines = [f"condition is false: {condition.text}"]
        for i, (source, shown) in enumerate(explain(condition.text, env)):
            lines.append(f"  {'where' if i == 0 else 'and  '} {source} = {shown}")
        return "\n".join(lines)

    # -- actions -------------------------------------------------------------------------------------------

    def _execute(
        self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str, config: dict[str, Any] | None = None
    ) -> Any:
        """Run the step's action. `config`: its config, rendered already (a what-if renders
        it first to show it); the control steps and function calls read their entries from
        it instead of rendering them again (see `_entry`)."""
        action = step.action
        control = getattr(self, "_do_" + action.replace("-", "_"), None) if action in CONTROL else None
        if control is not None:
            return control(step, frame, scope, path, sid, config)
        if action == "checkpoint":
            env = self.env(frame, scope)
            config = self._config(step, env)
            options = list(config.get("options") or [])
            selection, by = self.answer(
                path,
                sid,
                str(config.get("message") or "approve to continue"),
                options,
                config.get("default"),
                frame,
                policy=policy_of(step.config.get("policy"), self._project_rules()),
            )
            if any(
                isinstance(o, dict) and o.get("cancel") is True and o.get("key") == selection.get("selected")
                for o in options
            ):
                raise Cancelled(by, f"{sid}: answered {selection.get('selected')} at its checkpoint")
            return selection
        if action in frame.functions:
            return self._call_function(step, frame, scope, path, sid, config)
        env = self.env(frame, scope)
        if config is None:
            config = self._config(step, env)
        run = IMPLEMENTATIONS.get(action)
        if run is None:
            plugin = self.plugins(action)
            run = plugin.run if plugin is not None else None
        if run is None:
            raise StepError(
                "UnknownAction",
                f"no action `{action}` is installed",
                guidance="run `catalyst check` to see the suggestion, or install the plugin that provides it",
            )
        spec = self._spec(action)
        if spec is not None:
            check_config(spec, config)
        writes = tuple(self._declared_writes(step, env, frame.gateway)) if step.writes else ()
        timeout = step.timeout
        left = DEADLINE.get() - time.monotonic()
        if left != float("inf"):
            timeout = left if timeout is None else min(timeout, left)
        ctx = ActionContext(
            self.run_id,
            sid,
            action,
            frame.gateway,
            writes,
            timeout,
            lambda level, message, data: self.events.message(level, message, sid, data, frame.depth),
            lambda stream, line: self.events.output(sid, stream, line, frame.depth),
            self.hooks.adapter,
            settings=self.settings,
            secret=self.hooks.secret,
            path=path,
            variables=lambda: _script_action().visible_variables(scope, frame.inputs),
            render=lambda text: _render_at_run_time(text, env),
            transcript=lambda prompt: self._sent(path, prompt),
        )
        try:
            result = run(ctx, config)
            if action == "script":
                _script_action().apply_set(scope.assign, result)  # set('name', value) inside the script
            return result
        except (OSError, UnicodeError, LookupError, ValueError) as error:
            if isinstance(error, StepError):
                raise
            # What the system refused (a directory where a file belongs, an encoding that
            # cannot hold the text…) is the step's failure, not the engine's.
            detail = getattr(error, "strerror", None) or str(error)
            raise StepError(
                "ActionFailed", f"{action}: {detail}", guidance="check the step's paths and values"
            ) from None

    def _do_var(self, step, frame, scope, path, sid, config=None):
        env = self.env(frame, scope)
        scope.assign(str(self._entry(step, "name", env, config)), self._entry(step, "value", env, config))
        return None

    def _do_if(self, step, frame, scope, path, sid, config=None):
        value = self._entry(step, "condition", self.env(frame, scope), config)
        if value is UNKNOWN:
            # A what-if cannot tell which branch runs: it shows both, each as conditional.
            with self.plan.conditional():
                for branch in ("then", "else"):
                    body = step.config.get(branch)
                    if isinstance(body, ir.StepsV):
                        inner = Scope(scope)
                        try:
                            self.run_steps(body.steps, frame, inner, paths.join(path, branch))
                        except _Return:
                            pass  # a return in one possible branch: the plan goes on with the other
                        inner.hand_out()
            return UNKNOWN
        holds = truthy(value)
        branch = "then" if holds else "else"
        body = step.config.get(branch)
        if isinstance(body, ir.StepsV):
            inner = Scope(scope)
            self.run_steps(body.steps, frame, inner, paths.join(path, branch))
            inner.hand_out()
        return {"branch": branch, "executed": isinstance(body, ir.StepsV)}

    def _do_for_each(self, step, frame, scope, path, sid, config=None):
        env = self.env(frame, scope)
        items = self._entry(step, "in", env, config)
        if items is UNKNOWN and self.plan is not None:
            # How many items, and which, is not known: the body is shown once, for an unknown item.
            item_name = str(self._entry(step, "item", env, config))
            index_name = (
                str(self._entry(step, "index", env, config)) if step.config.get("index") is not None else "index"
            )
            body = step.config.get("steps")
            loop = Scope(scope, {item_name: UNKNOWN, index_name: UNKNOWN})
            with self.plan.conditional():
                self.run_steps(
                    body.steps if isinstance(body, ir.StepsV) else (), frame, loop, paths.join(path, "each", 0)
                )
            loop.hand_out(item_name, index_name)
            return UNKNOWN
        if isinstance(items, dict):
            items = list(items.items())
        if not isinstance(items, list):
            raise StepError("TypeError", f"for-each needs an array in `in`, got {type(items).__name__}")
        item_name = str(self._entry(step, "item", env, config))
        index_name = str(self._entry(step, "index", env, config)) if step.config.get("index") is not None else "index"
        body = step.config.get("steps")
        steps = body.steps if isinstance(body, ir.StepsV) else ()
        if self.plan is None and paths.join(path, "each", len(items), "item") in self.replay:
            # Fewer items than the run already went through: their work would be dropped unseen.
            raise _loop_list_changed(path, f"it had more than {len(items)} item(s)")
        for i, item in enumerate(items):
            self._same_item(path, i, item)
            loop = Scope(scope, {item_name: item, index_name: i})
            self.run_steps(steps, frame, loop, paths.join(path, "each", i))
            loop.hand_out(item_name, index_name)
        return {"iterations": len(items), "completed": len(items), "failed": 0}

    def _same_item(self, path: str, index: int, item: Any) -> None:
        """Journal which item iteration `index` of the loop at `path` ran for; on resume,
        refuse when the list changed under it. Completed steps are restored by position, so
        an iteration restored for another item would skip that item's work (or redo one)."""
        if self.plan is not None:
            return
        marker = paths.join(path, "each", index, "item")
        digest = paths.value_digest(self.hooks.mask(as_json_data(item)))
        recorded = self.replay.get(marker)
        if recorded is None:
            # Saved with the iteration's first step or in-flight mark: until then there is
            # nothing of the iteration to restore.
            self._bookkeep(marker, LOOP_ITEM, {"item": digest}, None, save=False)
            return
        was = recorded["result"].get("item") if isinstance(recorded.get("result"), dict) else None
        if was != digest:
            raise _loop_list_changed(path, f"item {index} is not the one it ran for")

    def _do_try(self, step, frame, scope, path, sid, config=None):
        body = step.config.get("steps")
        outcome, caught = "completed", None
        final_steps = step.config.get("finally")

        def final() -> None:
            if isinstance(final_steps, ir.StepsV):
                after = Scope(scope)
                self.run_steps(final_steps.steps, frame, after, paths.join(path, "finally"))
                after.hand_out()

        steps_scope = Scope(scope)
        try:
            try:
                if isinstance(body, ir.StepsV):
                    try:
                        self.run_steps(body.steps, frame, steps_scope, paths.join(path, "steps"))
                    finally:
                        steps_scope.hand_out()  # what the steps defined before an error, too
            except StepError as error:
                clauses = step.config.get("catch")
                for k, clause in enumerate(clauses.items if isinstance(clauses, ir.ListV) else ()):
                    code = clause.get("code") if isinstance(clause, ir.MapV) else None
                    code_text = code.value if isinstance(code, ir.Lit) else None
                    if code_text == "default" or (isinstance(code_text, str) and error.matches(code_text)):
                        handler = clause.get("steps")
                        outcome, caught = "caught", error.code
                        self._catching(paths.join(path, "catch"), error)
                        if isinstance(handler, ir.StepsV):
                            handling = Scope(scope, {"$error": error.as_value()})
                            self.run_steps(handler.steps, frame, handling, paths.join(path, "catch", k))
                            handling.hand_out("$error")
                        break
                else:
                    raise
        except (StepError, _Return):
            final()  # the block ended (failed or returned); a pause is not an end
            raise
        final()
        return {"outcome": outcome, "caughtError": caught}

    def _do_retry_block(self, step, frame, scope, path, sid, config=None):
        """Run the block; when it fails with a code of `retryOn`, run it again from its first step
        with `__lastError` set, up to `maxAttempts` in the whole run. Each attempt's steps
        have their own paths (`…/attempt/N/i`), and each failed attempt is journaled
        (`…/attempt/N/failed`), so a resumed run goes on with the attempt it was in."""
        env = self.env(frame, scope)
        cap = self._value(step.config.get("maxAttempts"), env)
        if (
            isinstance(cap, bool)
            or not isinstance(cap, (int, float))
            or cap != int(cap)
            or not 1 <= cap <= MAX_BLOCK_ATTEMPTS
        ):
            raise StepError(
                "InvalidConfig", f"maxAttempts must be a whole number from 1 to {MAX_BLOCK_ATTEMPTS}, got {cap!r}"
            )
        codes_value = step.config.get("retryOn")
        codes = [str(c) for c in self._value(codes_value, env) or ()] if codes_value is not None else None
        sources_value = step.config.get("retryFrom")
        sources = {str(s) for s in self._value(sources_value, env) or ()} if sources_value is not None else None
        body = step.config.get("steps")
        steps = body.steps if isinstance(body, ir.StepsV) else ()
        attempt, last = 1, None
        while (kept := self.replay.get(paths.join(path, "attempt", attempt, "failed"))) is not None:
            last = StepError.from_record((kept.get("result") or {}).get("error") or {})
            attempt += 1
        while True:
            if attempt > cap:
                raise _attempts_spent(sid, int(cap), last)
            block = Scope(scope, {LAST_ERROR: last.as_value() if last is not None else None})
            try:
                self.run_steps(steps, frame, block, paths.join(path, "attempt", attempt))
                return {"attempts": attempt}
            except StepError as error:
                if (
                    self.plan is not None
                    or (codes is not None and not any(error.matches(c) for c in codes))
                    or (sources is not None and error.step not in sources)
                ):
                    raise
                record = {"error": self.hooks.mask(as_json_data(error.as_record()))}
                self._bookkeep(
                    paths.join(path, "attempt", attempt, "failed"),
                    ATTEMPT_FAILED,
                    record,
                    f"{error.code} from {error.step}",
                )
                if attempt < cap:
                    self.events.message(
                        "warning",
                        f"{sid}: attempt {attempt} of {int(cap)} failed ({error.code}: {error.message}); the block runs again",
                        sid,
                        depth=frame.depth,
                    )
                attempt, last = attempt + 1, error

    def _catching(self, where: str, error: StepError) -> None:
        """Journal that a `catch` took `error` (at `where`/caught), before its handler runs."""
        if error.path is None or self.plan is not None:
            return
        entry_path = paths.join(where, "caught")
        if entry_path in self.replay:
            return
        # Branches of a parallel group that failed beside it are kept too: on resume they
        # fail the same way instead of running again.
        also = [self.hooks.mask(as_json_data(other.as_record())) for other in error.also if other.path]
        self._bookkeep(
            entry_path,
            CAUGHT,
            {"error": self.hooks.mask(as_json_data(error.as_record())), "also": also},
            f"{error.code} from {error.step}",
        )

    def _bookkeep(self, path: str, action: str, result: dict, reason: str | None, save: bool = True) -> None:
        """A journal entry that is not a step's (CAUGHT, LOOP_ITEM): what resume needs to know."""
        entry = {
            "path": path,
            "name": None,
            "action": action,
            "status": "completed",
            "attempts": 1,
            "startedAt": _wall_time_of(time.monotonic()),
            "duration": 0.0,
            "result": result,
            "reason": reason,
            "fingerprint": None,
        }
        with self._lock:
            self.hooks.record_step(entry, save=save)

    def _do_throw(self, step, frame, scope, path, sid, config=None):
        config = self._config(step, self.env(frame, scope)) if config is None else config
        raise StepError(
            str(config.get("code") or "Error"),
            str(config.get("message") or config.get("code") or "thrown"),
            guidance=config.get("guidance"),
            metadata=config.get("metadata"),
        )

    def _do_return(self, step, frame, scope, path, sid, config=None):
        config = self._config(step, self.env(frame, scope)) if config is None else config
        # `code` and `message` say how the run ended; they are not outputs (docs/decisions.md).
        raise _Return({k: v for k, v in config.items() if k not in ("code", "message")})

    def _do_function(self, step, frame, scope, path, sid, config=None):
        name = self._entry(step, "name", self.env(frame, scope), config)
        frame.functions[str(name)] = (step, scope)
        return None

    def _call_function(self, step, frame, scope, path, sid, config=None):
        definition, defined_in = frame.functions[step.action]
        given = self._config(step, self.env(frame, scope)) if config is None else config
        decls = definition.config.get("inputs")
        from catalyst_dsl.runtime.values.inputs import resolve_inputs

        values, problems = resolve_inputs(decls.inputs if isinstance(decls, ir.InputsV) else (), given, from_text=False)
        if problems:
            raise StepError("InvalidInputs", f"{step.action}: " + "; ".join(p.message for p in problems))
        body = definition.config.get("steps")
        try:
            if isinstance(body, ir.StepsV):
                self.run_steps(body.steps, frame, Scope(defined_in, dict(values)), paths.join(path, "fn"))
        except _Return as done:
            return done.values
        return None

    def _do_parallel(self, step, frame, scope, path, sid, config=None):
        body = step.config.get("steps")
        steps = body.steps if isinstance(body, ir.StepsV) else ()
        limit = self._entry(step, "maxConcurrency", self.env(frame, scope), config)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit < 1):
            raise StepError("InvalidConfig", f"maxConcurrency must be a number of at least 1, got {limit!r}")
        shared = Scope(scope)
        if self.plan is not None:
            # A plan is the same every time: branches are simulated one after another.
            for i, inner in enumerate(steps):
                self.run_step(inner, frame, shared, paths.join(path, "branch", i))
            shared.hand_out()
            return {"completed": len(steps), "failed": 0}
        for i, inner in enumerate(steps):
            self._ask_first(inner, frame, shared, paths.join(path, "branch", i))
        failures: list[tuple[int, BaseException]] = []

        def branch(i: int, inner: ir.Step) -> None:
            try:
                self.run_step(inner, frame, shared, paths.join(path, "branch", i))
            except BaseException as error:  # collected and re-raised below, in the run's thread
                failures.append((i, error))

        from concurrent.futures import ThreadPoolExecutor  # only parallel groups need threads

        pool = ThreadPoolExecutor(max_workers=int(limit or len(steps) or 1))
        try:
            for future in [pool.submit(contextvars.copy_context().run, branch, i, s) for i, s in enumerate(steps)]:
                future.result()
        except BaseException:
            # Ctrl-C reaches only this thread: stop the branches' programs and let no
            # branch start another step, then stop the run.
            self._stopping = True
            # Programs are started only through runtime/effects/process.py: not imported, none runs
            # (and a second Ctrl-C cannot land in an import here).
            process = sys.modules.get("catalyst_dsl.runtime.effects.process")
            if process is not None:
                process.stop_all_processes()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if failures:
            errors = [error for _, error in sorted(failures, key=lambda pair: pair[0])]
            # A pause or a cancel wins over step errors: the run must stop cleanly first.
            for kind in (Cancelled, KeyboardInterrupt, Paused):
                for error in errors:
                    if isinstance(error, kind):
                        raise error
            # The first branch's failure, whichever finished first, so a resume that raises
            # them again from the journal gives a catch the same one; the others ride along.
            first, *others = errors
            if isinstance(first, StepError):
                first.also = tuple(e for e in others if isinstance(e, StepError))
            raise first
        shared.hand_out()
        return {"completed": len(steps), "failed": 0}

    def _do_playbook(self, step, frame, scope, path, sid, config=None):
        env = self.env(frame, scope)
        config = self._config(step, env) if config is None else config
        if frame.depth + 1 > self.max_depth:
            raise StepError(
                "RecursionLimit",
                f"calling {config.get('name')} would go deeper than max-depth {self.max_depth}",
                guidance="raise max-depth in catalyst.toml, or check the condition that ends the recursion",
            )
        file, child = self.hooks.load_playbook(frame, step, str(config.get("name")))
        from catalyst_dsl.runtime.values.inputs import resolve_inputs

        given = dict(config.get("inputs") or {})
        unknown = {k for k, v in given.items() if contains_unknown(v)}  # only in a what-if
        values, problems = resolve_inputs(
            child.inputs, {k: v for k, v in given.items() if k not in unknown}, from_text=False
        )
        problems = [p for p in problems if p.input not in unknown]
        values.update({k: UNKNOWN for k in unknown})
        if problems:
            raise StepError(
                "InvalidInputs",
                f"{child.name}: " + "; ".join(p.message for p in problems),
                guidance="pass the inputs the called playbook declares",
            )
        inherit = bool(config.get("inheritPermissions"))
        grants = Grants.of(child.name, granted_paths(child, RunEnv(Scope(), values, self.scratch, lambda: [])))
        child_frame = Frame(child, file, values, frame.gateway.child(grants, inherit), frame.depth + 1)
        outputs = self.run_playbook(child_frame, paths.join(path, "call"))
        check_outputs(child, outputs)
        return outputs

    # -- checkpoints ----------------------------------------------------------------------------------------

    def checkpoint(
        self,
        path: str,
        sid: str,
        message: str,
        options: list,
        default: Any,
        frame: Frame,
        subject: str | None = None,
        policy: ApprovalPolicy | None = None,
        commands: Sequence[Command] = (),
    ) -> dict[str, Any]:
        """Wait for an approval of the pause at `path`. With a `subject` (masked), only an
        approval given for that same subject counts. With a `policy`, autonomous mode does
        not release it; its rules may (runtime/approval_policy.py)."""
        return self.answer(path, sid, message, options, default, frame, subject, policy, commands)[0]

    def answer(
        self,
        path: str,
        sid: str,
        message: str,
        options: list,
        default: Any,
        frame: Frame,
        subject: str | None = None,
        policy: ApprovalPolicy | None = None,
        commands: Sequence[Command] = (),
    ) -> tuple[dict[str, Any], str]:
        """`checkpoint`, and who answered."""
        roles = list(frame.playbook.reviewers.required)
        approval = self.hooks.approval_for(path, subject, roles=roles)
        if approval is not None:
            selected = approval.get("selected")
            return _selection(default if selected is None else selected, options, record=approval), str(
                approval.get("by") or "an approver"
            )
        if policy is not None:
            verdict = policy.judge(policy.commands if policy.commands is not None else commands)
            if verdict.passes and self.hooks.autonomous_releases(roles):
                self.hooks.approve(path, "policy", None, "catalyst", verdict.reason, True, default, subject)
                self.events.message("info", f"{sid}: {verdict.reason}", sid, depth=frame.depth)
                return _selection(
                    default, options, record=_record("catalyst", None, verdict.reason, "policy")
                ), "catalyst"
            if not verdict.passes:
                message = f"{message} ({verdict.reason})"
        elif self.mode == "autonomous" and self.hooks.autonomous_releases(roles):
            note = "approved automatically (--mode autonomous)"
            self.hooks.approve(path, "autonomous", None, "catalyst", note, True, default, subject)
            return _selection(default, options, record=_record("catalyst", None, note, "autonomous")), "catalyst"
        answer = None
        # Who is at the terminal decides whether ENTER may release a role-restricted pause.
        who = self.hooks.terminal_approver(roles) if self.hooks.ask is not None else None
        if who is not None:
            self.hooks.save()  # state first: a crash while waiting loses nothing
            with self._asking:  # parallel branches ask one at a time, each prompt whole
                answer = self.hooks.ask(self.hooks.mask(f"{sid}: {message}"), options, default)
        if answer is None:
            raise Paused(path, sid, "checkpoint", message, roles, options, subject, person=policy is not None)
        selected, text = answer
        self.hooks.approve(path, "terminal", who[1], who[0], text, True, selected, subject)
        return _selection(selected, options, text, record=_record(who[0], who[1], text, "terminal")), who[0]

    # -- gates: `checkpoint:` before or after a step ------------------------------------------------------------

    def _gate(self, step: ir.Step, gate: ir.Gate, frame: Frame, scope: Scope, path: str, sid: str) -> str:
        """Pause at the step's gate; the answer chosen (`yes`, `skip`). `abort` ends the run
        `cancelled`. Autonomous mode answers `yes`, unless the gate's policy asks for a person."""
        env = self.env(frame, scope)
        written = self._value(gate.message, env) if gate.message is not None else None
        message = (
            to_text(written)
            if written is not None
            else gate_message(gate, sid, self._shown_command(step, frame, scope))
        )
        where = paths.join(path, "before" if gate.when == "before" else "checkpoint")
        selection, by = self.answer(
            where,
            sid,
            message,
            gate_options(gate),
            "yes",
            frame,
            policy=policy_of(gate.policy, self._project_rules()),
            commands=step_commands(step),
        )
        chosen = str(selection.get("selected"))
        if chosen == "abort":
            raise Cancelled(
                by,
                f"{sid}: answered abort at its checkpoint"
                + (f" ({selection['textInput']})" if selection.get("textInput") else ""),
            )
        if chosen not in gate.options:
            raise StepError(
                "InvalidAnswer", f"{sid}: `{chosen}` is not an answer its checkpoint offers ({', '.join(gate.options)})"
            )
        return chosen

    def _shown_command(self, step: ir.Step, frame: Frame, scope: Scope) -> str | None:
        """The command a step would run, rendered, to show at its gate (kai shows the command
        and its resolved arguments); what cannot be rendered is shown as written."""
        texts = [command.text for command in step_commands(step)]
        if not texts:
            return None
        shown = self._safe_render(texts[0], frame, scope)
        return shown if isinstance(shown, str) else texts[0]

    def _gate_before(self, step: ir.Step, frame: Frame, scope: Scope, path: str, sid: str) -> bool:
        """The gate before the step; False when it was answered `skip` (journaled skipped)."""
        chosen = self._guarded(lambda: self._gate(step, step.gate, frame, scope, path, sid), step, frame, scope, path)
        if chosen is False:
            return False  # the gate failed and the step's error policy went on past it
        if chosen == "skip":
            reason = "skipped: answered skip at its checkpoint"
            self.events.step_skipped(sid, step.action, reason, frame.depth)
            self._journal(path, step, "skipped", 0, time.monotonic(), None, reason)
            return False
        return True


def caught_errors(result: Any) -> list[dict[str, Any]]:
    """The failures a CAUGHT journal entry keeps (the one the catch took, then the parallel
    branches' that ended with it), each with the `path` of the step that failed."""
    if not isinstance(result, dict):
        return []
    return [
        kept
        for kept in [result.get("error"), *(result.get("also") or [])]
        if isinstance(kept, dict) and isinstance(kept.get("path"), str)
    ]


def _loop_list_changed(path: str, how: str) -> StepError:
    """A failure of the loop step, so the run ends consistently (failed, locks released) and
    resumes from the loop once the list is as it was."""
    return StepError(
        "LoopListChanged",
        f"the list of the for-each at {path} changed since this run went through it: {how}",
        guidance="put the list back as it was (the file or value it comes from) and resume, or start a new run",
    )


def _review_wanted(result: Any) -> tuple[str, str | None] | None:
    """What to review, and its URL, when the result of an action that `pauses_for_review`
    asks the run to wait: `waitForReview: true` (github-pr-create's option)."""
    if not isinstance(result, dict) or result.get("waitForReview") is not True:
        return None
    what = f"pull request #{result['number']}" if result.get("number") is not None else "the change"
    url = result.get("url") if isinstance(result.get("url"), str) else None
    return f"review {what} before the run goes on: {url or 'see the step result'}", url


def _attempts_spent(sid: str, cap: int, last: StepError | None) -> StepError:
    detail = f" (the last: {last.code}: {last.message})" if last is not None else ""
    return StepError(
        "IterationCapExceeded",
        f"{sid}: all {cap} attempt(s) of the block failed{detail}",
        guidance="fix what fails and start a new run: the attempts are counted for the whole run, resumes included",
        metadata={"attempts": cap, "lastError": last.as_value() if last is not None else None},
    )


def _data_only(value: Any) -> Any:
    """A control step's config as a plan shows it: the steps it runs (a body, a catch
    clause's steps) are entries of their own, not config values."""
    if isinstance(value, dict):
        return {k: _data_only(v) for k, v in value.items() if not isinstance(v, (ir.StepsV, ir.InputsV))}
    if isinstance(value, list):
        return [_data_only(v) for v in value]
    return value


def _with_result(step: ir.Step, scope: Scope, result: Any) -> Scope:
    """Where a step's `ensures:` are evaluated: its own result readable by its name."""
    return Scope(scope, {step.name: _visible(step, result)}) if step.name else scope


def _visible(step: ir.Step, result: Any) -> Any:
    """What a named step's result is to the playbook. A `script` step's is the value its code
    returned; the journal keeps its `set` values beside it, to apply them again on resume."""
    if step.action == "script" and isinstance(result, dict) and set(result) == {"result", "set"}:
        return result["result"]
    return result


def _wall_time_of(monotonic: float) -> str:
    """The UTC time at which `time.monotonic()` read `monotonic`."""
    import datetime

    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=time.monotonic() - monotonic)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _pre_approved(step: ir.Step, catalog: Catalog) -> bool:
    """`approved: true` on an AI step (elsewhere C631 refuses it before the run)."""
    spec = catalog.get(step.action)
    return step.approved and spec is not None and spec.group == "ai"


#: The answers to an Inquire (a failure a person must decide about): go on past the
#: failed step, run it again, or cancel the run.
INQUIRE_OPTIONS = [
    {"key": "continue", "label": "go on past the failed step"},
    {"key": "retry", "label": "run the step again"},
    {"key": "abort", "label": "cancel the run", "cancel": True},
]


class RetryStep(Exception):
    """A person answered `retry` to a failure at the terminal: the step runs again."""


def gate_options(gate: ir.Gate) -> list[dict[str, Any]]:
    """A gate's answers as checkpoint options (what the terminal, `--select` and plans show)."""
    labels = {
        "yes": "run the step" if gate.when == "before" else "go on",
        "skip": "skip the step",
        "abort": "cancel the run",
    }
    return [{"key": key, "label": labels[key], **({"cancel": True} if key == "abort" else {})} for key in gate.options]


def gate_message(gate: ir.Gate, sid: str, command: str | None = None) -> str:
    """What a gate without a message asks; before a step, with the command it would run."""
    if gate.when == "after":
        return f"review the result of {sid}"
    return f"approve before {sid} runs" + (f": {command}" if command else "")


def _selection(selected: Any, options: list, text: str | None = None, record: dict | None = None) -> dict[str, Any]:
    """A checkpoint's result; `approval` says who passed it, in which role, when, with what
    note and how (a person at the terminal, `catalyst approve`, a token, autonomous mode, its
    rules), so later steps can route on the decision (cleo's `__lastApproval`)."""
    result = {"selected": selected, "hasTextInput": bool(text), "textInput": text or "", "approved": True}
    if record is not None:
        result["approval"] = {
            "by": record.get("by"),
            "role": record.get("role"),
            "at": record.get("at"),
            "note": record.get("comment"),
            "via": record.get("via"),
        }
    return result


def _record(by: str, role: str | None, comment: str | None, via: str) -> dict[str, Any]:
    from catalyst_dsl.runtime.machine import utc_now  # an approval's time: no what-if records one

    return {"by": by, "role": role, "at": utc_now(), "comment": comment, "via": via}


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
    """Declared outputs must be returned with their declared type (LANGUAGE.md section 2)."""
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


def _render_at_run_time(text: str, env) -> Any:
    """A template an action reads during the run (a prompt file), rendered in the step's scope."""
    from catalyst_dsl.runtime.values.evaluate import render

    return render(text, env)


def _script_action():
    """The `script` action's module, for the script steps' variables: imported with the
    first script step (as IMPLEMENTATIONS imports it to run one), so a run or a what-if
    without one does not load it and the program runner it brings."""
    from catalyst_dsl.runtime.actions import script

    return script
