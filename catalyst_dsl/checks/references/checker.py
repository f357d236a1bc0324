"""The reference checker: every template resolved in the order steps run, then typed.

Walks the steps in the order they run, keeping the names each point can see (inputs,
`var`s, named step results, loop variables, function parameters, `$error` in catch
steps). Each `{{ }}` and `${{ }}` is resolved against that scope and typed; the type is
compared with what the action's config key (or the condition) expects.

A control action's steps are walked by its own scope rule (actions/control/, found
through control.SCOPE_RULES), which calls back the methods below under "for the
control actions' scope rules".
"""

from __future__ import annotations

from typing import Iterable

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.control import names_result
from catalyst_dsl.checks.call_sites import CallSite
from catalyst_dsl.checks.references import origins
from catalyst_dsl.checks.references.control import DEFINED_NAMES, SCOPE_RULES
from catalyst_dsl.checks.references.scopes import Binding, PathOut, Scope, flow_out
from catalyst_dsl.checks.references.values import SUGGESTED_NAMES, ValueTyping
from catalyst_dsl.diagnostics.ids import BINDINGS_NAME, DUPLICATE_STEP_NAME
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.ir.language import BINDINGS
from catalyst_dsl._internal.lazy_module import lazy_module
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.source import Span

#: A `script` step's `set('name', ...)`: the names it defines for the steps after it.
_SCRIPT_SET = LazyPattern(r"""\bset\(\s*(['"])([A-Za-z0-9_$-]+)\1""")
#: The config values a step's nested steps may be in (`ir.nested_steps`).
_HOLDERS = (ir.StepsV, ir.ListV, ir.MapV)
#: The checks of values in scripts, with the shell lexers (about 1.5 ms to import): only
#: for a playbook with a script.
_script_checks = lazy_module("catalyst_dsl.checks.references.scripts")


class ReferenceChecker(ValueTyping):
    def __init__(self, playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog) -> None:
        self.playbook = playbook
        self.sink = sink
        self.catalog = catalog
        self.function_results: dict[str, t.Type] = {}
        self.step_names: dict[str, Span | None] = {}
        #: Names of steps whose name holds no value (a `var` or `function` step named other
        #: than what it defines), with the name it defines: a reference to one says so.
        self.step_only_names: dict[str, tuple[ir.Step, str | None]] = {}
        self.all_definitions: dict[str, Span | None] = {}
        self.inputs = {i.name: i for i in playbook.inputs}
        #: "did you mean"s still to work out in this playbook (values.SUGGESTED_NAMES says why).
        self.suggestions_left = SUGGESTED_NAMES
        #: `playbook` steps with the types of the inputs they pass, for the library checks.
        self.calls: list[CallSite] = []
        #: How many conditions enclose the step being checked (if, for-each, catch, condition).
        self._guards = 0
        #: The type each step or variable name gets where it is first defined, and the members
        #: read on names used before that (C503): checked once the definitions are known, so
        #: a reference with a scope problem still has its wrong member reported.
        self.defined_types: dict[str, t.Type] = {}
        self.early_members: list[tuple[str, tuple[str, ...], Span | None]] = []
        self._collect_definitions(playbook.steps)

    # -- entry ---------------------------------------------------------------------------------

    def run(self) -> None:
        top = Scope()
        top.define(Binding(BINDINGS, t.ObjectT((), t.ANY), "bindings", None))
        for decl in self.playbook.inputs:
            if decl.name == BINDINGS:
                self.sink.report(
                    BINDINGS_NAME,
                    "the input 'bindings' has the name of the playbook's bindings object",
                    decl.span,
                    help="rename the input; `bindings` holds what steps merge into it with `bindings:`",
                )
                continue
            top.define(Binding(decl.name, t.input_type(decl), "input", decl.span))
        self.walk(self.playbook.steps, top)
        for clause in self.playbook.catch:
            scope = Scope(top)
            scope.define(Binding("$error", B.ERROR_TYPE, "error", clause.span))
            self.guarded(clause.steps, scope)
        self.walk(self.playbook.finally_, Scope(top))
        for artifact in self.playbook.artifacts:
            self.value(artifact, top)
        self._check_early_members()

    def _collect_definitions(self, steps: Iterable[ir.Step]) -> None:
        """Every name defined anywhere, to tell 'used too early' from 'never defined'."""
        for step in steps:
            defined = DEFINED_NAMES.get(step.action)
            name = defined(step) if defined is not None else None
            if step.name and names_result(step.action):
                self.all_definitions.setdefault(step.name, step.name_span)
            elif step.name and (name is None or name.value != step.name):
                self.step_only_names.setdefault(step.name, (step, name.value if name is not None else None))
            if name is not None:
                self.all_definitions.setdefault(name.value, name.span)
            for entry in step.config.entries:
                if isinstance(entry.value, _HOLDERS):  # a text or a number holds no steps
                    for nested in ir.nested_steps(entry.value):
                        self._collect_definitions(nested)

    # -- steps -----------------------------------------------------------------------------------

    def walk(self, steps: Iterable[ir.Step], scope: Scope) -> None:
        for step in steps:
            self.step(step, scope)

    def guarded(self, steps: Iterable[ir.Step], scope: Scope) -> None:
        """Walk steps that run only when something holds: a branch, a loop body, a handler."""
        self._guards += 1
        try:
            self.walk(steps, scope)
        finally:
            self._guards -= 1

    def step(self, step: ir.Step, scope: Scope) -> None:
        if step.condition is not None:
            self.condition(step.condition, scope, "condition")
        if step.requires is not None:
            self.checks(step.requires, scope, "requires")
        for w in step.writes:
            self.value(w, scope)
        if step.gate is not None and step.gate.when == "before":
            self.gate_values(step.gate, scope)
        result = self._action(step, scope)
        if step.name:
            self._step_name(step, result, scope)
        if step.ensures is not None:
            self.checks(step.ensures, scope, "ensures")  # after the step: its own result is visible
        if step.bindings is not None:
            self.value(step.bindings, scope)
        if step.name == BINDINGS:
            self.sink.report(
                BINDINGS_NAME,
                "the step name 'bindings' is the name of the playbook's bindings object",
                step.name_span,
                help="rename the step; merge its result into `bindings` with `bindings: {name: \"{{ step }}\"}`",
            )
        if step.gate is not None and step.gate.when == "after":
            self.gate_values(step.gate, scope)

    def _action(self, step: ir.Step, scope: Scope) -> t.Type:
        """What the step's action does to the scope; its result's type."""
        cfg = step.config
        if not step.known:
            # What it does is unknown (C404): its values are checked, and the steps under it
            # walked in this scope, so what they define is seen after it (no false C501).
            self.config_values(cfg, scope)
            for entry in cfg.entries:
                for nested in ir.nested_steps(entry.value):
                    self.walk(nested, scope)
            return t.ANY
        rule = SCOPE_RULES.get(step.action)
        if rule is not None:
            return rule(self, step, scope)
        if step.action in self.function_results or self.catalog.get(step.action) is None:
            self.config_values(cfg, scope)
            return self.function_results.get(step.action, t.ANY)
        return self._ordinary_action(step, scope)

    def _ordinary_action(self, step: ir.Step, scope: Scope) -> t.Type:
        """A built-in or plugin action: its config typed, the values in its script checked,
        and the names a `script` step sets defined after it."""
        cfg = step.config
        spec = self.catalog.get(step.action)
        self.config_values(cfg, scope)
        script = cfg.get(spec.script[0]) if spec.script is not None else None
        env_entries = cfg.get("env")
        if isinstance(script, (ir.Tmpl, ir.ListV)) or isinstance(env_entries, ir.MapV) and isinstance(script, ir.Lit):
            _script_checks().check_script(
                script,
                spec.script[1],
                self.sink,
                lambda node: origins.origin(node, scope),
                ir.computed_keys(cfg.get("env")),
            )
        if step.action == "script":
            code = cfg.get("code")
            text = code.value if isinstance(code, ir.Lit) else code.text if isinstance(code, ir.Tmpl) else ""
            for match in _SCRIPT_SET.finditer(str(text)):
                scope.assign(Binding(match.group(2), t.ANY, "script", code.span if code else step.span))
        return spec.result

    def _step_name(self, step: ir.Step, result: t.Type, scope: Scope) -> None:
        """The step's name defined with its result; a name taken twice, or an input's, is C411."""
        first = self.step_names.get(step.name)
        if step.name in self.step_names:
            self.sink.report(
                DUPLICATE_STEP_NAME,
                f"two steps are named '{step.name}'",
                step.name_span,
                labels=[Label(first, "first used here")] if first else (),
                help="step names are unique in a playbook; rename one",
            )
        elif step.name in self.inputs:
            declared = self.inputs[step.name].span
            self.sink.report(
                DUPLICATE_STEP_NAME,
                f"the step name '{step.name}' is also the name of an input",
                step.name_span,
                labels=[Label(declared, "input declared here")] if declared else (),
                help="rename the step: its result would hide the input",
            )
        else:
            self.step_names[step.name] = step.name_span
        if not names_result(step.action):
            return  # a `var`'s or `function`'s name names the step only, as the engine binds it
        scope.define(Binding(step.name, result, "step", step.name_span))
        self.defined_types.setdefault(step.name, result)

    # -- for the control actions' scope rules ------------------------------------------------

    def inner(self, scope: Scope, key: tuple | None = None) -> Scope:
        """A block's scope under `scope`. `key`: an `if` branch's (condition, branch); in a
        branch of an `if` on the same condition as an earlier one, the names that earlier
        branch defined are defined. Marked on the branch and asked when a name is read, so a
        thousand `if`s on one condition cost no more than a thousand others."""
        block = Scope(scope)
        block.known_key = key
        return block

    def binding(self, name: str, type: t.Type, kind: str, span: Span | None, source: str | None = None) -> Binding:
        return Binding(name, type, kind, span, source)

    def flow_out(self, scope: Scope, paths_out: list[PathOut], block: Span | None) -> None:
        flow_out(scope, paths_out, block)

    def value_origin(self, value: ir.Value | None, scope: Scope) -> str | None:
        return origins.value_origin(value, scope)

    def note_call(self, step: ir.Step, input_types: dict[str, t.Type] | None) -> None:
        """A `playbook` step, for the library's checks: whether a condition guards it, and
        the types of the inputs it passes."""
        guarded = self._guards > 0 or step.condition is not None
        self.calls.append(CallSite(step, guarded, input_types))

    def quiet_type(self, value: ir.Value, scope: Scope) -> t.Type:
        """A value's type, with nothing reported (it was checked where it is read)."""
        quiet = ReferenceChecker.__new__(ReferenceChecker)
        quiet.__dict__.update(self.__dict__)
        quiet.sink = DiagnosticSink()
        return quiet.value(value, scope)

    @staticmethod
    def line(span: Span | None) -> str:
        return f"line {span.line}" if span is not None else "a block"
