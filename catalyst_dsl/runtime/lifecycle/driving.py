"""The run itself: a started or resumed run claimed, its locks taken, its playbook run by
the interpreter, and, whatever ends it (success, a failed step, a pause, Ctrl-C, a
cancel), its snapshot saved first and its locks released after.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.approvals.signatures import Signatures
from catalyst_dsl.runtime.errors import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PAUSED,
    EXIT_STATE,
    RunAbort,
    StepError,
)
from catalyst_dsl.runtime.events import utc_now
from catalyst_dsl.runtime.values.jsvalues import as_json_data
from catalyst_dsl.runtime.lifecycle.artifacts import check_artifacts
from catalyst_dsl.runtime.lifecycle.cancelling import cancel_request, clear_cancel
from catalyst_dsl.runtime.lifecycle.context import RunContext
from catalyst_dsl.runtime.lifecycle.interpreting import perform
from catalyst_dsl.runtime.lifecycle.lock_resources import lock_resources
from catalyst_dsl.runtime.lifecycle.run_hooks import RunHooks, failure
from catalyst_dsl.runtime.lifecycle.run_view import keep_view


class Driver:
    """Runs a run's playbook to its end, a pause, a cancel or an interruption."""

    def __init__(self, context: RunContext) -> None:
        self.context = context
        self.signatures = Signatures(context)

    def drive(self, state, file: str, playbook: ir.Playbook, values: dict[str, Any], *, resumed: bool) -> int:
        """Run the playbook from where `state` stands; the exit code. Traces and metrics go
        out when the environment asks for them (runtime/telemetry.py)."""
        from catalyst_dsl.runtime import telemetry

        context = self.context
        ending = telemetry.start(context.events, lambda text: context.events.message("warning", text))
        try:
            return self._drive(state, file, playbook, values, resumed=resumed)
        finally:
            if ending is not None:
                ending()

    def _drive(self, state, file: str, playbook: ir.Playbook, values: dict[str, Any], *, resumed: bool) -> int:
        from catalyst_dsl._internal.collector import for_long_running
        from catalyst_dsl.runtime.engine.frames import granted_paths
        from catalyst_dsl.runtime.engine.signals import Cancelled, Paused

        context = self.context
        for_long_running()  # a run can take hours: the collector as Python sets it
        started = time.monotonic()
        keep_view(context, playbook)
        # The locks first: a run they refuse is not announced, having never begun.
        self._lock(state, lock_resources(context, playbook, values, file), resumed)
        scratch = context.state_dir / "tmp" / state.run_id
        # AI adapters that run a program go through the gateway too.
        grants = granted_paths(playbook, context.inputs_env(values))
        performer = context.options.performer or context.real_performer(state.run_id)
        gateway = context.gateway = context.new_gateway(playbook, grants, scratch, performer)
        if not resumed:
            self._protected_branches(state, playbook, values, gateway)
        context.events.run_started(state.run_id, playbook.name, resumed)
        context.ai.announce()
        if resumed:
            restored = context.store.bring_back(state, gateway)
            if restored:
                context.events.notice(
                    f"put back {len(restored)} file(s) the run wrote before it paused: {', '.join(restored[:5])}"
                    + (" …" if len(restored) > 5 else "")
                )
        hooks = RunHooks(context, self.signatures, state).hooks()
        replay = {r.path: _record_dict(r, seq) for seq, r in enumerate(state.steps)}
        try:
            outputs = perform(
                context, state, playbook, file, values, gateway, hooks, scratch=scratch, replay=replay, resumed=resumed
            )
            check_artifacts(context, playbook, values)
        except Paused as pause:
            return self._paused(state, pause)
        except Cancelled as cancel:
            return self._cancelled(state, cancel, started)
        except KeyboardInterrupt:
            context.store.save(state)  # status stays running, inFlight names the step to re-run
            context.events.run_finished(
                "interrupted", time.monotonic() - started, f"resume with: catalyst resume {state.run_id}"
            )
            return EXIT_INTERRUPTED
        except Exception as error:
            if isinstance(error, RunAbort):
                raise
            if not isinstance(error, StepError):
                # Our own bug: the snapshot still ends, so the run is not left "running".
                state.error = failure(
                    context, StepError("InternalError", f"{type(error).__name__}: {error}"), state.in_flight, 1, 0.0
                )
                self._finish(state, "failed", started, "internal error (a bug in catalyst; please report it)")
                raise
            return self._failed(state, error, started)
        finally:
            if state.status != "paused":
                self._clean_up(state, scratch, resumed)
        state.outputs = context.masker.mask(as_json_data(outputs))
        return self._finish(state, "completed", started, "")

    def _lock(self, state, resources: list[str], resumed: bool) -> None:
        """Take the run's locks (claiming a resumed run first), or end it without running."""
        from catalyst_dsl.runtime.state.locks import DamagedLock, LockConflict
        from catalyst_dsl.runtime.effects.process_groups import ProcessGroups
        from catalyst_dsl.runtime.state.snapshot import current_owner

        context = self.context
        previous = self.claim(state, resources) if resumed else None
        if resumed:
            # The step in flight when catalyst died may have left its programs running: they
            # are confirmed dead before it runs again.
            ProcessGroups.of_run(context.state_dir, state.run_id, context.store.run_key().secret).reap()
        try:
            context.locks.acquire(state.run_id, resources)
        except LockConflict as conflict:
            if isinstance(conflict, DamagedLock):
                message = str(conflict)
            else:
                message = f"another run holds {conflict.resource}: run {conflict.owner.run_id}"
            self._refuse(state, previous, message)
        if previous is None:
            state.status = "running"
            state.owner = current_owner()
            state.locks = list(resources)
            context.store.save(state)

    def _protected_branches(self, state, playbook: ir.Playbook, values: dict[str, Any], gateway) -> None:
        """A new run that would commit to a protected branch ends here, having changed
        nothing: its locks given back, no run left behind (branch_protection.py)."""
        from catalyst_dsl.runtime.lifecycle.branch_protection import preflight_context, refuse_protected_commits

        context = self.context
        if not any(step.action == "git-commit" for step in ir.all_steps(playbook)):
            return
        ctx = preflight_context(
            state.run_id,
            gateway,
            context.project.config,
            context.provided_secret,
            lambda level, message, data: None,
        )
        try:
            refuse_protected_commits(
                playbook, context.inputs_env(values), ctx, lambda text: context.events.message("warning", text)
            )
        except RunAbort:
            context.locks.release(state.run_id)
            context.store.discard(state)
            raise

    def _refuse(self, state, previous, message: str) -> None:
        """A run whose locks another run holds: a resumed one stays as it was, a new one is
        removed (it ran nothing)."""
        context = self.context
        if previous is not None:
            # Give the claim back: the snapshot is as it was (paused, failed…).
            with context.locks.guard():
                context.store.save(previous)
                if previous.finished:
                    context.store.archive(previous)
            raise RunAbort(
                EXIT_FAILED,
                f"{message}; run {state.run_id} stays {previous.status}",
                help="resume it once the other run has finished",
            ) from None
        # A new run that cannot take its locks never began: it leaves no failed run in
        # `catalyst runs list` for a person to wonder about, only this message.
        context.store.discard(state)
        raise RunAbort(
            EXIT_FAILED,
            message + "; nothing was run",
            help="wait for that run to finish, or cancel it with `catalyst cancel`",
        ) from None

    def claim(self, state, resources: list[str]):
        """Make a resumed run this process's, as one change under the guard, before it takes
        any lock: a fresh read must be the snapshot this resume loaded (a run another resume
        claimed or moved on meanwhile is refused), and approvals given since count. Returns
        the snapshot as it was, to give the claim back if the run cannot take its locks."""
        from catalyst_dsl.ir.journal import CAUGHT
        from catalyst_dsl.runtime.state.snapshot import current_owner

        context = self.context
        with context.locks.guard():
            fresh = context.store.load(state.run_id, results=False)
            if (fresh.status, fresh.updated_at, len(fresh.steps)) != (state.status, state.updated_at, len(state.steps)):
                raise RunAbort(
                    EXIT_STATE,
                    f"run {state.run_id} changed while this resume started (it is {fresh.status} now): "
                    "another process is resuming it, or did",
                    help="`catalyst runs show` tells where it is",
                )
            state.approvals, state.cancel = fresh.approvals, fresh.cancel
            self.signatures.check_signed(state)
            if state.status == "failed":
                # A failed run resumes from the step that failed, once its cause is fixed; the
                # failures catches handled run again too (their handlers may be what failed).
                context.store.reopen(state)
                state.error, state.ended_at = None, None
                state.steps = [r for r in state.steps if r.action != CAUGHT]
            state.status = "running"
            state.owner = current_owner()
            state.locks = list(resources)
            state.pause = None
            context.store.save(state)
        return fresh

    def _paused(self, state, pause) -> int:
        """A run that waits (for an approval, a review, a person): it keeps its locks."""
        from catalyst_dsl.runtime.state.store import Pause

        state.status = "paused"
        state.in_flight = None
        state.pause = Pause(
            path=pause.path,
            message=self.context.masker.mask_text(pause.message),
            roles=pause.roles,
            options=as_json_data(pause.options),
            since=utc_now(),
            kind=pause.kind,
            subject=pause.subject,
            person=pause.person,
            step=pause.step_id,
        )
        self.context.store.save(state)
        self.context.events.paused(pause.step_id, pause.message, pause.roles, state.run_id, pause.options)
        return EXIT_PAUSED

    def _cancelled(self, state, cancel, started: float) -> int:
        from catalyst_dsl.runtime.state.store import Cancel

        if cancel.by is not None:
            by, reason = cancel.by, cancel.reason or "cancelled"
        else:
            by, reason = cancel_request(self.context, state.run_id)
        state.cancel = Cancel(by=by, reason=reason, at=utc_now())
        return self._finish(state, "cancelled", started, f"cancelled by {by}: {reason}")

    def _failed(self, state, error: StepError, started: float) -> int:
        # The failure the run recorded for this error, when it was its last.
        last = state.failures[-1] if state.failures else None
        if last is not None and last.code == error.code:
            state.error = last
        else:
            from catalyst_dsl.runtime.engine.paths import step_label

            label = step_label(error.step, error.path) if error.step and error.path else None
            state.error = failure(self.context, error, error.step, 1, 0.0, label)
        return self._finish(state, "failed", started, f"{error.code}: {error.message}", fix=error.guidance)

    def _clean_up(self, state, scratch: Path, resumed: bool) -> None:
        """Release an ended run's locks (a paused run keeps its locks: nobody else writes what
        is under review) and remove its scratch folder."""
        import shutil  # here: a what-if (which never ends a run) does not import it

        self.context.locks.release(state.run_id)
        shutil.rmtree(scratch, ignore_errors=True)
        if resumed:  # a catalyst killed in a step left its program's temp folder
            from catalyst_dsl.runtime.effects.confinement import remove_temp_folders

            remove_temp_folders(state.run_id)

    def _finish(self, state, status: str, started: float, detail: str, fix: str | None = None) -> int:
        state.status, state.in_flight, state.ended_at = status, None, utc_now()
        self.context.store.save(state)
        self.context.store.archive(state)
        clear_cancel(self.context, state.run_id)
        self.context.events.run_finished(status, time.monotonic() - started, detail, fix)
        return {"completed": EXIT_OK, "failed": EXIT_FAILED, "cancelled": EXIT_CANCELLED}[status]


def _record_dict(record, seq: int) -> dict:
    return {
        "path": record.path,
        "status": record.status,
        "result": record.result,
        "name": record.name,
        "action": record.action,
        "seq": seq,
    }
