"""`catalyst graph`: the library's call graph, or one playbook's flow, as a picture.

Mermaid text by default (GitHub draws it in Markdown), or a standalone SVG, or DOT for
Graphviz. The format follows the output file's extension when `--format` is not given.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from catalyst_dsl.report.graph import FORMATS

#: The format an output file's extension asks for.
_EXTENSIONS = {".svg": "svg", ".dot": "dot", ".gv": "dot", ".mmd": "mermaid", ".mermaid": "mermaid"}


def _playbook_names(ctx, param, incomplete):
    from catalyst_dsl.cli import completion

    return completion.playbook_names(ctx, param, incomplete)


@click.command()
@click.argument("name", required=False, shell_complete=_playbook_names)
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="mermaid (the default), svg or dot.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the picture to this file.")
@click.option(
    "--step",
    "steps",
    multiple=True,
    metavar="PATH",
    help="With NAME: draw only this step (a path as a plan names it, `steps/2/then/0`) and the "
    "control steps around it; repeat for more.",
)
def graph(name: str | None, fmt: str | None, output: str | None, steps: tuple[str, ...]) -> None:
    """Draw the call graph of the project's playbooks, or the flow of the playbook NAME
    (a name or a file): its steps, branches, loops, parallel groups, checkpoints and calls.

    Calls on a cycle are drawn in red. Exit 1 when NAME is not found or cannot be read as a playbook.
    """
    from catalyst_dsl.report.graph import render

    if steps and not name:
        raise click.UsageError("--step draws part of one playbook's flow: name the playbook")
    fmt = fmt or _EXTENSIONS.get(Path(output).suffix.lower() if output else "", "mermaid")
    if output is not None:
        from catalyst_dsl.cli.main import _playbook_file
        from catalyst_dsl.cli.outputs import project_playbooks, refuse_nowhere, refuse_replacing

        refuse_nowhere(output, "'-o' / '--output'")

        drawn_files = [_playbook_file(name)] if name else []
        refuse_replacing(
            output, [*drawn_files, *project_playbooks()], "'-o' / '--output'", "the picture", "of this project"
        )
    drawn = _flow(name, steps) if name else _calls()
    picture = render(drawn, fmt)
    if output is None:
        click.echo(picture, nl=False)
    else:
        try:
            with open(output, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(picture)
        except OSError as error:
            raise click.FileError(output, hint=f"cannot write the picture there: {error.strerror or error}") from None
    if fmt == "mermaid":
        _warn_if_too_big(drawn, picture, name, steps)


def _warn_if_too_big(drawn, picture: str, name: str | None, steps: tuple[str, ...]) -> None:
    """One line on standard error when GitHub's Mermaid would show an error instead of the
    chart; the chart is still written, as asked, for a viewer with higher limits."""
    from catalyst_dsl.report.graph import mermaid_refusal

    why = mermaid_refusal(drawn, picture)
    if why is None:
        return
    smaller = (
        "fewer `--step`s a smaller part"
        if steps
        else "`--step PATH` a part of it"
        if name
        else "`catalyst graph NAME` one playbook's flow"
    )
    svg = "flow.svg" if name else "calls.svg"
    click.echo(
        f"warning: GitHub will not draw this Mermaid chart ({why}): `-o {svg}` draws it as SVG, and {smaller}",
        err=True,
    )


def _flow(name: str, steps: tuple[str, ...]):
    from catalyst_dsl.cli.main import _playbook_file
    from catalyst_dsl.compiler import compile_path
    from catalyst_dsl.diagnostics.text import render_text
    from catalyst_dsl.report.graph.flow import flow_graph

    path = _playbook_file(name)
    result = compile_path(path)
    errors = [d for d in result.diagnostics if d.severity.value == "error"]
    if result.playbook is None:
        sources = {path: result.source} if result.source is not None else {}
        click.echo(render_text(errors or result.diagnostics, sources, relative_to=os.getcwd()), err=True)
        click.echo("  help: fix these errors to draw the flow", err=True)
        sys.exit(1)
    if errors:
        # A flow is still worth seeing while a playbook is being written (a missing owner,
        # an unknown input): drawn, with a word that it would not run as it is.
        click.echo(f"note: {path} has {len(errors)} error(s), which `catalyst check` shows", err=True)
    if steps:
        from catalyst_dsl.report.graph.flow import unknown_steps

        unknown = unknown_steps(flow_graph(result.playbook), steps)
        if unknown:
            raise click.UsageError(
                f"--step {unknown[0]} names no step of {result.playbook.name}: a path is where a step sits, "
                "as a what-if plan and a run's journal write it (`steps/2/then/0`); "
                f"`catalyst graph {name}` draws them all"
            )
    return flow_graph(result.playbook, steps or None)


def _calls():
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.project.library import Library
    from catalyst_dsl.report.graph.calls import call_graph

    library = Library(load_project(Path.cwd(), DiagnosticSink()))
    names = {}
    for path in library.files:
        compiled = library.compiled(path)
        names[path] = compiled.playbook.name if compiled.playbook is not None else Path(path).stem
    if not names:
        raise click.UsageError("no playbooks in this project's playbook directories (docs/configuration.md)")
    ordered = dict(sorted(names.items(), key=lambda pair: (pair[1], pair[0])))
    return call_graph(ordered, {path: library.edges(path) for path in ordered}, "calls between playbooks")


COMMANDS = [graph]
