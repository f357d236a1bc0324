"""Signed approvals (`signed-approvals`): an approval that releases a pause needing a role
must carry an SSH signature over the run, the step, the role, the approver and the state
the run waits in, verified against `allowed-signers`; catalyst then never releases such
a pause by itself, nor on an ENTER at the terminal.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.lifecycle.context import RunContext
from catalyst_dsl.runtime.state.snapshot import shown_step


class Signatures:
    """Who may release a pause, and on what proof, in one project."""

    def __init__(self, context: RunContext) -> None:
        self.context = context

    def required(self, pause) -> bool:
        """With `signed-approvals`, a pause that needs a role is released only by a signed approval."""
        return self.context.project.config.signed_approvals and bool(pause.roles)

    def sign(self, text: str, key_file: str) -> str:
        from catalyst_dsl.runtime.approvals.approvers import sign

        return refusing(lambda: sign(text, os.path.expanduser(key_file)))

    def proof(
        self,
        state,
        role: str,
        approver: str,
        decision: str,
        nonce: str,
        signature: str | None,
        *,
        needed: bool,
        asked_as: str,
    ) -> str | None:
        """The signed text when `signature` proves this approval (None when none was given and
        none is `needed`); RunAbort when a needed or given signature does not hold."""
        from catalyst_dsl.runtime.approvals.approvers import verify

        needed = needed and self.required(state.pause)
        if signature is None:
            if needed:
                raise RunAbort(
                    EXIT_INVALID,
                    "the approval is refused: signed-approvals is on and "
                    f"{shown_step(state, state.pause.path)} needs a role, "
                    "but the approval is not signed",
                    help="sign it: add --sign-with ~/.ssh/id_ed25519, or sign the text "
                    f"`catalyst runs approval-text {state.run_id} {asked_as}` prints "
                    f"(ssh-keygen -Y sign -n catalyst-approval) and pass --signature FILE",
                )
            return None
        if not self.context.approvers.configured:
            raise RunAbort(
                EXIT_INVALID,
                "the approval is refused: a signature names a person, "
                "but no `approvers` are configured to give them roles",
                help="map approvers to roles in the `approvers` setting",
            )
        text = pause_text(state, role, approver, decision, nonce)
        refusing(
            lambda: verify(
                text, signature, approver, self.context.project.resolve(self.context.project.config.allowed_signers)
            )
        )
        return text

    def check_signed(self, state) -> None:
        """With signed approvals, refuse to resume past a pause needing a role on the word of an
        approval whose signature does not hold (one written into the snapshot by hand): the
        signed text must name this run, step, role and approver, and verify again."""
        pause = state.pause
        if pause is None:
            return
        for approval in state.approvals:
            if approval.path != pause.path or not approval.released:
                continue
            why = self.unsigned(state, approval, pause.roles)
            if why is not None:
                raise RunAbort(
                    EXIT_STATE,
                    f"run {state.run_id} records an approval of {shown_step(state, approval.path)} by {approval.by} "
                    f"that is not validly signed: {why}",
                    help="it was not given through `catalyst approve`; "
                    "approve again with a signature (the snapshot is unchanged)",
                )

    def unsigned(self, state, approval, roles: Sequence[str]) -> str | None:
        """Why `approval` may not release a pause requiring `roles`, when signed approvals are
        on and it needs one; None when it may (signed over this run, step, role and approver,
        and verified again)."""
        from catalyst_dsl.runtime.approvals.approvers import ApprovalRefused, verify

        if not (self.context.project.config.signed_approvals and roles):
            return None
        expected = {
            "run": state.run_id,
            "step": approval.path,
            "role": approval.role,
            "approver": approval.by,
            "decision": approval.decision,
        }
        lines = dict(line.split(": ", 1) for line in (approval.signed_text or "").splitlines()[1:] if ": " in line)
        try:
            if approval.signature is None or any(lines.get(k) != v for k, v in expected.items()):
                raise ApprovalRefused("it carries no signature over this run, step, role and approver")
            verify(
                approval.signed_text,
                approval.signature,
                approval.by or "",
                self.context.project.resolve(self.context.project.config.allowed_signers),
            )
        except ApprovalRefused as refused:
            return refused.message
        return None

    def autonomous_releases(self, roles: list[str]) -> bool:
        """catalyst approves pauses by itself (autonomous mode, approval rules, `approved: true`),
        except where a signed approval is required."""
        if self.context.project.config.signed_approvals and roles:
            self.context.events.message(
                "warning",
                "signed approvals are on: catalyst does not release by itself a checkpoint that needs a role "
                "(autonomous mode, approval rules, approved: true)",
            )
            return False
        return True

    def terminal_approver(self, roles: list[str]) -> tuple[str, str | None] | None:
        """Who at this terminal releases a pause needing `roles`: the OS user, as a role they
        hold when `approvers` is set. None (the run pauses) when they hold none of the roles,
        or when signed approvals are on: ENTER proves no one's identity."""
        from catalyst_dsl.runtime.machine import current_user

        user = current_user()
        if not roles:
            return user, None
        if self.context.project.config.signed_approvals:
            self.context.events.message(
                "warning",
                "signed approvals are on: this checkpoint is released only by `catalyst approve` with a signature",
            )
            return None
        if not self.context.approvers.configured:
            return user, None
        held = [role for role in roles if self.context.approvers.holds(user, role)]
        if held:
            return user, held[0]
        self.context.events.message(
            "warning",
            f"{user} holds none of the roles that may release this checkpoint ({', '.join(roles)}); "
            f"one of them approves it with `catalyst approve`",
        )
        return None


def refusing(action: Callable[[], Any]) -> Any:
    """`action()`, with an ApprovalRefused turned into the CLI's error."""
    from catalyst_dsl.runtime.approvals.approvers import ApprovalRefused

    try:
        return action()
    except ApprovalRefused as refused:
        raise RunAbort(EXIT_INVALID, refused.message, help=refused.help) from None


def pause_text(state, role: str | None, approver: str, decision: str, nonce: str) -> str:
    """The text an approver of the step `state` is paused at signs (RunAbort if it cannot be made)."""
    from catalyst_dsl.runtime.approvals.approvers import approval_text

    return refusing(
        lambda: approval_text(
            run_id=state.run_id,
            path=state.pause.path,
            role=role,
            approver=approver,
            decision=decision,
            state_hash=state_hash(state),
            nonce=nonce,
        )
    )


def state_hash(state) -> str:
    """What an approval token is bound to: the run, its playbook, its journal and where it waits."""
    from catalyst_dsl.runtime.approvals.tokens import canonical_hash

    return canonical_hash(
        {
            "runId": state.run_id,
            "playbook": state.playbook.fingerprint,
            "journal": [[r.path, r.status] for r in state.steps],
            "pause": state.pause.path if state.pause else None,
        }
    )


def pause_nonce(state) -> str:
    """The nonce a signed direct approval of the pause a run waits at signs: new each time
    the run pauses (it names the moment), spent once used."""
    from catalyst_dsl.runtime.approvals.tokens import canonical_hash

    return "pause-" + canonical_hash({"runId": state.run_id, "path": state.pause.path, "since": state.pause.since})[:32]
