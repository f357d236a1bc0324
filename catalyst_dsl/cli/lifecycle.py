"""The commands of runs already started: resume, approve, cancel, runs list|show|prune|
token|approval-text|export, and the webhook server.

Apart from `run` (run.py), whose module a what-if imports: their options are
built when the module is imported, which `catalyst run` has no need to pay for. They
share `run`'s handling of errors and its session (run.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from catalyst_dsl._internal import records
from catalyst_dsl.cli import completion
from catalyst_dsl.cli.run import LOG_FORMATS, _aborts, _given, _session, _terminate_as_interrupt


@click.command()
@click.argument("run_id", metavar="[RUN]", required=False, shell_complete=completion.live_run_ids)
@click.option(
    "-i", "--input", "inputs", multiple=True, metavar="KEY=VALUE", help="Secret inputs again (they are never saved)."
)
@click.option("--log-format", type=LOG_FORMATS, default="text", show_default=True)
@click.option("-v", "--verbose", is_flag=True)
@click.option(
    "--trust-edited-state",
    is_flag=True,
    help="Accept a snapshot that does not verify (edited by hand, an older copy put back, or from before sealed "
    "snapshots); recorded in the run's audit trail.",
)
@_aborts
def resume(
    run_id: str | None, inputs: tuple[str, ...], log_format: str, verbose: bool, trust_edited_state: bool
) -> None:
    """Continue a paused, interrupted or failed run: completed steps are not run again.
    Without RUN, the one run that is paused or interrupted (several: name one).

    Exit codes (docs/running.md): 0 done, 1 no such run, or one that is over and cannot
    be resumed, 2 a step failed, another run holds a lock it needs, or a usage mistake,
    3 its snapshot is damaged, does not verify or no longer fits the playbook, or the
    state cannot be written, 4 paused for approval, 5 cancelled (`abort` at a checkpoint,
    or `catalyst cancel`), 130 interrupted (Ctrl-C, Ctrl-D at a prompt, or SIGTERM; the
    state is saved).
    """
    _terminate_as_interrupt()
    session = _session(Path.cwd(), log_format=log_format, verbose=verbose)
    given = _given(inputs)
    sys.exit(session.resume(run_id, given, trust_edited_state=trust_edited_state))


@click.command()
@click.argument("run_id", metavar="RUN", shell_complete=completion.live_run_ids)
@click.option(
    "--as", "role", help="The role you approve as; it must be one of reviewers.required to release the checkpoint."
)
@click.option("--by", help="Who approves (default: your user name); with `approvers` set, they must hold the role.")
@click.option("--comment", help="Why.")
@click.option("--select", help="The option key chosen, for a checkpoint with options.")
@click.option(
    "--token", help="A signed approval token (from `catalyst runs token`), for approvals that arrive from outside."
)
@click.option(
    "--sign-with",
    "sign_with",
    metavar="KEY",
    help="Sign the approval with this SSH private key (runs ssh-keygen -Y sign).",
)
@click.option(
    "--signature",
    "signature_file",
    type=click.Path(exists=True, dir_okay=False),
    metavar="FILE",
    help="A signature of the text `catalyst runs approval-text` prints, made elsewhere with ssh-keygen -Y sign.",
)
@_aborts
def approve(
    run_id: str,
    role: str | None,
    by: str | None,
    comment: str | None,
    select: str | None,
    token: str | None,
    sign_with: str | None,
    signature_file: str | None,
) -> None:
    """Approve the checkpoint a paused run waits at; then `catalyst resume RUN`.

    Exits 4 when the approval released nothing (it is recorded; the run is still paused).
    """
    session = _session(Path.cwd())
    if sign_with is not None and signature_file is not None:
        raise click.UsageError(
            "--sign-with signs now and --signature brings a signature made elsewhere: pass one of them"
        )
    signature = _signature(signature_file)
    if token is not None:
        if role or by or select:
            raise click.UsageError(
                "--token carries the role and the approver; do not combine it with --as, --by or --select"
            )
        _said_of_approval(session.approve_with_token(run_id, token, comment, sign_with=sign_with, signature=signature))
        return
    if not role:
        raise click.UsageError("say which role you approve as: --as ROLE (or pass --token)")
    _said_of_approval(session.approve(run_id, role, by, comment, select, sign_with=sign_with, signature=signature))


def _said_of_approval(said: str) -> None:
    """Print what an approval did; one that released nothing exits 4, as the run is still paused."""
    from catalyst_dsl.runtime.errors import EXIT_PAUSED
    from catalyst_dsl.runtime.approvals.desk import StillPaused

    click.echo(said)
    if isinstance(said, StillPaused):
        sys.exit(EXIT_PAUSED)


def _signature(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(64 * 1024)  # a signature is under 1 KiB; anything far bigger is not one
    except (OSError, UnicodeDecodeError) as error:
        raise click.FileError(
            path, hint=f"cannot read the signature: {getattr(error, 'strerror', None) or error}"
        ) from None


@click.command()
@click.argument("run_id", metavar="RUN", shell_complete=completion.live_run_ids)
@click.option("--reason", required=True, help="Why the run is cancelled (kept in the snapshot).")
@click.option("--by", help="Who cancels (default: your user name).")
@_aborts
def cancel(run_id: str, reason: str, by: str | None) -> None:
    """Cancel a run: it is never resumed, and its locks are released."""
    click.echo(_session(Path.cwd()).cancel(run_id, reason, by))


@click.group()
def runs() -> None:
    """Saved runs: list, show, export, prune, token, approval-text."""


@runs.command("list")
@click.option("--json", "as_json", is_flag=True)
@_aborts
def runs_list(as_json: bool) -> None:
    """Live and archived runs, newest first."""
    session = _session(Path.cwd())
    summaries = session.store.list()
    if as_json:
        listing = {
            "format": "catalyst-runs",
            "version": RUNS_JSON_VERSION,
            "runs": [_summary_dict(s) for s in summaries],
        }
        click.echo(json.dumps(listing, indent=2, ensure_ascii=False))
        return
    if not summaries:
        click.echo("no runs yet")
    from catalyst_dsl._internal.terminal_text import safe_text

    for s in summaries:
        click.echo(safe_text(f"{s.run_id}  {s.status:<9}  {s.playbook}  started {s.started_at}"))


@runs.command("show")
@click.argument("run_id", metavar="RUN", shell_complete=completion.any_run_ids)
@_aborts
def runs_show(run_id: str) -> None:
    """A run's snapshot: status, where it is, its steps, approvals and failures."""
    session = _session(Path.cwd())
    state, unverified = session.store.inspect(run_id)
    from catalyst_dsl._internal.terminal_text import safe_text
    from catalyst_dsl.runtime.state.snapshot import shown_status, shown_step

    def echo(line: str) -> None:
        # A snapshot's text (a step's label, a failure's message, a reviewer's name) is
        # data: one line each, its controls escaped, so none forges a line or drives the terminal.
        click.echo(safe_text(line))

    echo(
        f"run {state.run_id}: {state.playbook.name} ({state.playbook.file}) is {shown_status(state)}, mode {state.mode}"
    )
    for problem in unverified:
        echo(f"  warning: the snapshot does not verify: {problem}")
    if (
        state.pause is not None and state.status == "paused"
    ):  # a cancelled run keeps where it was paused, for the record
        roles = f" by one of {', '.join(state.pause.roles)}" if state.pause.roles else ""
        echo(f"  waiting at {shown_step(state, state.pause.path)}{roles}: {state.pause.message}")
    elif state.pause is not None:
        echo(f"  was paused at {shown_step(state, state.pause.path)}: {state.pause.message}")
    if state.in_flight:
        echo(f"  in flight: {shown_step(state, state.in_flight)} (runs again on resume)")
    from catalyst_dsl.ir.journal import LOOP_ITEM
    from catalyst_dsl.report.timeline import HAPPENED, record_name

    for record in state.steps:
        if record.action == LOOP_ITEM:
            continue  # bookkeeping for resume, not a step
        reason = record.reason.splitlines()[0] if record.reason else ""
        if record.action in HAPPENED:  # `caught    risky: NotReady from throw@7`
            echo(f"  {HAPPENED[record.action]:<9} {record_name(state, record)}: {reason}")
            continue
        echo(f"  {record.status:<9} {record_name(state, record)} ({record.action}){f' ({reason})' if reason else ''}")
    for approval in state.approvals:
        state_word = "released" if approval.released else "recorded only"
        signed = ", signed" if approval.signature else ""
        step = approval.step or shown_step(state, approval.path)
        echo(f"  approval  {step} by {approval.by} as {approval.role or '-'} via {approval.via}{signed}: {state_word}")
    for failure in state.failures:
        # A snapshot written before failures kept their label names the step by its id.
        step = failure.label or failure.step
        echo(f"  failure   {step}: {failure.code}: {failure.message} (attempt {failure.attempt})")
    if state.cancel is not None:
        echo(f"  cancelled by {state.cancel.by}: {state.cancel.reason}")
        if state.cancel.unverified:
            echo(f"  cancelled unverified: {'; '.join(state.cancel.unverified)}")
    for edit in state.trusted_edits:
        echo(f"  trusted   {edit.at} by {edit.by}: {'; '.join(edit.changes)}")
    from catalyst_dsl.report.timeline import render_timeline

    for line in render_timeline(state):
        echo(f"  {line}")


@runs.command("prune")
@click.option("--keep-days", type=click.IntRange(min=0), help="Keep archived runs started in the last N days.")
@click.option("--keep-last", type=click.IntRange(min=0), help="Keep the N newest archived runs.")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@_aborts
def runs_prune(keep_days: int | None, keep_last: int | None, dry_run: bool) -> None:
    """Remove archived runs beyond the retention; live and paused runs are never removed."""
    session = _session(Path.cwd())
    retention = session.project.config
    keep_days = keep_days if keep_days is not None else getattr(retention, "retention_days", None)
    keep_last = keep_last if keep_last is not None else getattr(retention, "retention_runs", None)
    if keep_days is None and keep_last is None:
        raise click.UsageError("say what to keep: --keep-days or --keep-last (or set retention-days / retention-runs)")
    from catalyst_dsl.runtime.state.layout import run_id_of

    removed = session.store.prune(keep_days=keep_days, keep_last=keep_last, dry_run=dry_run)
    # The ids first, one a line, so that a dry run can be read (or piped) before it is
    # done for real, and a real one says what is gone; the count last, as the summary.
    for path in removed:
        click.echo(run_id_of(path))
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} {len(removed)} archived run{'s' if len(removed) != 1 else ''}")


@runs.command("token")
@click.argument("run_id", metavar="RUN", shell_complete=completion.live_run_ids)
@click.option("--as", "role", required=True, help="The role the token approves as.")
@click.option("--by", help="Who the token speaks for (default: your user name).")
@click.option(
    "--decision", type=click.Choice(["approve", "request-changes", "comment"]), default="approve", show_default=True
)
@click.option(
    "--ttl", type=click.IntRange(min=60), default=86400, show_default=True, help="Seconds the token stays valid."
)
@_aborts
def runs_token(run_id: str, role: str, by: str | None, decision: str, ttl: int) -> None:
    """Issue a single-use signed approval token for the step a paused run waits at.

    The token is bound to the run, the step and the state as it is now: it is refused
    once used, after it expires, or when the run has moved on. Hand it to the system
    that collects the review (a webhook, a pull-request bot), which passes it to
    `catalyst approve RUN --token`.
    """
    click.echo(_session(Path.cwd()).issue_token(run_id, role, by, decision, ttl))


@runs.command("approval-text")
@click.argument("run_id", metavar="RUN", shell_complete=completion.live_run_ids)
@click.option("--as", "role", help="The role you approve as.")
@click.option("--by", help="Who approves (default: your user name).")
@click.option("--token", help="The approval token you redeem, instead of --as and --by.")
@_aborts
def runs_approval_text(run_id: str, role: str | None, by: str | None, token: str | None) -> None:
    """Print the exact text to sign for an approval of the step a paused run waits at.

    Sign it elsewhere with `ssh-keygen -Y sign -f KEY -n catalyst-approval FILE` and pass the
    .sig file to `catalyst approve RUN --signature FILE` (with the same --as/--by, or --token).
    """
    if token is not None and (role or by):
        raise click.UsageError("--token carries the role and the approver; do not combine it with --as or --by")
    if token is None and not role:
        raise click.UsageError("say which role you approve as: --as ROLE (or pass --token)")
    click.echo(_session(Path.cwd()).approval_text(run_id, role, by, token), nl=False)


@runs.command("export")
@click.argument("run_id", metavar="RUN", shell_complete=completion.any_run_ids)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["catalyst", "cleo"]),
    default="catalyst",
    show_default=True,
    help="catalyst: the audit view; cleo: a cantbook's run as cleo's playbook_runs and playbook_approvals rows.",
)
@click.option(
    "--full",
    is_flag=True,
    help="With each step's result and, under `commits`, the diff of each commit the run made.",
)
@_aborts
def runs_export(run_id: str, fmt: str, full: bool) -> None:
    """The audit view of a run as JSON: approvals, failures, cancel and the step journal."""
    session = _session(Path.cwd())
    if fmt == "cleo":
        if full:
            raise click.UsageError("--full is for the catalyst format")
        click.echo(json.dumps(_cleo_export(session, run_id), indent=2, sort_keys=True, ensure_ascii=False))
        return
    audit = session.store.export(run_id, results=full)
    if full:
        from catalyst_dsl.runtime.lifecycle.audit import commits

        state, _ = session.store.inspect(run_id)
        # Masked in the diffs too, when the providers know it; a diff is left out while
        # one is unknown here (given with -i), since nothing could mask it.
        unknown = [name for name in state.secret_inputs if session.provided_secret(name) is None]
        audit["commits"] = commits(session.project.root, audit["steps"], session.masker.mask_text, unknown)
    click.echo(json.dumps(audit, indent=2, sort_keys=True, ensure_ascii=False))


def _cleo_export(session, run_id: str) -> dict:
    from catalyst_dsl.compiler import compile_path
    from catalyst_dsl.integrations import cleo_export
    from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort

    state, _ = session.store.inspect(run_id)
    playbook, source = cleo_export.load(session.project.root, state, compile_path)
    if (
        playbook is not None
        and playbook.dialect != "cleo"
        or playbook is None
        and not state.playbook.file.endswith(".cantbook")
    ):
        raise RunAbort(
            EXIT_INVALID,
            f"run {state.run_id} ran {state.playbook.file}, which is not a cleo cantbook",
            help="`--format cleo` exports runs of .cantbook playbooks; use the default format for this one",
        )
    return cleo_export.export(state, playbook, source)


#: `runs list --json`: version 1 is an object with camelCase keys (before it, a bare list
#: with snake_case keys).
RUNS_JSON_VERSION = 1


def _summary_dict(summary) -> dict:
    from catalyst_dsl.ir.serialize import camel

    data = records.asdict(summary)
    return {camel(k): str(v) if isinstance(v, Path) else v for k, v in data.items()}


@click.group()
def webhooks() -> None:
    """Receivers for other systems' events: GitHub pull-request reviews approve runs."""


@webhooks.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (put a proxy with TLS in front to reach it from GitHub).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8787, show_default=True, help="The port; 0 picks a free one."
)
@_aborts
def webhooks_serve(host: str, port: int) -> None:
    """Receive GitHub `pull_request_review` webhooks at POST /github.

    A review of a pull request a paused run waits for (`github-pr-create` with
    `waitForReview: true`) is recorded on the run: approved releases it when the reviewer's
    login maps to a required role in `github-reviewers`, changes_requested fails the step on
    resume. The webhook's secret is the secret `github-webhook-secret`
    (CATALYST_SECRET_GITHUB_WEBHOOK_SECRET or the secrets-file); deliveries without its
    signature are refused. GET /healthz answers 200 while it serves. Ctrl-C or SIGTERM
    stops it once the deliveries being answered are done. With CATALYST_STATE_URL, reviews
    reach runs started in any checkout (docs/teams.md).
    """
    from catalyst_dsl._internal.collector import for_long_running
    from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort
    from catalyst_dsl.runtime.approvals.webhooks import SECRET_NAME, make_server

    for_long_running()
    session = _session(Path.cwd())
    secret = session.secret(SECRET_NAME) or ""
    if not secret.strip():
        raise RunAbort(
            EXIT_INVALID,
            f"no webhook secret: the secret '{SECRET_NAME}' is not set (or blank)",
            help="set CATALYST_SECRET_GITHUB_WEBHOOK_SECRET (or add it to the secrets-file) "
            "to the secret of the GitHub webhook",
        )
    try:
        server = make_server(
            host,
            port,
            secret,
            lambda review: session.review_received(
                review.url, review.login, review.decision, review.comment, review.submitted_at, review.key
            ),
            log=lambda line: click.echo(line),
        )
    except OSError as error:
        raise RunAbort(
            EXIT_INVALID,
            f"cannot listen on {host}:{port}: {error.strerror or error}",
            help="choose another --port or --host",
        ) from None
    click.echo(f"listening on http://{server.server_address[0]}:{server.server_address[1]}/github (Ctrl-C stops)")
    _terminate_as_interrupt()  # SIGTERM, once the deliveries being answered are done, stops it as Ctrl-C does
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        server.server_close()


@click.command()
@click.option(
    "--once", is_flag=True, help="Take at most one run, run it, and exit with its exit code (0 when none was ready)."
)
@click.option(
    "--lease",
    type=click.FloatRange(1, 86400),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long a run stays this worker's without a heartbeat: if the worker dies, another takes it after that.",
)
@click.option(
    "--poll",
    type=click.FloatRange(0.1, 3600),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait before looking again when no run is ready.",
)
@_aborts
def worker(once: bool, lease: float, poll: float) -> None:
    """Resume the runs of this repository that are ready to go on, from the shared store.

    A run is ready when it is paused at a checkpoint that was approved (or had changes
    requested), from any checkout or by a webhook review, or when it still says running but
    the process running it stopped renewing its lease. Only runs started at this checkout's
    commit are taken. Needs CATALYST_STATE_URL (docs/teams.md). Ctrl-C or SIGTERM stops the
    run being resumed as `catalyst resume` would, and the worker with it.
    """
    from catalyst_dsl.runtime.lifecycle.worker import Worker
    from catalyst_dsl.runtime.state.shared.lease import LEASE_ENV

    os.environ[LEASE_ENV] = repr(lease)  # the lease every session of this worker takes
    _terminate_as_interrupt()
    try:
        code = Worker(lambda: _session(Path.cwd()), click.echo).work(once=once, poll=poll)
    except KeyboardInterrupt:
        click.echo("worker: stopped")
        code = 130
    sys.exit(code)


COMMANDS = [resume, approve, cancel, runs, webhooks, worker]
