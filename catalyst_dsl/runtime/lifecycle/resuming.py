"""Resuming a run: its snapshot loaded (trusted anew when asked), its playbook checked
for changes to the steps it has run, its secrets asked for again, and the run driven on
from where it stopped; a run still waiting for an approval stays paused.
"""

from __future__ import annotations

import os
from typing import Mapping

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.engine import paths
from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_OK, EXIT_PAUSED, EXIT_STATE, EXIT_USAGE, RunAbort
from catalyst_dsl.runtime.lifecycle.context import RunContext
from catalyst_dsl.runtime.lifecycle.driving import Driver
from catalyst_dsl.runtime.lifecycle.run_hooks import terminal_asker
from catalyst_dsl.runtime.state.snapshot import pause_released, shown_step


#: The runs `catalyst resume` without an id may choose: waiting for someone, not failed
#: (a failure is resumed by name, once its cause is fixed) and not running elsewhere.
RESUMABLE_WITHOUT_ID = ("paused", "interrupted")


class Resumer:
    """Resumes runs of one project."""

    def __init__(self, context: RunContext) -> None:
        self.context = context

    def resume(self, run_id: str | None, given: Mapping[str, str], *, trust_edited_state: bool = False) -> int:
        """Go on with a run (None: the one run there is to go on with, `waiting_run`).
        `trust_edited_state`: accept a snapshot that does not verify (an edit, a copy put
        back, no seal), record that in its audit trail and seal it anew."""
        from catalyst_dsl.runtime.state.store import ensure_resumable

        context = self.context
        if run_id is None:
            run_id = self.waiting_run()
        context.warn_about_key()
        state = self._load(run_id, trust_edited_state)
        context.store.ensure_same_commit(state.run_id, "resume")
        if state.finished and context.store.path_of(state.run_id).exists():
            # It ended, but the process stopped before moving it to history: finish that.
            context.store.archive(state)
            if state.status == "completed":
                context.events.run_finished("completed", 0.0, "it had already finished; archived now")
                return EXIT_OK
        ensure_resumable(state)
        file = str(context.project.resolve(state.playbook.file))
        if not os.path.isfile(file):
            raise RunAbort(
                EXIT_STATE,
                f"the playbook of run {state.run_id}, {state.playbook.file}, no longer exists",
                help="restore the file, or start a new run",
            )
        playbook = context.checked(file)
        self._check_compatible(state, playbook, file)
        values = self._values(state, given)
        if self._still_waiting(state):
            # Nothing to do until someone approves: do not run anything again meanwhile.
            roles = f" (one of: {', '.join(state.pause.roles)})" if state.pause.roles else ""
            context.events.paused(
                shown_step(state, state.pause.path),
                f"still waiting for approval{roles}: {state.pause.message}",
                state.pause.roles,
                state.run_id,
                state.pause.options,
            )
            return EXIT_PAUSED
        context.ai.preflight(playbook)
        context.store.claim(state.run_id)  # from here on, no other process runs it
        return Driver(context).drive(state, file, playbook, values, resumed=True)

    def _load(self, run_id: str, trust_edited_state: bool):
        """The run's snapshot; one trusted although it does not verify is sealed anew at once,
        so approve, cancel and the next resume accept it too."""
        from catalyst_dsl.runtime.state.store import ensure_resumable

        context = self.context
        if trust_edited_state:
            state, trusted = context.store.load_trusting(run_id)
        else:
            state, trusted = context.store.load(run_id), []
        if trusted:
            if not state.finished:
                ensure_resumable(state)
            # A failed run comes back among the live ones first (it resumes from there).
            with context.locks.guard():
                if state.status == "failed":
                    context.store.reopen(state)
                context.store.save(state)
            for change in trusted:
                context.events.message("warning", f"trusted although it does not verify: {change}")
        return state

    def waiting_run(self) -> str:
        """The run `catalyst resume` without an id continues: the one paused or interrupted
        run kept here (kai's argumentless resume). None, or several, is RunAbort listing
        them: guessing between two runs could go on with the wrong feature's work."""
        context = self.context
        waiting = [s for s in context.store.list(include_history=False) if s.status in RESUMABLE_WITHOUT_ID]
        if len(waiting) == 1:
            chosen = waiting[0]
            context.events.notice(f"resuming run {chosen.run_id} ({chosen.playbook}, {chosen.status})")
            return chosen.run_id
        if not waiting:
            raise RunAbort(
                EXIT_INVALID,
                "no run is paused or interrupted here",
                help="`catalyst runs list` shows every run; a failed one resumes with `catalyst resume RUN`",
            )
        raise RunAbort(
            EXIT_USAGE,
            f"{len(waiting)} runs are paused or interrupted; say which to resume",
            help=f"catalyst resume {waiting[0].run_id}",
            details=tuple(f"{s.run_id}  {s.playbook}  {s.status}" for s in waiting),
        )

    def _values(self, state, given: Mapping[str, str]) -> dict:
        """The run's inputs, its secret ones given again (they are never saved)."""
        from catalyst_dsl.runtime.values.secrets import EnvSecretProvider

        context = self.context
        values = dict(state.inputs)
        missing = []
        for name in state.secret_inputs:
            value = given.get(name) if name in given else context.secret(name)
            if value is None:
                missing.append(name)
            else:
                values[name] = value
                context.add_secret(value)
        context.mark_secrets(values, state.secret_inputs)
        if missing:
            variable = EnvSecretProvider().variable(missing[0])
            raise RunAbort(
                EXIT_INVALID,
                f"run {state.run_id} needs its secret input{'s' if len(missing) > 1 else ''} again: "
                f"{', '.join(missing)}",
                help=f"secrets are never saved; pass -i {missing[0]}=… or set {variable}",
            )
        return values

    def _still_waiting(self, state) -> bool:
        """A run paused for an approval nobody has given, and nobody at this terminal to ask."""
        return (
            state.status == "paused"
            and state.pause is not None
            and state.pause.kind != "suspend"
            and not pause_released(state)
            and (state.mode == "manual" or state.pause.person)
            and terminal_asker(self.context) is None
        )

    def _check_compatible(self, state, playbook: ir.Playbook, file: str) -> None:
        # Checked even when the top playbook is unchanged: a called playbook may have changed.
        library = self.context.library

        def callee(parent: ir.Playbook, step: ir.Step) -> ir.Playbook | None:
            target = step.config.get("name")
            if not isinstance(target, ir.Lit):
                return None
            resolved = library.resolve_call(str(target.value), parent.file or file)
            return library.compiled(resolved).playbook if resolved else None

        for at, fingerprint, named in _journal_checks(state):
            step = paths.step_at(playbook, at, callee)
            if step is None or (fingerprint and paths.fingerprint(step) != fingerprint):
                where = named
                change = "was removed" if step is None else "changed"
                raise RunAbort(
                    EXIT_STATE,
                    f"{state.playbook.file} changed since run {state.run_id} ran {where}: that step {change}",
                    help="resume with the playbook as it was (e.g. `git stash`), or start a new run",
                )


def _journal_checks(state) -> list[tuple[str, str | None, str]]:
    """What must be in the playbook still for the run to resume: (path, fingerprint or None,
    how the journal names it) for each step the run has done."""
    from catalyst_dsl.ir.journal import ATTEMPT_FAILED, CAUGHT, LOOP_ITEM, caught_errors

    checks = []
    for done in state.steps:
        if done.action == LOOP_ITEM:  # the for-each step must still be there
            loop = done.path.rsplit("/each/", 1)[0]
            checks.append((loop, None, f"the for-each ({loop})"))
        elif done.action == ATTEMPT_FAILED:  # and so must the retry-block
            block = done.path.rsplit("/attempt/", 1)[0]
            checks.append((block, None, f"the retry-block ({block})"))
        elif done.action == CAUGHT:  # each handled failure's step, as it was, to fail again
            checks += [
                (kept["path"], kept.get("fingerprint"), f"step {kept.get('step') or kept['path']} ({kept['path']})")
                for kept in caught_errors(done.result)
            ]
        else:
            named = done.label or f"{done.name or done.action} ({done.path})"  # older snapshots keep no label
            checks.append((done.path, done.fingerprint, f"step {named}"))
    return checks
