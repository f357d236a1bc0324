"""Values typed and their names resolved: config values, conditions, templates, references,
and the checks of `requires:` and `ensures:`.

A mixin of the reference checker (see expression_types.py for why it is one object): a value
is typed against what its config key expects (C502), a condition that is always true is
reported (C507), and each name is resolved in the scope where it is read (C501, C503,
C508), or noted to be checked once every definition is known.
"""

from __future__ import annotations

from catalyst_dsl.checks.references.expression_types import INPUTS_MARK, ExpressionTyping, Part
from catalyst_dsl.checks.references.scopes import Scope
from catalyst_dsl.diagnostics.ids import (
    ALWAYS_TRUE_CONDITION,
    MAYBE_UNDEFINED,
    TYPE_MISMATCH,
    UNDEFINED_REFERENCE,
    USED_BEFORE_DEFINED,
)
from catalyst_dsl.diagnostics.model import Label
from catalyst_dsl.diagnostics.suggest import suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.source import Span


#: How many unknown names of one playbook get a "did you mean": each is compared with every
#: name in scope, so past this a playbook of many unknown names and many names would be
#: checked in quadratic time; one with so many unknown names is not misspelt here and there.
SUGGESTED_NAMES = 32


class ValueTyping(ExpressionTyping):
    """Types values and resolves the names they read; the checker holds the state it reads."""

    playbook: ir.Playbook
    inputs: dict[str, ir.InputDecl]
    all_definitions: dict[str, Span | None]
    step_only_names: dict[str, tuple[ir.Step, str | None]]
    defined_types: dict[str, t.Type]
    early_members: list[tuple[str, tuple[str, ...], Span | None]]

    def config_values(self, cfg: ir.MapV, scope: Scope) -> None:
        for entry in cfg.entries:
            if not isinstance(entry.value, (ir.StepsV, ir.InputsV)):
                self.value(entry.value, scope)

    def condition(self, value: ir.Value, scope: Scope, where: str) -> None:
        vtype = self.value(value, scope)
        if isinstance(value, ir.Tmpl) and len(value.parts) > 1:
            self.sink.report(
                ALWAYS_TRUE_CONDITION,
                f"this {where} is text with a template inside, so it is always true",
                value.span,
                help="make the whole value one expression: ${{ ... }}",
            )
            return
        if isinstance(value, ir.Lit) and isinstance(value.value, str):
            self.sink.report(
                ALWAYS_TRUE_CONDITION,
                f"this {where} is the fixed text '{value.value}', so it is always true",
                value.span,
                help="write an expression: ${{ get('name') === 'value' }}",
            )
            return
        if any(isinstance(o, (t.ArrayT, t.ObjectT)) for o in t.options_of(vtype)) and not t.is_any(vtype):
            self.sink.report(
                ALWAYS_TRUE_CONDITION,
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
                types.append(self.reference(part.ref, Part(tmpl, part.base), scope))
            elif isinstance(part, ast.ExprPart):
                types.append(self.expr(part.expr, Part(tmpl, part.base), scope))
        single = len(tmpl.parts) == 1 and types
        result = types[0] if single else t.STRING
        expected = tmpl.expected
        if isinstance(expected, t.Type) and single and not t.assignable(result, expected):
            self.sink.report(
                TYPE_MISMATCH,
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
                TYPE_MISMATCH,
                f"text with templates is a string, but {t.a_type(expected)} is expected here",
                tmpl.span,
                help="make the whole value a single {{ reference }} or ${{ expression }} so it keeps its type",
            )
        return result

    def reference(self, ref, part: Part, scope: Scope) -> t.Type:
        if isinstance(ref, ast.ProtocolRef):
            self.protocol(ref.protocol, ref.path, part.span(ref))
            return t.STRING
        binding = scope.lookup(ref.root)
        if binding is not None and binding.maybe is None:
            # A name surely defined here, the usual case: its span (worked out through the
            # scalar's offsets) is only for a finding, and resolving it reports none.
            root_type = binding.type
        else:
            root_type = self.resolve_name(ref.root, part.span(ref), scope, ref)
        if root_type is None:
            if ref.segments and ref.root in self.all_definitions and scope.lookup(ref.root) is None:
                self.early_members.append((ref.root, tuple(ref.segments), part.span(ref)))
            return t.ANY
        segments = ref.segments
        current = root_type
        if ref.root == "inputs" and root_type is INPUTS_MARK:
            if not segments:
                return t.ObjectT(tuple((i.name, t.Field(t.input_type(i))) for i in self.playbook.inputs), None)
            decl = self.inputs.get(segments[0])
            if decl is None:
                self.sink.report(
                    UNDEFINED_REFERENCE,
                    f"there is no input named '{segments[0]}'",
                    part.span(ref),
                    help=self.closest(segments[0], self.inputs) or "declare it under `inputs:`",
                )
                return t.ANY
            current, segments = t.input_type(decl), segments[1:]
        path = ref.root
        span = part.span(ref) if segments else None  # one span for every segment's finding
        for segment in segments:
            current = self.member(current, segment, path, span)
            path = f"{path}.{segment}"
            if current is None:
                return t.ANY
        return current

    def closest(self, name: str, known) -> str | None:
        """A "did you mean" for an unknown name, while this playbook has SUGGESTED_NAMES left."""
        if self.suggestions_left <= 0:
            return None
        self.suggestions_left -= 1
        return suggest(name, known)

    def resolve_name(self, name: str, span: Span | None, scope: Scope, node=None) -> t.Type | None:
        binding = scope.lookup(name)
        if binding is not None:
            if binding.maybe is not None and not (binding.maybe.key is not None and scope.knows(binding.maybe.key)):
                labels = [Label(binding.span, "defined here")] if binding.span else []
                if binding.maybe.block is not None:
                    labels.append(Label(binding.maybe.block, binding.maybe.reason))
                self.sink.report(
                    MAYBE_UNDEFINED,
                    f"'{name}' may be undefined here: {binding.maybe.reason}",
                    span,
                    labels=labels,
                    help="define it on every path (in both branches, or before the block), "
                    "or read it only where it is defined",
                )
            return binding.type
        if name == "inputs":
            return INPUTS_MARK
        if name == "$error":
            self.sink.report(
                UNDEFINED_REFERENCE,
                "$error is only defined inside catch steps",
                span,
                help="move this step into a `catch:` block",
            )
            return None
        if name in self.step_only_names:
            step, defined = self.step_only_names[name]
            if step.action == "var":
                fix = f"the step sets the variable '{defined}': read that" if defined else "read the variable it sets"
                fix += f", or write `var: {name}` to set '{name}'"
            else:
                fix = "a function is called by a step of its own, which holds what it returns: name that step"
            self.sink.report(
                UNDEFINED_REFERENCE,
                f"'{name}' names a `{step.action}` step, which holds no value",
                span,
                labels=[Label(step.name_span, "the step named here")] if step.name_span else (),
                help=fix,
            )
            return None
        if name in self.all_definitions:
            where = self.all_definitions[name]
            self.sink.report(
                USED_BEFORE_DEFINED,
                f"'{name}' is used before it is defined",
                span,
                labels=[Label(where, "defined here")] if where else (),
                help="move this step after the one that defines it, or define the name earlier",
            )
            return None
        hint = self.closest(name, scope.visible())
        self.sink.report(
            UNDEFINED_REFERENCE,
            f"'{name}' is not defined",
            span,
            help=hint or "define it with a `var` step, name the step that produces it, or declare it as an input",
        )
        return None

    def _check_early_members(self) -> None:
        for name, segments, span in self.early_members:
            current = self.defined_types.get(name)
            path = name
            for segment in segments:
                if current is None:
                    break
                current = self.member(current, segment, path, span)
                path = f"{path}.{segment}"

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

    def gate_values(self, gate: ir.Gate, scope: Scope) -> None:
        """A gate's message and policy read names as they are when it pauses: before the
        step, or after it (then its result too)."""
        self.value(gate.message, scope)
        self.value(gate.policy, scope)


def _fix_for(actual: t.Type, expected: t.Type) -> str | None:
    if isinstance(expected, t.ArrayT):
        return "pass a list, or a reference to one"
    if isinstance(expected, t.NumberT) and t.is_stringish(actual):
        return "convert it with ${{ Number(get('name')) }}"
    if isinstance(expected, t.StringT) and isinstance(actual, (t.ArrayT, t.ObjectT)):
        return "pick a field of it, or put it in text (mixed text turns values into strings)"
    return None
