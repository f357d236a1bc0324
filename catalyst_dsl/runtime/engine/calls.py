"""Calling an action: its config rendered (scripts escaped, URLs encoded), its declared
writes checked against the grants, its implementation run through the gateway with an
ActionContext. A control action, a `checkpoint` or a function call goes to its own code.

`Calls` is a part of the Engine (engine.py), kept apart for its size.
"""

from __future__ import annotations

import time
from typing import Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect
from catalyst_dsl.actions.control import CONTROL, PAUSES, function
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.paths.protocols import SCRATCH
from catalyst_dsl.runtime.actions import IMPLEMENTATIONS
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.engine.config_check import check_config
from catalyst_dsl.runtime.engine.frames import Frame
from catalyst_dsl.runtime.engine.signals import DEADLINE
from catalyst_dsl.runtime.engine.step_run import StepRun
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.evaluate import explain, materialize, render
from catalyst_dsl.runtime.effects.gateway import EffectsGateway
from catalyst_dsl.runtime.values.jsvalues import UNKNOWN, a_kind, as_json_data, as_written, to_text
from catalyst_dsl.runtime.engine.scope import RunEnv, Scope


class Calls:
    def _execute(self, run: StepRun, config: dict[str, Any] | None = None) -> Any:
        """Run the step's action. `config`: its config, rendered already (a what-if renders
        it first to show it); the control steps and function calls read their entries from
        it instead of rendering them again (see `entry`)."""
        action = run.step.action
        control = CONTROL.get(action)
        if control is not None:
            return self._control(control, run, config)
        pause = PAUSES.get(action)
        if pause is not None:
            return pause.run(self, run, config)
        if action in run.frame.functions:
            return function.call(self, run, config)
        env = self.env(run.frame, run.scope)
        if config is None:
            config = self._config(run.step, env)
        implementation = IMPLEMENTATIONS.get(action)
        if implementation is None:
            plugin = self.plugins(action)
            implementation = plugin.run if plugin is not None else None
        if implementation is None:
            raise StepError(
                "UnknownAction",
                f"no action `{action}` is installed",
                guidance="run `catalyst check` to see the suggestion, or install the plugin that provides it",
            )
        spec = self._spec(action)
        if spec is not None:
            check_config(spec, config)
        context = self._context(run, env)
        reuse = self._reusable(run, config, spec, context) if run.step.cache is not None else None
        if reuse is not None:
            found = reuse[0].get(reuse[1])
            if found is not None:
                result, saved = found
                self.events.message(
                    "info",
                    f"{run.sid}: the result kept at {_when(saved)} stands in for running it again (cache:)",
                    run.sid,
                    depth=run.frame.depth,
                )
                return result
        try:
            result = implementation(context, config)
            if reuse is not None:
                self._keep(run, reuse, result)
            if action == "script":
                script_action().apply_set(run.scope.assign, result)  # set('name', value) inside the script
            return result
        except (OSError, UnicodeError, LookupError, ValueError) as error:
            if isinstance(error, StepError):
                raise
            # What the system refused (a directory where a file belongs, an encoding that
            # cannot hold the text…) is the step's failure, not the engine's.
            detail = getattr(error, "strerror", None) or str(error)
            raise StepError(
                "ActionFailed", f"{action}: {detail}", guidance="check the step's paths and values"
            ) from None

    def _reusable(self, run: StepRun, config: dict[str, Any], spec: ActionSpec | None, context: ActionContext):
        """(the cache, the step's key) when a `cache:` step may reuse or keep a result,
        else None (a what-if, a config holding a secret, tools that change things)."""
        from catalyst_dsl.actions.caching import refusal, run_time_refusal
        from catalyst_dsl.runtime.state.result_cache import adapter_identity, material

        cache = self.hooks.result_cache()
        if cache is None:
            return None
        # The check's refusal again: a plugin's action the check did not know is known now.
        why = refusal(run.step, spec) if spec is not None else "its action is not known"
        why = why or run_time_refusal(run.step, config)
        data = as_json_data(config)
        if why is None and self.hooks.mask(data) != data:
            why = "its config holds a secret, which catalyst never writes to a file"
        prompt_files = None
        if why is None and spec is not None and spec.group == "ai":
            # The text of a prompt file is the prompt: an edited file asks something else.
            prompt_files = _prompt_file_digests(context, config)
            if prompt_files is None:
                why = "its prompt file cannot be read"
        if why is not None:
            self.events.message("info", f"{run.sid}: not cached: {why}", run.sid, depth=run.frame.depth)
            return None
        adapter = (
            adapter_identity(self.settings, data.get("provider")) if spec is not None and spec.group == "ai" else None
        )
        key = material(run.step.action, data, adapter)
        if prompt_files:
            key = material(run.step.action, {"config": data, "files": prompt_files}, adapter)
        return cache, key

    def _keep(self, run: StepRun, reuse: tuple[Any, str], result: Any) -> None:
        """Keep a `cache:` step's result, unless it holds a secret (an answer or a body that
        echoes one): the snapshot masks it, and the cache must not keep it whole either."""
        data = as_json_data(result)
        if self.hooks.mask(data) != data:
            why = "its result holds a secret, which catalyst never writes to a file"
            self.events.message("info", f"{run.sid}: not cached: {why}", run.sid, depth=run.frame.depth)
            return
        reuse[0].put(reuse[1], result, run.step.cache)

    def _context(self, run: StepRun, env: RunEnv) -> ActionContext:
        """What the action's implementation may use: the gateway, its declared writes, the
        time left, the run's events, the AI adapters, the settings and secrets."""
        step, frame, sid, path, label = run.step, run.frame, run.sid, run.path, run.label
        writes = tuple(self._declared_writes(step, env, frame.gateway)) if step.writes else ()
        timeout = step.timeout
        left = DEADLINE.get() - time.monotonic()
        if left != float("inf"):
            timeout = left if timeout is None else min(timeout, left)
        return ActionContext(
            self.run_id,
            sid,
            step.action,
            frame.gateway,
            writes,
            timeout,
            lambda level, message, data: self.events.message(level, message, label, data, frame.depth),
            lambda stream, line: self.events.output(label, stream, line, frame.depth),
            self.hooks.adapter,
            settings=self.settings,
            secret=self.hooks.secret,
            path=path,
            variables=lambda: script_action().visible_variables(run.scope, frame.inputs),
            render=lambda text: _render_at_run_time(text, env),
            transcript=lambda prompt: self.journal.sent(path, prompt),
        )

    def _control(self, control: Any, run: StepRun, config: dict[str, Any] | None) -> Any:
        """A control action (actions/control/), run."""
        return control.run(self, run, config)

    # -- config and values ----------------------------------------------------------------------------------

    def _value(self, value: ir.Value, env: RunEnv) -> Any:
        return materialize(value, env)

    def _config(self, step: ir.Step, env: RunEnv) -> dict[str, Any]:
        spec = self._spec(step.action)
        script = spec.script if spec is not None else None
        if spec is not None and spec.url is not None:
            from catalyst_dsl.runtime.values.url_values import render_url

            return {
                e.key: render_url(e.value, env) if e.key == spec.url else materialize(e.value, env)
                for e in step.config.entries
            }
        if script is None:
            return {e.key: materialize(e.value, env) for e in step.config.entries}
        from catalyst_dsl.runtime.values.escaping import render_script

        key, language = script
        given = ir.computed_keys(step.config.get("env"))
        config = {
            e.key: render_script(e.value, env, language, given) if e.key == key else materialize(e.value, env)
            for e in step.config.entries
        }
        by_reference = getattr(config.get(key), "env", None)
        if by_reference:
            # The values a bash script reads by reference go to its program in the
            # environment, after the step's own `env:` so none of them can be replaced.
            config["env"] = {**(config.get("env") or {}), **by_reference}
        return config

    def _declared_writes(self, step: ir.Step, env: RunEnv, gateway: EffectsGateway) -> list[Any]:
        """The step's `writes:` rendered, each checked against the grants before anything
        runs (PermissionDenied). A plan may not know a path (UNKNOWN); a run always does."""
        values = [self._value(value, env) for value in step.writes]
        for value in values:
            if isinstance(value, str):
                gateway.check_pattern(value)
            elif value is not UNKNOWN:
                raise StepError(
                    "InvalidConfig",
                    f"`writes:` holds paths, but one of them is {a_kind(value)}",
                    guidance="make each entry of writes: a path or a pattern",
                )
        return values

    def _unbounded_effects(self, step: ir.Step, frame: Frame, scope: Scope, gateway: EffectsGateway) -> str | None:
        """What a step may do that needs an approval first, in words, or None. Declared
        writes the grants refuse fail here (PermissionDenied): nobody approves a refusal."""
        spec = self._spec(step.action)
        if spec is None:
            return None
        if spec.shell_like and step.writes:
            written = [to_text(value) for value in self._declared_writes(step, self.env(frame, scope), gateway)]
            project = [w for w in written if not w.startswith(SCRATCH)]  # the run's own scratch space needs no approval
            if project:
                return f"runs a program that may write {', '.join(project)}"
        if step.action == "playbook" and self._inherits(step, frame, scope):
            # A called playbook writing with the caller's permissions is a decision the
            # caller's reviewers make (the child's own writes were checked by `check`).
            called = self._value(step.config.get("name"), self.env(frame, scope))
            return f"lets the playbook '{to_text(called)}' write with this playbook's permissions"
        tools = step.config.get("tools") if spec.group == "ai" else None
        if tools is not None:
            from catalyst_dsl.actions.builtin import writing_tools

            granted = writing_tools(self._value(tools, self.env(frame, scope)))
            if granted:
                return f"gives the AI tools that change things ({', '.join(granted)})"
        return None

    def _inherits(self, step: ir.Step, frame: Frame, scope: Scope) -> bool:
        """Whether a `playbook` step passes its permissions down (`inheritPermissions: true`)."""
        inherit = step.config.get("inheritPermissions")
        return inherit is not None and self._value(inherit, self.env(frame, scope)) is True

    def _spec(self, action: str) -> ActionSpec | None:
        try:
            return self._specs[action]
        except KeyError:
            spec = self._specs[action] = self.catalog.get(action)
            return spec

    def _effect(self, action: str) -> Effect | None:
        spec = self._spec(action)
        return spec.effect if spec is not None else None

    def _safe_render(self, text: str, frame: Frame, scope: Scope) -> Any:
        try:
            return render(text, self.env(frame, scope))
        except StepError:
            return text

    def _explain_false(self, condition: ir.Value, env: RunEnv) -> str:
        if not isinstance(condition, ir.Tmpl):
            written = as_written(condition.value) if isinstance(condition, ir.Lit) else "false"
            return f"condition is {written}"
        lines = [f"condition is false: {condition.text}"]
        for i, (source, shown) in enumerate(explain(condition.text, env)):
            lines.append(f"  {'where' if i == 0 else 'and  '} {source} = {shown}")
        return "\n".join(lines)


def _render_at_run_time(text: str, env) -> Any:
    """A template an action reads during the run (a prompt file), rendered in the step's scope."""
    return render(text, env)


def script_action():
    """The `script` action's module, for the script steps' variables: imported with the
    first script step (as IMPLEMENTATIONS imports it to run one), so a run or a what-if
    without one does not load it and the program runner it brings."""
    from catalyst_dsl.runtime.actions import script

    return script


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def _prompt_file_digests(context: ActionContext, config: dict[str, Any]) -> dict[str, str] | None:
    """The SHA-256 of each file an AI step takes its prompt from (`promptFile`, a `markdown`
    step's `file`), read through the step's read rules; {} when none, None when one cannot
    be read (the step then runs, and says why it cannot)."""
    import hashlib

    from catalyst_dsl.runtime.actions.files import MAX_READ_BYTES

    digests: dict[str, str] = {}
    for key in ("promptFile", "file"):
        written = config.get(key)
        if not isinstance(written, str) or not written:
            continue
        try:
            data = context.gateway.read_file(context.read_target(written), MAX_READ_BYTES)
        except (OSError, StepError, ValueError):
            return None
        if data is None:
            return None
        digests[key] = hashlib.sha256(data).hexdigest()
    return digests
