"""One project's runs, as the command line and the tests use them: a thin facade over the
run-time's services, each made when first used.

The services live where they belong: starting, resuming, planning and cancelling in
runtime/lifecycle/, approving and pull-request reviews in runtime/approvals/. `Session`
is their shared `RunContext` (the project, the store, the locks, the library, the
plugins, the secrets) with one method per command, so that a command reads as
`Session(project).start(file, inputs)`. Each service's module is imported by the command
that needs it: a what-if loads no approval, a `catalyst approve` no interpreter.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from catalyst_dsl.runtime.lifecycle.context import RunContext


class Session(RunContext):
    """Runs of one project: start, resume, plan, approve, review, cancel."""

    def start(self, file: str, given: Mapping[str, str]) -> int:
        from catalyst_dsl.runtime.lifecycle.starting import Starter

        return Starter(self).start(file, given)

    def resume(self, run_id: str | None, given: Mapping[str, str], *, trust_edited_state: bool = False) -> int:
        from catalyst_dsl.runtime.lifecycle.resuming import Resumer

        return Resumer(self).resume(run_id, given, trust_edited_state=trust_edited_state)

    def plan(
        self, file: str, given: Mapping[str, Any], *, from_text: bool = True, checked=None, hashed: bool = True
    ) -> dict[str, Any]:
        from catalyst_dsl.runtime.lifecycle.planner import Planner

        return Planner(self).plan(file, given, from_text=from_text, checked=checked, hashed=hashed)

    def cancel(self, run_id: str, reason: str, by: str | None) -> str:
        from catalyst_dsl.runtime.lifecycle.cancelling import Canceller

        return Canceller(self).cancel(run_id, reason, by)

    # -- approvals -------------------------------------------------------------------------------

    @functools.cached_property
    def desk(self):
        from catalyst_dsl.runtime.approvals.desk import ApprovalDesk

        return ApprovalDesk(self)

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
        return self.desk.approve(run_id, role, by, comment, select, sign_with=sign_with, signature=signature)

    def approve_with_token(
        self, run_id: str, token: str, comment: str | None, sign_with: str | None = None, signature: str | None = None
    ) -> str:
        return self.desk.approve_with_token(run_id, token, comment, sign_with=sign_with, signature=signature)

    def issue_token(self, run_id: str, role: str, by: str | None, decision: str, ttl: int) -> str:
        return self.desk.issue_token(run_id, role, by, decision, ttl)

    def approval_text(self, run_id: str, role: str | None, by: str | None, token: str | None) -> str:
        return self.desk.approval_text(run_id, role, by, token)

    def review_received(
        self,
        url: str,
        login: str,
        decision: str,
        comment: str | None,
        submitted_at: str | None = None,
        review_key: str | None = None,
    ) -> list[dict[str, Any]]:
        from catalyst_dsl.runtime.approvals.reviews import Reviews

        return Reviews(self).received(url, login, decision, comment, submitted_at, review_key)
