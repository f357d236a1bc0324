"""Starting a run: the playbook checked as `catalyst check` checks it, every input
validated, the snapshot created; or, for a playbook run once per input values
(`oneRunPer`), the unfinished run with the same values continued instead.
"""

from __future__ import annotations

from typing import Any, Mapping

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.project.config import relative_to_root
from catalyst_dsl.runtime.engine import paths
from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort
from catalyst_dsl.runtime.lifecycle.context import RunContext
from catalyst_dsl.runtime.lifecycle.driving import Driver
from catalyst_dsl.runtime.lifecycle.resuming import Resumer
from catalyst_dsl.runtime.state.git_ignored import keep_out_of_git


class Starter:
    """Starts runs of one project's playbooks."""

    def __init__(self, context: RunContext) -> None:
        self.context = context

    def start(self, file: str, given: Mapping[str, str]) -> int:
        context = self.context
        playbook = context.checked(file)
        context.warn_about_key()
        values = self._inputs(playbook, given)
        unfinished = self._unfinished_run(playbook, file, values)
        if unfinished is not None:
            return Resumer(context).resume(unfinished, {})
        secrets = [d.name for d in playbook.inputs if d.secret]
        for name in secrets:
            context.add_secret(values.get(name))
        context.mark_secrets(values, secrets)
        context.ai.preflight(playbook)
        keep_out_of_git(context.state_dir)
        state = context.store.create(self._new_state(playbook, file, values, secrets))
        return Driver(context).drive(state, file, playbook, values, resumed=False)

    def _inputs(self, playbook: ir.Playbook, given: Mapping[str, str]) -> dict[str, Any]:
        """The inputs' values, or RunAbort(2) naming every problem."""
        from catalyst_dsl.runtime.values.inputs import resolve_inputs

        given = dict(given)
        for decl in playbook.inputs:
            # A secret need not be typed on the command line (where shells keep history).
            if decl.secret and decl.name not in given:
                found = self.context.secret(decl.name)
                if found is not None:
                    given[decl.name] = found
        values, problems = resolve_inputs(
            playbook.inputs, given, from_text=True, render_default=self.context.default_renderer()
        )
        if not problems:  # a script sees only values its input's other rules passed
            from catalyst_dsl.runtime.lifecycle.input_scripts import check_scripts

            problems = check_scripts(self.context, playbook, values, from_text=True)
        if problems:
            raise RunAbort(
                EXIT_INVALID,
                f"{len(problems)} input problem{'s' if len(problems) != 1 else ''} in {playbook.name}; nothing was run",
                details=tuple(f"{p.message}\n    fix: {p.fix}" for p in problems),
            )
        return values

    def _new_state(self, playbook: ir.Playbook, file: str, values: dict[str, Any], secrets: list[str]):
        """The snapshot of a run about to start: secret inputs kept only as placeholders."""
        from catalyst_dsl.runtime.engine.frames import granted_paths
        from catalyst_dsl.runtime.values.secrets import secret_placeholder
        from catalyst_dsl.runtime.state.snapshot import new_run_state
        from catalyst_dsl.runtime.state.store import PlaybookRef

        context = self.context
        where = relative_to_root(context.project, file)
        return new_run_state(
            PlaybookRef(name=playbook.name, file=where, fingerprint=paths.fingerprint(playbook)),
            mode=context.options.mode,
            inputs={k: (secret_placeholder(k) if k in secrets else context.masker.mask(v)) for k, v in values.items()},
            secret_inputs=secrets,
            permissions={
                "allowedWritePaths": context.masker.mask(granted_paths(playbook, context.inputs_env(values))),
                "calls": {},
            },
        )

    def _unfinished_run(self, playbook: ir.Playbook, file: str, values: Mapping[str, Any]) -> str | None:
        """The run to continue instead of starting one: the newest unfinished (running or
        paused) run of this playbook file whose `oneRunPer` inputs had the same values."""
        from catalyst_dsl.runtime.state.snapshot import FINISHED

        secret = {d.name for d in playbook.inputs if d.secret}
        named = [name for name in playbook.one_run_per if name not in secret]
        if not named:
            return None
        where = relative_to_root(self.context.project, file)
        for summary in self.context.store.list(include_history=False):
            if summary.playbook != playbook.name or summary.status in (*FINISHED, "corrupt", "missing"):
                continue
            try:
                state = self.context.store.load(summary.run_id, results=False)
            except RunAbort:
                continue  # a snapshot that does not verify is not continued by itself
            if state.finished or state.playbook.file != where:
                continue
            if all(state.inputs.get(name) == values.get(name) for name in named):
                shown = ", ".join(f"{name}={values.get(name)}" for name in named)
                self.context.events.notice(
                    f"continuing run {state.run_id}, the unfinished run of {playbook.name} for {shown} "
                    f"(oneRunPer); it goes on with the values it started with"
                )
                return state.run_id
        return None
