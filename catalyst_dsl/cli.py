"""The `catalyst` command line: check, list and compile here; run and its lifecycle in `cli_run`."""

from __future__ import annotations

import os
import sys

import click

from catalyst_dsl import __version__

@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="catalyst")
def cli() -> None:
    """Check, compile and run Catalyst playbooks."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="How to print the findings.")
def check(paths: tuple[str, ...], fmt: str) -> None:
    """Check playbooks for mistakes; exit 1 when an error is found.

    PATHS are files or directories (default: the project's playbook directories,
    playbooks/, .xe/playbooks/ and kai's .playbooks/playbooks/ unless the settings say
    otherwise). What they call is
    loaded and checked with them: calls, inputs, cycles and write permissions.
    """
    from catalyst_dsl.project.check import check_project
    from catalyst_dsl.report.diagnostics import render_json, render_text, summary_line

    project, settings, files = _project_files(paths)
    result = check_project(project, files, settings=settings)
    here = os.getcwd()
    if fmt == "json":
        click.echo(render_json(result.diagnostics, files, relative_to=here), nl=False)
    else:
        if result.diagnostics:
            click.echo(render_text(result.diagnostics, result.sources, relative_to=here))
        click.echo(summary_line(result.diagnostics, len(files)))
    if result.has_errors:
        sys.exit(1)


@cli.command("list")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_(paths: tuple[str, ...], as_json: bool) -> None:
    """List the playbooks of the project with their metadata and the calls they make.

    PATHS default to the project's playbook directories. A file that does not compile is
    listed with its errors counted; `catalyst check` shows them.
    """
    from catalyst_dsl.project.check import check_project
    from catalyst_dsl.report.listing import listing_json, listing_text

    project, settings, files = _project_files(paths)
    result = check_project(project, files, settings=settings)
    here = os.getcwd()
    compiled = [result.library.compiled(f) for f in result.files]
    calls = {f: result.library.edges(f) for f in result.files}
    render = listing_json if as_json else listing_text
    click.echo(render(compiled, result.diagnostics, calls, relative_to=here), nl=False)


def _project_files(paths: tuple[str, ...]):
    """The project around the first PATH (or here), its settings findings, and the files."""
    from pathlib import Path

    from catalyst_dsl.compiler import discover
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project

    sink = DiagnosticSink()
    project = load_project(Path(paths[0]) if paths else Path.cwd(), sink)
    targets = list(paths) or [str(project.resolve(d)) for d in project.config.playbook_dirs if project.resolve(d).is_dir()]
    if not targets:
        dirs = ", ".join(f"{d}/" for d in project.config.playbook_dirs)
        raise click.UsageError(f"no PATH given and no playbook directory ({dirs}) in the project at {project.root}")
    files = discover(targets)
    if not files:
        raise click.UsageError(f"no playbooks (*.yaml, *.yml, *.md) under {', '.join(targets)}")
    return project, sink.sorted(), files


@cli.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the IR JSON to this file.")
def compile(path: str, output: str | None) -> None:
    """Print a playbook's IR as canonical JSON (exit 1 when it has errors)."""
    from catalyst_dsl.compiler import compile_path
    from catalyst_dsl.ir.serialize import to_json
    from catalyst_dsl.report.diagnostics import render_text

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


def _add_run_commands() -> None:
    from catalyst_dsl.cli_run import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)


_add_run_commands()


def _add_kai_commands() -> None:
    from catalyst_dsl.cli_kai import kai

    cli.add_command(kai)


_add_kai_commands()


def main() -> None:
    cli(prog_name="catalyst")
