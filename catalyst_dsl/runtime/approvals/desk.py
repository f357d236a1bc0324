"""Approving a paused run from outside it (`catalyst approve`, `catalyst runs approval-token`,
`catalyst runs approval-text`): as a role by a person, or with a token issued for one;
signed when the project asks for signatures. Each approval is one change of the run's
snapshot under the guard, and each token or signature is spent once, in a ledger a
snapshot put back cannot undo.
"""

from __future__ import annotations

from catalyst_dsl.runtime.approvals.signatures import Signatures, pause_nonce, pause_text, refusing, state_hash
from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.events import utc_now
from catalyst_dsl.runtime.lifecycle.context import RunContext
from catalyst_dsl.runtime.state.snapshot import shown_step


class StillPaused(str):
    """What an approval that released nothing says: the command then exits 4 (still paused)."""


class ApprovalDesk:
    """Approvals of one project's paused runs."""

    def __init__(self, context: RunContext) -> None:
        self.context = context
        self.signatures = Signatures(context)

    def approval_text(self, run_id: str, role: str | None, by: str | None, token: str | None) -> str:
        """The exact text to sign (`ssh-keygen -Y sign -n catalyst-approval`) for an approval of
        the pause run `run_id` waits at: as `role` by `by`, or the one `token` carries."""
        from catalyst_dsl.runtime.machine import current_user

        state = self._waiting(run_id)
        if token is not None:
            claims = self._token_claims(state, token, used=set())
            role, approver, decision, nonce = claims.role, claims.actor, claims.decision, claims.nonce
        else:
            approver, decision, nonce = by or current_user(), "approve", pause_nonce(state)
        return pause_text(state, role, approver, decision, nonce)

    def issue_token(self, run_id: str, role: str, by: str | None, decision: str, ttl: int) -> str:
        from catalyst_dsl.runtime.approvals.tokens import TokenError, issue_token
        from catalyst_dsl.runtime.machine import current_user

        state = self._waiting(run_id)
        approver = by or current_user()
        self._check_approver(approver, role)
        try:
            return issue_token(
                self._approval_keys(),
                run_id=state.run_id,
                path=state.pause.path,
                state_hash=state_hash(state),
                decision=decision,
                role=role,
                actor=approver,
                ttl_seconds=ttl,
            )
        except TokenError as error:
            raise RunAbort(EXIT_INVALID, str(error), help=getattr(error, "help", None)) from None

    def approve_with_token(
        self, run_id: str, token: str, comment: str | None, sign_with: str | None = None, signature: str | None = None
    ) -> str:
        from catalyst_dsl.runtime.approvals.approvers import SpentLedger
        from catalyst_dsl.runtime.approvals.tokens import releases

        if sign_with is not None:  # signed before the guard is taken: ssh-keygen may ask for a passphrase
            signature = self.signatures.sign(self.approval_text(run_id, None, None, token), sign_with)
        with self.context.changing(run_id):
            state = self._waiting(run_id)
            ledger = SpentLedger(self.context.state_dir)
            # Spent tokens are in the ledger too: a snapshot put back from before the use
            # forgets them, the ledger does not.
            used = {a.token for a in state.approvals if a.token} | refusing(ledger.spent)
            claims = self._token_claims(state, token, used)
            # The settings may have changed since the token was issued.
            self._check_approver(claims.actor, claims.role)
            # `comment` is recorded only; `request-changes` fails the step through its error
            # policy on resume. Only a role that may release the step may also hold it back;
            # others are recorded.
            released = claims.decision in ("approve", "request-changes") and releases(claims.role, state.pause.roles)
            signed_text = self.signatures.proof(
                state,
                claims.role,
                claims.actor,
                claims.decision,
                claims.nonce,
                signature,
                needed=released,
                asked_as="--token TOKEN",
            )
            refusing(lambda: ledger.spend(claims.nonce, state.run_id))
            self._record(
                state,
                comment,
                signed_text,
                signature,
                role=claims.role,
                by=claims.actor,
                via="token",
                released=released,
                decision=claims.decision,
                token=claims.nonce,
            )
        return _said_of_token(state, claims, released)

    def approve(
        self,
        run_id: str,
        role: str,
        by: str | None,
        comment: str | None,
        select: str | None,
        sign_with: str | None = None,
        signature: str | None = None,
    ) -> str:
        from catalyst_dsl.runtime.approvals.tokens import releases
        from catalyst_dsl.runtime.machine import current_user

        approver = by or current_user()
        self._check_approver(approver, role)
        if sign_with is not None:  # signed before the guard is taken: ssh-keygen may ask for a passphrase
            signature = self.signatures.sign(self.approval_text(run_id, role, approver, None), sign_with)
        with self.context.changing(run_id):
            state = self._waiting(run_id)
            _check_selected(state, select)
            released = releases(role, state.pause.roles)
            signed_text = self._signed_directly(state, role, approver, signature, released)
            self._record(
                state,
                comment,
                signed_text,
                signature,
                role=role,
                by=approver,
                via="cli",
                released=released,
                selected=select,
            )
        if released:
            # `--select` answers the checkpoint (`reject` is no approval): say the answer given.
            done = f"answered {select} at" if select is not None else "approved"
            return (
                f"{done} {shown_step(state, state.pause.path)} of run {state.run_id} as {role}; "
                f"continue with: catalyst resume {state.run_id}"
            )
        return StillPaused(
            f"recorded, but {role} may not release this checkpoint (needs one of: {', '.join(state.pause.roles)}); "
            f"the run stays paused"
        )

    def _signed_directly(self, state, role: str, approver: str, signature: str | None, released: bool) -> str | None:
        """The signed text of a direct approval (not by token), its signature spent once."""
        import shlex  # for the command line an approver is shown (a what-if approves nothing)

        from catalyst_dsl.runtime.approvals.approvers import SpentLedger

        nonce = pause_nonce(state)
        signed_text = self.signatures.proof(
            state,
            role,
            approver,
            "approve",
            nonce,
            signature,
            needed=released,
            asked_as=f"--as {shlex.quote(role)} --by {shlex.quote(approver)}",
        )
        if signed_text is not None:
            ledger = SpentLedger(self.context.state_dir)
            if nonce in refusing(ledger.spent):
                raise RunAbort(
                    EXIT_INVALID,
                    "the approval signature is refused: it was already used",
                    help="each signature approves once; sign the text `catalyst runs approval-text` prints now",
                )
            refusing(lambda: ledger.spend(nonce, state.run_id))
        return signed_text

    def _record(self, state, comment: str | None, signed_text: str | None, signature: str | None, **decided) -> None:
        """Append the approval to the run's snapshot and save it (under the caller's guard)."""
        from catalyst_dsl.runtime.state.store import Approval

        state.approvals.append(
            Approval(
                path=state.pause.path,
                at=utc_now(),
                comment=self.context.masked_comment(state, comment),
                subject=state.pause.subject,
                step=state.pause.step,
                signed_text=signed_text,
                signature=signature if signed_text else None,
                **decided,
            )
        )
        self.context.store.save(state)

    def _waiting(self, run_id: str):
        # Results kept beside the snapshot stay unread: approving needs none, and an entry
        # saves back the same reference it was loaded with.
        state = self.context.store.load(run_id, results=False)
        self.context.store.ensure_same_commit(state.run_id, "approve")
        if state.status != "paused" or state.pause is None or state.pause.kind == "suspend":
            raise RunAbort(
                EXIT_STATE,
                f"run {state.run_id} is {state.status}, not waiting for approval",
                help="`catalyst runs show` tells where a run is",
            )
        return state

    def _approval_keys(self):
        """The token key: derived from the run key when that is kept outside the state
        directory, where a step's program could read a key file (runtime/approvals/tokens.py)."""
        from catalyst_dsl.runtime.approvals.tokens import ApprovalKeys

        run_key = self.context.store.run_key()
        return ApprovalKeys(self.context.state_dir, run_secret=run_key.secret if run_key.outside_state else None)

    def _token_claims(self, state, token: str, used: set[str]):
        from catalyst_dsl.runtime.approvals.tokens import TokenError, verify_token

        try:
            return verify_token(
                self._approval_keys(),
                token,
                run_id=state.run_id,
                path=state.pause.path,
                state_hash=state_hash(state),
                used=used,
            )
        except TokenError as error:
            raise RunAbort(
                EXIT_INVALID, f"the approval token is refused: {error}", help=getattr(error, "help", None)
            ) from None

    def _check_approver(self, approver: str, role: str) -> None:
        """Refuse an approval as `role` by someone the `approvers` setting does not give it (when
        set), or whose name or role is not one line of text (it would forge the audit trail)."""
        from catalyst_dsl.runtime.approvals.approvers import one_line

        refusing(lambda: (one_line("approver", approver), one_line("role", role)))
        if not self.context.approvers.holds(approver, role):
            why, who = self.context.approvers.refusal(approver, role)
            raise RunAbort(EXIT_INVALID, f"the approval is refused: {why}", help=who)


def _check_selected(state, select: str | None) -> None:
    """Refuse `--select` of an option the checkpoint does not offer."""
    keys = [str(o.get("key")) for o in state.pause.options if isinstance(o, dict)]
    if select is not None and select not in keys:
        offered = f"the options are: {', '.join(keys)}" if keys else "this checkpoint offers no options"
        raise RunAbort(
            EXIT_INVALID,
            f"--select {select}: not an option of the checkpoint at {shown_step(state, state.pause.path)}",
            help=offered,
        )


def _said_of_token(state, claims, released: bool) -> str:
    """What an approval by token says it did."""
    who = f"{claims.actor} ({claims.role})"
    if claims.decision == "request-changes":
        if not released:
            return StillPaused(
                f"recorded request-changes by {who}, who may not hold this step back; the run stays paused"
            )
        return f"changes requested by {who}; on resume the step fails with ChangesRequested"
    if released:
        return (
            f"approved {shown_step(state, state.pause.path)} of run {state.run_id} as {claims.role}; "
            f"continue with: catalyst resume {state.run_id}"
        )
    return StillPaused(f"recorded {claims.decision} by {who}; the run stays paused")
