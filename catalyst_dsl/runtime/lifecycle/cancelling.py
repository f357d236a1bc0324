"""Cancelling a run: a live run on this machine is asked to stop before its next step (a
cancel file it checks); any other unfinished run is marked cancelled at once.
"""

from __future__ import annotations

import json

from catalyst_dsl.runtime.errors import EXIT_STATE, RunAbort
from catalyst_dsl.runtime.events import utc_now
from catalyst_dsl.runtime.lifecycle.context import RunContext
from catalyst_dsl.runtime.lifecycle.run_view import keep_view_of


class Canceller:
    """Cancels runs of one project."""

    def __init__(self, context: RunContext) -> None:
        self.context = context

    def cancel(self, run_id: str, reason: str, by: str | None) -> str:
        from catalyst_dsl.runtime.machine import current_user, pid_alive, this_host
        from catalyst_dsl.runtime.state.store import Cancel

        # A cancel accepts a snapshot that does not verify: it runs nothing of the run and
        # only ends it, so that the run's locks are not held for ever by a run every other
        # command refuses. What did not verify is kept in the cancel record; the run, now
        # cancelled, can never be approved or resumed.
        with self.context.changing(run_id, unverified=True):
            state, unverified = self.context.store.load_to_end(run_id)
            if state.status in ("completed", "failed", "cancelled"):
                raise RunAbort(
                    EXIT_STATE, f"run {state.run_id} already ended ({state.status})", help="nothing to cancel"
                )
            if state.status == "running" and state.owner.host == this_host() and pid_alive(state.owner.pid):
                # A live run stops itself before its next step, saving its state on the way out.
                (self.context.state_dir / f"run-{state.run_id}.cancel").write_text(
                    json.dumps({"by": by or current_user(), "reason": reason}), encoding="utf-8"
                )
                return f"asked run {state.run_id} to stop before its next step"
            state.cancel = Cancel(by=by or current_user(), reason=reason, at=utc_now(), unverified=unverified or None)
            state.status, state.ended_at, state.in_flight = "cancelled", utc_now(), None
            keep_view_of(self.context, state)
            self.context.store.save(state)
            self.context.store.archive(state)
        self.context.locks.release(state.run_id)
        if state.cancel.unverified:
            return f"cancelled run {state.run_id}, whose snapshot did not verify ({'; '.join(state.cancel.unverified)})"
        return f"cancelled run {state.run_id}"


def cancel_request(context: RunContext, run_id: str) -> tuple[str, str]:
    """Who asked the live run to stop, and why, as the cancel file says."""
    try:
        request = json.loads((context.state_dir / f"run-{run_id}.cancel").read_text(encoding="utf-8"))
        return str(request.get("by") or "unknown"), str(request.get("reason") or "no reason given")
    except (OSError, ValueError, AttributeError):
        return "unknown", "the cancel request could not be read"


def clear_cancel(context: RunContext, run_id: str) -> None:
    """Remove an ended run's cancel file: it is read only while the run lives."""
    cancel_file = context.state_dir / f"run-{run_id}.cancel"
    if cancel_file.exists():
        cancel_file.unlink()
