"""`catalyst run` (a run, or its what-if), and what the run commands share.

Each run command builds a `Session` for the project around the current directory (or
the playbook given) and turns a `RunAbort` into its message, its fix and its exit code:
bad input never ends in a traceback. The commands of runs already started (resume,
approve, cancel, runs, webhooks) are in lifecycle.py, which a what-if does not import.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import click

from catalyst_dsl.runtime.events import discard_stdout

if TYPE_CHECKING:
    from catalyst_dsl.ir import nodes as ir

MODES = click.Choice(["manual", "autonomous"])
LOG_FORMATS = click.Choice(["text", "json"])


def _completer(name: str):
    """The completer `name` of completion.py, imported when a TAB asks for it: every
    `catalyst run` builds its arguments, few complete one."""

    def complete(ctx, param, incomplete):
        from catalyst_dsl.cli import completion

        return getattr(completion, name)(ctx, param, incomplete)

    return complete


def _aborts(command):
    """Print a RunAbort as an error with its fix and exit; so too a lock directory that stays
    busy and a state directory the file system refuses (never a traceback)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from catalyst_dsl.runtime.errors import EXIT_FAILED, LockConflict, RunAbort

        try:
            return command(*args, **kwargs)
        except LockConflict as conflict:
            abort = RunAbort(
                EXIT_FAILED,
                str(conflict),
                help="try again once the other catalyst process is done; `catalyst runs list` shows the runs",
            )
        except RunAbort as caught:
            abort = caught
        except BrokenPipeError:
            # The reader of our output left (`catalyst runs list | head -1`): not the state's
            # fault. Nothing more can be said to it; later writes go nowhere.
            discard_stdout()
            sys.exit(0)
        except OutputRefused:
            raise  # said as what it is by cli.main, not as the run's state
        except OSError as error:
            from catalyst_dsl.runtime.state.errors import state_abort

            abort = state_abort(error)
        click.echo(f"error: {abort.message}", err=True)
        for detail in abort.details:
            click.echo(f"  {detail}", err=True)
        if abort.help:
            click.echo(f"  help: {abort.help}", err=True)
        sys.exit(abort.exit_code)

    return wrapper


class OutputRefused(OSError):
    """Standard output refused a plan (a full disk behind `> plan.txt`): not the run's
    state, which a what-if never writes."""


def _print(text: str, nl: bool) -> None:
    try:
        click.echo(text, nl=nl)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputRefused(error.errno, error.strerror or str(error)) from error


def _session(start: Path, mode: str = "manual", log_format: str = "text", verbose: bool = False, project=None):
    from catalyst_dsl.runtime.lifecycle.context import RunOptions
    from catalyst_dsl.runtime.lifecycle.session import Session

    project = project or _project(start)
    return Session(project, RunOptions(mode=mode, log_format=log_format, verbose=verbose))


def _project(start: Path):
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project

    return load_project(start, DiagnosticSink())


def _markdown(session, file: str, plan) -> str:
    """The plan's Markdown view, with the flow of the steps it would act in."""
    from catalyst_dsl.report.plan import acting_paths, render_markdown

    # Compiled (from the session's library) only when a step acts: a quiet plan draws nothing.
    return render_markdown(plan, playbook=session.library.compiled(file).playbook if acting_paths(plan) else None)


def _given(
    pairs: tuple[str, ...], declared: Callable[[], Sequence[ir.InputDecl] | None] = lambda: None
) -> dict[str, str]:
    """The `-i key=value` options as a mapping, or a usage mistake (exit 2) that names each
    wrong option. `declared` gives the playbook's inputs, when it is known: an input given
    twice is shown with its values unless the playbook does not declare it, or as secret."""
    from catalyst_dsl.runtime.errors import EXIT_USAGE, RunAbort
    from catalyst_dsl.runtime.values.inputs import parse_assignments

    given, problems = parse_assignments(pairs)
    if any(p.rule == "duplicate" for p in problems):
        given, problems = parse_assignments(pairs, declared())
    if len(problems) == 1:
        raise RunAbort(EXIT_USAGE, problems[0].message, help=problems[0].fix)
    if problems:
        syntax = all(p.rule == "syntax" for p in problems)
        raise RunAbort(
            EXIT_USAGE,
            "the -i options are not all key=value" if syntax else f"the -i options have {len(problems)} mistakes",
            details=tuple(f"{p.message}\n    fix: {p.fix}" for p in problems),
        )
    return given


def _declared_inputs(session, file: str) -> Sequence[ir.InputDecl] | None:
    """The inputs the playbook in `file` declares; None when it cannot be read, or has
    errors: a declaration in error (`secret: yes`, text in YAML 1.2) reads as not secret,
    and its author may have meant it to be."""
    compiled = session.library.compiled(file)
    return compiled.playbook.inputs if compiled.playbook is not None and not compiled.has_errors else None


def _terminate_as_interrupt() -> None:
    """SIGTERM stops a run the way Ctrl-C does: state saved, locks released."""
    import signal  # a run's, not a what-if's (about 0.5 ms)

    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _locate(session, name: str) -> str:
    from catalyst_dsl.project.lookup import PlaybookNotFound, locate
    from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort

    try:
        return locate(session.library, name)
    except PlaybookNotFound as missing:
        raise RunAbort(EXIT_INVALID, missing.message, help=missing.fix) from None


@click.command()
@click.argument("name", shell_complete=_completer("playbook_names"))
@click.option(
    "-i",
    "--input",
    "inputs",
    multiple=True,
    metavar="KEY=VALUE",
    help="An input value; repeat for each input.",
    shell_complete=_completer("input_assignments"),
)
@click.option(
    "--mode",
    type=MODES,
    default="manual",
    show_default=True,
    help="autonomous approves checkpoints by itself and records that it did.",
)
@click.option(
    "--log-format", type=LOG_FORMATS, default="text", show_default=True, help="json prints one object per event."
)
@click.option("-v", "--verbose", is_flag=True, help="Also show step starts and verbose/debug log entries.")
@click.option(
    "--what-if",
    "--dry-run",
    "what_if",
    is_flag=True,
    help="Show what the run would do; change nothing (docs/plan-format.md).",
)
@click.option(
    "--what-if-report",
    type=click.Path(dir_okay=False),
    help="With --what-if: also write the plan as canonical JSON to this file.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="With --what-if: how to print the plan.",
)
@click.option(
    "--expect-plan",
    type=click.Path(exists=True, dir_okay=False),
    help="Run only if the what-if plan of this run equals this approved plan.",
)
@click.option(
    "--refresh",
    is_flag=True,
    help="With --what-if: send the network reads (GET, HEAD) once instead of showing their results as unknown.",
)
@click.option(
    "--worktree",
    is_flag=True,
    help="Run in a new git worktree beside the project, on a new branch made at the current commit.",
)
@_aborts
def run(
    name: str,
    inputs: tuple[str, ...],
    mode: str,
    log_format: str,
    verbose: bool,
    what_if: bool,
    what_if_report: str | None,
    fmt: str,
    expect_plan: str | None,
    refresh: bool,
    worktree: bool,
) -> None:
    """Run the playbook NAME (a playbook name or a file).

    Exit codes (docs/running.md): 0 done, 1 invalid playbook or inputs (or a plan that
    differs from --expect-plan), 2 a step failed (with --what-if: would fail and end the
    run), another run holds a lock it needs, or a usage mistake, 3 state error, 4 paused
    for approval, 5 cancelled (`abort` at a checkpoint, or `catalyst cancel`), 130
    interrupted (Ctrl-C, Ctrl-D at a prompt, or SIGTERM; the state is saved).
    """
    if not what_if:
        # From the first moment of a run, so that SIGTERM while the project is read and
        # checked ends it as later (exit 130), not by the signal's default.
        _terminate_as_interrupt()
    start = Path(name).parent if os.path.isfile(name) else Path.cwd()
    project = _project(start)
    checked = None
    if (what_if_report is not None or fmt != "text" or refresh) and not what_if:
        raise click.UsageError("--what-if-report, --format and --refresh describe a plan: add --what-if")
    if worktree and (what_if or expect_plan):
        raise click.UsageError(
            "--worktree makes a worktree for a run; a what-if changes nothing: leave one of them out"
        )
    if what_if and os.path.isfile(name):
        # Checked before the run-time is imported: a playbook the check refuses costs a
        # what-if no more than `catalyst check`; one it passes is not checked again.
        from catalyst_dsl.runtime.lifecycle import preflight

        checked = preflight.checked(project, os.path.abspath(name), cached=True)
    session = _session(start, mode, log_format, verbose, project)
    session.options.refresh = refresh
    file = _locate(session, name)
    if what_if_report is not None:  # refused before anything is planned
        from catalyst_dsl.cli.outputs import project_playbooks, refuse_nowhere, refuse_replacing

        refuse_nowhere(what_if_report, "'--what-if-report'")
        refuse_replacing(
            what_if_report, [file, *project_playbooks()], "'--what-if-report'", "the plan", "of this project"
        )
    given = _given(inputs, lambda: _declared_inputs(session, file))
    if what_if or expect_plan:
        # The canonical JSON of a large plan costs a few milliseconds: made (and hashed)
        # only when a report, the JSON format or a comparison with an approved plan needs
        # it, or the Markdown view that shows the hash; the text view shows neither.
        as_json = bool(what_if_report or fmt == "json" or expect_plan)
        plan = session.plan(file, given, checked=checked, hashed=as_json or fmt == "markdown")
        for note in session.plan_notes:
            click.echo(f"note: {note}", err=True)
        from catalyst_dsl.report.plan import render_text
        from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json

        text = canonical_json(plan) if as_json else None
        if what_if:
            if what_if_report is not None:
                try:
                    with open(what_if_report, "w", encoding="utf-8", newline="\n") as handle:
                        handle.write(text)
                except OSError as error:
                    raise click.FileError(
                        what_if_report, hint=f"cannot write the plan there: {error.strerror or error}"
                    ) from None
            render = {
                "json": lambda: text,
                "markdown": lambda: _markdown(session, file, plan),
                "text": lambda: render_text(plan),
            }[fmt]
            _print(render(), nl=fmt == "text")
            if expect_plan:  # the plan shown, then how it differs from the approved one
                _compare_with_approved(expect_plan, text, plan, "the plan differs from the approved plan {}")
            from catalyst_dsl.runtime.lifecycle.plan_data import predicted_failure

            if predicted_failure(plan) is not None:
                from catalyst_dsl.runtime.errors import EXIT_FAILED

                sys.exit(EXIT_FAILED)  # as the run it foresees would end: a step failed
            return
        _compare_with_approved(
            expect_plan, text, plan, "the plan of this run differs from the approved plan {}; nothing was run"
        )
    if worktree:
        session, file = _in_new_worktree(session, file, mode, log_format, verbose)
    sys.exit(session.start(file, given))


def _compare_with_approved(expect_plan: str, text: str, plan, message: str) -> None:
    """RunAbort (exit 1) after the step diff on standard error when the plan's canonical
    JSON `text` is not the approved plan's bytes; `message` names the file at `{}`."""
    try:
        with open(expect_plan, encoding="utf-8") as handle:
            approved = handle.read().replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError) as error:
        raise click.FileError(
            expect_plan, hint=f"cannot read the approved plan: {getattr(error, 'strerror', None) or error}"
        ) from None
    if approved == text:
        return
    from catalyst_dsl.report.plan_diff import explain
    from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort

    click.echo(explain(approved, plan, os.path.basename(expect_plan)), err=True)
    raise RunAbort(
        EXIT_INVALID,
        message.format(expect_plan),
        help="review the difference above; approve the new plan with --what-if-report, or leave out --expect-plan",
    )


def _in_new_worktree(session, file: str, mode: str, log_format: str, verbose: bool):
    """The session and playbook file of a run moved into a new git worktree (runtime/effects/worktrees.py)."""
    from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort
    from catalyst_dsl.runtime.effects.worktrees import new_worktree

    root = Path(session.project.root).resolve()
    try:
        relative = Path(file).resolve().relative_to(root)
    except ValueError:
        raise RunAbort(
            EXIT_INVALID,
            f"--worktree: the playbook {file} is outside the project {root}; nothing was run",
            help="name a playbook of the project",
        ) from None
    tree = new_worktree(root, Path(file).stem)
    click.echo(f"worktree: {tree.path} (branch {tree.branch}); the run and its state are there: cd there to resume it")
    os.chdir(tree.project_root)
    moved = _session(tree.project_root, mode, log_format, verbose)
    moved.options.refresh = session.options.refresh
    return moved, str(tree.project_root / relative)


COMMANDS = [run]
