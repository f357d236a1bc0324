"""The hooks a run's interpreter records through: each step's entry, the step in flight,
failures, approvals (asked at the terminal, or found in the snapshot), the cancel file.

Each hook changes the run's snapshot and saves it, so that whatever ends the run, the
snapshot says how far it got.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable

from catalyst_dsl._internal.terminal_text import is_terminal
from catalyst_dsl.runtime.approvals.signatures import Signatures
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.events import utc_now
from catalyst_dsl.runtime.values.jsvalues import as_json_data
from catalyst_dsl.runtime.lifecycle.children import load_child
from catalyst_dsl.runtime.lifecycle.context import RunContext

if TYPE_CHECKING:
    from catalyst_dsl.runtime.engine.frames import Hooks


class RunHooks:
    """The hooks of one run, over its snapshot `state`."""

    def __init__(self, context: RunContext, signatures: Signatures, state) -> None:
        self.context = context
        self.signatures = signatures
        self.state = state
        self.journaled = {r.path for r in state.steps}
        self._results = None

    def hooks(self) -> Hooks:
        from catalyst_dsl.runtime.engine.frames import Hooks

        context, state = self.context, self.state
        cancel_file = context.state_dir / f"run-{state.run_id}.cancel"
        return Hooks(
            record_step=self.record_step,
            save=lambda: context.store.save(state),
            set_in_flight=self.set_in_flight,
            record_failure=self.record_failure,
            approval_for=self.approval_for,
            approve=self.approve,
            ask=terminal_asker(context),
            cancel_requested=cancel_file.exists,
            load_playbook=lambda frame, step, target: load_child(context, state, frame, step, target),
            adapter=context.adapter,
            mask=context.masker.mask,
            secret=context.provided_secret,
            terminal_approver=self.signatures.terminal_approver,
            autonomous_releases=self.signatures.autonomous_releases,
            result_cache=self.result_cache,
            input_scripts=self.input_scripts,
        )

    def input_scripts(self, playbook, values: dict) -> list:
        """What the validation scripts of a called playbook's inputs say of the values passed."""
        from catalyst_dsl.runtime.lifecycle.input_scripts import check_scripts, script_rules

        if not script_rules(playbook):
            return []
        return check_scripts(self.context, playbook, values, from_text=False)

    def result_cache(self):
        """The results `cache:` steps may reuse, sealed with the run key (made when first
        asked); None when that key is kept in the state directory itself: a repository
        that commits one beside an entry would have its entry read as catalyst's."""
        if self._results is None:
            from catalyst_dsl.runtime.state.result_cache import FOLDER, ResultCache

            key = self.context.store.run_key()
            self._results = ResultCache(self.context.state_dir / FOLDER, key.secret) if key.outside_state else False
        return self._results or None

    def record_step(self, entry: dict, save: bool = True) -> None:
        from catalyst_dsl.runtime.state.store import StepRecord

        context, state = self.context, self.state
        # One entry per path: a step run again in this run (a retried loop or try)
        # replaces its entry, which moves to the end, so the order stays the order of events.
        if entry["path"] in self.journaled:
            state.steps[:] = [r for r in state.steps if r.path != entry["path"]]
        self.journaled.add(entry["path"])
        state.steps.append(
            StepRecord(
                path=entry["path"],
                name=entry["name"],
                action=entry["action"],
                status=entry["status"],
                attempts=entry["attempts"],
                started_at=entry["startedAt"],
                duration=entry["duration"],
                result=entry["result"],
                reason=context.masker.mask(entry["reason"]),
                fingerprint=entry["fingerprint"],
                prompt=context.masker.mask(entry.get("prompt")) if context.project.config.keep_prompts else None,
                label=entry.get("label"),
            )
        )
        if state.in_flight == entry["path"]:
            state.in_flight = None
        if save:
            context.store.save(state)

    def set_in_flight(self, path: str | None, recovers: bool = True) -> None:
        """Name the step in flight in the snapshot. Only a step its `ensures:` may recover needs
        the name after a power cut (docs/checks.md); any other runs again from the save before,
        which a power cut leaves just as well, so its save need not survive one (`Store.save`)."""
        self.state.in_flight = path
        self.context.store.save(self.state, survives_power_cut=recovers)

    def record_failure(self, error: StepError, sid: str, attempt: int, seconds: float, label: str) -> None:
        self.state.failures.append(failure(self.context, error, sid, attempt, seconds, label))

    def approval_for(self, path: str, subject: str | None = None, roles: list[str] = ()) -> dict | None:
        for approval in reversed(self.state.approvals):  # the latest decision counts
            if approval.path != path or (subject is not None and approval.subject != subject):
                continue
            unsigned = self.signatures.unsigned(self.state, approval, roles) if approval.released else None
            if unsigned is not None:
                # Written into the snapshot by hand for a pause the run had not reached yet
                # (the resume checks only the pause it starts from): it releases nothing.
                self.context.events.message(
                    "warning",
                    f"the approval of {path} by {approval.by} is not validly signed ({unsigned}); "
                    "it does not release the checkpoint",
                )
                continue
            if approval.released and approval.decision in ("request-changes", "approve"):
                return _decided(approval, path, self._deliver)
        return None

    def _deliver(self, approval) -> None:
        """Mark an approval used up (it failed its step, or its retry was run). The one change
        made to an approval after it was saved: the store is told, so its next save records it."""
        approval.delivered = True
        self.context.store.changed(self.state, approval)

    def approve(self, path, via, role, by, comment, released, selected, subject=None, step=None) -> None:
        from catalyst_dsl.runtime.state.store import Approval

        self.state.approvals.append(
            Approval(
                path=path,
                role=role,
                by=by,
                at=utc_now(),
                comment=self.context.masked_comment(self.state, comment),
                via=via,
                released=released,
                selected=as_json_data(selected),
                subject=subject,
                step=step,
            )
        )
        self.context.store.save(self.state)


def _decided(approval, path: str, deliver: Callable[[Any], None]) -> dict | None:
    """What the latest released decision on the step at `path` tells it: go on (with the
    option chosen), fail with ChangesRequested (once), or nothing yet (a retry or a change
    request already used)."""
    if approval.decision == "request-changes" and approval.released:
        if approval.delivered:
            return None  # it failed the step once; the step now needs a new approval
        deliver(approval)
        raise StepError(
            "ChangesRequested",
            f"{approval.by} ({approval.role}) requested changes: {approval.comment or 'no comment'}",
            guidance="the step's errorPolicy decides what happens next; once fixed, resuming asks for approval again",
        )
    if approval.released and approval.decision == "approve":
        if approval.selected == "retry" and path.endswith("/inquire"):
            # A retry after a failure is used once: if the step fails again, a
            # person is asked again.
            if approval.delivered:
                return None
            deliver(approval)
        return {
            "selected": approval.selected,
            "role": approval.role,
            "by": approval.by,
            "at": approval.at,
            "comment": approval.comment,
            "via": approval.via,
        }


def failure(
    context: RunContext, error: StepError, step: str | None, attempt: int, duration: float, label: str | None = None
):
    """The record of a failure: of the step `step` (its id; `label`, its name as the run
    showed it), or of the run itself when `step` is None."""
    from catalyst_dsl.runtime.state.store import Failure

    return Failure(
        code=error.code,
        message=context.masker.mask_text(error.message),
        step=step,
        attempt=attempt,
        duration=round(duration, 6),
        at=utc_now(),
        label=label,
    )


def _typed_line(prompt: str) -> str:
    """The line the person types after `prompt`, stripped. Ctrl-C and the end of input
    (Ctrl-D) are the person stopping the run, which an interrupt says (state saved, exit 130,
    resumable), never a failure of the run: both raise KeyboardInterrupt.

    The wait is a poll of a tenth of a second, not one blocking read: Ctrl-C's signal may be
    delivered to another thread of this process (a launcher's reader, a branch), and then a
    blocking read in this one is never interrupted; between polls Python raises the
    interrupt here."""
    import select

    sys.stdout.write(prompt)
    sys.stdout.flush()
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # a stream with no descriptor: read it as it is
        fd = None
    try:
        while fd is not None and not select.select([fd], [], [], 0.1)[0]:
            pass
        line = sys.stdin.readline()
    except EOFError:
        line = ""
    if not line:
        sys.stdout.write("\n")
        raise KeyboardInterrupt
    return line.strip()


def terminal_asker(context: RunContext) -> Callable | None:
    interactive = context.options.interactive
    if interactive is None:
        interactive = is_terminal(sys.stdin) and is_terminal(sys.stdout) and context.options.log_format == "text"
    if not interactive:
        return None

    def ask(message: str, options: list, default: Any):
        with context.events.holding():  # no live status line over the question
            return _asked(message, options, default)

    return ask


def _asked(message: str, options: list, default: Any):
    """A checkpoint's question on the terminal, and the answer typed."""
    import click

    click.echo(f"⏸ {message}")
    if options:
        keys = [str(o.get("key")) for o in options if isinstance(o, dict)]
        for option in options:
            if isinstance(option, dict):
                click.echo(f"  [{option.get('key')}] {option.get('label') or ''}")
        fallback = str(default) if default in keys else None
        shown = f"choose ({', '.join(keys)})" + (f" [{fallback}]" if fallback else "") + ": "
        while True:
            said = _typed_line(shown) or fallback
            if said in keys:
                return said, None
            click.echo(f"Error: {said!r} is not one of {', '.join(keys)}." if said else "Error: choose one.")
    _typed_line("press ENTER to approve: ")
    return default, None
