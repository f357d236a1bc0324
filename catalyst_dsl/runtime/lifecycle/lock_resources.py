"""What a run will write, as lock resources (`path:<glob>`, `branch:<name>`): read from the
playbook before it runs, so that two runs that would write the same files never run at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.lifecycle.context import RunContext


#: The resource every run locks under the `global-run-lock` setting: it conflicts with
#: itself only (locks compare kinds other than paths by equality), so two runs of the
#: project never overlap, whatever they write, while runs without it keep their per-path
#: locks.
GLOBAL_RUN_LOCK = "global:run"


def lock_resources(context: RunContext, playbook: ir.Playbook, values: dict[str, Any], file: str) -> list[str]:
    """What the run will write, as lock resources: `path:<glob>` and `branch:<name>`, and
    GLOBAL_RUN_LOCK when the project allows one run at a time.

    Paths come from every write the catalog declares and every `writes:`, rendered with
    the inputs where they are enough, otherwise read as globs (`{{x}}` is `*`). A called
    playbook that inherits the caller's permissions writes under the caller's locks.
    """
    env = context.inputs_env(values)
    found: list[str] = []
    seen_files = {os.path.abspath(file)}
    pending = [playbook]
    while pending:
        current = pending.pop()
        for step in ir.all_steps(current):
            found += [r for kind, value in _written(context, step) if (r := _resource(kind, value, env))]
            child = _inheriting_child(context, step, current.file or file, seen_files)
            if child is not None:
                pending.append(child)
    # A path built from a secret locks the masked pattern: `***` is a glob, so the lock
    # covers more than the real path, never less, and the secret stays out of lock files.
    if context.project.config.global_run_lock:
        found.append(GLOBAL_RUN_LOCK)
    return sorted({context.masker.mask_text(resource) for resource in found})


def _written(context: RunContext, step: ir.Step) -> list[tuple[str, ir.Value]]:
    """What a step writes, as (kind, value): its `writes:`, and what its action declares."""
    written: list[tuple[str, ir.Value]] = [("file", w) for w in step.writes]
    spec = context.catalog.get(step.action)
    if spec is not None:
        for decl in spec.writes:
            value = step.config.get(decl.key)
            items = value.items if isinstance(value, ir.ListV) else (value,) if value is not None else ()
            written += [("branch" if decl.kind == "branch" else "file", item) for item in items]
    return written


def _resource(kind: str, value: ir.Value, env) -> str | None:
    """The lock resource of one written value, or None when it names nothing lockable."""
    from catalyst_dsl.runtime.values.evaluate import materialize, to_text

    try:
        text = to_text(materialize(value, env))
    except StepError:
        # Imported here: the glob machinery (automata, character sets) is
        # for a path the inputs cannot render, which most playbooks lack.
        from catalyst_dsl.paths.globs import glob_from_template

        text = glob_from_template(value.text) if isinstance(value, ir.Tmpl) else None
    if text is None:
        return None
    if kind == "branch":
        return f"branch:{text}"
    placed = place(text).path
    return f"path:{placed}" if placed is not None and _lockable(placed) else None


def _inheriting_child(context: RunContext, step: ir.Step, caller: str, seen_files: set[str]) -> ir.Playbook | None:
    """The playbook a `playbook` step calls with `inheritPermissions`, once per file."""
    if step.action != "playbook" or not isinstance(step.config.get("inheritPermissions"), ir.Lit):
        return None
    target = step.config.get("name")
    if not isinstance(target, ir.Lit):
        return None
    resolved = context.library.resolve_call(str(target.value), caller)
    if not resolved or resolved in seen_files:
        return None
    seen_files.add(resolved)
    return context.library.compiled(resolved).playbook


def _lockable(path: str) -> bool:
    """Paths that can be locked; the others (absolute, `..`) the gateway refuses before writing."""
    from catalyst_dsl.paths.globs import Glob, GlobError

    try:
        Glob.compile(path)
    except GlobError:
        return False
    return True


def may_hold_locks(locks: Path) -> bool:
    """False only where the locks folder is known not to exist (not a file in its way, a
    link loop or an unreadable parent: those are errors the lock manager reports)."""
    try:
        os.lstat(locks)
    except FileNotFoundError:
        return False
    except OSError:
        pass
    return True
