"""Steps whose action needs a program this machine does not have (PROGRAMS: git, node, pwsh).

The one check that looks at the machine instead of the files: the same playbook is fine
where the program is installed and fails here with ActionUnavailable. So it is a note,
made once per program and file, at the first step that needs it, and it runs only in the
library check (`catalyst check`), never in the per-file compile an editor caches.
"""

from __future__ import annotations

from typing import Callable

from catalyst_dsl.actions.catalog import PROGRAMS
from catalyst_dsl.checks.library_view import LibraryView
from catalyst_dsl.diagnostics.ids import PROGRAM_NOT_INSTALLED
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.ir import nodes as ir

#: At most this many other steps are pointed at; the message gives the count.
MORE_LABELS = 3


def check_programs(
    library: LibraryView, files: list[str], sink: DiagnosticSink, find: Callable[[str], str | None] | None = None
) -> None:
    find = find or library.facts.which
    installed: dict[str, bool] = {}
    for path in files:
        playbook = library.compiled(path).playbook
        if playbook is None:
            continue
        needing: dict[str, list[ir.Step]] = {}
        for step in ir.all_steps(playbook):
            spec = library.catalog.get(step.action) if step.known else None
            if spec is None or spec.requires is None:
                continue
            if spec.requires not in installed:
                installed[spec.requires] = find(spec.requires) is not None
            if not installed[spec.requires]:
                needing.setdefault(spec.requires, []).append(step)
        for program, steps in needing.items():
            first, *others = steps
            count = f"{len(steps)} steps need" if others else "this step needs"
            sink.report(
                PROGRAM_NOT_INSTALLED,
                f"{count} `{program}`, which is not installed on this machine (`{first.action}` runs with it)",
                first.action_span or first.span,
                labels=[Label(s.action_span or s.span, f"also needs {program}") for s in others[:MORE_LABELS]],
                help=f"{PROGRAMS.get(program, f'install {program} and put it on PATH')}; without it these steps "
                "fail with ActionUnavailable here",
            )
