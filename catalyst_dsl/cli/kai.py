"""`catalyst kai …`: the commands of the kai supervisor that make sense here."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("kai")
def kai() -> None:
    """Commands for kai projects (playbooks in .playbooks/playbooks/)."""


@kai.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace the files init writes when they exist.")
@click.option(
    "--no-stock",
    "no_stock",
    is_flag=True,
    help="Without kai's two stock workflows (auto-feature, auto-validate).",
)
def init(directory: Path | None, force: bool, no_stock: bool) -> None:
    """Make .playbooks/ (playbooks/ with a template and kai's stock workflows auto-feature
    and auto-validate, _index.yaml, sessions/, templates/) in DIRECTORY (default: the
    current one). Existing files are kept unless --force."""
    from catalyst_dsl.integrations.kai_init import init as scaffold

    root = directory or Path.cwd()
    if not root.is_dir():
        raise click.UsageError(f"{root} is not a directory")
    done = scaffold(root, force=force, stock=not no_stock)
    for path in done.created:
        click.echo(f"created  {path}")
    for path in done.replaced:
        click.echo(f"replaced {path}")
    for path in done.kept:
        click.echo(f"kept     {path} (it exists; --force replaces it)")
