"""Shell completion (click's): playbook names, run ids, and a playbook's input names.

Each completer is called by the shell on every TAB, so it reads as little as it can
(file names, not snapshots; one playbook for its inputs) and never fails: a broken
project or playbook completes nothing rather than printing a traceback into the prompt.
"""

from __future__ import annotations

from pathlib import Path

import click

# click.shell_completion (CompletionItem) is imported by the completers, which run only on
# a TAB: every `catalyst run` imports this module for its arguments' completers, and a
# what-if would pay for click's completion scripts (about 0.3 ms) without using them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


def _project():
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project

    return load_project(Path.cwd(), DiagnosticSink())


def playbook_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The playbooks of the project's playbook directories, by name (their file stem, which
    C803 keeps equal to the name)."""
    from click.shell_completion import CompletionItem

    try:
        from catalyst_dsl.project.library import Library

        names = Library(_project()).names()
    except Exception:  # noqa: BLE001 - completion must never break the shell's prompt
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def _run_ids(incomplete: str, include_history: bool) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    try:
        from catalyst_dsl.runtime.state.choice import open_store

        project = _project()
        ids = open_store(project, project.resolve(project.config.state_dir)).run_ids(include_history)
    except Exception:  # noqa: BLE001
        return []
    return [CompletionItem(run_id) for run_id in ids if run_id.startswith(incomplete)]


def live_run_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Runs that can still be resumed, approved or cancelled (not archived)."""
    return _run_ids(incomplete, include_history=False)


def any_run_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Every run kept, archived ones too (to show or export)."""
    return _run_ids(incomplete, include_history=True)


def input_assignments(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`NAME=` for each input of the playbook named earlier on the line not given yet."""
    # While an option still waits for its value, click leaves the words before it
    # unparsed in ctx.args: the playbook and the inputs given so far are read from there.
    words = list(ctx.args)
    name = ctx.params.get("name") or next((w for w in words if not w.startswith("-") and "=" not in w), None)
    if not name or "=" in incomplete:
        return []
    try:
        from catalyst_dsl.project.library import Library

        library = Library(_project())
        path = name if Path(name).is_file() else next(iter(library.named(name)), None)
        playbook = library.compiled(path).playbook if path else None
    except Exception:  # noqa: BLE001
        return []
    if playbook is None:
        return []
    pairs = list(ctx.params.get(param.name) or ())
    pairs += [word for before, word in zip(words, words[1:]) if before in ("-i", "--input")]
    given = {pair.split("=", 1)[0] for pair in pairs}
    from click.shell_completion import CompletionItem

    return [
        CompletionItem(f"{i.name}=", help=f"{i.type}{'' if i.required and i.default is None else ', optional'}")
        for i in playbook.inputs
        if i.name.startswith(incomplete) and i.name not in given
    ]
