"""`Simulator`: the engine of a what-if. Each step becomes an entry of the plan: what is
safe runs (pure and read actions, against the files as earlier steps would leave them),
what is not is recorded (writes as diffs, requests described, programs and AIs shown as
`unknown`), and the plan never stops. The engine's step life is kept; only what has
effects is overridden: the step's attempt, the control actions' runs (their `simulate`),
the journal (a plan journals nothing) and the questions (a plan asks no one).
"""

from __future__ import annotations

from typing import Any

from catalyst_dsl.actions.catalog import Effect, WhatIf
from catalyst_dsl.actions.control import CONTROL, PAUSES, names_result
from catalyst_dsl.actions.control.try_ import caught_codes
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir.journal import APPROVE_EFFECTS, REVIEW
from catalyst_dsl.runtime.engine import step_checks
from catalyst_dsl.runtime.approvals.policy import step_commands
from catalyst_dsl.runtime.engine.engine import Engine
from catalyst_dsl.runtime.engine.pauses import gate_message, pre_approved
from catalyst_dsl.runtime.engine.step_run import StepRun
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.evaluate import materialize
from catalyst_dsl.runtime.values.jsvalues import UNKNOWN, contains_unknown
from catalyst_dsl.runtime.engine.scope import Scope
from catalyst_dsl.runtime.simulation.planning import PlanRecorder
from catalyst_dsl.runtime.simulation.recording import EFFECTS, Unknowable, record


class Simulator(Engine):
    def __init__(self, *, plan: PlanRecorder, **engine: Any) -> None:
        super().__init__(**engine)
        #: The plan the steps are simulated into (planning.py).
        self.plan = plan
        #: What would catch a failure, innermost last: each playbook being simulated (its
        #: own `catch`) and each `try` in it, as a run unwinds them. A predicted failure one
        #: of them takes does not end the run, and is the error its clause is shown with.
        self._caught: list[_Catching] = []

    # -- what a plan does instead ----------------------------------------------------------------------------

    def _inquired(self, run: StepRun) -> bool:
        return False  # a plan holds no approvals (Session.plan's hooks answer none): it asks for none

    def run_playbook(self, frame: Any, prefix: str = "") -> dict[str, Any]:
        self._caught.append(_Catching(tuple(clause.code for clause in frame.playbook.catch)))
        try:
            return super().run_playbook(frame, prefix)
        finally:
            self._caught.pop()

    def _control(self, control: Any, run: StepRun, config: dict[str, Any] | None) -> Any:
        codes = caught_codes(run.step)
        if not codes:
            return control.simulate(self, run, config)
        self._caught.append(_Catching(codes))
        try:
            return control.simulate(self, run, config)
        finally:
            self._caught.pop()

    def foreseen_failure(self) -> StepError | None:
        """The failure the plan predicts for certain in the steps of the innermost `try` or
        playbook, which its `catch` takes; from here on, it takes nothing more: what its
        clause does is not caught by the clause itself."""
        catching = self._caught[-1]
        catching.open = False
        return catching.failure

    def maybe_handled(self, handlers: list[tuple[Any, str]], frame: Any, scope: Scope) -> None:
        """What each `catch` clause (its steps, at its path) would do, conditional, with an
        `$error` the plan cannot know: a `throw` or `return` in one ends only its own."""
        from catalyst_dsl.actions.control.return_ import Return

        with self.plan.conditional():
            for steps, prefix in handlers:
                try:
                    self.run_steps(steps, frame, Scope(scope, {"$error": UNKNOWN}), prefix)
                except (StepError, Return):
                    pass

    def _would_fail(self, run: StepRun, entry: dict, error: StepError, what: str = "") -> None:
        """The step would fail in a real run: shown as unknown with the failure, and marked
        `fails` when it would certainly run (not `conditional`) and nothing would let the
        run go on past it (its error policy says Stop, and neither an enclosing `try` nor
        the playbook's `catch` takes the code), which
        makes the what-if exit as a failed run does (docs/plan-format.md)."""
        entry["change"], entry["reason"] = "unknown", f"{what}would fail: {error.code}: {error.message}"
        self._mark_fatal(run, entry, error)

    def _mark_fatal(self, run: StepRun, entry: dict, error: StepError) -> None:
        if entry.get("conditional") or self._policy(run.step, run.frame, error).action != "Stop":
            return  # a step that may not run at all, or whose failure the run goes on past
        for catching in reversed(self._caught):  # innermost first, as a run unwinds
            if catching.open and any(code == "default" or error.matches(code) for code in catching.codes):
                catching.failure = catching.failure or error  # the first one is the one a run catches
                return
        entry["fails"] = {"code": error.code, "message": self.plan.shown(error.message)}

    def _steps_ended(self, frame: Any, scope: Scope, prefix: str) -> None:
        """Whether a step of the playbook fails is not known to a plan (it starts no program,
        asks no AI): what each clause of the playbook's `catch` would do is shown, as
        conditional, as a `try`'s clauses are (actions/control/try_.py). A failure the plan
        predicts for certain, which the `catch` takes, runs its clause as a run would: not
        conditional, with that `$error`, and a failure in the clause is not taken again."""
        from catalyst_dsl.runtime.engine import paths

        foreseen = self.foreseen_failure()
        if foreseen is not None:
            self._top_catch(frame, scope, prefix, foreseen)
            return
        handlers = [(clause.steps, paths.join(prefix, "catch", k)) for k, clause in enumerate(frame.playbook.catch)]
        for (_, path), clause in zip(handlers, frame.playbook.catch):
            self.name_part(path, clause.code)
        self.maybe_handled(handlers, frame, scope)

    def catching(self, where: str, error: StepError, label: str) -> None:
        """A plan journals nothing: a resume never reads it."""

    def name_part(self, path: str, name: str) -> None:
        self.plan.name_part(path, name)

    def same_item(self, path: str, index: int, item: Any) -> None:
        """A plan journals nothing: a resume never reads it."""

    def _skipped(self, run: StepRun, reason: str) -> None:
        super()._skipped(run, reason)
        entry = self.plan.open(run.path, run.sid, run.step.action)
        entry["change"], entry["reason"] = "skipped", reason

    def _perform(self, run: StepRun) -> None:
        """A step of a what-if: run what is safe, record what is not, never stop the plan."""
        step = run.step
        maybe = False
        if step.condition is not None:
            try:
                value = self._value(step.condition, self.env(run.frame, run.scope))
                maybe = value is UNKNOWN
                if not maybe and not self._condition_holds(run, value):
                    return
            except StepError as error:
                self._would_fail(run, self.plan.open(run.path, run.sid, step.action), error, "its condition ")
                return
        if maybe:
            with self.plan.conditional():
                self._simulate_entry(run, maybe)
        else:
            self._simulate_entry(run, maybe)

    # -- a step's entry ----------------------------------------------------------------------------------------

    def _simulate_entry(self, run: StepRun, maybe: bool) -> None:
        """The step's entry once it would run (with its approval and gates before it, its
        review and checkpoint flags after), its result defined and bound."""
        step, frame = run.step, run.frame
        spec = self._spec(step.action)
        if step.gate is not None and step.gate.when == "before":
            self._plan_gate(run, step.gate)
        self._plan_approval(run)
        entry = self.plan.open(run.path, run.sid, step.action)
        if maybe:
            entry["reason"] = "runs only if its condition holds, which depends on a value the plan cannot know"
        result = self._simulated_result(run, entry)
        if self.plan.files_unknown is None and entry["change"] == "unknown" and self._may_write_unseen(run):
            self.plan.files_unknown = f"{run.sid} ({step.action}), whose effects the plan cannot know,"
        if step.name and names_result(step.action):
            run.scope.define(step.name, result)
        try:
            self._bind(run, result)
        except StepError as error:
            self._would_fail(run, entry, error, "its bindings ")
        if spec is not None and spec.pauses_for_review and entry["config"].get("waitForReview") is True:
            flag = self.plan.open(run.at(REVIEW), run.sid, "checkpoint")
            flag["change"] = "would-pause"
            flag["approval"] = {
                "message": "review the pull request before the run goes on",
                "roles": list(frame.playbook.reviewers.required),
            }
        if step.checkpoint:
            flag = self.plan.open(run.at("checkpoint"), run.sid, "checkpoint")
            message = step.checkpoint if isinstance(step.checkpoint, str) else f"review the result of {run.sid}"
            flag["change"] = "would-pause"
            flag["approval"] = {
                "message": self.plan.shown(self._safe_render(message, frame, run.scope)),
                "roles": list(frame.playbook.reviewers.required),
            }
        if step.gate is not None and step.gate.when == "after":
            self._plan_gate(run, step.gate)

    def _simulated_result(self, run: StepRun, entry: dict) -> Any:
        """The step simulated between its checks, its effects settled into its entry; its
        result (UNKNOWN when the plan cannot know it)."""
        step = run.step
        spec = self._spec(step.action)
        effects: list[dict] = []
        token = EFFECTS.set(effects)
        result: Any = UNKNOWN
        try:
            if step.requires is not None:
                self._plan_checks(run, step.requires, "requires", run.scope, entry)
            if step.action in CONTROL or step.action in run.frame.functions:
                with self.plan.inside(entry):  # the steps it runs are filed in its entry
                    result = self._simulate_action(run, entry)
            else:
                result = self._simulate_action(run, entry)  # an action runs no steps
            if step.ensures is not None:
                unseen = (
                    f"{run.sid} itself, whose effects the plan cannot know,"
                    if entry["change"] == "unknown" and self._may_write_unseen(run)
                    else None
                )
                self._plan_checks(run, step.ensures, "ensures", run.with_result(result), entry, unseen)
        except Unknowable as unknown:
            entry["change"], entry["reason"] = "unknown", unknown.reason
        except StepError as error:
            if error.code == "PermissionDenied":
                entry["change"], entry["reason"] = "refused", error.message
                written = error.metadata.get("path") if isinstance(error.metadata, dict) else None
                entry["writes"].append({"path": written, "allowed": False, "refusal": error.message})
                self._mark_fatal(run, entry, error)
            else:
                self._would_fail(run, entry, error)
        finally:
            EFFECTS.reset(token)
            self.plan.settle(entry, effects, "read" if spec is not None and spec.effect is Effect.READ else "no-op")
        return result

    def _may_write_unseen(self, run: StepRun) -> bool:
        """Whether a step the plan could not simulate may change files it does not name:
        an AI given tools that change things, or a program that declares writes."""
        try:
            return self._unbounded_effects(run.step, run.frame, run.scope, run.frame.gateway) is not None
        except StepError:
            return False

    # -- the pauses a plan shows ----------------------------------------------------------------------------------

    def _plan_gate(self, run: StepRun, gate: ir.Gate) -> None:
        """A gate's entry in a plan: it would pause (the plan goes on as if answered yes),
        or its approval rules would pass it by themselves."""
        flag = self.plan.open(run.at("before" if gate.when == "before" else "checkpoint"), run.sid, "checkpoint")
        policy = self.approval_policy(gate.policy)
        verdict = (
            policy.judge(policy.commands if policy.commands is not None else step_commands(run.step))
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
            self._safe_render(str(written), run.frame, run.scope)
            if written is not None
            else gate_message(gate, run.sid, self._shown_command(run))
        )
        flag["change"] = "would-pause"
        flag["approval"] = {
            "message": self.plan.shown(message),
            "roles": list(run.frame.playbook.reviewers.required),
            "options": list(gate.options),
        }
        if verdict is not None:
            flag["approval"]["policy"] = verdict.reason

    def _plan_approval(self, run: StepRun) -> None:
        """The approval a step's effects would wait for (a plan is of a manual run), as an
        entry just before the step's own."""
        try:
            what = self._unbounded_effects(run.step, run.frame, run.scope, run.frame.gateway)
        except StepError:
            return  # refused or failing: the step's own entry says so
        if what is None:
            return
        flag = self.plan.open(run.at(APPROVE_EFFECTS), run.sid, "checkpoint")
        if pre_approved(run.step, self.catalog) and self.hooks.autonomous_releases(
            list(run.frame.playbook.reviewers.required)
        ):
            flag["change"], flag["reason"] = (
                "no-op",
                f"pre-approved by the playbook's author (approved: true): it {what}",
            )
            return
        flag["change"] = "would-pause"
        flag["approval"] = {
            "message": self.plan.shown(f"approve before it {what}"),
            "roles": list(run.frame.playbook.reviewers.required),
        }

    def _plan_checks(
        self, run: StepRun, checks: ir.Checks, when: str, scope: Scope, entry: dict, unseen: str | None = None
    ) -> None:
        """A step's checks in its plan entry, each with whether it holds now (`unknown` when
        that needs a program or a value the plan cannot know); a check that does not hold
        fails the step as in a run."""
        env = self.env(run.frame, scope)
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

    # -- the step's action ------------------------------------------------------------------------------------------

    def _simulate_action(self, run: StepRun, entry: dict) -> Any:
        step, action = run.step, run.step.action
        if action in CONTROL or action in run.frame.functions:
            return self._simulate_control(run, entry)
        config = self._config(step, self.env(run.frame, run.scope))
        entry["config"] = self.plan.shown(config, entry)
        spec = self._spec(action)
        if action == "ai-prompt":
            from catalyst_dsl.runtime.actions.ai import planned_prompt

            prompt = planned_prompt(config)
            if prompt is not None:
                entry["prompt"] = self.plan.shown(prompt, entry)
        if spec is not None and spec.shell_like:
            # A program's declared writes are checked as in a real run, before it would start.
            env = self.env(run.frame, run.scope)
            declared = [w for w in self._declared_writes(step, env, run.frame.gateway) if isinstance(w, str)]
            for written in declared:
                entry["writes"].append({"path": written, "allowed": True})
            # Where the kernel would let it write (a write path the plan cannot know is left out).
            entry["confinement"] = run.frame.gateway.confinement(declared).shown()
        pause = PAUSES.get(action)
        if pause is not None:
            return pause.simulate(self, run, config, entry)
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
            self._unknown_writes(run, spec, config, entry)
            return UNKNOWN
        return self._execute(run, config)  # the config rendered above, not rendered again

    def _simulate_control(self, run: StepRun, entry: dict) -> Any:
        """A control step or a function call: its config shown (the steps it runs are entries
        of their own), then run, its steps simulated."""
        env = self.env(run.frame, run.scope)
        values = None
        try:
            values = {e.key: materialize(e.value, env) for e in run.step.config.entries}
            entry["config"] = self.plan.shown(_data_only(values))
        except StepError:
            values = None  # the step itself reports what fails, rendering its entries again
        # A function call renders its config as an action would (_config): the same
        # values, unless an action of that name declares a script entry.
        action = run.step.action
        spec = self._spec(action) if action not in CONTROL else None
        return self._execute(run, values if spec is None or spec.script is None else None)

    def _unknown_writes(self, run: StepRun, spec: Any, config: dict[str, Any], entry: dict) -> None:
        """An action whose config holds a value the plan cannot know: where it writes is
        shown when known (the files, not a diff), else the entry is `unknown`."""
        action = run.step.action
        targets = [config.get(w.key) for w in spec.writes if w.kind == "file"]
        if not (spec.what_if is WhatIf.DIFF and targets and all(isinstance(t, str) for t in targets)):
            entry["change"], entry["reason"] = "unknown", "its config depends on a value the plan cannot know"
            return
        gateway = run.frame.gateway
        for written in targets:
            target = gateway.target(written, follow_last=action != "file-delete")
            exists = gateway.read_file(target, 1 << 62) is not None
            if action == "file-delete":
                change = "delete" if exists else "no-op"
            else:
                change = "modify" if exists else "create"
            record(
                {
                    "change": change,
                    "path": target.relative or written,
                    "reason": "its content depends on a value the plan cannot know",
                }
            )
        entry["reason"] = "what it writes depends on a value the plan cannot know"


def _data_only(value: Any) -> Any:
    """A control step's config as a plan shows it: the steps it runs (a body, a catch
    clause's steps) are entries of their own, not config values."""
    if isinstance(value, dict):
        return {k: _data_only(v) for k, v in value.items() if not isinstance(v, (ir.StepsV, ir.InputsV))}
    if isinstance(value, list):
        return [_data_only(v) for v in value]
    return value


class _Catching:
    """A `try` or a playbook being simulated: the codes its `catch` takes, the first failure
    of its steps the plan predicts for certain, and whether its steps are still running
    (`open`; its clause's own failures are not its to take)."""

    __slots__ = ("codes", "failure", "open")

    def __init__(self, codes: tuple[str, ...]) -> None:
        self.codes = codes
        self.failure: StepError | None = None
        self.open = True
