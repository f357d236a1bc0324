"""The run snapshot (`RunState`): what a run records about itself, step by step.

The interpreter updates one `RunState` in place and the store (`store.py`) saves it
after every step; `snapshot_codec.py` turns it into a file's bytes and back.

Invariants a snapshot must keep (the interpreter keeps them, and loading checks them):
the journal records each step path once (a step re-run on resume is not recorded again);
a finished run (completed, failed, cancelled) has `endedAt` and nothing in flight, an
unfinished one no `endedAt`; a paused run says what it waits for (`pause`); `runId`
matches the file name.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from catalyst_dsl._internal.records import factory, field, record
from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.machine import current_user, pid_alive, this_host, utc_now

FORMAT = "catalyst-run"
VERSION = 1

RunStatus = Literal["running", "paused", "completed", "failed", "cancelled"]
FINISHED = frozenset({"completed", "failed", "cancelled"})


# -- the snapshot model -------------------------------------------------------------------
# Mutable records (catalyst_dsl._internal.records, not attrs: a run's start does not pay for building
# attrs classes) on purpose: the interpreter updates one RunState in place and saves it.
# Fields have no defaults where a missing key in a file would lose information (an
# absent `steps` must not read as "nothing done yet").


@record(frozen=False, kw_only=True)
class PlaybookRef:
    name: str
    #: Project-relative, POSIX separators.
    file: str
    #: The interpreter's hash of the playbook, to refuse resuming a changed one.
    fingerprint: str


@record(frozen=False, kw_only=True)
class Owner:
    pid: int
    host: str
    user: str


@record(frozen=False, kw_only=True)
class StepRecord:
    #: Where the step sits in the playbook ("steps/2/then/0"); opaque to the store.
    path: str
    name: str | None
    action: str
    status: Literal["completed", "failed", "skipped"]
    attempts: int
    started_at: str
    #: Seconds.
    duration: float
    result: Any = None
    reason: str | None = None
    fingerprint: str | None = None
    #: The SHA-256 of a result too big for the snapshot, kept beside it (integrity/results.py);
    #: `result` is then null in the file and filled in when loaded.
    result_blob: str | None = None
    #: The prompt an AI step sent, masked (the `keep-prompts` setting); its answer is `result`.
    prompt: str | None = None
    #: The step's name as the run showed it (its `name` or `action@line`, with the loop
    #: iteration): what `runs show` says instead of the path. None in older snapshots.
    label: str | None = None


@record(frozen=False, kw_only=True)
class Pause:
    path: str
    message: str
    roles: list[str]
    options: list[Any]
    since: str
    #: "checkpoint" and "inquire" wait for an approval; "suspend" only for `resume`.
    kind: Literal["checkpoint", "inquire", "suspend"] = "checkpoint"
    #: What an approval here approves, when more than the place: the effects a step would
    #: have and the step itself (Approval.subject). None for checkpoints.
    subject: str | None = None
    #: Only a person releases it: a checkpoint with an approval policy (`human`, or rules
    #: that did not pass it), or an Inquire. `--mode autonomous` does not, on resume either.
    person: bool = False
    #: The paused step's name as the run showed it (StepRecord.label).
    step: str | None = None


@record(frozen=False, kw_only=True)
class Approval:
    path: str
    #: None for approvals that name no role: ENTER on a terminal, autonomous mode.
    role: str | None
    by: str
    at: str
    comment: str | None
    #: "policy": passed by its approval rules (the comment says which); "playbook": the
    #: author pre-approved the step (`approved: true`).
    via: Literal["terminal", "cli", "token", "autonomous", "webhook", "policy", "playbook"]
    #: False when the role may not release the checkpoint: recorded, not effective.
    released: bool
    #: The option chosen at a checkpoint that offers options.
    selected: Any = None
    #: "approve", "request-changes" or "comment" (docs/running.md, Checkpoints and approvals).
    decision: Literal["approve", "request-changes", "comment"] = "approve"
    #: The nonce of the approval token that brought it: a token is used once.
    token: str | None = None
    #: The pause's subject when it was approved: it counts only while the step would still
    #: do the same (a changed step, or other paths to write, is asked about again).
    subject: str | None = None
    #: A request-changes that already failed its step: later runs of the step ask anew.
    delivered: bool = False
    #: For a signed approval: the exact text the approver signed (runtime/approvals/approvers.py) and
    #: the armored `ssh-keygen -Y sign` signature over it, kept for audit.
    signed_text: str | None = None
    signature: str | None = None
    #: The paused step's name as the run showed it (Pause.step), for a person reading the
    #: run; None in snapshots written before it was kept.
    step: str | None = None


@record(frozen=False, kw_only=True)
class Failure:
    code: str
    message: str
    #: The step's id (its `name`, else `action@line`); None for a failure of the run itself
    #: rather than of one step.
    step: str | None
    attempt: int
    #: Seconds.
    duration: float
    at: str
    #: The step's name as the run showed it, with the loop iteration (StepRecord.label):
    #: what `runs show` says. None in older snapshots, and for a failure of the run itself.
    label: str | None = None


@record(frozen=False, kw_only=True)
class Cancel:
    by: str
    reason: str
    at: str
    #: What did not verify when the run was cancelled: a cancel runs nothing, so it ends a
    #: run whose snapshot does not verify (which every other command refuses) and says so
    #: here, for audit. Left out of the file when everything verified.
    unverified: list[str] | None = field(default=None, metadata={"omit_if_default": True})


@record(frozen=False, kw_only=True)
class TrustedEdit:
    """A snapshot that did not verify, accepted with `resume --trust-edited-state`: the audit record."""

    by: str
    at: str
    #: What did not verify, as the refusal named it ("the result of steps/3 was edited").
    changes: list[str]


@record(frozen=False, kw_only=True)
class RunState:
    format: Literal["catalyst-run"] = FORMAT
    version: Literal[1] = VERSION
    #: Empty until `StateStore.create` claims one.
    run_id: str
    playbook: PlaybookRef
    status: RunStatus
    mode: Literal["manual", "autonomous"]
    #: Secret values are already placeholders when they get here.
    inputs: dict[str, Any]
    secret_inputs: list[str]
    started_at: str
    updated_at: str
    ended_at: str | None
    owner: Owner
    #: The journal, in completion order.
    steps: list[StepRecord]
    #: The path of the step running now: set before it starts, cleared when recorded.
    in_flight: str | None
    pause: Pause | None
    approvals: list[Approval]
    failures: list[Failure]
    outputs: dict[str, Any] | None
    cancel: Cancel | None
    #: What the run may write, recorded for audit.
    permissions: dict[str, Any]
    locks: list[str]
    #: What ended a failed run.
    error: Failure | None
    #: Snapshots that did not verify and were accepted on purpose, oldest first.
    trusted_edits: list[TrustedEdit] = factory(list)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


# -- owners, new and resumed runs ----------------------------------------------------


def current_owner() -> Owner:
    return Owner(pid=os.getpid(), host=this_host(), user=current_user())


def new_run_state(
    playbook: PlaybookRef,
    *,
    mode: Literal["manual", "autonomous"] = "manual",
    inputs: dict[str, Any] | None = None,
    secret_inputs: list[str] | None = None,
    permissions: dict[str, Any] | None = None,
    locks: list[str] | None = None,
    started_at: str | None = None,
) -> RunState:
    """A fresh, running snapshot owned by this process; `StateStore.create` gives it an id."""
    now = started_at or utc_now()
    return RunState(
        run_id="",
        playbook=playbook,
        status="running",
        mode=mode,
        inputs=dict(inputs or {}),
        secret_inputs=list(secret_inputs or []),
        started_at=now,
        updated_at=now,
        ended_at=None,
        owner=current_owner(),
        steps=[],
        in_flight=None,
        pause=None,
        approvals=[],
        failures=[],
        outputs=None,
        cancel=None,
        permissions=dict(permissions or {}),
        locks=list(locks or []),
        error=None,
    )


def ensure_resumable(state: RunState) -> None:
    """Refuse to resume a run that is over, or that another live process is running."""
    if state.status in ("completed", "cancelled"):
        raise RunAbort(
            EXIT_INVALID,  # nothing is wrong with the snapshot: the run is over
            f"run {state.run_id} is {state.status}; a {state.status} run cannot be resumed",
            help=f"start a new run with `catalyst run {state.playbook.name}`",
        )
    owner = state.owner
    # A paused run's process normally exits (code 4), but one waiting for ENTER on a
    # terminal is still there: resuming beside it would run the same steps twice.
    if owner.host == this_host() and owner.pid != os.getpid() and pid_alive(owner.pid):
        doing = "still running" if state.status == "running" else f"{state.status} and its process is still there"
        raise RunAbort(
            EXIT_STATE,
            f"run {state.run_id} is {doing} (process {owner.pid} on {owner.host})",
            help=f"wait for it to end or stop it with `catalyst cancel {state.run_id}`;"
            f" if process {owner.pid} is not catalyst, its number was reused:"
            " stop the run with `catalyst cancel` and resume it",
        )


def pause_released(state: RunState) -> bool:
    """Whether the checkpoint a paused run waits at has its decision: approved, or changes
    requested (which resume carries back to the step that asked)."""
    return state.pause is not None and any(
        a.path == state.pause.path and (a.released or a.decision == "request-changes") for a in state.approvals
    )


def shown_step(state, path: str) -> str:
    """The name a person sees for the step at journal path `path`: the label the run showed
    it by (its `name` or `action@line`, with its loop iteration), the path only when the
    snapshot has none (written before labels were kept). A pause inside a step (its gate
    `…/before`, a review, an inquiry) is shown by its step's name."""
    pause = state.pause
    if pause is not None and pause.path == path and pause.step:
        return pause.step
    owner = path
    while owner:
        for done in reversed(state.steps):
            if done.path == owner and done.label:
                return done.label
        owner = owner.rpartition("/")[0] if owner.count("/") > 1 else ""
    return path


def shown_status(state) -> str:
    """The status to show a person: a snapshot says "running" from its start to its end, so a
    run stopped by Ctrl-C, SIGTERM or a crash still says so; when its process is gone from this
    host it is shown as "interrupted" (resume continues it). On another host nobody can tell."""
    owner = state.owner
    if state.status == "running" and owner is not None and owner.host == this_host() and not pid_alive(owner.pid):
        return "interrupted"
    return state.status
