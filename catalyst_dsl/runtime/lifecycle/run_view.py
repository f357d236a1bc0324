"""The dialect's own record of a run (kai's session files), kept after each save of the
snapshot. A view that cannot be written is a warning, once: the snapshot is the record.
"""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.lifecycle.context import RunContext


def keep_view(context: RunContext, playbook: ir.Playbook) -> None:
    """Keep the dialect's own record of the run (kai's session files) after each save.
    A view that cannot be written is a warning, once: the snapshot is the record."""
    from catalyst_dsl.dialects import registry

    view = registry.run_view(playbook, Path(context.project.root), context.state_dir)
    if view is None:
        return
    broken: list[str] = []

    def observe(state) -> None:
        if broken:
            return
        try:
            view(state)
        except Exception as error:  # noqa: BLE001 - a view never fails the run it shows
            broken.append(str(error))
            context.events.message(
                "warning",
                f"the {playbook.dialect} session files of this run cannot be written ({error}); "
                f"the run goes on, recorded in its snapshot",
            )

    context.store.observers[:] = [observe]


def keep_view_of(context: RunContext, state) -> None:
    """`keep_view` for a command that acts on a saved run without running it (cancel,
    approve): only a playbook file a dialect with a run view owns is read."""
    from catalyst_dsl.compiler import compile_path
    from catalyst_dsl.dialects import registry

    file = Path(context.project.root) / state.playbook.file
    dialect = registry.by_place(str(file))
    if dialect is None or dialect.run_view is None or not file.is_file():
        return
    playbook = compile_path(str(file)).playbook
    if playbook is not None:
        keep_view(context, playbook)
