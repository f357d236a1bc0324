"""Where a run waits for a person: checkpoints, gates (`checkpoint:` before or after a
step), the review a step's result asks for, and the approval a step's effects need when
no declaration bounds them.

An approval already given releases the pause (a resume passes it); autonomous mode and
approval policies may release it by themselves; on a terminal the person answers there;
otherwise the run pauses (`Paused`) until `catalyst approve`. `Pauses` is a part of the
Engine (engine.py), kept apart for its size.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.control import checkpoint as checkpoint_action
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir.journal import APPROVE_EFFECTS, REVIEW
from catalyst_dsl.runtime.engine import paths
from catalyst_dsl.runtime.approvals.policy import ApprovalPolicy, Command, policy_of, step_commands
from catalyst_dsl.runtime.engine.frames import Frame
from catalyst_dsl.runtime.engine.signals import Cancelled, Paused
from catalyst_dsl.runtime.engine.step_run import StepRun
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.evaluate import render
from catalyst_dsl.runtime.values.jsvalues import to_text, truthy
from catalyst_dsl.runtime.engine.scope import Scope
from catalyst_dsl.runtime.engine import step_checks


class Pauses:
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
            return checkpoint_action.result(default if selected is None else selected, options, record=approval), str(
                approval.get("by") or "an approver"
            )
        if policy is not None:
            verdict = policy.judge(policy.commands if policy.commands is not None else commands)
            if verdict.passes and self.hooks.autonomous_releases(roles):
                self.hooks.approve(path, "policy", None, "catalyst", verdict.reason, True, default, subject, step=sid)
                self.events.message("info", f"{sid}: {verdict.reason}", sid, depth=frame.depth)
                return checkpoint_action.result(
                    default, options, record=_record("catalyst", None, verdict.reason, "policy")
                ), "catalyst"
            if not verdict.passes:
                message = f"{message} ({verdict.reason})"
        elif self.mode == "autonomous" and self.hooks.autonomous_releases(roles):
            note = "approved automatically (--mode autonomous)"
            self.hooks.approve(path, "autonomous", None, "catalyst", note, True, default, subject, step=sid)
            return checkpoint_action.result(
                default, options, record=_record("catalyst", None, note, "autonomous")
            ), "catalyst"
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
        self.hooks.approve(path, "terminal", who[1], who[0], text, True, selected, subject, step=sid)
        return checkpoint_action.result(selected, options, text, record=_record(who[0], who[1], text, "terminal")), who[
            0
        ]

    def approval_policy(self, value: ir.Value | None) -> ApprovalPolicy | None:
        """The approval policy a pause was given (None: none), with the project's rules."""
        return policy_of(value, self._project_rules())

    @staticmethod
    def cancelled(by: str | None, reason: str) -> Cancelled:
        return Cancelled(by, reason)

    def _pauses_after(self, run: StepRun, result: Any) -> None:
        """The pauses after a step: the review its result asks for (`waitForReview`), then
        its `checkpoint:` flag. Run again when a resume restores the step, where the
        approvals already given let them pass."""
        step = run.step
        spec = self._spec(step.action)
        review = _review_wanted(result) if spec is not None and spec.pauses_for_review else None
        if review is not None:
            message, url = review
            # The subject is what was opened: a review of it (a webhook finds the run by it) releases the pause.
            subject = self.hooks.mask(url) if url else None
            review = run.at(REVIEW)
            self._guarded(run, lambda: self.checkpoint(review, run.label, message, [], None, run.frame, subject))
        if step.checkpoint:
            self._guarded(run, lambda: self._flag_checkpoint(run))
        if step.gate is not None and step.gate.when == "after":
            self._guarded(run, lambda: self._gate(run, step.gate))

    def _flag_checkpoint(self, run: StepRun) -> None:
        """`checkpoint: true` (or a message) next to an action: pause after the step."""
        if isinstance(run.step.checkpoint, str):
            message = to_text(render(run.step.checkpoint, self.env(run.frame, run.scope)))
        else:
            message = f"review the result of {run.label}"
        self.checkpoint(run.at("checkpoint"), run.label, message, [], None, run.frame)

    def _approve_effects(self, run: StepRun) -> None:
        """A step whose effects no declaration bounds runs only once approved (LANGUAGE 7,
        FR-5.4): a program that declares writes, an AI given tools that change things. On a
        terminal ENTER approves; otherwise the run pauses for `catalyst approve`; autonomous
        mode approves by itself and records that it did. An approval covers every attempt."""
        what = self._unbounded_effects(run.step, run.frame, run.scope, run.frame.gateway)
        if what is None:
            return
        message = f"approve before it {what}"
        # Bound to what was shown and to the step as written: a resume after the playbook
        # or the values changed asks again instead of reusing the approval.
        subject = self.hooks.mask(f"{message} · step {paths.fingerprint(run.step)}")
        where = run.at(APPROVE_EFFECTS)
        if pre_approved(run.step, self.catalog) and self.hooks.autonomous_releases(
            list(run.frame.playbook.reviewers.required)
        ):
            # The author approved it in the playbook (reviewed like any code): recorded once.
            if self.hooks.approval_for(where, subject) is None:
                reason = f"pre-approved by the playbook's author (approved: true): it {what}"
                self.hooks.approve(where, "playbook", None, "catalyst", reason, True, None, subject, step=run.label)
            return
        self.checkpoint(where, run.label, message, [], None, run.frame, subject)

    # -- gates: `checkpoint:` before or after a step ---------------------------------------------------------

    def _gate(self, run: StepRun, gate: ir.Gate) -> str:
        """Pause at the step's gate; the answer chosen (`yes`, `skip`). `abort` ends the run
        `cancelled`. Autonomous mode answers `yes`, unless the gate's policy asks for a person."""
        sid = run.label
        env = self.env(run.frame, run.scope)
        written = self._value(gate.message, env) if gate.message is not None else None
        message = to_text(written) if written is not None else gate_message(gate, sid, self._shown_command(run))
        selection, by = self.answer(
            run.at("before" if gate.when == "before" else "checkpoint"),
            sid,
            message,
            gate_options(gate),
            "yes",
            run.frame,
            policy=self.approval_policy(gate.policy),
            commands=step_commands(run.step),
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

    def _shown_command(self, run: StepRun) -> str | None:
        """The command a step would run, rendered, to show at its gate (kai shows the command
        and its resolved arguments); what cannot be rendered is shown as written."""
        texts = [command.text for command in step_commands(run.step)]
        if not texts:
            return None
        shown = self._safe_render(texts[0], run.frame, run.scope)
        return shown if isinstance(shown, str) else texts[0]

    def _gate_before(self, run: StepRun) -> bool:
        """The gate before the step; False when it was answered `skip` (journaled skipped)."""
        chosen = self._guarded(run, lambda: self._gate(run, run.step.gate))
        if chosen is False:
            return False  # the gate failed and the step's error policy went on past it
        if chosen == "skip":
            reason = "skipped: answered skip at its checkpoint"
            self.events.step_skipped(run.label, run.step.action, reason, run.frame.depth)
            self.journal.step(run, "skipped", 0, time.monotonic(), None, reason)
            return False
        return True

    def ask_first(self, step: ir.Step, frame: Frame, scope: Scope, path: str) -> None:
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
            self._gate(StepRun(step, frame, scope, path, self.step_id(step)), step.gate)
        except StepError:
            return  # the branch meets it again, under its error policy

    def _project_rules(self) -> tuple[dict, ...]:
        """The `approval-rules` setting, for policies that say `rules: project`."""
        return tuple(getattr(self.settings, "approval_rules", ()) or ())


def _review_wanted(result: Any) -> tuple[str, str | None] | None:
    """What to review, and its URL, when the result of an action that `pauses_for_review`
    asks the run to wait: `waitForReview: true` (github-pr-create's option)."""
    if not isinstance(result, dict) or result.get("waitForReview") is not True:
        return None
    what = f"pull request #{result['number']}" if result.get("number") is not None else "the change"
    url = result.get("url") if isinstance(result.get("url"), str) else None
    return f"review {what} before the run goes on: {url or 'see the step result'}", url


def pre_approved(step: ir.Step, catalog: Catalog) -> bool:
    """`approved: true` on an AI step (elsewhere C631 refuses it before the run)."""
    spec = catalog.get(step.action)
    return step.approved and spec is not None and spec.group == "ai"


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


def _record(by: str, role: str | None, comment: str | None, via: str) -> dict[str, Any]:
    from catalyst_dsl.runtime.machine import utc_now  # an approval's time: no what-if records one

    return {"by": by, "role": role, "at": utc_now(), "comment": comment, "via": via}
