"""The `catalyst` command line: check and compile (run and its lifecycle come later)."""

from __future__ import annotations

import os
import sys

import click

from catalyst_dsl import __version__

DEFAULT_DIRS = ("playbooks", ".xe/playbooks")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="catalyst")
def cli() -> None:
    """Check, compile and run Catalyst playbooks."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="How to print the findings.")
def check(paths: tuple[str, ...], fmt: str) -> None:
    """Check playbooks for mistakes; exit 1 when an error is found.

    PATHS are files or directories (default: playbooks/ and .xe/playbooks/).
    """
    from catalyst_dsl.compiler import collector_tuned_for_checking, compile_path, discover
    from catalyst_dsl.diagnostics.model import Diagnostic
    from catalyst_dsl.report.diagnostics import render_json, render_text, summary_line

    targets = list(paths) or [d for d in DEFAULT_DIRS if os.path.isdir(d)]
    if not targets:
        raise click.UsageError("no PATH given and no playbooks/ or .xe/playbooks/ directory here")
    files = discover(targets)
    if not files:
        raise click.UsageError(f"no playbooks (*.yaml, *.yml, *.md) under {', '.join(targets)}")
    diagnostics: list[Diagnostic] = []
    sources = {}
    with collector_tuned_for_checking():
        for path in files:
            result = compile_path(path)
            diagnostics.extend(result.diagnostics)
            if result.source is not None:
                sources[path] = result.source
    here = os.getcwd()
    if fmt == "json":
        click.echo(render_json(diagnostics, files, relative_to=here), nl=False)
    else:
        if diagnostics:
            click.echo(render_text(diagnostics, sources, relative_to=here))
        click.echo(summary_line(diagnostics, len(files)))
    if any(d.severity.value == "error" for d in diagnostics):
        sys.exit(1)


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


def main() -> None:
    cli(prog_name="catalyst")
