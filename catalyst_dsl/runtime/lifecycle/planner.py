"""The what-if: what a run would do, as a plan (docs/plan-format.md). Nothing is written,
no lock is taken, no program or remote AI is started; the plan's data (its steps, locks,
conflicts, summary and hash) is built here, and report/plan.py only renders it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.project.config import relative_to_root
from catalyst_dsl.runtime.errors import EXIT_FAILED, EXIT_INVALID, RunAbort, StepError
from catalyst_dsl.runtime.lifecycle.context import RunContext
from catalyst_dsl.runtime.lifecycle.interpreting import simulate
from catalyst_dsl.runtime.lifecycle.lock_resources import lock_resources, may_hold_locks
from catalyst_dsl.runtime.lifecycle.plan_data import FORMAT, VERSION, address_steps, count_changes, with_hash

if TYPE_CHECKING:
    from catalyst_dsl.runtime.engine.frames import Hooks
    from catalyst_dsl.runtime.effects.tracked import TrackedFiles


class Planner:
    """Plans of one project's playbooks."""

    def __init__(self, context: RunContext) -> None:
        self.context = context

    def plan(
        self, file: str, given: Mapping[str, Any], *, from_text: bool = True, checked=None, hashed: bool = True
    ) -> dict[str, Any]:
        """What a run would do, as a plan (docs/plan-format.md): nothing is written, no lock
        is taken, no program or remote AI is started. `checked`: the preflight check of
        `file`, when the caller made it already (runtime/lifecycle/preflight.py). `hashed=False`:
        without `planHash`, for a view that does not show it (the hash is the SHA-256 of
        the plan's canonical JSON, a few milliseconds for a large plan)."""
        from catalyst_dsl.runtime.lifecycle.input_scripts import plan_scripts
        from catalyst_dsl.runtime.simulation.planning import PlanRecorder
        from catalyst_dsl.runtime.values.secrets import secret_placeholder
        from catalyst_dsl.runtime.simulation.recording import RecordingPerformer

        context = self.context
        playbook = context.checked(file, cached=True, checked=checked)
        secrets = [d.name for d in playbook.inputs if d.secret]
        values = self._inputs(playbook, given, secrets, from_text)
        # Imported once the inputs are known good (see interpreting.py).
        from catalyst_dsl.runtime.engine.frames import granted_paths

        recorder = PlanRecorder(context.masker)
        plan_scripts(playbook, recorder)  # the inputs' validation scripts, which a run starts first
        scratch = context.state_dir / "tmp" / "what-if"
        grants = granted_paths(playbook, context.inputs_env(values))
        performer = RecordingPerformer(refresh=context.options.refresh, files=self._untrusted_reads())
        gateway = context.gateway = context.new_gateway(playbook, grants, scratch, performer)
        outputs: Any = None
        try:
            outputs = simulate(context, playbook, file, values, gateway, recorder, self._hooks(), scratch=scratch)
        except StepError as error:  # a failure outside any step (a `finally` that cannot run)
            recorder.steps.append(_failed_entry(playbook, error))
        resources = lock_resources(context, playbook, values, file)
        conflicts = self._conflicts(resources)
        self._refuse_protected_commits(playbook, values)
        self._say_detected_adapter(playbook)
        plan = {
            "format": FORMAT,
            "version": VERSION,
            "playbook": {"name": playbook.name, "file": relative_to_root(context.project, file)},
            "inputs": {k: (secret_placeholder(k) if k in secrets else recorder.shown(v)) for k, v in values.items()},
            "permissions": {
                "allowedWritePaths": context.masker.mask(list(dict.fromkeys(grants))) if grants is not None else None
            },
            "locks": resources,
            "conflicts": conflicts,
            # Diffs, paths and reasons can hold a secret value too: the whole tree is masked.
            "steps": context.masker.mask(recorder.steps, own=True),  # the recorder's own lists
            "outputs": recorder.shown(outputs) if outputs is not None else None,
        }
        address_steps(plan["steps"], recorder.parts)
        plan["summary"] = count_changes(plan["steps"])
        return with_hash(plan) if hashed else plan

    def _inputs(
        self, playbook: ir.Playbook, given: Mapping[str, Any], secrets: list[str], from_text: bool
    ) -> dict[str, Any]:
        """The inputs' values, or RunAbort(2) naming every problem; secrets masked from here on."""
        from catalyst_dsl.runtime.values.inputs import resolve_inputs
        from catalyst_dsl.runtime.values.secrets import secret_placeholder

        context = self.context
        given = dict(given)
        for name in secrets:
            if name not in given:
                # A plan never needs the real secret: it only masks it.
                given[name] = context.secret(name) or secret_placeholder(name)
        values, problems = resolve_inputs(
            playbook.inputs, given, from_text=from_text, render_default=context.default_renderer()
        )
        if problems:
            raise RunAbort(
                EXIT_INVALID,
                f"{len(problems)} input problem{'s' if len(problems) != 1 else ''} in {playbook.name}; "
                "nothing was planned",
                details=tuple(f"{p.message}\n    fix: {p.fix}" for p in problems),
            )
        for name in secrets:
            if values.get(name) != secret_placeholder(name):
                context.add_secret(values.get(name))
        context.mark_secrets(values, secrets)
        return values

    def _refuse_protected_commits(self, playbook: ir.Playbook, values: dict[str, Any]) -> None:
        """RunAbort(2) when the run would be refused for a commit to a protected branch, as
        the run's pre-flight would (branch_protection.py); by the protected-branches setting
        only: a what-if asks no server."""
        context = self.context
        if not context.project.config.protected_branches:
            return
        from catalyst_dsl.runtime.lifecycle.branch_protection import REFUSAL_HELP, protected_commit
        from catalyst_dsl.runtime.state.shared.repository import current_branch

        start = current_branch(context.project.root)
        refusal = protected_commit(playbook, context.inputs_env(values), start, context.project.config)
        if refusal is not None:
            raise RunAbort(EXIT_FAILED, f"the run would be refused: {refusal}; nothing was planned", help=REFUSAL_HELP)

    def _say_detected_adapter(self, playbook: ir.Playbook) -> None:
        """A note when the run's AI steps would get an adapter found in the environment
        rather than the settings. It is said, not written into the plan: a committed plan
        must read the same on every machine, whatever each one has installed."""
        catalog = self.context.catalog
        providers = [
            s.config.get("provider")
            for s in ir.all_steps(playbook)
            if (spec := catalog.get(s.action)) is not None and spec.group == "ai"
        ]
        if not providers:
            return
        from catalyst_dsl.runtime.adapters.detection import detect

        detected = detect(self.context.project.config, root=self.context.project.root)
        # A step naming no provider gets it, and so does one naming the detected adapter
        # (or a provider known only at run time, which may name it).
        if detected is not None and any(
            p is None or not isinstance(p, ir.Lit) or p.value == detected.adapter for p in providers
        ):
            self.context.plan_notes.append(
                f"a run's AI steps would use {detected.described()}, found in the environment "
                f"({detected.because}); the what-if asks no AI"
            )

    def _conflicts(self, resources: list[str]) -> list[dict[str, str]]:
        """The locks other runs hold on what the plan would write."""
        context = self.context
        # Where no run ever took a lock there is none to conflict with (nor a lock module to
        # import); anything else there, a locks folder or a path that cannot be one, is the
        # lock manager's to read or to report.
        held = context.locks.conflicts("what-if", resources) if may_hold_locks(context.state_dir / "locks") else []
        conflicts = [{"resource": context.masker.mask_text(c.resource), "run": c.run_id} for c in held]
        return sorted(conflicts, key=lambda c: (c["resource"], c["run"]))

    def _untrusted_reads(self) -> TrackedFiles:
        """What a plan may read and show (runtime/effects/tracked.py): the project's tracked files,
        and the resources directory when the user's own configuration named it."""
        from catalyst_dsl.runtime.effects.tracked import TrackedFiles

        project = self.context.project
        resources = project.resources_dir()
        trusted = (resources,) if resources is not None and project.user_resources else ()
        return TrackedFiles(project.root, trusted)

    def _hooks(self) -> Hooks:
        from catalyst_dsl.runtime.engine.frames import Hooks

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
            load_playbook=self._load_child,
            adapter=self.context.adapter,
            mask=self.context.masker.mask,
            secret=self.context.provided_secret,
        )

    def _load_child(self, frame, step, target: str):
        # Imported by a plan whose playbook calls another: most plans call none.
        from catalyst_dsl.runtime.lifecycle.children import load_child

        return load_child(self.context, None, frame, step, target)


def _failed_entry(playbook: ir.Playbook, error: StepError) -> dict[str, Any]:
    """The plan's entry for a failure outside any step."""
    return {
        "path": "",
        "step": playbook.name,
        "action": "playbook",
        "change": "unknown",
        "reason": f"would fail: {error.code}: {error.message}",
        "fails": {"code": error.code, "message": error.message},
        "conditional": False,
        "config": {},
        "effects": [],
        "writes": [],
        "approval": None,
        "request": None,
        "steps": [],
    }
