"""A run's lifecycle around the interpreter: start, resume, approve, cancel.

The session validates before anything happens (the playbook through the same checks
as `catalyst check`, then every input), creates the snapshot, takes the locks, and
hands the interpreter the hooks it records through. Whatever ends the run (success,
a failed step, a pause, Ctrl-C, a cancel), the snapshot is saved first and the locks
are released after.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import posixpath
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.project.config import Project, relative_to_root
from catalyst_dsl.records import record
from catalyst_dsl.runtime import paths
from catalyst_dsl.runtime.errors import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_PAUSED,
    EXIT_STATE,
    RunAbort,
    StepError,
)
from catalyst_dsl.runtime.events import Events, utc_now
from catalyst_dsl.runtime.scope import RunEnv, Scope
from catalyst_dsl.runtime.values.jsvalues import as_json_data

# The machine's helpers (the user, the host, whether a process lives) are imported by the
# commands that record or compare them (approve, cancel), not by a run or a what-if.
# The interpreter, the effects gateway and the confinement (with all the actions) are
# imported where a run or a plan starts, after the playbook and its inputs are checked:
# a what-if refused for its inputs does not load them.
if TYPE_CHECKING:
    from catalyst_dsl.runtime.effects.gateway import EffectsGateway, Performer, RealPerformer
    from catalyst_dsl.runtime.interpreter import Frame, Hooks
    from catalyst_dsl.runtime.effects.tracked import TrackedFiles

EXIT_INTERRUPTED = 130


@record(frozen=False)
class RunOptions:
    mode: str = "manual"
    log_format: str = "text"
    verbose: bool = False
    #: Ask at checkpoints on this terminal; None: only when stdin is a terminal.
    interactive: bool | None = None
    performer: Performer | None = None
    out: Any = None
    #: A what-if sends its network reads (GET, HEAD) instead of leaving their results unknown.
    refresh: bool = False


class StillPaused(str):
    """What an approval that released nothing says: the command then exits 4 (still paused)."""


class Session:
    """Runs of one project: the store, the locks, the library and the plugins they share."""

    def __init__(self, project: Project, options: RunOptions | None = None) -> None:
        from catalyst_dsl.project.library import Library
        from catalyst_dsl.actions.plugins import installed
        from catalyst_dsl.runtime.values.secrets import Masker

        self.project = project
        self.options = options or RunOptions()
        self.state_dir = project.resolve(project.config.state_dir)
        if self.state_dir.exists() and not self.state_dir.is_dir():
            raise RunAbort(
                EXIT_STATE,
                f"the state directory {relative_to_root(self.project, str(self.state_dir))} is a file",
                help="remove or rename it, or set state-dir in catalyst.toml to a directory",
            )
        self.plugins = installed()
        self.catalog = _builtins()  # plugin actions join it when a playbook names them
        self.library = Library(project, catalog=self.catalog)
        self.masker = Masker()
        self._gateway: EffectsGateway | None = None
        self.events = Events(
            log_format=self.options.log_format,
            out=self.options.out,
            mask=self.masker.mask,
            verbose=self.options.verbose,
        )

    # The store of snapshots, the locks and the approvers are made when first used: a
    # what-if refused for its inputs never touches them (nor imports their modules).

    @functools.cached_property
    def store(self):
        from catalyst_dsl.runtime.state.store import StateStore

        return StateStore(self.state_dir)

    @functools.cached_property
    def approvers(self):
        """The `approvers` setting, read when someone approves: a what-if approves nobody."""
        from catalyst_dsl.runtime.approvers import Approvers

        return Approvers(self.project.config.approvers)

    @functools.cached_property
    def locks(self):
        from catalyst_dsl.runtime.state.locks import LockManager

        # The store is asked only about a lock another run holds: a what-if with no such
        # lock (most) never opens it, nor imports the snapshot codec and the integrity
        # checks that come with it (about 2 ms).
        return LockManager(self.state_dir / "locks", run_status=lambda run_id: self.store.peek_status(run_id))

    # -- starting --------------------------------------------------------------------------------------

    def start(self, file: str, given: Mapping[str, str]) -> int:
        from catalyst_dsl.runtime.values.inputs import resolve_inputs
        from catalyst_dsl.runtime.interpreter import granted_paths
        from catalyst_dsl.runtime.values.secrets import secret_placeholder
        from catalyst_dsl.runtime.state.snapshot import current_owner
        from catalyst_dsl.runtime.state.store import PlaybookRef, RunState

        playbook = self._checked(file)
        self._warn_about_key()
        given = dict(given)
        for decl in playbook.inputs:
            # A secret need not be typed on the command line (where shells keep history).
            if decl.secret and decl.name not in given:
                found = self.secret(decl.name)
                if found is not None:
                    given[decl.name] = found
        values, problems = resolve_inputs(
            playbook.inputs, given, from_text=True, render_default=self._default_renderer()
        )
        if problems:
            raise RunAbort(
                EXIT_INVALID,
                f"{len(problems)} input problem{'s' if len(problems) != 1 else ''} in {playbook.name}; nothing was run",
                details=tuple(f"{p.message}\n    fix: {p.fix}" for p in problems),
            )
        unfinished = self._unfinished_run(playbook, file, values)
        if unfinished is not None:
            return self.resume(unfinished, {})
        secrets = [d.name for d in playbook.inputs if d.secret]
        for name in secrets:
            self._add_secret(values.get(name))
        self._mark_secrets(values, secrets)
        self.ai.preflight(playbook)
        now = utc_now()
        state = RunState(
            run_id="",
            playbook=PlaybookRef(
                name=playbook.name, file=relative_to_root(self.project, file), fingerprint=paths.fingerprint(playbook)
            ),
            status="running",
            mode=self.options.mode,
            inputs={k: (secret_placeholder(k) if k in secrets else self.masker.mask(v)) for k, v in values.items()},
            secret_inputs=secrets,
            started_at=now,
            updated_at=now,
            ended_at=None,
            owner=current_owner(),
            steps=[],
            in_flight=None,
            pause=None,
            approvals=[],
            failures=[],
            outputs=None,
            cancel=None,
            permissions={
                "allowedWritePaths": self.masker.mask(granted_paths(playbook, self._inputs_env(values))),
                "calls": {},
            },
            locks=[],
            error=None,
        )
        state = self.store.create(state)
        return self._drive(state, file, playbook, values, resumed=False)

    def _unfinished_run(self, playbook: ir.Playbook, file: str, values: Mapping[str, Any]) -> str | None:
        """The run to continue instead of starting one: the newest unfinished (running or
        paused) run of this playbook file whose `oneRunPer` inputs had the same values."""
        from catalyst_dsl.runtime.state.snapshot import FINISHED

        named = [name for name in playbook.one_run_per if not any(d.name == name and d.secret for d in playbook.inputs)]
        if not named:
            return None
        where = relative_to_root(self.project, file)
        for summary in self.store.list(include_history=False):
            if summary.playbook != playbook.name or summary.status in (*FINISHED, "corrupt", "missing"):
                continue
            try:
                state = self.store.load(summary.run_id, results=False)
            except RunAbort:
                continue  # a snapshot that does not verify is not continued by itself
            if state.finished or state.playbook.file != where:
                continue
            if all(state.inputs.get(name) == values.get(name) for name in named):
                shown = ", ".join(f"{name}={values.get(name)}" for name in named)
                self.events.notice(
                    f"continuing run {state.run_id}, the unfinished run of {playbook.name} for {shown} "
                    f"(oneRunPer); it goes on with the values it started with"
                )
                return state.run_id
        return None

    def _checked(self, file: str, *, cached: bool = False, checked=None) -> ir.Playbook:
        """The playbook, or RunAbort(1) with every error `catalyst check` would print
        (runtime/preflight.py); `checked`: that check, made already."""
        from catalyst_dsl.runtime import preflight

        result = checked if checked is not None else preflight.checked(self.project, file, cached=cached)
        self.library = result.library
        return result.library.compiled(file).playbook

    # -- planning -----------------------------------------------------------------------------------------

    def plan(
        self, file: str, given: Mapping[str, Any], *, from_text: bool = True, checked=None, hashed: bool = True
    ) -> dict[str, Any]:
        """What a run would do, as a plan (docs/plan-format.md): nothing is written, no lock
        is taken, no program or remote AI is started. `checked`: the preflight check of
        `file`, when the caller made it already (runtime/preflight.py). `hashed=False`:
        without `planHash`, for a view that does not show it (the hash is the SHA-256 of
        the plan's canonical JSON, a few milliseconds for a large plan)."""
        from catalyst_dsl.runtime.values.inputs import resolve_inputs
        from catalyst_dsl.runtime.planning import PlanRecorder
        from catalyst_dsl.runtime.values.secrets import secret_placeholder
        from catalyst_dsl.runtime.whatif import RecordingPerformer

        playbook = self._checked(file, cached=True, checked=checked)
        given = dict(given)
        secrets = [d.name for d in playbook.inputs if d.secret]
        for name in secrets:
            if name not in given:
                # A plan never needs the real secret: it only masks it.
                given[name] = self.secret(name) or secret_placeholder(name)
        values, problems = resolve_inputs(
            playbook.inputs, given, from_text=from_text, render_default=self._default_renderer()
        )
        if problems:
            raise RunAbort(
                EXIT_INVALID,
                f"{len(problems)} input problem{'s' if len(problems) != 1 else ''} in {playbook.name}; nothing was planned",
                details=tuple(f"{p.message}\n    fix: {p.fix}" for p in problems),
            )
        for name in secrets:
            if values.get(name) != secret_placeholder(name):
                self._add_secret(values.get(name))
        self._mark_secrets(values, secrets)
        from catalyst_dsl.runtime.interpreter import Frame, Interpreter, granted_paths

        events = Events(mask=self.masker.mask, silent=True)
        recorder = PlanRecorder(self.masker)
        scratch = self.state_dir / "tmp" / "what-if"
        grants = granted_paths(playbook, self._inputs_env(values))
        gateway = self._gateway = self._new_gateway(
            playbook, grants, scratch, RecordingPerformer(refresh=self.options.refresh, files=self._untrusted_reads())
        )
        interpreter = Interpreter(
            run_id="what-if",
            catalog=self.catalog,
            plugins=self.plugins.action,
            events=events,
            hooks=self._plan_hooks(),
            mode="manual",
            scratch=scratch,
            max_depth=self.project.config.max_depth,
            plan=recorder,
            settings=self.project.config,
        )
        outputs: Any = None
        try:
            outputs = interpreter.run_playbook(Frame(playbook, file, values, gateway))
        except StepError as error:  # a failure outside any step (a `finally` that cannot run)
            recorder.steps.append(
                {
                    "path": "",
                    "step": playbook.name,
                    "action": "playbook",
                    "change": "unknown",
                    "reason": f"would fail: {error.code}: {error.message}",
                    "conditional": False,
                    "config": {},
                    "effects": [],
                    "writes": [],
                    "approval": None,
                    "request": None,
                    "steps": [],
                }
            )
        resources = self.lock_resources(playbook, values, file)
        # Where no run ever took a lock there is none to conflict with (nor a lock module to
        # import); anything else there, a locks folder or a path that cannot be one, is the
        # lock manager's to read or to report.
        held = self.locks.conflicts("what-if", resources) if _may_hold_locks(self.state_dir / "locks") else []
        conflicts = [{"resource": self.masker.mask_text(c.resource), "run": c.run_id} for c in held]
        from catalyst_dsl.report.plan import count_changes, with_hash

        plan = {
            "format": "catalyst-plan",
            "version": 1,
            "playbook": {"name": playbook.name, "file": relative_to_root(self.project, file)},
            "inputs": {k: (secret_placeholder(k) if k in secrets else recorder.shown(v)) for k, v in values.items()},
            "permissions": {
                "allowedWritePaths": self.masker.mask(list(dict.fromkeys(grants))) if grants is not None else None
            },
            "locks": resources,
            "conflicts": sorted(conflicts, key=lambda c: (c["resource"], c["run"])),
            # Diffs, paths and reasons can hold a secret value too: the whole tree is masked.
            "steps": self.masker.mask(recorder.steps, own=True),  # the recorder's own lists
            "outputs": recorder.shown(outputs) if outputs is not None else None,
        }
        plan["summary"] = count_changes(plan["steps"])
        return with_hash(plan) if hashed else plan

    def _untrusted_reads(self) -> "TrackedFiles":
        """What a plan may read and show (runtime/effects/tracked.py): the project's tracked files,
        and the resources directory when the user's own configuration named it."""
        from catalyst_dsl.runtime.effects.tracked import TrackedFiles

        resources = self.project.resources_dir()
        trusted = (resources,) if resources is not None and self.project.user_resources else ()
        return TrackedFiles(self.project.root, trusted)

    def _plan_hooks(self) -> Hooks:
        from catalyst_dsl.runtime.interpreter import Hooks

        nothing = lambda *args, **kwargs: None  # noqa: E731 - a plan records nothing in a snapshot
        return Hooks(
            record_step=nothing,
            save=nothing,
            set_in_flight=nothing,
            record_failure=nothing,
            approval_for=nothing,
            approve=nothing,
            ask=None,
            cancel_requested=lambda: False,
            load_playbook=lambda frame, step, target: self._load_child(None, frame, step, target),
            adapter=self._adapter,
            mask=self.masker.mask,
            secret=self._provided_secret,
        )

    # -- resuming ----------------------------------------------------------------------------------------

    def resume(self, run_id: str, given: Mapping[str, str], *, trust_edited_state: bool = False) -> int:
        """Go on with a run. `trust_edited_state`: accept a snapshot that does not verify (an
        edit, a copy put back, no seal), record that in its audit trail and seal it anew."""
        from catalyst_dsl.runtime.values.secrets import EnvSecretProvider

        from catalyst_dsl.runtime.state.store import ensure_resumable

        self._warn_about_key()
        if trust_edited_state:
            state, trusted = self.store.load_trusting(run_id)
        else:
            state, trusted = self.store.load(run_id), []
        if trusted:
            if not state.finished:
                ensure_resumable(state)
            # Sealed anew at once, so approve, cancel and the next resume accept it too; a
            # failed run comes back among the live ones first (it resumes from there).
            with self.locks.guard():
                if state.status == "failed":
                    self.store.reopen(state)
                self.store.save(state)
            for change in trusted:
                self.events.message("warning", f"trusted although it does not verify: {change}")
        if state.finished and self.store.path_of(state.run_id).exists():
            # It ended, but the process stopped before moving it to history: finish that.
            self.store.archive(state)
            if state.status == "completed":
                self.events.run_finished("completed", 0.0, "it had already finished; archived now")
                return EXIT_OK
        ensure_resumable(state)
        file = str(self.project.resolve(state.playbook.file))
        if not os.path.isfile(file):
            raise RunAbort(
                EXIT_STATE,
                f"the playbook of run {state.run_id}, {state.playbook.file}, no longer exists",
                help="restore the file, or start a new run",
            )
        playbook = self._checked(file)
        self._check_compatible(state, playbook, file)
        values = dict(state.inputs)
        missing = []
        for name in state.secret_inputs:
            value = given.get(name) if name in given else self.secret(name)
            if value is None:
                missing.append(name)
            else:
                values[name] = value
                self._add_secret(value)
        self._mark_secrets(values, state.secret_inputs)
        if missing:
            raise RunAbort(
                EXIT_INVALID,
                f"run {state.run_id} needs its secret input{'s' if len(missing) > 1 else ''} again: {', '.join(missing)}",
                help=f"secrets are never saved; pass -i {missing[0]}=… or set {EnvSecretProvider().variable(missing[0])}",
            )
        if (
            state.status == "paused"
            and state.pause is not None
            and state.pause.kind != "suspend"
            and not self._released(state)
            and (state.mode == "manual" or state.pause.person)
            and self._asker() is None
        ):
            # Nothing to do until someone approves: do not run anything again meanwhile.
            roles = f" (one of: {', '.join(state.pause.roles)})" if state.pause.roles else ""
            self.events.paused(
                state.pause.path,
                f"still waiting for approval{roles}: {state.pause.message}",
                state.pause.roles,
                state.run_id,
                state.pause.options,
            )
            return EXIT_PAUSED
        self.ai.preflight(playbook)
        return self._drive(state, file, playbook, values, resumed=True)

    def _warn_about_key(self) -> None:
        """Say once when snapshots are sealed with the key kept beside them (integrity/run_key.py)."""
        from catalyst_dsl.runtime.state.integrity.run_key import KEY_ENV

        key = self.store.run_key()
        if not key.outside_state:
            self.events.message(
                "warning",
                f"snapshots are sealed with {relative_to_root(self.project, key.source)}, a key in the state directory: "
                f"it does not protect them from anyone who can write there; set {KEY_ENV} or make your config directory writable",
            )

    @staticmethod
    def _released(state) -> bool:
        return any(
            a.path == state.pause.path and (a.released or a.decision == "request-changes") for a in state.approvals
        )

    def _provided_secret(self, name: str) -> str | None:
        """A secret an action asks for by name (a token): found, then masked everywhere."""
        value = self.secret(name)
        if value is not None:
            self._add_secret(value)
        return value

    def _masked_comment(self, state, comment: str | None) -> str | None:
        """An approval comment as it is stored: masked like everything else.

        Outside the run (`approve`, a webhook) the run's secrets are known only from the
        providers (environment, secrets-file); a secret given on the run's command line
        alone cannot be recognised there.
        """
        if not comment:
            return comment
        for name in state.secret_inputs:
            self._provided_secret(name)
        return self.masker.mask_text(comment)

    def _mark_secrets(self, values: dict[str, Any], secrets: list[str]) -> None:
        """Mark the secret inputs' values, so every value computed from them is secret too (runtime/values/taint.py)."""
        from catalyst_dsl.runtime.values.taint import secret_text

        for name in secrets:
            if name in values:
                values[name] = secret_text(values[name], name, self.masker)

    def _add_secret(self, value: Any) -> None:
        self.masker.add(value)
        if isinstance(value, str) and "\n" in value:
            # Output is shown line by line: each line of a multi-line secret (a key file)
            # must be recognisable alone.
            for line in value.splitlines():
                if len(line.strip()) >= 6:
                    self.masker.add(line.strip())

    def secret(self, name: str) -> str | None:
        """A secret input's value from the providers: the environment, then `secrets-file`."""
        from catalyst_dsl.runtime.values.secrets import EnvSecretProvider, FileSecretProvider, SecretFileError

        value = EnvSecretProvider().lookup(name)
        if value is None and self.project.config.secrets_file:
            try:
                value = FileSecretProvider(self.project.resolve(self.project.config.secrets_file)).lookup(name)
            except SecretFileError as error:
                raise RunAbort(
                    EXIT_INVALID, f"cannot read secrets from {error.path}: {error.problem}", help=error.fix
                ) from None
        return value

    @contextlib.contextmanager
    def _changing(self, run_id: str):
        """Load-change-save of a run's snapshot from outside the run, as one change under the
        guard: a concurrent resume sees it, or refuses it. A run that does not exist is
        reported before anything (the guard's directory) is created."""
        self.store.load(run_id, results=False)
        with self.locks.guard():
            yield

    def _claim(self, state, resources: list[str]):
        """Make a resumed run this process's, as one change under the guard, before it takes
        any lock: a fresh read must be the snapshot this resume loaded (a run another resume
        claimed or moved on meanwhile is refused), and approvals given since count. Returns
        the snapshot as it was, to give the claim back if the run cannot take its locks."""
        from catalyst_dsl.runtime.interpreter import CAUGHT
        from catalyst_dsl.runtime.state.snapshot import current_owner

        with self.locks.guard():
            fresh = self.store.load(state.run_id, results=False)
            if (fresh.status, fresh.updated_at, len(fresh.steps)) != (state.status, state.updated_at, len(state.steps)):
                raise RunAbort(
                    EXIT_STATE,
                    f"run {state.run_id} changed while this resume started (it is {fresh.status} now): another process is resuming it, or did",
                    help="`catalyst runs show` tells where it is",
                )
            state.approvals, state.cancel = fresh.approvals, fresh.cancel
            self._check_signed(state)
            if state.status == "failed":
                # A failed run resumes from the step that failed, once its cause is fixed; the
                # failures catches handled run again too (their handlers may be what failed).
                self.store.reopen(state)
                state.error, state.ended_at = None, None
                state.steps = [r for r in state.steps if r.action != CAUGHT]
            state.status = "running"
            state.owner = current_owner()
            state.locks = list(resources)
            state.pause = None
            self.store.save(state)
        return fresh

    def _real_performer(self, run_id: str) -> RealPerformer:
        """Effects for real: programs confined (or the run told once why not), their process
        groups recorded beside the snapshot."""
        from catalyst_dsl.runtime.effects.confinement import Confiner
        from catalyst_dsl.runtime.effects.gateway import RealPerformer
        from catalyst_dsl.runtime.effects.process_groups import ProcessGroups

        confiner = Confiner(
            required=self.project.config.require_confinement, notice=lambda text: self.events.message("warning", text)
        )
        return RealPerformer(confiner, ProcessGroups.of_run(self.state_dir, run_id, self.store.run_key().secret))

    def _new_gateway(self, playbook: ir.Playbook, grants: list[str] | None, scratch: Path, performer) -> EffectsGateway:
        """The effects gateway of a run or a plan: the playbook's grants, the state directory
        protected, the resources readable."""
        from catalyst_dsl.runtime.effects.gateway import EffectsGateway
        from catalyst_dsl.runtime.effects.grants import Grants

        return EffectsGateway(
            self.project.root,
            scratch,
            (Grants.of(playbook.name, grants),),
            performer,
            protected=(relative_to_root(self.project, str(self.state_dir)),),
            resources=self.project.resources_dir(),
            guarded=self._approval_files(),
        )

    def _approval_files(self) -> tuple[str, ...]:
        """The project files that decide who may approve: the settings (and `catalyst.toml`,
        which would win over `pyproject.toml` if a step made one) and the allowed signers."""
        files = ["catalyst.toml", posixpath.normpath(self.project.config.allowed_signers)]
        if self.project.config_file is not None:
            files.append(relative_to_root(self.project, str(self.project.config_file)))
        return tuple(dict.fromkeys(f for f in files if not f.startswith("../") and not os.path.isabs(f)))

    def _check_compatible(self, state, playbook: ir.Playbook, file: str) -> None:
        # Checked even when the top playbook is unchanged: a called playbook may have changed.
        def callee(parent: ir.Playbook, step: ir.Step) -> ir.Playbook | None:
            target = step.config.get("name")
            if not isinstance(target, ir.Lit):
                return None
            resolved = self.library.resolve_call(str(target.value), parent.file or file)
            return self.library.compiled(resolved).playbook if resolved else None

        from catalyst_dsl.runtime.interpreter import ATTEMPT_FAILED, CAUGHT, LOOP_ITEM, caught_errors

        checks = []  # (path, fingerprint or None, how the journal names it)
        for done in state.steps:
            if done.action == LOOP_ITEM:  # the for-each step must still be there
                checks.append((done.path.rsplit("/each/", 1)[0], None, "the for-each"))
            elif done.action == ATTEMPT_FAILED:  # and so must the retry-block
                checks.append((done.path.rsplit("/attempt/", 1)[0], None, "the retry-block"))
            elif done.action == CAUGHT:  # each handled failure's step, as it was, to fail again
                checks += [
                    (kept["path"], kept.get("fingerprint"), f"step {kept.get('step') or kept['path']}")
                    for kept in caught_errors(done.result)
                ]
            else:
                checks.append((done.path, done.fingerprint, f"step {done.name or done.action}"))
        for at, fingerprint, named in checks:
            step = paths.step_at(playbook, at, callee)
            if step is None or (fingerprint and paths.fingerprint(step) != fingerprint):
                where = f"{named} ({at})"
                change = "was removed" if step is None else "changed"
                raise RunAbort(
                    EXIT_STATE,
                    f"{state.playbook.file} changed since run {state.run_id} ran {where}: that step {change}",
                    help="resume with the playbook as it was (e.g. `git stash`), or start a new run",
                )

    # -- the run ------------------------------------------------------------------------------------------

    def _drive(self, state, file: str, playbook: ir.Playbook, values: dict[str, Any], *, resumed: bool) -> int:
        from catalyst_dsl.collector import for_long_running
        from catalyst_dsl.runtime.interpreter import Cancelled, Frame, Interpreter, Paused, check_outputs, granted_paths
        from catalyst_dsl.runtime.state.locks import DamagedLock, LockConflict
        from catalyst_dsl.runtime.effects.process_groups import ProcessGroups
        from catalyst_dsl.runtime.state.snapshot import current_owner

        for_long_running()  # a run can take hours: the collector as Python sets it
        started = time.monotonic()
        self._keep_view(playbook)
        self.events.run_started(state.run_id, playbook.name, resumed)
        self.ai.announce()
        resources = self.lock_resources(playbook, values, file)
        previous = self._claim(state, resources) if resumed else None
        if resumed:
            # The step in flight when catalyst died may have left its programs running: they
            # are confirmed dead before it runs again.
            ProcessGroups.of_run(self.state_dir, state.run_id, self.store.run_key().secret).reap()
        try:
            self.locks.acquire(state.run_id, resources)
        except LockConflict as conflict:
            if isinstance(conflict, DamagedLock):
                message = str(conflict)
            else:
                message = f"another run holds {conflict.resource}: run {conflict.owner.run_id}"
            if previous is not None:
                # Give the claim back: the snapshot is as it was (paused, failed…).
                with self.locks.guard():
                    self.store.save(previous)
                    if previous.finished:
                        self.store.archive(previous)
                raise RunAbort(
                    EXIT_FAILED,
                    f"{message}; run {state.run_id} stays {previous.status}",
                    help="resume it once the other run has finished",
                ) from None
            state.status, state.ended_at = "failed", utc_now()
            state.error = self._failure(StepError("LockConflict", message), None, 1, 0.0)
            self.store.save(state)
            self.store.archive(state)
            raise RunAbort(
                EXIT_FAILED,
                message + "; nothing was run",
                help="wait for that run to finish, or cancel it with `catalyst cancel`",
            ) from None
        if previous is None:
            state.status = "running"
            state.owner = current_owner()
            state.locks = list(resources)
            self.store.save(state)
        scratch = self.state_dir / "tmp" / state.run_id
        # AI adapters that run a program go through the gateway too.
        grants = granted_paths(playbook, self._inputs_env(values))
        gateway = self._gateway = self._new_gateway(
            playbook, grants, scratch, self.options.performer or self._real_performer(state.run_id)
        )
        interpreter = Interpreter(
            run_id=state.run_id,
            catalog=self.catalog,
            plugins=self.plugins.action,
            events=self.events,
            hooks=self._hooks(state, playbook),
            mode=state.mode,
            scratch=scratch,
            max_depth=self.project.config.max_depth,
            replay={r.path: _record_dict(r, seq) for seq, r in enumerate(state.steps)},
            settings=self.project.config,
            recovering=state.in_flight if resumed else None,
        )
        frame = Frame(playbook, file, values, gateway)
        try:
            outputs = interpreter.run_playbook(frame)
            check_outputs(playbook, outputs)
            self._check_artifacts(playbook, values)
        except Paused as pause:
            from catalyst_dsl.runtime.state.store import Pause

            state.status = "paused"
            state.in_flight = None
            state.pause = Pause(
                path=pause.path,
                message=self.masker.mask_text(pause.message),
                roles=pause.roles,
                options=as_json_data(pause.options),
                since=utc_now(),
                kind=pause.kind,
                subject=pause.subject,
                person=pause.person,
            )
            self.store.save(state)
            self.events.paused(pause.step_id, pause.message, pause.roles, state.run_id, pause.options)
            return EXIT_PAUSED
        except Cancelled as cancel:
            from catalyst_dsl.runtime.state.store import Cancel

            by, reason = (
                (cancel.by, cancel.reason or "cancelled")
                if cancel.by is not None
                else self._cancel_request(state.run_id)
            )
            state.cancel = Cancel(by=by, reason=reason, at=utc_now())
            return self._finish(state, "cancelled", started, f"cancelled by {by}: {reason}")
        except KeyboardInterrupt:
            self.store.save(state)  # status stays running, inFlight names the step to re-run
            self.events.run_finished(
                "interrupted", time.monotonic() - started, f"resume with: catalyst resume {state.run_id}"
            )
            return EXIT_INTERRUPTED
        except Exception as error:
            if isinstance(error, RunAbort):
                raise
            if not isinstance(error, StepError):
                # Our own bug: the snapshot still ends, so the run is not left "running".
                state.error = self._failure(
                    StepError("InternalError", f"{type(error).__name__}: {error}"), state.in_flight, 1, 0.0
                )
                self._finish(state, "failed", started, "internal error (a bug in catalyst; please report it)")
                raise
            last = state.failures[-1] if state.failures else None
            state.error = (
                last if last is not None and last.code == error.code else self._failure(error, error.step, 1, 0.0)
            )
            return self._finish(state, "failed", started, f"{error.code}: {error.message}", fix=error.guidance)
        finally:
            if state.status != "paused":
                # A paused run keeps its locks: nobody else writes what is under review.
                self.locks.release(state.run_id)
                _remove_tree(scratch)
                if resumed:  # a catalyst killed in a step left its program's temp folder
                    from catalyst_dsl.runtime.effects.confinement import remove_temp_folders

                    remove_temp_folders(state.run_id)
        state.outputs = self.masker.mask(as_json_data(outputs))
        return self._finish(state, "completed", started, "")

    def _keep_view(self, playbook: ir.Playbook) -> None:
        """Keep the dialect's own record of the run (kai's session files) after each save.
        A view that cannot be written is a warning, once: the snapshot is the record."""
        from catalyst_dsl.dialects import registry

        view = registry.run_view(playbook, Path(self.project.root), self.state_dir)
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
                self.events.message(
                    "warning",
                    f"the {playbook.dialect} session files of this run cannot be written ({error}); "
                    f"the run goes on, recorded in its snapshot",
                )

        self.store.observers[:] = [observe]

    def _keep_view_of(self, state) -> None:
        """`_keep_view` for a command that acts on a saved run without running it (cancel,
        approve): only a playbook file a dialect with a run view owns is read."""
        from catalyst_dsl.compiler import compile_path
        from catalyst_dsl.dialects import registry

        file = Path(self.project.root) / state.playbook.file
        dialect = registry.by_place(str(file))
        if dialect is None or dialect.run_view is None or not file.is_file():
            return
        playbook = compile_path(str(file)).playbook
        if playbook is not None:
            self._keep_view(playbook)

    def _finish(self, state, status: str, started: float, detail: str, fix: str | None = None) -> int:
        state.status, state.in_flight, state.ended_at = status, None, utc_now()
        self.store.save(state)
        self.store.archive(state)
        self._clear_cancel(state.run_id)
        self.events.run_finished(status, time.monotonic() - started, detail, fix)
        return {"completed": EXIT_OK, "failed": EXIT_FAILED, "cancelled": EXIT_CANCELLED}[status]

    def _check_artifacts(self, playbook: ir.Playbook, values: dict[str, Any]) -> None:
        from catalyst_dsl.paths.globs import Glob
        from catalyst_dsl.runtime.values.evaluate import materialize, to_text

        missing = []
        env = self._inputs_env(values)
        for value in playbook.artifacts:
            text = to_text(materialize(value, env))
            rel = place(text).path
            if rel is None:
                continue
            glob = Glob.compile(rel)
            if glob.is_literal:
                found = (self.project.root / rel).exists()
            else:
                found = any(
                    glob.matches(p.relative_to(self.project.root).as_posix())
                    for p in self.project.root.rglob("*")
                    if p.is_file()
                )
            if not found:
                missing.append(text)
        if missing:
            raise StepError(
                "ArtifactMissing",
                f"the run finished but these artifacts do not exist: {', '.join(missing)}",
                guidance="the steps that should create them did not; check their paths",
            )

    def _failure(self, error: StepError, step: str | None, attempt: int, duration: float):
        from catalyst_dsl.runtime.state.store import Failure

        return Failure(
            code=error.code,
            message=self.masker.mask_text(error.message),
            step=step,
            attempt=attempt,
            duration=round(duration, 6),
            at=utc_now(),
        )

    def _hooks(self, state, playbook: ir.Playbook) -> Hooks:
        from catalyst_dsl.runtime.interpreter import Hooks

        from catalyst_dsl.runtime.state.store import Approval, StepRecord

        cancel_file = self.state_dir / f"run-{state.run_id}.cancel"
        journaled = {r.path for r in state.steps}

        def record_step(entry: dict, save: bool = True) -> None:
            # One entry per path: a step run again in this run (a retried loop or try)
            # replaces its entry, which moves to the end, so the order stays the order of events.
            if entry["path"] in journaled:
                state.steps[:] = [r for r in state.steps if r.path != entry["path"]]
            journaled.add(entry["path"])
            state.steps.append(
                StepRecord(
                    path=entry["path"],
                    name=entry["name"],
                    action=entry["action"],
                    status=entry["status"],
                    attempts=entry["attempts"],
                    started_at=entry["startedAt"],
                    duration=entry["duration"],
                    result=entry["result"],
                    reason=self.masker.mask(entry["reason"]),
                    fingerprint=entry["fingerprint"],
                    prompt=self.masker.mask(entry.get("prompt")) if self.project.config.keep_prompts else None,
                )
            )
            if state.in_flight == entry["path"]:
                state.in_flight = None
            if save:
                self.store.save(state)

        def set_in_flight(path: str | None) -> None:
            state.in_flight = path
            self.store.save(state)

        def record_failure(error: StepError, sid: str, attempt: int, seconds: float) -> None:
            state.failures.append(self._failure(error, sid, attempt, seconds))

        def approval_for(path: str, subject: str | None = None, roles: list[str] = ()) -> dict | None:
            for approval in reversed(state.approvals):  # the latest decision counts
                if approval.path != path or (subject is not None and approval.subject != subject):
                    continue
                unsigned = self._unsigned(state, approval, roles) if approval.released else None
                if unsigned is not None:
                    # Written into the snapshot by hand for a pause the run had not reached yet
                    # (the resume checks only the pause it starts from): it releases nothing.
                    self.events.message(
                        "warning",
                        f"the approval of {path} by {approval.by} is not validly signed ({unsigned}); it does not release the checkpoint",
                    )
                    continue
                if approval.decision == "request-changes" and approval.released:
                    if approval.delivered:
                        return None  # it failed the step once; the step now needs a new approval
                    approval.delivered = True
                    raise StepError(
                        "ChangesRequested",
                        f"{approval.by} ({approval.role}) requested changes: {approval.comment or 'no comment'}",
                        guidance="the step's errorPolicy decides what happens next; once fixed, resuming asks for approval again",
                    )
                if approval.released and approval.decision == "approve":
                    if approval.selected == "retry" and path.endswith("/inquire"):
                        # A retry after a failure is used once: if the step fails again, a
                        # person is asked again.
                        if approval.delivered:
                            return None
                        approval.delivered = True
                    return {
                        "selected": approval.selected,
                        "role": approval.role,
                        "by": approval.by,
                        "at": approval.at,
                        "comment": approval.comment,
                        "via": approval.via,
                    }
            return None

        def approve(path, via, role, by, comment, released, selected, subject=None) -> None:
            state.approvals.append(
                Approval(
                    path=path,
                    role=role,
                    by=by,
                    at=utc_now(),
                    comment=self._masked_comment(state, comment),
                    via=via,
                    released=released,
                    selected=as_json_data(selected),
                    subject=subject,
                )
            )
            self.store.save(state)

        return Hooks(
            record_step=record_step,
            save=lambda: self.store.save(state),
            set_in_flight=set_in_flight,
            record_failure=record_failure,
            approval_for=approval_for,
            approve=approve,
            ask=self._asker(),
            cancel_requested=cancel_file.exists,
            load_playbook=lambda frame, step, target: self._load_child(state, frame, step, target),
            adapter=self._adapter,
            mask=self.masker.mask,
            secret=self._provided_secret,
            terminal_approver=self._terminal_approver,
            autonomous_releases=self._autonomous_releases,
        )

    def _load_child(self, state, frame: Frame, step: ir.Step, target: str) -> tuple[str, ir.Playbook]:
        if target.startswith("temp://"):
            return self._load_scratch_child(state, frame, step, target)
        resolved = self.library.resolve_call(target, frame.file)
        if resolved is None:
            raise StepError(
                "PlaybookNotFound",
                f"no playbook `{target}` was found",
                guidance="`catalyst list` shows the playbooks of the project",
            )
        compiled = self.library.compiled(resolved)
        if compiled.playbook is None or compiled.has_errors:
            raise StepError(
                "InvalidPlaybook",
                f"{relative_to_root(self.project, resolved)} has errors",
                guidance=f"run `catalyst check {relative_to_root(self.project, resolved)}`",
            )
        inherit = step.config.get("inheritPermissions")
        if state is None:  # a what-if: no snapshot to record the call in
            return resolved, compiled.playbook
        state.permissions.setdefault("calls", {})[compiled.playbook.name] = {
            "file": relative_to_root(self.project, resolved),
            "inheritPermissions": isinstance(inherit, ir.Lit) and inherit.value is True,
        }
        return resolved, compiled.playbook

    def _load_scratch_child(self, state, frame: Frame, step: ir.Step, target: str) -> tuple[str, ir.Playbook]:
        """A playbook the run wrote to temp://: `catalyst check` could not see it (C808), so it
        is checked now, as a run checks its playbook, each time it is called."""
        from catalyst_dsl.project.check import check_project
        from catalyst_dsl.runtime.whatif import Unknowable

        path = frame.gateway.scratch_path(target)
        if not path.is_file():
            if state is None:  # a what-if: the file exists only in the plan
                raise Unknowable(f"{target} is written during the run; the plan cannot check or run it")
            raise StepError(
                "PlaybookNotFound",
                f"no playbook `{target}` was found: the run has not written it",
                guidance="write the playbook to temp:// in an earlier step",
            )
        result = check_project(self.project, [str(path)])
        compiled = result.library.compiled(str(path))
        if result.has_errors or compiled.playbook is None:
            first = next((d for d in result.diagnostics if d.severity.value == "error"), None)
            detail = f": {first.message}" if first is not None else ""
            raise StepError("InvalidPlaybook", f"{target} has errors{detail}", guidance="fix the step that writes it")
        if state is not None:
            inherit = step.config.get("inheritPermissions")
            state.permissions.setdefault("calls", {})[compiled.playbook.name] = {
                "file": target,
                "inheritPermissions": isinstance(inherit, ir.Lit) and inherit.value is True,
            }
        return str(path), compiled.playbook

    def _asker(self) -> Callable | None:
        interactive = self.options.interactive
        if interactive is None:
            interactive = sys.stdin.isatty() and sys.stdout.isatty() and self.options.log_format == "text"
        if not interactive:
            return None

        def ask(message: str, options: list, default: Any):
            import click

            click.echo(f"⏸ {message}")
            if options:
                keys = [str(o.get("key")) for o in options if isinstance(o, dict)]
                for option in options:
                    if isinstance(option, dict):
                        click.echo(f"  [{option.get('key')}] {option.get('label') or ''}")
                choice = click.prompt(
                    "choose", type=click.Choice(keys), default=str(default) if default in keys else None
                )
                return choice, None
            click.prompt("press ENTER to approve", default="", show_default=False)
            return default, None

        return ask

    @functools.cached_property
    def ai(self):
        """The session's AI adapters, made when first needed: a run's pre-flight (`start`,
        `resume`) asks before any step runs; a what-if never does, and the adapters'
        modules would cost it about a millisecond."""
        from catalyst_dsl.runtime.ai_adapters import gateway_runner
        from catalyst_dsl.runtime.ai_choice import AdapterChoice

        # One per session: a scripted mock answer is used once across all steps.
        return AdapterChoice(
            self.project,
            self.plugins,
            self._provided_secret,
            runner=lambda: gateway_runner(self._gateway),
            notice=lambda text: self.events.notice(text),
            mask=self._add_secret,
        )

    def _adapter(self, name: str | None):
        return self.ai.adapter(name)

    # -- locks -----------------------------------------------------------------------------------------

    def lock_resources(self, playbook: ir.Playbook, values: dict[str, Any], file: str) -> list[str]:
        """What the run will write, as lock resources: `path:<glob>` and `branch:<name>`.

        Paths come from every write the catalog declares and every `writes:`, rendered with
        the inputs where they are enough, otherwise read as globs (`{{x}}` is `*`).
        """
        from catalyst_dsl.runtime.values.evaluate import materialize, to_text

        env = self._inputs_env(values)
        found: list[str] = []
        seen_files = {os.path.abspath(file)}
        pending = [playbook]
        while pending:
            current = pending.pop()
            for step in ir.all_steps(current):
                spec = self.catalog.get(step.action)
                written: list[tuple[str, ir.Value]] = [("file", w) for w in step.writes]
                if spec is not None:
                    for decl in spec.writes:
                        value = step.config.get(decl.key)
                        items = value.items if isinstance(value, ir.ListV) else (value,) if value is not None else ()
                        written += [("branch" if decl.kind == "branch" else "file", item) for item in items]
                for kind, value in written:
                    try:
                        text = to_text(materialize(value, env))
                    except StepError:
                        # Imported here: the glob machinery (automata, character sets) is
                        # for a path the inputs cannot render, which most playbooks lack.
                        from catalyst_dsl.paths.globs import glob_from_template

                        text = glob_from_template(value.text) if isinstance(value, ir.Tmpl) else None
                    if text is None:
                        continue
                    if kind == "branch":
                        found.append(f"branch:{text}")
                    elif (placed := place(text).path) is not None and _lockable(placed):
                        found.append(f"path:{placed}")
                if step.action == "playbook" and isinstance(step.config.get("inheritPermissions"), ir.Lit):
                    target = step.config.get("name")
                    if isinstance(target, ir.Lit):
                        resolved = self.library.resolve_call(str(target.value), current.file or file)
                        if resolved and resolved not in seen_files:
                            seen_files.add(resolved)
                            child = self.library.compiled(resolved).playbook
                            if child is not None:
                                pending.append(child)
        # A path built from a secret locks the masked pattern: `***` is a glob, so the lock
        # covers more than the real path, never less, and the secret stays out of lock files.
        return sorted({self.masker.mask_text(resource) for resource in found})

    # -- lifecycle commands ------------------------------------------------------------------------------------

    def _waiting(self, run_id: str):
        # Results kept beside the snapshot stay unread: approving needs none, and an entry
        # saves back the same reference it was loaded with.
        state = self.store.load(run_id, results=False)
        if state.status != "paused" or state.pause is None or state.pause.kind == "suspend":
            raise RunAbort(
                EXIT_STATE,
                f"run {state.run_id} is {state.status}, not waiting for approval",
                help="`catalyst runs show` tells where a run is",
            )
        return state

    @staticmethod
    def state_hash(state) -> str:
        """What an approval token is bound to: the run, its playbook, its journal and where it waits."""
        from catalyst_dsl.runtime.approvals import canonical_hash

        return canonical_hash(
            {
                "runId": state.run_id,
                "playbook": state.playbook.fingerprint,
                "journal": [[r.path, r.status] for r in state.steps],
                "pause": state.pause.path if state.pause else None,
            }
        )

    @staticmethod
    def pause_nonce(state) -> str:
        """The nonce a signed direct approval of the pause a run waits at signs: new each time
        the run pauses (it names the moment), spent once used."""
        from catalyst_dsl.runtime.approvals import canonical_hash

        return (
            "pause-"
            + canonical_hash({"runId": state.run_id, "path": state.pause.path, "since": state.pause.since})[:32]
        )

    def approval_text(self, run_id: str, role: str | None, by: str | None, token: str | None) -> str:
        """The exact text to sign (`ssh-keygen -Y sign -n catalyst-approval`) for an approval of
        the pause run `run_id` waits at: as `role` by `by`, or the one `token` carries."""
        from catalyst_dsl.runtime.approvers import approval_text
        from catalyst_dsl.runtime.machine import current_user

        state = self._waiting(run_id)
        if token is not None:
            claims = self._token_claims(state, token, used=set())
            role, approver, decision, nonce = claims.role, claims.actor, claims.decision, claims.nonce
        else:
            approver, decision, nonce = by or current_user(), "approve", self.pause_nonce(state)
        return self._refusing(
            lambda: approval_text(
                run_id=state.run_id,
                path=state.pause.path,
                role=role,
                approver=approver,
                decision=decision,
                state_hash=self.state_hash(state),
                nonce=nonce,
            )
        )

    def issue_token(self, run_id: str, role: str, by: str | None, decision: str, ttl: int) -> str:
        from catalyst_dsl.runtime.approvals import TokenError, issue_token
        from catalyst_dsl.runtime.machine import current_user

        state = self._waiting(run_id)
        approver = by or current_user()
        self._check_approver(approver, role)
        try:
            return issue_token(
                self._approval_keys(),
                run_id=state.run_id,
                path=state.pause.path,
                state_hash=self.state_hash(state),
                decision=decision,
                role=role,
                actor=approver,
                ttl_seconds=ttl,
            )
        except TokenError as error:
            raise RunAbort(EXIT_INVALID, str(error), help=getattr(error, "help", None)) from None

    def _approval_keys(self):
        """The token key: derived from the run key when that is kept outside the state
        directory, where a step's program could read a key file (runtime/approvals.py)."""
        from catalyst_dsl.runtime.approvals import ApprovalKeys

        run_key = self.store.run_key()
        return ApprovalKeys(self.state_dir, run_secret=run_key.secret if run_key.outside_state else None)

    def _token_claims(self, state, token: str, used: set[str]):
        from catalyst_dsl.runtime.approvals import TokenError, verify_token

        try:
            return verify_token(
                self._approval_keys(),
                token,
                run_id=state.run_id,
                path=state.pause.path,
                state_hash=self.state_hash(state),
                used=used,
            )
        except TokenError as error:
            raise RunAbort(
                EXIT_INVALID, f"the approval token is refused: {error}", help=getattr(error, "help", None)
            ) from None

    def approve_with_token(
        self, run_id: str, token: str, comment: str | None, sign_with: str | None = None, signature: str | None = None
    ) -> str:
        from catalyst_dsl.runtime.approvals import releases
        from catalyst_dsl.runtime.approvers import SpentLedger
        from catalyst_dsl.runtime.state.store import Approval

        if sign_with is not None:  # signed before the guard is taken: ssh-keygen may ask for a passphrase
            signature = self._sign(self.approval_text(run_id, None, None, token), sign_with)
        with self._changing(run_id):
            state = self._waiting(run_id)
            ledger = SpentLedger(self.state_dir)
            # Spent tokens are in the ledger too: a snapshot put back from before the use forgets them, the ledger does not.
            used = {a.token for a in state.approvals if a.token} | self._refusing(ledger.spent)
            claims = self._token_claims(state, token, used)
            self._check_approver(claims.actor, claims.role)  # the settings may have changed since the token was issued
            # `comment` is recorded only; `request-changes` fails the step through its error policy on resume.
            # Only a role that may release the step may also hold it back; others are recorded.
            released = claims.decision in ("approve", "request-changes") and releases(claims.role, state.pause.roles)
            signed_text = self._proof(
                state,
                claims.role,
                claims.actor,
                claims.decision,
                claims.nonce,
                signature,
                needed=released,
                asked_as="--token TOKEN",
            )
            self._refusing(lambda: ledger.spend(claims.nonce, state.run_id))
            state.approvals.append(
                Approval(
                    path=state.pause.path,
                    role=claims.role,
                    by=claims.actor,
                    at=utc_now(),
                    comment=self._masked_comment(state, comment),
                    via="token",
                    released=released,
                    decision=claims.decision,
                    token=claims.nonce,
                    subject=state.pause.subject,
                    signed_text=signed_text,
                    signature=signature if signed_text else None,
                )
            )
            self.store.save(state)
        if claims.decision == "request-changes":
            if not released:
                return StillPaused(
                    f"recorded request-changes by {claims.actor} ({claims.role}), who may not hold this step back; the run stays paused"
                )
            return (
                f"changes requested by {claims.actor} ({claims.role}); on resume the step fails with ChangesRequested"
            )
        if released:
            return f"approved {state.pause.path} of run {state.run_id} as {claims.role}; continue with: catalyst resume {state.run_id}"
        return StillPaused(f"recorded {claims.decision} by {claims.actor} ({claims.role}); the run stays paused")

    def approve(
        self,
        run_id: str,
        role: str,
        by: str | None,
        comment: str | None,
        select: str | None,
        sign_with: str | None = None,
        signature: str | None = None,
    ) -> str:
        from catalyst_dsl.runtime.approvals import releases
        from catalyst_dsl.runtime.approvers import SpentLedger
        from catalyst_dsl.runtime.machine import current_user
        from catalyst_dsl.runtime.state.store import Approval

        approver = by or current_user()
        self._check_approver(approver, role)
        if sign_with is not None:  # signed before the guard is taken: ssh-keygen may ask for a passphrase
            signature = self._sign(self.approval_text(run_id, role, approver, None), sign_with)
        with self._changing(run_id):
            state = self._waiting(run_id)
            keys = [str(o.get("key")) for o in state.pause.options if isinstance(o, dict)]
            if select is not None and select not in keys:
                offered = f"the options are: {', '.join(keys)}" if keys else "this checkpoint offers no options"
                raise RunAbort(
                    EXIT_INVALID,
                    f"--select {select}: not an option of the checkpoint at {state.pause.path}",
                    help=offered,
                )
            released = releases(role, state.pause.roles)
            nonce = self.pause_nonce(state)
            import shlex  # for the command line an approver is shown (a what-if approves nothing)

            signed_text = self._proof(
                state,
                role,
                approver,
                "approve",
                nonce,
                signature,
                needed=released,
                asked_as=f"--as {shlex.quote(role)} --by {shlex.quote(approver)}",
            )
            if signed_text is not None:
                ledger = SpentLedger(self.state_dir)
                if nonce in self._refusing(ledger.spent):
                    raise RunAbort(
                        EXIT_INVALID,
                        "the approval signature is refused: it was already used",
                        help="each signature approves once; sign the text `catalyst runs approval-text` prints now",
                    )
                self._refusing(lambda: ledger.spend(nonce, state.run_id))
            state.approvals.append(
                Approval(
                    path=state.pause.path,
                    role=role,
                    by=approver,
                    at=utc_now(),
                    comment=self._masked_comment(state, comment),
                    via="cli",
                    released=released,
                    selected=select,
                    subject=state.pause.subject,
                    signed_text=signed_text,
                    signature=signature if signed_text else None,
                )
            )
            self.store.save(state)
        if released:
            return f"approved {state.pause.path} of run {state.run_id} as {role}; continue with: catalyst resume {state.run_id}"
        return StillPaused(
            f"recorded, but {role} may not release this checkpoint (needs one of: {', '.join(state.pause.roles)}); "
            f"the run stays paused"
        )

    # -- approvers -----------------------------------------------------------------------------------------

    @staticmethod
    def _refusing(action: Callable[[], Any]) -> Any:
        """`action()`, with an ApprovalRefused turned into the CLI's error."""
        from catalyst_dsl.runtime.approvers import ApprovalRefused

        try:
            return action()
        except ApprovalRefused as refused:
            raise RunAbort(EXIT_INVALID, refused.message, help=refused.help) from None

    def _check_approver(self, approver: str, role: str) -> None:
        """Refuse an approval as `role` by someone the `approvers` setting does not give it (when
        set), or whose name or role is not one line of text (it would forge the audit trail)."""
        from catalyst_dsl.runtime.approvers import one_line

        self._refusing(lambda: (one_line("approver", approver), one_line("role", role)))
        if not self.approvers.holds(approver, role):
            refused = self.approvers.refusal(approver, role)
            raise RunAbort(EXIT_INVALID, f"the approval is refused: {refused.message}", help=refused.help)

    def _signature_required(self, pause) -> bool:
        """With `signed-approvals`, a pause that needs a role is released only by a signed approval."""
        return self.project.config.signed_approvals and bool(pause.roles)

    def _sign(self, text: str, key_file: str) -> str:
        from catalyst_dsl.runtime.approvers import sign

        return self._refusing(lambda: sign(text, os.path.expanduser(key_file)))

    def _proof(
        self,
        state,
        role: str,
        approver: str,
        decision: str,
        nonce: str,
        signature: str | None,
        *,
        needed: bool,
        asked_as: str,
    ) -> str | None:
        """The signed text when `signature` proves this approval (None when none was given and
        none is `needed`); RunAbort when a needed or given signature does not hold."""
        from catalyst_dsl.runtime.approvers import approval_text, verify

        needed = needed and self._signature_required(state.pause)
        if signature is None:
            if needed:
                raise RunAbort(
                    EXIT_INVALID,
                    f"the approval is refused: signed-approvals is on and {state.pause.path} needs a role, but the approval is not signed",
                    help=f"sign it: add --sign-with ~/.ssh/id_ed25519, or sign the text `catalyst runs approval-text {state.run_id} {asked_as}` prints "
                    f"(ssh-keygen -Y sign -n catalyst-approval) and pass --signature FILE",
                )
            return None
        if not self.approvers.configured:
            raise RunAbort(
                EXIT_INVALID,
                "the approval is refused: a signature names a person, but no `approvers` are configured to give them roles",
                help="map approvers to roles in the `approvers` setting",
            )
        text = self._refusing(
            lambda: approval_text(
                run_id=state.run_id,
                path=state.pause.path,
                role=role,
                approver=approver,
                decision=decision,
                state_hash=self.state_hash(state),
                nonce=nonce,
            )
        )
        self._refusing(
            lambda: verify(text, signature, approver, self.project.resolve(self.project.config.allowed_signers))
        )
        return text

    def _check_signed(self, state) -> None:
        """With signed approvals, refuse to resume past a pause needing a role on the word of an
        approval whose signature does not hold (one written into the snapshot by hand): the
        signed text must name this run, step, role and approver, and verify again."""
        pause = state.pause
        if pause is None:
            return
        for approval in state.approvals:
            if approval.path != pause.path or not approval.released:
                continue
            why = self._unsigned(state, approval, pause.roles)
            if why is not None:
                raise RunAbort(
                    EXIT_STATE,
                    f"run {state.run_id} records an approval of {approval.path} by {approval.by} that is not validly signed: {why}",
                    help="it was not given through `catalyst approve`; approve again with a signature (the snapshot is unchanged)",
                )

    def _unsigned(self, state, approval, roles: Sequence[str]) -> str | None:
        """Why `approval` may not release a pause requiring `roles`, when signed approvals are
        on and it needs one; None when it may (signed over this run, step, role and approver,
        and verified again)."""
        from catalyst_dsl.runtime.approvers import ApprovalRefused, verify

        if not (self.project.config.signed_approvals and roles):
            return None
        expected = {
            "run": state.run_id,
            "step": approval.path,
            "role": approval.role,
            "approver": approval.by,
            "decision": approval.decision,
        }
        lines = dict(line.split(": ", 1) for line in (approval.signed_text or "").splitlines()[1:] if ": " in line)
        try:
            if approval.signature is None or any(lines.get(k) != v for k, v in expected.items()):
                raise ApprovalRefused("it carries no signature over this run, step, role and approver")
            verify(
                approval.signed_text,
                approval.signature,
                approval.by or "",
                self.project.resolve(self.project.config.allowed_signers),
            )
        except ApprovalRefused as refused:
            return refused.message
        return None

    def _autonomous_releases(self, roles: list[str]) -> bool:
        """catalyst approves pauses by itself (autonomous mode, approval rules, `approved: true`),
        except where a signed approval is required."""
        if self.project.config.signed_approvals and roles:
            self.events.message(
                "warning",
                "signed approvals are on: catalyst does not release by itself a checkpoint that needs a role "
                "(autonomous mode, approval rules, approved: true)",
            )
            return False
        return True

    def _terminal_approver(self, roles: list[str]) -> tuple[str, str | None] | None:
        """Who at this terminal releases a pause needing `roles`: the OS user, as a role they
        hold when `approvers` is set. None (the run pauses) when they hold none of the roles,
        or when signed approvals are on: ENTER proves no one's identity."""
        from catalyst_dsl.runtime.machine import current_user

        user = current_user()
        if not roles:
            return user, None
        if self.project.config.signed_approvals:
            self.events.message(
                "warning",
                "signed approvals are on: this checkpoint is released only by `catalyst approve` with a signature",
            )
            return None
        if not self.approvers.configured:
            return user, None
        held = [role for role in roles if self.approvers.holds(user, role)]
        if held:
            return user, held[0]
        self.events.message(
            "warning",
            f"{user} holds none of the roles that may release this checkpoint ({', '.join(roles)}); "
            f"one of them approves it with `catalyst approve`",
        )
        return None

    def review_received(
        self,
        url: str,
        login: str,
        decision: str,
        comment: str | None,
        submitted_at: str | None = None,
        review_key: str | None = None,
    ) -> list[dict[str, Any]]:
        """A pull-request review (a webhook's): recorded on each paused run that waits for the
        review of that pull request (its pause's subject is the URL). Only a login listed in
        `github-reviewers` releases the pause (and only with a role it requires, when it
        requires any); any other review is recorded only. A review submitted before the run
        paused there, or a review already recorded (`review_key`: the signed review id, never
        the unsigned delivery header), is ignored. The runs then go on with `catalyst resume`."""
        from catalyst_dsl.runtime.approvals import releases
        from catalyst_dsl.runtime.interpreter import REVIEW
        from catalyst_dsl.runtime.state.store import Approval

        reviewers = {name.strip().lower(): role for name, role in self.project.config.github_reviewers.items()}
        role = reviewers.get(login.strip().lower())  # GitHub logins ignore case
        nonce = review_key or None
        touched = []
        for summary in self.store.list(include_history=False):
            if summary.status != "paused":
                continue
            with self.locks.guard():  # loaded and saved as one change: a concurrent resume sees it, or refuses it
                try:
                    state = self.store.load(summary.run_id, results=False)
                except RunAbort as damaged:  # one damaged snapshot must not stop the others' reviews
                    touched.append({"run": summary.run_id, "skipped": damaged.message})
                    continue
                pause = state.pause
                if (
                    state.status != "paused"
                    or pause is None
                    or pause.subject != url
                    or not pause.path.endswith("/" + REVIEW)
                ):
                    continue
                if nonce is not None and any(a.token == nonce for a in state.approvals):
                    from catalyst_dsl.runtime.webhooks import ALREADY_RECORDED

                    touched.append({"run": state.run_id, "ignored": ALREADY_RECORDED})
                    continue
                if submitted_at is not None and _instant(submitted_at) < _instant(pause.since):
                    touched.append(
                        {"run": state.run_id, "ignored": "the review was submitted before the run paused for it"}
                    )
                    continue
                # A review carries no SSH signature: with signed approvals it is recorded, never releases a role.
                released = (
                    role is not None
                    and decision in ("approve", "request-changes")
                    and releases(role, pause.roles)
                    and not self._signature_required(pause)
                )
                state.approvals.append(
                    Approval(
                        path=pause.path,
                        role=role,
                        by=login,
                        at=utc_now(),
                        comment=self._masked_comment(state, comment),
                        via="webhook",
                        released=released,
                        decision=decision,
                        subject=pause.subject,
                        token=nonce,
                    )
                )
                self.store.save(state)
            touched.append({"run": state.run_id, "step": pause.path, "decision": decision, "released": released})
        return touched

    def cancel(self, run_id: str, reason: str, by: str | None) -> str:
        from catalyst_dsl.runtime.machine import current_user, pid_alive, this_host
        from catalyst_dsl.runtime.state.store import Cancel

        with self._changing(run_id):
            state = self.store.load(run_id, results=False)
            if state.status in ("completed", "failed", "cancelled"):
                raise RunAbort(
                    EXIT_STATE, f"run {state.run_id} already ended ({state.status})", help="nothing to cancel"
                )
            if state.status == "running" and state.owner.host == this_host() and pid_alive(state.owner.pid):
                # A live run stops itself before its next step, saving its state on the way out.
                (self.state_dir / f"run-{state.run_id}.cancel").write_text(
                    json.dumps({"by": by or current_user(), "reason": reason}), encoding="utf-8"
                )
                return f"asked run {state.run_id} to stop before its next step"
            state.cancel = Cancel(by=by or current_user(), reason=reason, at=utc_now())
            state.status, state.ended_at, state.in_flight = "cancelled", utc_now(), None
            self._keep_view_of(state)
            self.store.save(state)
            self.store.archive(state)
        self.locks.release(state.run_id)
        return f"cancelled run {state.run_id}"

    def _cancel_request(self, run_id: str) -> tuple[str, str]:
        try:
            request = json.loads((self.state_dir / f"run-{run_id}.cancel").read_text(encoding="utf-8"))
            return str(request.get("by") or "unknown"), str(request.get("reason") or "no reason given")
        except (OSError, ValueError, AttributeError):
            return "unknown", "the cancel request could not be read"

    def _clear_cancel(self, run_id: str) -> None:
        cancel_file = self.state_dir / f"run-{run_id}.cancel"
        if cancel_file.exists():
            cancel_file.unlink()

    # -- helpers ----------------------------------------------------------------------------------------

    def _inputs_env(self, values: dict[str, Any]) -> RunEnv:
        return RunEnv(Scope(), values, self.state_dir / "tmp", lambda: [])

    def _default_renderer(self) -> Callable[[ir.Value], Any]:
        from catalyst_dsl.runtime.values.evaluate import materialize

        return lambda value, resolved: materialize(value, self._inputs_env(dict(resolved)))


def _lockable(path: str) -> bool:
    """Paths that can be locked; the others (absolute, `..`) the gateway refuses before writing."""
    from catalyst_dsl.paths.globs import Glob, GlobError

    try:
        Glob.compile(path)
    except GlobError:
        return False
    return True


def _builtins():
    from catalyst_dsl.actions.installed import builtin_catalog

    return builtin_catalog()


def _instant(text: str):
    """An ISO 8601 time (GitHub's `...Z` or ours) as an aware datetime; the epoch when unreadable."""
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.fromtimestamp(0, timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _record_dict(record, seq: int) -> dict:
    return {
        "path": record.path,
        "status": record.status,
        "result": record.result,
        "name": record.name,
        "action": record.action,
        "seq": seq,
    }


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _may_hold_locks(locks: Path) -> bool:
    """False only where the locks folder is known not to exist (not a file in its way, a
    link loop or an unreadable parent: those are errors the lock manager reports)."""
    try:
        os.lstat(locks)
    except FileNotFoundError:
        return False
    except OSError:
        pass
    return True
