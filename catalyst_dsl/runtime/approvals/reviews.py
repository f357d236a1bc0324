"""Pull-request reviews received by the webhook receiver (webhooks.py), recorded on the
paused runs that wait for the review of that pull request.
"""

from __future__ import annotations

from typing import Any

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.approvals.signatures import Signatures
from catalyst_dsl.runtime.errors import RunAbort
from catalyst_dsl.runtime.events import utc_now
from catalyst_dsl.runtime.lifecycle.context import RunContext


class Reviews:
    """Pull-request reviews recorded on one project's paused runs."""

    def __init__(self, context: RunContext) -> None:
        self.context = context

    def received(
        self,
        url: str,
        login: str,
        decision: str,
        comment: str | None,
        submitted_at: str | None = None,
        review_key: str | None = None,
    ) -> list[dict[str, Any]]:
        """A pull-request review (a webhook's): recorded on each paused run that waits for the
        review of that pull request (its pause's subject is the URL). Only a login listed in
        `github-reviewers` releases the pause (and only with a role it requires, when it
        requires any); any other review is recorded only. A review submitted before the run
        paused there, or a review already recorded (`review_key`: the signed review id, never
        the unsigned delivery header), is ignored. The runs then go on with `catalyst resume`."""
        context = self.context
        reviewers = {name.strip().lower(): role for name, role in context.project.config.github_reviewers.items()}
        review = _Review(url, login, reviewers.get(login.strip().lower()), decision, comment, submitted_at)
        nonce = review_key or None
        touched = []
        for summary in context.store.list(include_history=False):
            if summary.status != "paused":
                continue
            # Loaded and saved as one change: a concurrent resume sees it, or refuses it.
            with context.locks.guard():
                try:
                    state = context.store.load(summary.run_id, results=False)
                except RunAbort as damaged:  # one damaged snapshot must not stop the others' reviews
                    touched.append({"run": summary.run_id, "skipped": damaged.message})
                    continue
                said = self._record(state, review, nonce)
            if said is not None:
                touched.append(said)
        return touched

    def _record(self, state, review: _Review, nonce: str | None) -> dict[str, Any] | None:
        """Record `review` on the run when it waits for it; what was done, None when it does not wait."""
        from catalyst_dsl.runtime.approvals.tokens import releases
        from catalyst_dsl.ir.journal import REVIEW
        from catalyst_dsl.runtime.state.store import Approval

        pause = state.pause
        if state.status != "paused" or pause is None or pause.subject != review.url:
            return None
        if not pause.path.endswith("/" + REVIEW):
            return None
        if nonce is not None and any(a.token == nonce for a in state.approvals):
            from catalyst_dsl.runtime.approvals.webhooks import ALREADY_RECORDED

            return {"run": state.run_id, "ignored": ALREADY_RECORDED}
        if review.submitted_at is not None and _instant(review.submitted_at) < _instant(pause.since):
            return {"run": state.run_id, "ignored": "the review was submitted before the run paused for it"}
        # A review carries no SSH signature: with signed approvals it is recorded, never releases a role.
        released = (
            review.role is not None
            and review.decision in ("approve", "request-changes")
            and releases(review.role, pause.roles)
            and not Signatures(self.context).required(pause)
        )
        state.approvals.append(
            Approval(
                path=pause.path,
                role=review.role,
                by=review.login,
                at=utc_now(),
                comment=self.context.masked_comment(state, review.comment),
                via="webhook",
                released=released,
                decision=review.decision,
                subject=pause.subject,
                step=pause.step,
                token=nonce,
            )
        )
        self.context.store.save(state)
        return {"run": state.run_id, "step": pause.path, "decision": review.decision, "released": released}


@record
class _Review:
    """One review as received: `role` is the reviewer's in `github-reviewers`, or None."""

    url: str
    login: str
    role: str | None
    decision: str
    comment: str | None
    submitted_at: str | None


def _instant(text: str):
    """An ISO 8601 time (GitHub's `...Z` or ours) as an aware datetime; the epoch when unreadable."""
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.fromtimestamp(0, timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
