"""References and types: every template resolved in order of definition, then typed.

Walks the steps in the order they run, keeping the names each point can see (inputs,
`var`s, named step results, loop variables, function parameters, `$error` in catch
steps). Each `{{ }}` and `${{ }}` is resolved against that scope and typed; the type is
compared with what the action's config key (or the condition) expects.
"""

from __future__ import annotations

from typing import Iterable

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.compiler import CallSite
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.diagnostics.suggest import suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.lazy_pattern import LazyPattern
from catalyst_dsl.paths.protocols import leaves_base, literal_leaving_base
from catalyst_dsl.records import record, replace
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.source import Span

_PASCAL = LazyPattern(r"^[A-Z][A-Za-z0-9]*$")
#: The name of the object steps merge values into with `bindings:` (docs/running.md).
BINDINGS = "bindings"


@record(frozen=False)
class Binding:
    name: str
    type: t.Type
    kind: str  # input | var | step | loop | parameter | error | script
    span: Span | None
    #: For a var or loop variable: the untrusted value it holds, if any (for C821).
    source: str | None = None
    #: Defined only on some paths to here: why (the block and when it defines the name),
    #: and the branch key a later `if` on the same condition matches. None: on every path.
    maybe: "Maybe | None" = None


@record
class Maybe:
    reason: str  # "defined only when the `if` at line 4 takes its `then` branch"
    block: Span | None
    #: ("if", condition text, branch) for an `if` branch; None for other blocks.
    key: tuple | None = None


#: Bindings that belong to their block and never leave it.
_BLOCK_OWN = ("loop", "error", "parameter")


class Scope:
    def __init__(self, parent: "Scope | None" = None) -> None:
        self.parent = parent
        self.names: dict[str, Binding] = {}
        #: The branch key of an `if` whose condition an earlier `if` had too: the names that
        #: earlier branch defined are defined here (see Checker._known_on_this_branch).
        self.known_key: tuple | None = None

    def knows(self, key: tuple) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if scope.known_key == key:
                return True
            scope = scope.parent
        return False

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def define(self, binding: Binding) -> None:
        self.names[binding.name] = binding

    def assign(self, binding: Binding) -> None:
        """`var` updates the variable where it was defined, else defines it here."""
        existing = self.lookup(binding.name)
        if existing is not None and existing.kind in ("var", "script"):
            existing.type = t.union(existing.type, binding.type)
            return
        self.define(binding)

    def visible(self) -> list[str]:
        names: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            names.extend(scope.names)
            scope = scope.parent
        return names


_SCRIPT_SET = LazyPattern(r"""\bset\(\s*(['"])([A-Za-z0-9_$-]+)\1""")


class _Part:
    """The template part being checked: turns expression offsets into file spans."""

    def __init__(self, tmpl: ir.Tmpl, base: int) -> None:
        self.tmpl = tmpl
        self.base = base

    def span(self, node) -> Span | None:
        if self.tmpl.smap is None:
            return self.tmpl.span
        return self.tmpl.smap.span(self.base + node.start, self.base + node.end)


class ReferenceChecker:
    def __init__(self, playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog) -> None:
        self.playbook = playbook
        self.sink = sink
        self.catalog = catalog
        self.function_results: dict[str, t.Type] = {}
        self.step_names: dict[str, Span | None] = {}
        self.all_definitions: dict[str, Span | None] = {}
        self.inputs = {i.name: i for i in playbook.inputs}
        #: `playbook` steps with the types of the inputs they pass, for the library checks.
        self.calls: list[CallSite] = []
        #: How many conditions enclose the step being checked (if, for-each, catch, condition).
        self._guards = 0
        #: The type each step or variable name gets where it is first defined, and the members
        #: read on names used before that (C503): checked once the definitions are known, so
        #: a reference with a scope problem still has its wrong member reported.
        self.defined_types: dict[str, t.Type] = {}
        self.early_members: list[tuple[str, tuple[str, ...], Span | None]] = []
        #: Names defined in one branch of an `if`, by (condition text, branch).
        self._collect_definitions(playbook.steps)

    # -- entry ---------------------------------------------------------------------------------

    def run(self) -> None:
        top = Scope()
        top.define(Binding(BINDINGS, t.ObjectT((), t.ANY), "bindings", None))
        for decl in self.playbook.inputs:
            if decl.name == BINDINGS:
                self.sink.report(
                    "C614",
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
            if step.name:
                self.all_definitions.setdefault(step.name, step.name_span)
            if step.action == "var":
                v = step.config.get("name")
                if isinstance(v, ir.Lit) and isinstance(v.value, str):
                    self.all_definitions.setdefault(v.value, v.span)
            for entry in step.config.entries:
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
        self.checks(step.requires, scope, "requires")
        for w in step.writes:
            self.value(w, scope)
        if step.gate is not None and step.gate.when == "before":
            self.gate_values(step.gate, scope)
        result: t.Type = t.ANY
        cfg = step.config
        action = step.action
        if not step.known:
            # What it does is unknown (C404): its values are checked, and the steps under it
            # walked in this scope, so what they define is seen after it (no false C501).
            self.config_values(cfg, scope)
            for entry in cfg.entries:
                for nested in ir.nested_steps(entry.value):
                    self.walk(nested, scope)
        elif action == "var":
            value = cfg.get("value")
            vtype = self.value(value, scope) if value is not None else t.NULL
            name = cfg.get("name")
            if isinstance(name, ir.Lit) and isinstance(name.value, str):
                scope.assign(Binding(name.value, vtype, "var", name.span, self.value_origin(value, scope)))
                self.defined_types.setdefault(name.value, vtype)
        elif action == "if":
            cond = cfg.get("condition")
            if cond is not None:
                self.condition(cond, scope, "if")
            text = cond.text if isinstance(cond, ir.Tmpl) else repr(cond.value) if isinstance(cond, ir.Lit) else None
            branches = []
            for branch in ("then", "else"):
                body = cfg.get(branch)
                inner = Scope(scope)
                key = ("if", "".join(text.split()), branch) if text is not None else None
                self._known_on_this_branch(inner, key)
                if isinstance(body, ir.StepsV):
                    self.guarded(body.steps, inner)
                where = _line(step.span)
                branches.append((inner, f"defined only when the `if` at {where} takes its `{branch}` branch", key))
            self._flow_out(scope, branches, step.span)
            result = self.catalog.get("if").result
        elif action == "for-each":
            items = cfg.get("in")
            itype = self.value(items, scope) if items is not None else t.ANY
            element = t.ANY
            if isinstance(itype, t.ArrayT):
                element = itype.item  # a non-array is reported where `in` is typed
            body = Scope(scope)
            item = cfg.get("item")
            if isinstance(item, ir.Lit) and isinstance(item.value, str):
                body.define(Binding(item.value, element, "loop", item.span, self.value_origin(items, scope)))
            index = cfg.get("index")
            index_name = index.value if isinstance(index, ir.Lit) and isinstance(index.value, str) else "index"
            body.define(Binding(index_name, t.NUMBER, "loop", index.span if index is not None else step.span))
            steps = cfg.get("steps")
            if isinstance(steps, ir.StepsV):
                self.guarded(steps.steps, body)
            # A loop over a written, non-empty list runs its body; any other may run it never.
            runs = isinstance(items, ir.ListV) and len(items.items) > 0
            reason = f"defined only when the for-each at {_line(step.span)} runs at least once"
            self._flow_out(scope, [(body, reason, None)] + ([] if runs else [(Scope(scope), reason, None)]), step.span)
            result = self.catalog.get("for-each").result
        elif action == "try":
            steps = cfg.get("steps")
            body = Scope(scope)
            if isinstance(steps, ir.StepsV):
                self.walk(steps.steps, body)
            catch = cfg.get("catch")
            where = _line(step.span)
            # Without a handler an error ends the run, so after the try its steps all ran;
            # with handlers, what follows is reached through the steps or through a handler.
            paths_out = [(body, f"defined only when the steps of the try at {where} end without an error", None)]
            if isinstance(catch, ir.ListV):
                for clause in catch.items:
                    if isinstance(clause, ir.MapV):
                        handler = Scope(scope)
                        handler.define(Binding("$error", B.ERROR_TYPE, "error", clause.span))
                        clause_steps = clause.get("steps")
                        if isinstance(clause_steps, ir.StepsV):
                            self.guarded(clause_steps.steps, handler)
                        paths_out.append((handler, f"defined only when the try at {where} catches an error", None))
            self._flow_out(scope, paths_out, step.span)
            final = cfg.get("finally")
            if isinstance(final, ir.StepsV):
                after = Scope(scope)
                self.walk(final.steps, after)
                self._flow_out(scope, [(after, None, None)], step.span)
            result = self.catalog.get("try").result
        elif action == "function":
            self.function(step, scope)
            result = t.NULL
        elif action == "retry-block":
            self.retry_block(step, scope)
            result = self.catalog.get("retry-block").result
        elif action == "parallel":
            steps = cfg.get("steps")
            branches = Scope(scope)
            if isinstance(steps, ir.StepsV):
                self.walk(steps.steps, branches)
            self._flow_out(scope, [(branches, None, None)], step.span)  # every branch ends before what follows
            result = self.catalog.get("parallel").result
        elif action == "playbook":
            self.playbook_call(step, scope)
        elif action in self.function_results or self.catalog.get(action) is None:
            self.config_values(cfg, scope)
            result = self.function_results.get(action, t.ANY)
        else:
            spec = self.catalog.get(action)
            self.config_values(cfg, scope)
            result = spec.result
            script = cfg.get(spec.script[0]) if spec.script is not None else None
            env_entries = cfg.get("env")
            if (
                isinstance(script, (ir.Tmpl, ir.ListV))
                or isinstance(env_entries, ir.MapV)
                and isinstance(script, ir.Lit)
            ):
                # the shell lexers (about 1.5 ms to import) only for a playbook with a script
                from catalyst_dsl.checks.scripts import check_script

                from catalyst_dsl.syntax.shell import given_names

                check_script(
                    script,
                    spec.script[1],
                    self.sink,
                    lambda node: self.origin(node, scope),
                    given_names(cfg.get("env")),
                )
            if action == "script":
                code = cfg.get("code")
                text = code.value if isinstance(code, ir.Lit) else code.text if isinstance(code, ir.Tmpl) else ""
                for match in _SCRIPT_SET.finditer(str(text)):
                    scope.assign(Binding(match.group(2), t.ANY, "script", code.span if code else step.span))
        if step.name:
            first = self.step_names.get(step.name)
            if step.name in self.step_names:
                self.sink.report(
                    "C411",
                    f"two steps are named '{step.name}'",
                    step.name_span,
                    labels=[Label(first, "first used here")] if first else (),
                    help="step names are unique in a playbook; rename one",
                )
            elif step.name in self.inputs:
                self.sink.report(
                    "C411",
                    f"the step name '{step.name}' is also the name of an input",
                    step.name_span,
                    labels=[Label(self.inputs[step.name].span, "input declared here")]
                    if self.inputs[step.name].span
                    else (),
                    help="rename the step: its result would hide the input",
                )
            else:
                self.step_names[step.name] = step.name_span
            scope.define(Binding(step.name, result, "step", step.name_span))
            self.defined_types.setdefault(step.name, result)
        self.checks(step.ensures, scope, "ensures")  # after the step: its own result is visible
        if step.bindings is not None:
            self.value(step.bindings, scope)
        if step.name == BINDINGS:
            self.sink.report(
                "C614",
                "the step name 'bindings' is the name of the playbook's bindings object",
                step.name_span,
                help="rename the step; merge its result into `bindings` with `bindings: {name: \"{{ step }}\"}`",
            )
        if step.gate is not None and step.gate.when == "after":
            self.gate_values(step.gate, scope)

    def gate_values(self, gate: ir.Gate, scope: Scope) -> None:
        """A gate's message and policy read names as they are when it pauses: before the
        step, or after it (then its result too)."""
        self.value(gate.message, scope)
        self.value(gate.policy, scope)

    def retry_block(self, step: ir.Step, scope: Scope) -> None:
        """Its attempts bound (C613), its codes PascalCase (C309), its body with `__lastError`."""
        from catalyst_dsl.ir.language import LAST_ERROR, MAX_BLOCK_ATTEMPTS

        cap = step.config.get("maxAttempts")
        self.value(cap, scope)
        if isinstance(cap, ir.Lit) and isinstance(cap.value, (int, float)) and not isinstance(cap.value, bool):
            if cap.value != int(cap.value) or not 1 <= cap.value <= MAX_BLOCK_ATTEMPTS:
                self.sink.report(
                    "C613",
                    f"maxAttempts is {cap.value}; a retry-block has from 1 to {MAX_BLOCK_ATTEMPTS} attempts",
                    cap.span,
                    help="attempts are counted for the whole run; a block that needs more should fail and be looked at",
                )
        codes = step.config.get("retryOn")
        self.value(codes, scope)
        for code in codes.items if isinstance(codes, ir.ListV) else ():
            if isinstance(code, ir.Lit) and isinstance(code.value, str) and not _PASCAL.match(code.value):
                self.sink.report(
                    "C309",
                    f"the error code '{code.value}' is not PascalCase",
                    code.span,
                    help="error codes look like PostconditionFailed",
                )
        body = Scope(scope)
        body.define(Binding(LAST_ERROR, t.union(B.ERROR_TYPE, t.NULL), "error", step.span))
        steps = step.config.get("steps")
        if isinstance(steps, ir.StepsV):
            self.walk(steps.steps, body)
        sources = step.config.get("retryFrom")
        self.value(sources, scope)
        if isinstance(sources, ir.ListV) and isinstance(steps, ir.StepsV):
            names = {inner.name for top in steps.steps for inner in ir.steps_within(top) if inner.name}
            for source in sources.items:
                if isinstance(source, ir.Lit) and isinstance(source.value, str) and source.value not in names:
                    self.sink.report(
                        "C615",
                        f"retryFrom names '{source.value}', which is not a step of this block",
                        source.span,
                        help=suggest(source.value, names) or "name a step inside the block (its `name:`)",
                    )

    def checks(self, checks: ir.Checks | None, scope: Scope, where: str) -> None:
        self._each_check(checks.checks if checks is not None else (), scope, where)

    def _each_check(self, checks: tuple[ir.Check, ...], scope: Scope, where: str) -> None:
        for check in checks:
            self._each_check(check.checks, scope, where)  # the parts of all/any/not
            for entry in check.args.entries:
                if check.kind == "expression":
                    self.condition(entry.value, scope, f"check of {where}")
                else:
                    self.value(entry.value, scope)

    # -- where values come from (C821) ------------------------------------------------------------

    def origin(self, node, scope: Scope) -> str | None:
        """Where an untrusted value read by `node` comes from: an input, a step's result (an
        AI answer is one), a value a script set, a function input, `$error`; None when
        every name it reads holds only what the playbook wrote."""
        if isinstance(node, ast.PathRef):
            return self._name_origin(node.root, node.segments[:1], scope)
        if isinstance(node, ast.Name):
            return self._name_origin(node.name, (), scope)
        if isinstance(node, ast.Member) and isinstance(node.target, ast.Name) and node.target.name == "inputs":
            return self._name_origin("inputs", (node.name,), scope)
        if isinstance(node, ast.Call) and isinstance(node.callee, ast.Name) and node.callee.name == "get":
            if node.args and isinstance(node.args[0], ast.Literal) and isinstance(node.args[0].value, str):
                root, *rest = node.args[0].value.split(".")
                return self._name_origin(root, rest[:1], scope)
            return "a value read with get()"
        for child in ast.children(node):
            if isinstance(node, ast.Call) and child is node.callee:
                continue
            found = self.origin(child, scope)
            if found is not None:
                return found
        return None

    def _name_origin(self, name: str, segments, scope: Scope) -> str | None:
        binding = scope.lookup(name)
        if binding is None:
            if name == "inputs":
                return f"the input '{segments[0]}'" if segments else "the inputs"
            return None
        described = {
            "input": f"the input '{name}'",
            "step": f"the result of step '{name}'",
            "script": f"'{name}', set by a script",
            "parameter": f"the function input '{name}'",
            "error": "$error",
            "bindings": "the bindings (step results merged into them)",
        }.get(binding.kind)
        if described is not None:
            return described
        return f"'{name}' (which holds {binding.source})" if binding.source else None

    def value_origin(self, value: ir.Value | None, scope: Scope) -> str | None:
        if isinstance(value, ir.Tmpl):
            for part in value.parts:
                node = (
                    part.ref if isinstance(part, ast.RefPart) else part.expr if isinstance(part, ast.ExprPart) else None
                )
                found = self.origin(node, scope) if node is not None else None
                if found is not None:
                    return found
        elif isinstance(value, (ir.ListV, ir.MapV)):
            items = value.items if isinstance(value, ir.ListV) else [e.value for e in value.entries]
            for item in items:
                found = self.value_origin(item, scope)
                if found is not None:
                    return found
        return None

    def playbook_call(self, step: ir.Step, scope: Scope) -> None:
        input_types: dict[str, t.Type] | None = None
        for entry in step.config.entries:
            if entry.key == "inputs" and isinstance(entry.value, ir.MapV):
                input_types = {e.key: self.value(e.value, scope) for e in entry.value.entries}
            else:
                self.value(entry.value, scope)
        guarded = self._guards > 0 or step.condition is not None
        self.calls.append(CallSite(step, guarded, input_types))

    def function(self, step: ir.Step, scope: Scope) -> None:
        name = step.config.get("name")
        body = Scope(scope)
        inputs = step.config.get("inputs")
        if isinstance(inputs, ir.InputsV):
            for decl in inputs.inputs:
                body.define(Binding(decl.name, t.input_type(decl), "parameter", decl.span))
        steps = step.config.get("steps")
        returns: list[t.Type] = []
        if isinstance(steps, ir.StepsV):
            self.walk(steps.steps, body)
            for ret in _returns(steps.steps):
                returns.append(self.return_type(ret, body))
        if isinstance(name, ir.Lit) and isinstance(name.value, str):
            self.function_results[name.value] = returns[0] if len(returns) == 1 else t.ANY

    def return_type(self, ret: ir.Step, scope: Scope) -> t.Type:
        entries = ret.config.entries
        if len(entries) == 1 and entries[0].key == "result":
            return t.ObjectT((("result", t.Field(self._quiet_type(entries[0].value, scope), True)),), None)
        return t.ObjectT(tuple((e.key, t.Field(self._quiet_type(e.value, scope), True)) for e in entries), None)

    def _quiet_type(self, value: ir.Value, scope: Scope) -> t.Type:
        quiet = ReferenceChecker.__new__(ReferenceChecker)
        quiet.__dict__.update(self.__dict__)
        quiet.sink = DiagnosticSink()
        return quiet.value(value, scope)

    # -- values -------------------------------------------------------------------------------------

    def config_values(self, cfg: ir.MapV, scope: Scope) -> None:
        for entry in cfg.entries:
            if not isinstance(entry.value, (ir.StepsV, ir.InputsV)):
                self.value(entry.value, scope)

    def condition(self, value: ir.Value, scope: Scope, where: str) -> None:
        vtype = self.value(value, scope)
        if isinstance(value, ir.Tmpl) and len(value.parts) > 1:
            self.sink.report(
                "C507",
                f"this {where} is text with a template inside, so it is always true",
                value.span,
                help="make the whole value one expression: ${{ ... }}",
            )
            return
        if isinstance(value, ir.Lit) and isinstance(value.value, str):
            self.sink.report(
                "C507",
                f"this {where} is the fixed text '{value.value}', so it is always true",
                value.span,
                help="write an expression: ${{ get('name') === 'value' }}",
            )
            return
        if any(isinstance(o, (t.ArrayT, t.ObjectT)) for o in t.options_of(vtype)) and not t.is_any(vtype):
            self.sink.report(
                "C507",
                f"this {where} is {t.a_type(vtype)}, which is always true",
                value.span,
                help="test something about it, such as .length > 0",
            )

    def value(self, value: ir.Value | None, scope: Scope) -> t.Type:
        if value is None:
            return t.NULL
        if isinstance(value, ir.Lit):
            if isinstance(value.value, str):
                self.literal_path(value.value, value.span)
            return t.type_of_value(value.value)
        if isinstance(value, ir.ListV):
            return t.ArrayT(t.join(self.value(i, scope) for i in value.items) if value.items else t.ANY)
        if isinstance(value, ir.MapV):
            return t.ObjectT(tuple((e.key, t.Field(self.value(e.value, scope), True)) for e in value.entries), None)
        if isinstance(value, ir.Tmpl):
            return self.template(value, scope)
        return t.ANY

    def template(self, tmpl: ir.Tmpl, scope: Scope) -> t.Type:
        types = []
        for part in tmpl.parts:
            if isinstance(part, ast.RefPart):
                types.append(self.reference(part.ref, _Part(tmpl, part.base), scope))
            elif isinstance(part, ast.ExprPart):
                types.append(self.expr(part.expr, _Part(tmpl, part.base), scope))
        single = len(tmpl.parts) == 1 and types
        result = types[0] if single else t.STRING
        expected = tmpl.expected
        if isinstance(expected, t.Type) and single and not t.assignable(result, expected):
            self.sink.report(
                "C502",
                f"this value is {t.a_type(result)}, but {t.a_type(expected)} is expected here",
                tmpl.span,
                help=_fix_for(result, expected),
            )
        elif (
            isinstance(expected, t.Type)
            and not single
            and not isinstance(expected, t.BooleanT)
            and not t.assignable(t.STRING, expected)
        ):
            self.sink.report(
                "C502",
                f"text with templates is a string, but {t.a_type(expected)} is expected here",
                tmpl.span,
                help="make the whole value a single {{ reference }} or ${{ expression }} so it keeps its type",
            )
        return result

    # -- references -------------------------------------------------------------------------------------

    def reference(self, ref, part: _Part, scope: Scope) -> t.Type:
        if isinstance(ref, ast.ProtocolRef):
            self.protocol(ref.protocol, ref.path, part.span(ref))
            return t.STRING
        root_type = self.resolve_name(ref.root, part.span(ref), scope, ref)
        if root_type is None:
            if ref.segments and ref.root in self.all_definitions and scope.lookup(ref.root) is None:
                self.early_members.append((ref.root, tuple(ref.segments), part.span(ref)))
            return t.ANY
        segments = ref.segments
        current = root_type
        if ref.root == "inputs" and root_type is _INPUTS_MARK:
            if not segments:
                return t.ObjectT(tuple((i.name, t.Field(t.input_type(i))) for i in self.playbook.inputs), None)
            decl = self.inputs.get(segments[0])
            if decl is None:
                self.sink.report(
                    "C501",
                    f"there is no input named '{segments[0]}'",
                    part.span(ref),
                    help=suggest(segments[0], self.inputs) or "declare it under `inputs:`",
                )
                return t.ANY
            current, segments = t.input_type(decl), segments[1:]
        path = ref.root
        for segment in segments:
            current = self.member(current, segment, path, part.span(ref))
            path = f"{path}.{segment}"
            if current is None:
                return t.ANY
        return current

    # -- names that flow out of blocks ---------------------------------------------------------

    def _flow_out(
        self, scope: Scope, paths_out: list[tuple[Scope, str | None, tuple | None]], block: Span | None
    ) -> None:
        """Make the names the paths through a block define visible after it. `paths_out` are
        the alternative ways through the block (an `if`'s two branches, a loop that runs or
        not, a try's steps or one of its handlers): (the path's scope, why a name only it
        defines may be missing, the branch key). A name every path defines is defined after
        the block; one that only some define may be undefined (C508 where it is read)."""
        seen: dict[str, list[tuple[Binding, str | None, tuple | None]]] = {}
        for inner, reason, key in paths_out:
            for name, binding in inner.names.items():
                if binding.kind not in _BLOCK_OWN and scope.lookup(name) is None:
                    seen.setdefault(name, []).append((binding, reason, key))
        for name, found in seen.items():
            binding = found[0][0]
            maybe = next((b.maybe for b, _, _ in found if b.maybe is not None), None)
            if maybe is None and len(found) < len(paths_out):
                _, reason, key = found[0]
                maybe = Maybe(reason or "defined only on some paths", block, key)
            scope.define(
                replace(
                    binding,
                    maybe=maybe,
                    type=t.union(*(b.type for b, _, _ in found)) if len(found) > 1 else binding.type,
                )
            )

    def _known_on_this_branch(self, branch: Scope, key: tuple | None) -> None:
        """In a branch of an `if` on the same condition as an earlier one, the names that
        earlier branch defined are defined. Marked on the branch and asked when a name is
        read, so a thousand `if`s on one condition cost no more than a thousand others."""
        branch.known_key = key

    def _check_early_members(self) -> None:
        for name, segments, span in self.early_members:
            current = self.defined_types.get(name)
            path = name
            for segment in segments:
                if current is None:
                    break
                current = self.member(current, segment, path, span)
                path = f"{path}.{segment}"

    def resolve_name(self, name: str, span: Span | None, scope: Scope, node=None) -> t.Type | None:
        binding = scope.lookup(name)
        if binding is not None:
            if binding.maybe is not None and not (binding.maybe.key is not None and scope.knows(binding.maybe.key)):
                labels = [Label(binding.span, "defined here")] if binding.span else []
                if binding.maybe.block is not None:
                    labels.append(Label(binding.maybe.block, binding.maybe.reason))
                self.sink.report(
                    "C508",
                    f"'{name}' may be undefined here: {binding.maybe.reason}",
                    span,
                    labels=labels,
                    help="define it on every path (in both branches, or before the block), or read it only where it is defined",
                )
            return binding.type
        if name == "inputs":
            return _INPUTS_MARK
        if name == "$error":
            self.sink.report(
                "C501", "$error is only defined inside catch steps", span, help="move this step into a `catch:` block"
            )
            return None
        if name in self.all_definitions:
            where = self.all_definitions[name]
            self.sink.report(
                "C503",
                f"'{name}' is used before it is defined",
                span,
                labels=[Label(where, "defined here")] if where else (),
                help="move this step after the one that defines it, or define the name earlier",
            )
            return None
        hint = suggest(name, scope.visible())
        self.sink.report(
            "C501",
            f"'{name}' is not defined",
            span,
            help=hint or "define it with a `var` step, name the step that produces it, or declare it as an input",
        )
        return None

    def member(self, current: t.Type, segment: str, path: str, span: Span | None) -> t.Type | None:
        if t.is_any(current):
            return t.ANY
        options = [o for o in t.options_of(current) if not isinstance(o, t.NullT)]
        if not options:
            self.sink.report("C505", f"'{path}' is null; it has no member '{segment}'", span)
            return None
        found: list[t.Type] = []
        for option in options:
            got = _member_of(option, segment)
            if got is not None:
                found.append(got)
        if found:
            return t.join(found)
        if len(options) == 1 and isinstance(options[0], t.ObjectT):
            names = options[0].names()
            self.sink.report(
                "C504",
                f"'{path}' has no member '{segment}'",
                span,
                help=suggest(segment, names) or (f"its members are: {', '.join(names)}" if names else None),
            )
            return None
        self.sink.report(
            "C505",
            f"'{path}' is {t.a_type(current)}; it has no member '{segment}'",
            span,
            help="only objects have members (and strings and arrays have .length)",
        )
        return None

    def literal_path(self, text: str, span: Span | None) -> None:
        """A plain string that is one protocol path (`file-read: xe://../x`) gets the same
        checks as one in a template; text that mentions one, and other schemes, do not."""
        if literal_leaving_base(text) is not None:
            protocol, _, path = text.partition("://")
            self.protocol(protocol, path, span)

    def protocol(self, protocol: str, path: str, span: Span | None) -> None:
        if protocol not in B.PROTOCOLS:
            self.sink.report(
                "C106",
                f"unknown path protocol '{protocol}://'",
                span,
                help=suggest(protocol, B.PROTOCOLS, prefix="did you mean ")
                or f"protocols are: {', '.join(p + '://' for p in B.PROTOCOLS)}",
            )
            return
        how = leaves_base(path)
        if how == "absolute":
            self.sink.report(
                "C106",
                f"'{protocol}://{path}' is an absolute path; protocol paths are relative to their base",
                span,
                help=f"drop the leading '/': {protocol}://{path.lstrip('/')}",
            )
        elif how == "climbs":
            self.sink.report(
                "C106",
                f"'{protocol}://{path}' climbs out of its base with '..'",
                span,
                help="name the file inside the protocol's base directory",
            )

    # -- expressions -------------------------------------------------------------------------------------

    def expr(self, node, part: _Part, scope: Scope) -> t.Type:
        if isinstance(node, ast.Literal):
            return {"number": t.NUMBER, "string": t.STRING, "boolean": t.BOOLEAN}.get(node.kind, t.NULL)
        if isinstance(node, ast.ArrayExpr):
            return t.ArrayT(t.join(self.expr(i, part, scope) for i in node.items) if node.items else t.ANY)
        if isinstance(node, ast.ObjectExpr):
            return t.ObjectT(tuple((e.key, t.Field(self.expr(e.value, part, scope), True)) for e in node.entries), None)
        if isinstance(node, ast.Name):
            if node.name in B.NAMESPACES or node.name in B.FUNCTIONS:
                self.sink.report(
                    "C107",
                    f"'{node.name}' can only be called",
                    part.span(node),
                    help=f"call it: {node.name}(...)"
                    if node.name in B.FUNCTIONS
                    else f"use one of its functions: {', '.join(node.name + '.' + f for f in B.NAMESPACES[node.name])}",
                )
                return t.ANY
            found = self.resolve_name(node.name, part.span(node), scope)
            return t.ANY if found is None or found is _INPUTS_MARK else found
        if isinstance(node, ast.Member):
            target = self.expr(node.target, part, scope)
            got = self.member(target, node.name, _describe_expr(node.target), part.span(node))
            return got if got is not None else t.ANY
        if isinstance(node, ast.Index):
            target = self.expr(node.target, part, scope)
            self.expr(node.index, part, scope)  # its own mistakes are reported; its type does not matter here
            if isinstance(node.index, ast.Literal) and node.index.kind in ("string", "number"):
                got = self.member(target, str(node.index.value), _describe_expr(node.target), part.span(node))
                return got if got is not None else t.ANY
            if isinstance(target, t.ArrayT):
                return target.item
            return t.ANY
        if isinstance(node, ast.Call):
            return self.call(node, part, scope)
        if isinstance(node, ast.Unary):
            operand = self.expr(node.operand, part, scope)
            if node.op == "!":
                return t.BOOLEAN
            self._arithmetic(operand, node.operand, node.op, part)
            return t.NUMBER
        if isinstance(node, ast.Binary):
            left = self.expr(node.left, part, scope)
            right = self.expr(node.right, part, scope)
            op = node.op
            if op in ("==", "!=", "===", "!==", "<", "<=", ">", ">="):
                return t.BOOLEAN
            if op in ("&&", "||"):
                return t.union(left, right)
            if op == "??":
                return t.union(*[o for o in t.options_of(left) if not isinstance(o, t.NullT)], right)
            if op == "+":
                if any(t.is_stringish(o) for o in t.options_of(left) + t.options_of(right)):
                    return t.STRING
                if isinstance(left, t.NumberT) and isinstance(right, t.NumberT):
                    return t.NUMBER
                return t.ANY
            self._arithmetic(left, node.left, op, part)
            self._arithmetic(right, node.right, op, part)
            return t.NUMBER
        if isinstance(node, ast.Conditional):
            self.expr(node.test, part, scope)
            return t.union(self.expr(node.then, part, scope), self.expr(node.otherwise, part, scope))
        return t.ANY

    def _arithmetic(self, operand: t.Type, node, op: str, part: _Part) -> None:
        if t.is_any(operand):
            return
        bad = [o for o in t.options_of(operand) if not isinstance(o, (t.NumberT, t.NullT, t.AnyT))]
        if bad and len(bad) == len(t.options_of(operand)):
            self.sink.report(
                "C506",
                f"'{op}' needs numbers, but this is {t.a_type(operand)}",
                part.span(node),
                help="convert it first with Number(...)" if t.is_stringish(bad[0]) else None,
            )

    def call(self, node: ast.Call, part: _Part, scope: Scope) -> t.Type:
        callee = node.callee
        args = node.args
        if isinstance(callee, ast.Name):
            name = callee.name
            if name == "get":
                return self.get_call(node, part, scope)
            for a in args:
                self.expr(a, part, scope)
            if name in B.FUNCTIONS:
                return B.FUNCTIONS[name]
            self.sink.report(
                "C107",
                f"'{name}' is not a function the expression language allows",
                part.span(callee),
                help=suggest(name, B.FUNCTIONS)
                or f"allowed functions: {', '.join(B.FUNCTIONS)}, and the methods of strings and arrays",
            )
            return t.ANY
        if isinstance(callee, ast.Member):
            for a in args:
                self.expr(a, part, scope)
            if (
                isinstance(callee.target, ast.Name)
                and callee.target.name in B.NAMESPACES
                and scope.lookup(callee.target.name) is None
            ):
                functions = B.NAMESPACES[callee.target.name]
                if callee.name in functions:
                    return functions[callee.name]
                self.sink.report(
                    "C107",
                    f"'{callee.target.name}.{callee.name}' is not allowed in expressions",
                    part.span(callee),
                    help=suggest(callee.name, functions)
                    or f"allowed: {', '.join(callee.target.name + '.' + f for f in functions)}",
                )
                return t.ANY
            receiver = self.expr(callee.target, part, scope)
            return self.method(receiver, callee, part)
        for a in args:
            self.expr(a, part, scope)
        self.sink.report("C107", "only named functions and methods can be called in expressions", part.span(callee))
        return t.ANY

    def method(self, receiver: t.Type, callee: ast.Member, part: _Part) -> t.Type:
        name = callee.name
        results: list[t.Type] = []
        for option in t.options_of(receiver):
            if isinstance(option, t.AnyT):
                for table in (B.STRING_METHODS, B.ARRAY_METHODS, B.NUMBER_METHODS):
                    if name in table:
                        return t.ANY
                continue
            table = (
                B.STRING_METHODS
                if t.is_stringish(option)
                else B.ARRAY_METHODS
                if isinstance(option, t.ArrayT)
                else B.NUMBER_METHODS
                if isinstance(option, t.NumberT)
                else {}
            )
            got = table.get(name)
            if got == "SAME":
                results.append(option)
            elif got == "ITEM":
                results.append(option.item)  # type: ignore[union-attr]
            elif got is not None:
                results.append(got)  # type: ignore[arg-type]
        if results:
            return t.join(results)
        known = sorted(set(B.STRING_METHODS) | set(B.ARRAY_METHODS) | set(B.NUMBER_METHODS))
        what = "this value" if t.is_any(receiver) else t.a_type(receiver)
        self.sink.report(
            "C107",
            f"the method '{name}' is not allowed on {what}",
            part.span(callee),
            help=suggest(name, known) or "see the list of allowed methods in the docs",
        )
        return t.ANY

    def get_call(self, node: ast.Call, part: _Part, scope: Scope) -> t.Type:
        if len(node.args) != 1:
            self.sink.report(
                "C107",
                f"get() takes one argument, got {len(node.args)}",
                part.span(node),
                help="get('name') or get('name.field')",
            )
            for a in node.args:
                self.expr(a, part, scope)
            return t.ANY
        arg = node.args[0]
        if not (isinstance(arg, ast.Literal) and arg.kind == "string"):
            self.expr(arg, part, scope)
            return t.ANY  # a dynamic get is checked at run time
        text = str(arg.value)
        if "://" in text:
            protocol, _, path = text.partition("://")
            self.protocol(protocol, path, part.span(arg))
            return t.union(t.STRING, t.NULL)
        pieces = text.split(".")
        ref = ast.PathRef(pieces[0], tuple(pieces[1:]), start=arg.start + 1, end=arg.end - 1)
        return self.reference(ref, part, scope)


class _InputsMark(t.AnyT):
    pass


_INPUTS_MARK = _InputsMark()


def _member_of(option: t.Type, segment: str) -> t.Type | None:
    if isinstance(option, t.AnyT):
        return t.ANY
    if isinstance(option, t.ArrayT):
        if segment == "length":
            return t.NUMBER
        if segment.isdigit():
            return option.item
        return None
    if t.is_stringish(option):
        return t.NUMBER if segment == "length" else None
    if isinstance(option, t.ObjectT):
        return option.member(segment)
    return None


def _describe_expr(node) -> str:
    if isinstance(node, ast.Name):
        return node.name
    if isinstance(node, ast.Member):
        return f"{_describe_expr(node.target)}.{node.name}"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.callee, ast.Name)
        and node.callee.name == "get"
        and node.args
        and isinstance(node.args[0], ast.Literal)
    ):
        return f"get('{node.args[0].value}')"
    if isinstance(node, ast.Call):
        return f"{_describe_expr(node.callee)}(…)"
    return "the value"


def _fix_for(actual: t.Type, expected: t.Type) -> str | None:
    if isinstance(expected, t.ArrayT):
        return "pass a list, or a reference to one"
    if isinstance(expected, t.NumberT) and t.is_stringish(actual):
        return "convert it with ${{ Number(get('name')) }}"
    if isinstance(expected, t.StringT) and isinstance(actual, (t.ArrayT, t.ObjectT)):
        return "pick a field of it, or put it in text (mixed text turns values into strings)"
    return None


def _returns(steps: Iterable[ir.Step]):
    """`return` steps of a body, looking into if/try/for-each but not nested functions."""
    for step in steps:
        if step.action == "return":
            yield step
        elif step.action != "function":
            for entry in step.config.entries:
                for nested in ir.nested_steps(entry.value):
                    yield from _returns(nested)


def playbook_returns(playbook: ir.Playbook):
    yield from _returns(playbook.steps)
    for clause in playbook.catch:
        yield from _returns(clause.steps)
    yield from _returns(playbook.finally_)


def check_references(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog) -> list[CallSite]:
    """Check every reference and type; return the `playbook` steps for the library checks."""
    checker = ReferenceChecker(playbook, sink, catalog)
    checker.run()
    return checker.calls


def _line(span: Span | None) -> str:
    return f"line {span.line}" if span is not None else "a block"
