"""The `catalyst` command line: check, list and compile here; run in `run.py`, and the
commands of started runs in `lifecycle.py`."""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys

import click

from catalyst_dsl import __version__
from catalyst_dsl._internal.collector import tune_process

#: The run commands and the modules that define them, imported only when one of them is
#: asked for: checking, listing and `--version` never load the interpreter's command line,
#: and `run` (a what-if) does not build the options of the others.
RUN_COMMANDS = {
    "init": "cli.init",
    "graph": "cli.graph",
    "run": "cli.run",
    "resume": "cli.lifecycle",
    "approve": "cli.lifecycle",
    "cancel": "cli.lifecycle",
    "runs": "cli.lifecycle",
    "webhooks": "cli.lifecycle",
    "worker": "cli.lifecycle",
}
#: `catalyst kai …`, defined in `kai.py` and imported the same way.
KAI_COMMANDS = ("kai",)


class _Commands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *RUN_COMMANDS, *KAI_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in RUN_COMMANDS and name not in self.commands:
            for command in importlib.import_module(f"catalyst_dsl.{RUN_COMMANDS[name]}").COMMANDS:
                self.add_command(command)
        if name in KAI_COMMANDS and name not in self.commands:
            from catalyst_dsl.cli.kai import kai

            self.add_command(kai)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # Ctrl-C or SIGTERM that no run took in hand (the project still being read and
            # checked, locks being taken, or a command with no run): the exit of an
            # interrupt, not click's "Aborted!" and 1, which reads as a failure.
            from catalyst_dsl.runtime.errors import EXIT_INTERRUPTED

            click.echo("\ninterrupted", err=True)
            if ctx.invoked_subcommand in ("run", "resume"):
                click.echo(
                    "  help: `catalyst runs list` shows whether a run began; `catalyst resume RUN` continues it",
                    err=True,
                )
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="catalyst")
def cli() -> None:
    """Check, compile and run Catalyst playbooks."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default=None,
    help="How to print the findings: text (default), json, sarif (SARIF 2.1.0), "
    "github (workflow commands; the default when GITHUB_ACTIONS=true).",
)
@click.option("--strict", is_flag=True, help="Warnings fail the check too (exit 1).")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only what fails the check (errors; warnings too with --strict) and the summary.",
)
@click.option("--no-cache", is_flag=True, help="Compile every file, neither reading nor writing the check cache.")
@click.option(
    "--select",
    "select",
    multiple=True,
    callback=lambda ctx, param, value: _codes_option(param, value),
    metavar="CODES",
    help="Report only these codes or prefixes (C4,C501), instead of the `select` setting.",
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    callback=lambda ctx, param, value: _codes_option(param, value),
    metavar="CODES",
    help="Never report these codes or prefixes (C8), besides the `ignore` setting.",
)
@click.option(
    "--output-file",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the report (in --format) to this file instead of standard output.",
)
@click.option("--statistics", is_flag=True, help="Print how many findings of each code instead of each finding.")
@click.option("--fix", is_flag=True, help="Apply the safe quick fixes (did-you-mean, missing `writes:`) to the files.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="Apply also the fixes that may not be what was meant (implies --fix)."
)
@click.option("--suppress", is_flag=True, help="Add a `catalyst: ignore[CODE]` comment for each finding left.")
@click.option(
    "--diff",
    is_flag=True,
    help="Print the fixes (--fix, or those the other fix options name) as a diff; write nothing.",
)
@click.option("--watch", is_flag=True, help="Check again whenever a playbook or the settings change (Ctrl-C stops).")
def check(
    paths: tuple[str, ...],
    fmt: str | None,
    strict: bool,
    quiet: bool,
    no_cache: bool,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    output_file: str | None,
    statistics: bool,
    fix: bool,
    unsafe_fixes: bool,
    suppress: bool,
    diff: bool,
    watch: bool,
) -> None:
    """Check playbooks for mistakes; exit 1 when an error is found.

    PATHS are files or directories (default: the project's playbook directories,
    playbooks/, .xe/playbooks/, kai's .playbooks/playbooks/ and cleo's .cleo/playbooks/
    unless the `playbook-dirs` setting says otherwise). What they call is
    loaded and checked with them: calls, inputs, cycles and write permissions.
    Directory scans skip what .gitignore ignores and the `exclude` settings.

    --fix makes the quick fixes the editor offers, checks again and keeps none that would
    add a finding; --unsafe-fixes and --suppress add more kinds, --diff shows them.
    """
    from catalyst_dsl.cli.check_command import CheckOptions, run_check

    if diff and ((fmt is not None and fmt != "text") or output_file is not None):
        # The diff goes to standard output, and with it the count of fixes; no report is made.
        given = f"--format {fmt}" if fmt not in (None, "text") else "--output-file"
        raise click.UsageError(f"--diff prints the fixes as a diff, and no report: leave out {given}")
    if fmt is None:
        fmt = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    if statistics and fmt != "text":
        raise click.UsageError(f"--statistics prints a table of text: leave out --format {fmt}")
    # The kinds of fixes (cli/fixing.py): safe ones with --fix or --unsafe-fixes, and with
    # --diff alone (what --fix would do); --suppress alone only silences.
    fixes = {"safe"} if fix or unsafe_fixes or (diff and not suppress) else set()
    fixes |= {"unsafe"} if unsafe_fixes else set()
    fixes |= {"suppression"} if suppress else set()
    options = CheckOptions(
        paths,
        fmt,
        strict,
        quiet,
        no_cache,
        select,
        ignore or (),
        output_file,
        statistics,
        frozenset(fixes),
        diff,
    )
    if watch:
        from catalyst_dsl.cli.watch import watch as keep_watching

        sys.exit(keep_watching(lambda: run_check(options), *_watched(paths)))
    status, _ = run_check(options)
    if status:
        sys.exit(status)


def _codes_option(param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...] | None:
    """`--select C4,C501 --select C8`: every code or prefix, each naming at least one code."""
    from catalyst_dsl.diagnostics.selection import codes_named, unknown_entry_help

    entries = tuple(e.strip().upper() for value in values for e in value.split(",") if e.strip())
    for entry in entries:
        if not codes_named(entry):
            raise click.BadParameter(f"no code is or starts with '{entry}': {unknown_entry_help(entry)}", param=param)
    if not entries:
        return None if param.name == "select" else ()
    return entries


def _watched(paths: tuple[str, ...]) -> tuple[list[str], str | None]:
    """The folders and files a watch looks at: PATHS or the playbook directories, and the settings file."""
    from pathlib import Path

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project

    project = load_project(Path(paths[0]) if paths else Path.cwd(), DiagnosticSink())
    roots = list(paths) or [str(project.resolve(d)) for d in project.config.playbook_dirs]
    return roots, str(project.config_file) if project.config_file is not None else None


@cli.command("list")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--no-cache", is_flag=True, help="Compile every file, neither reading nor writing the check cache.")
def list_(paths: tuple[str, ...], as_json: bool, no_cache: bool) -> None:
    """List the playbooks of the project with their metadata and the calls they make.

    PATHS default to the project's playbook directories. A file that does not compile is
    listed with its errors counted; `catalyst check` shows them.
    """
    from catalyst_dsl.cli.check_command import check_cache, project_files
    from catalyst_dsl.project.check import check_project
    from catalyst_dsl.report.listing import listing_json, listing_text

    project, settings, files, scanned = project_files(paths)
    result = check_project(project, files, settings=settings, scanned=scanned, cache=check_cache(project, no_cache))
    here = os.getcwd()
    compiled = [result.library.compiled(f) for f in result.files]
    calls = {f: result.library.edges(f) for f in result.files}
    render = listing_json if as_json else listing_text
    click.echo(render(compiled, result.diagnostics, calls, relative_to=here), nl=False)


@cli.group()
def cache() -> None:
    """The check cache: each playbook's compiled result, kept by content (`cache-dir`)."""


@cache.command("clean")
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--steps", is_flag=True, help="Also the results kept for steps marked `cache:` (docs/running.md).")
def cache_clean(path: str | None, steps: bool) -> None:
    """Remove the check cache of the project at PATH (default: here)."""
    from pathlib import Path

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.cache.store import clean
    from catalyst_dsl.project.config import load_project

    project = load_project(Path(path) if path else Path.cwd(), DiagnosticSink())
    directory = project.resolve(project.config.cache_dir)
    count = clean(directory)
    click.echo(f"removed {count} cached result(s) from {os.path.relpath(directory)}")
    if steps:
        from catalyst_dsl.runtime.state.result_cache import FOLDER, ResultCache

        folder = project.resolve(project.config.state_dir) / FOLDER
        kept = ResultCache(folder, b"").clear()
        click.echo(f"removed {kept} kept step result(s) from {os.path.relpath(folder)}")


def _playbook_names(ctx, param, incomplete):
    """completion.playbook_names, imported when a TAB asks for it."""
    from catalyst_dsl.cli import completion

    return completion.playbook_names(ctx, param, incomplete)


@cli.command()
@click.argument("name", shell_complete=_playbook_names)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the IR JSON to this file.")
def compile(name: str, output: str | None) -> None:
    """Print the IR of the playbook NAME (a playbook name or a file, as for `catalyst run`)
    as canonical JSON (exit 1 when it has errors or is not found)."""
    from catalyst_dsl.compiler import compile_path
    from catalyst_dsl.ir.serialize import to_json
    from catalyst_dsl.diagnostics.text import render_text

    path = _playbook_file(name)
    result = compile_path(path)
    errors = [d for d in result.diagnostics if d.severity.value == "error"]
    if errors or result.playbook is None:
        sources = {path: result.source} if result.source is not None else {}
        click.echo(render_text(errors or result.diagnostics, sources, relative_to=os.getcwd()), err=True)
        sys.exit(1)
    text = to_json(result.playbook)
    if output:
        with open(output, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    else:
        click.echo(text, nl=False)


def _playbook_file(name: str) -> str:
    """The file of the playbook NAME, a file or a name looked up in the project's playbook
    folders (project/lookup.py); not found, the error and its fix, and exit 1."""
    if os.path.isfile(name):
        return name
    from pathlib import Path

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.project.library import Library
    from catalyst_dsl.project.lookup import PlaybookNotFound, locate

    try:
        return os.path.relpath(locate(Library(load_project(Path.cwd(), DiagnosticSink())), name))
    except PlaybookNotFound as missing:
        click.echo(f"error: {missing.message}\n  help: {missing.fix}", err=True)
        sys.exit(1)


@cli.command()
@click.argument("code", required=False)
@click.option("--list", "list_all", is_flag=True, help="List every code with its severity and name.")
def explain(code: str | None, list_all: bool) -> None:
    """Explain a diagnostic code (C813, 813 or write-not-allowed), with an example."""
    from catalyst_dsl.report.explain import UnknownName, code_list, explain_code

    if list_all or code is None:
        click.echo(code_list(), nl=False)
        return
    try:
        click.echo(explain_code(code), nl=False)
    except UnknownName as unknown:
        raise click.UsageError(str(unknown)) from None


@cli.command()
@click.argument("name", required=False)
def actions(name: str | None) -> None:
    """List the built-in actions, or describe one: its config keys, result and effects."""
    from catalyst_dsl.actions.installed import builtin_catalog
    from catalyst_dsl.report.explain import UnknownName, explain_action

    try:
        click.echo(explain_action(builtin_catalog(), name), nl=False)
    except UnknownName as unknown:
        raise click.UsageError(str(unknown)) from None


@cli.command()
def schema() -> None:
    """Print the JSON Schema (2020-12) of YAML playbooks, for YAML tooling (docs/editors.md)."""
    from importlib import resources

    click.echo(
        resources.files("catalyst_dsl.schema").joinpath("playbook.schema.json").read_text(encoding="utf-8"), nl=False
    )


@cli.command("what-if-comment")
@click.argument("changed", nargs=-1)
@click.option(
    "--golden-dir",
    default="golden",
    show_default=True,
    help="Where the golden plans are, relative to the project root.",
)
@click.option("--repo", help="owner/name of the repository (default: $GITHUB_REPOSITORY).")
@click.option("--pr", "number", type=int, help="The pull request's number (default: from $GITHUB_EVENT_PATH).")
@click.option("--print", "print_only", is_flag=True, help="Print the comments instead of posting them.")
@click.option(
    "--fail-on-stale/--no-fail-on-stale",
    default=True,
    show_default=True,
    help="Exit 1 when a golden plan no longer matches its playbook's plan (after posting).",
)
def what_if_comment(
    changed: tuple[str, ...],
    golden_dir: str,
    repo: str | None,
    number: int | None,
    print_only: bool,
    fail_on_stale: bool,
) -> None:
    """Post the what-if report of each golden plan of a CHANGED playbook, and of each golden
    plan out of date, as a sticky pull-request comment (one per golden plan, updated on the
    next push), with what changed against the golden plan. The token is $GITHUB_TOKEN; the API is $GITHUB_API_URL or the
    github-api-url setting. Under GitHub Actions the reports are also added to the job's
    summary ($GITHUB_STEP_SUMMARY), and the plans' labels and the number of stale golden
    plans are the step's outputs `labels` and `stale` ($GITHUB_OUTPUT)."""
    from pathlib import Path

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.report import pr_comment

    project = load_project(Path.cwd(), DiagnosticSink())
    every = pr_comment.reports(project.root, project.root / golden_dir, list(changed), project.config.playbook_dirs)
    reports = pr_comment.shown(every)
    try:
        pr_comment.to_workflow(reports, os.environ)
    except OSError as error:
        click.echo(f"error: cannot write the job summary or the step outputs: {error}", err=True)
        sys.exit(1)
    env = pr_comment.environment()
    if not reports:
        click.echo(f"no golden plan in {golden_dir}/ is changed or out of date")
        if print_only or not every:
            return
    if print_only:
        click.echo("\n".join(r.body for r in reports), nl=False)
        _stale_exit(reports, fail_on_stale)
        return
    repo = repo or env["GITHUB_REPOSITORY"]
    number = number if number is not None else pr_comment.pull_request_number(env["GITHUB_EVENT_PATH"])
    missing = [
        what
        for what, value in (
            ("--repo or $GITHUB_REPOSITORY", repo),
            ("--pr or a pull_request event in $GITHUB_EVENT_PATH", number),
            ("$GITHUB_TOKEN", env["GITHUB_TOKEN"]),
        )
        if not value
    ]
    if missing:
        if not reports:
            return  # only comments to refresh, and nowhere they could be: nothing to do
        raise click.UsageError(f"cannot post without {', '.join(missing)} (or use --print)")
    # The reports shown first; then the comments of plans that match again, brought up to
    # date where an earlier push made one: failing at those is not the job's failure.
    current = None
    try:
        pull = pr_comment.PullRequest(
            env["GITHUB_API_URL"] or project.config.github_api_url, repo, number, env["GITHUB_TOKEN"]
        )
        for current in [*reports, *(r for r in every if r.refresh_only)]:
            _post(pull, current)
    except pr_comment.CommentError as problem:
        if reports and (current is None or not current.refresh_only):
            click.echo(f"error: {problem}", err=True)
            sys.exit(1)
        click.echo(f"warning: the what-if comments of golden plans that match were not updated: {problem}", err=True)
    _stale_exit(reports, fail_on_stale)


def _post(pull, report) -> None:
    action, url = pull.post_or_update(report)
    if action:
        unchanged = " (unchanged)" if action == "kept" else ""
        click.echo(f"{action} the what-if comment of {report.playbook}{unchanged}: {url}")


def _stale_exit(reports, fail_on_stale: bool) -> None:
    """Exit 1 when a golden plan is stale and that fails the command; a note when it does not."""
    stale = [r.golden for r in reports if r.stale]
    if not stale:
        return
    what = f"golden plan{'s' if len(stale) != 1 else ''} out of date: {', '.join(stale)}"
    fix = "regenerate with pytest --update-golden, review and commit"
    if fail_on_stale:
        click.echo(f"error: {len(stale)} {what}; {fix}", err=True)
        sys.exit(1)
    click.echo(f"note: {len(stale)} {what} ({fix})", err=True)


@cli.command()
def lsp() -> None:
    """Serve the Language Server Protocol over stdio, for editors (docs/editors.md)."""
    from catalyst_dsl._internal.collector import for_long_running
    from catalyst_dsl.lsp.server import serve

    for_long_running()
    serve()


def main() -> None:
    # The process is the command's: its collector runs as a check's does (collector.py),
    # from the imports on (a one-file check made 28 collections, about 3.5 ms, under the
    # default thresholds); commands that live long give the defaults back
    # (`collector.for_long_running`).
    tune_process()
    try:
        cli(prog_name="catalyst")
    except OSError as error:
        _stopped_by(error)
    finally:
        # The process ends here (click exits once the command is done). Python's shutdown
        # would run the cyclic collector over every object still alive, the imported
        # modules and classes and a check's trees and tables, only to free memory the
        # operating system takes back whole: about 13 ms of a one-file `catalyst check`.
        # Frozen objects are left out of those collections. Output is still flushed and
        # atexit handlers still run; only the freeing is left to the operating system.
        gc.freeze()


def _stopped_by(error: OSError) -> None:
    """What the operating system refused and no command handles itself (most often its
    output: `catalyst check > /dev/full`), said as an error with a fix instead of a
    traceback; exit 1. Output that cannot be written is dropped from then on, so that
    Python's own last flush does not fail again."""
    from catalyst_dsl._internal.terminal_text import safe_text
    from catalyst_dsl.runtime.events import discard_stdout

    said = error.strerror or str(error) or type(error).__name__
    # A file name is anyone's text (a playbook's, a path given): shown, never obeyed by the terminal.
    where = f": {safe_text(os.fsdecode(error.filename))}" if error.filename else ""
    discard_stdout()
    try:
        click.echo(f"error: catalyst stopped: {said}{where}", err=True)
        click.echo(
            "  help: the operating system refused it (a full disk, a closed output, a permission); "
            "fix that and run the command again",
            err=True,
        )
    except (OSError, ValueError):
        pass  # standard error is gone too: the exit status is all that is left to say it
    sys.exit(1)


def command_line() -> None:
    """The `catalyst` program (its console scripts and `python -m catalyst_dsl`, through
    program.py): `main`, then the end of the process (`_end_now`). `main` itself raises
    SystemExit as click does, for a program that calls it and goes on."""
    try:
        main()
    except SystemExit as end:
        _end_now(end.code)
        raise


def _end_now(code: object) -> None:
    """End the process as Python's own exit would, without its teardown, which empties
    every module and frees each object one by one (2.5 to 5 ms of a what-if of a large
    playbook, even with the collector's work frozen away; mypy ends the same way). The
    output is flushed and the atexit handlers run, as at any exit; what is skipped is
    only the freeing. Returns, for Python to end the process itself, whenever anything
    might still need the interpreter: another thread, a tracer or profiler, an
    interactive prompt after the command (`python -i`), an exit status that is not a
    number from 0 to 255 (Python prints a message), or output that cannot be flushed
    (Python reports that as it does)."""
    code = 0 if code is None else code
    if type(code) is not int or not 0 <= code <= 255:
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_handlers is None or sys.gettrace() is not None or sys.getprofile() is not None or sys.flags.inspect:
        return
    if not _flushed():
        return
    run_handlers()  # each once: the interpreter's exit runs none of them again
    if _flushed():  # (a handler may print)
        os._exit(code)


def _flushed() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True
