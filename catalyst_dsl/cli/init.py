"""`catalyst init`: start a native project (integrations/project_init.py)."""

from __future__ import annotations

from pathlib import Path

import click

from catalyst_dsl.cli.run import _aborts


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@_aborts
def init(directory: Path | None) -> None:
    """Start a project in DIRECTORY (default: the current one): catalyst.toml, a first
    playbook (playbooks/first.yaml) and a run state folder that keeps itself out of git.
    Refuses, writing nothing, when the settings or the playbook exist."""
    from catalyst_dsl.integrations.project_init import NotWritten, init as start
    from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort

    root = directory or Path.cwd()
    if not root.is_dir():
        raise click.UsageError(f"{root} is not a directory")
    try:
        started = start(root)
    except NotWritten as refused:
        raise RunAbort(
            EXIT_INVALID,
            f"catalyst init could not write {refused.path}: {refused.reason}; it wrote nothing",
            help="fix that (a permission, a full disk) and run catalyst init again",
        ) from None
    if started.in_the_way:
        raise RunAbort(
            EXIT_INVALID,
            f"{', '.join(started.in_the_way)} already exist{'s' if len(started.in_the_way) == 1 else ''};"
            " catalyst init never replaces a file, and wrote nothing",
            help="this looks like a project already: `catalyst check` checks its playbooks;"
            " or run catalyst init in a new directory",
        )
    for path in started.created:
        click.echo(f"created {path}")
    click.echo("next: catalyst check playbooks/first.yaml, then catalyst run first --what-if (docs/getting-started.md)")


COMMANDS = [init]
