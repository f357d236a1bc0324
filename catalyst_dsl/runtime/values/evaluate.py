"""The runtime evaluator of `{{ reference }}` and `${{ expression }}`: JavaScript-like values.

The front end parses templates (`syntax/expr/templates.py`) and the checker types them; this
module gives them their run-time value. It is the only place expressions are evaluated:
the interpreter, `--what-if` and failed-condition messages all come through here.

What the values are and how they convert lives in `jsvalues.py`; what each allowlisted
method and function does lives in `jsbuiltins.py`. Nothing outside the allowlist of
`expr_builtins.py` can run: calls dispatch through `jsbuiltins`' lookups, keyed by the
allowlist's names, and member access only ever reads dict keys, list items and
`.length` (never a Python attribute).
"""

from __future__ import annotations

import json
from typing import Callable, NoReturn

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.values import jsbuiltins, taint
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.env import Env
from catalyst_dsl.runtime.values.jsvalues import (
    UNDEFINED,
    UNKNOWN,
    contains_unknown,
    Fault,
    a_kind,
    arithmetic,
    canonical_number,
    compare,
    is_array,
    loose_equal,
    strict_equal,
    to_number,
    to_text,
    truthy,
)
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.expr.templates import ParsedTemplate, parse_template, single_part

__all__ = [
    "UNDEFINED",
    "Env",
    "EvaluationError",
    "evaluate",
    "member",
    "resolve_path",
    "render",
    "materialize",
    "template_of",
    "part_value",
    "truthy",
    "to_text",
    "to_number",
    "show",
    "explain",
]

#: Explanations of failed conditions cut values longer than this.
MAX_SHOWN_LENGTH = 200


class EvaluationError(StepError):
    """An expression failed at run time; `start`/`end` are offsets in the template text."""

    def __init__(self, message: str, start: int = 0, end: int = 0) -> None:
        super().__init__("ExpressionError", message, metadata={"start": start, "end": end})
        self.start = start
        self.end = end


# -- the evaluator ---------------------------------------------------------------------------------


class _Evaluator:
    """Evaluates one expression tree; `base` turns node offsets into template offsets."""

    def __init__(self, env: Env, base: int = 0) -> None:
        self.env = env
        self.base = base
        #: The secrets the values evaluated so far in the current node came from (see
        #: `tracked`; none to follow before a secret is marked in the process).
        self.seen: taint.Taint | None = taint.Taint() if taint.active() else None

    def fail(self, message: str, node) -> NoReturn:
        raise _error_at(message, node, self.base)

    def eval(self, node) -> object:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            self.fail(f"cannot evaluate a {type(node).__name__} here", node)
        if not taint.active():
            return handler(self, node)
        return self.tracked(handler, node)

    def tracked(self, handler: Callable[["_Evaluator", object], object], node) -> object:
        """`handler(node)`, marked as secret when computed from a secret (see `taint.py`).

        The rule is applied here, once, for every node: a call, an operator or a template
        computed from a marked operand, receiver or argument is marked, whatever built-in
        ran. Nodes that hand on a value rather than compute one (names, members,
        literals of arrays and objects, `?:`, `&&`, `||`, `??`) are marked by what they
        hand on: the test of a conditional does not mark the branch it chooses.
        """
        outer, self.seen = self.seen, taint.Taint()
        try:
            value = handler(self, node)
            found = self.seen
        finally:
            self.seen = outer
        if type(node) in _HANDS_ON or (type(node) is ast.Binary and node.op in _CHOOSING):
            found = taint.taint_of(value)
            if not found and isinstance(value, str):
                # Text that holds a secret's known text (a program's output echoing it) is
                # secret from here on, so what is computed from it is masked too.
                found = taint.revealing(value, getattr(self.env, "masker", None))
                if found:
                    value = taint.mark(value, found, joined=True)
        else:
            found.take(value)  # `get('token')` hands on a marked value from a plain argument
            if found:
                value = taint.mark(value, found, joined=type(node) is ast.Binary and node.op == "+")
        if outer is not None:
            outer.merge(found)
        return value

    # -- leaves and literals

    def literal(self, node: ast.Literal) -> object:
        if node.kind == "undefined":
            return UNDEFINED
        if node.kind == "number":
            return canonical_number(node.value)  # type: ignore[arg-type]
        return node.value

    def array(self, node: ast.ArrayExpr) -> object:
        return [self.eval(item) for item in node.items]

    def object(self, node: ast.ObjectExpr) -> object:
        return {entry.key: self.eval(entry.value) for entry in node.entries}

    def name(self, node: ast.Name) -> object:
        try:
            return self.env.lookup(node.name)
        except KeyError:
            if node.name in B.NAMESPACES or node.name in B.FUNCTIONS:
                self.fail(f"'{node.name}' can only be called", node)
            self.fail(f"'{node.name}' is not defined", node)

    def defined(self, name: str) -> bool:
        try:
            self.env.lookup(name)
        except KeyError:
            return False
        return True

    # -- member access

    def member(self, node: ast.Member) -> object:
        target = self.eval(node.target)
        return UNKNOWN if target is UNKNOWN else self.property(target, node.name, node)

    def index(self, node: ast.Index) -> object:
        target = self.eval(node.target)
        key = self.eval(node.index)
        if target is UNKNOWN or key is UNKNOWN:
            return UNKNOWN
        return self.property(target, key if isinstance(key, str) else to_text(key), node)

    def property(self, value: object, key: str, node) -> object:
        try:
            return member(value, key)
        except Fault as fault:
            self.fail(str(fault), node)

    def reference(self, ref: ast.PathRef | ast.ProtocolRef) -> object:
        return _reference(ref, self.env, self.base)

    # -- operators

    def unary(self, node: ast.Unary) -> object:
        value = self.eval(node.operand)
        if value is UNKNOWN:
            return UNKNOWN
        if node.op == "!":
            return not truthy(value)
        if node.op == "-":
            return canonical_number(-to_number(value))
        if node.op == "+":
            return to_number(value)
        self.fail(f"the operator '{node.op}' is not part of the expression language", node)

    def binary(self, node: ast.Binary) -> object:
        op = node.op
        left = self.eval(node.left)
        if left is UNKNOWN:
            return UNKNOWN  # which side decides, or what it yields, is not known
        # The logical operators return an operand, not a boolean, and skip the right side
        # when the left decides: `get('x') || 'default'` is the common idiom.
        if op == "&&":
            return self.eval(node.right) if truthy(left) else left
        if op == "||":
            return left if truthy(left) else self.eval(node.right)
        if op == "??":
            return self.eval(node.right) if left is None or left is UNDEFINED else left
        right = self.eval(node.right)
        if right is UNKNOWN:
            return UNKNOWN
        if op == "===":
            return strict_equal(left, right)
        if op == "!==":
            return not strict_equal(left, right)
        if op == "==":
            return loose_equal(left, right)
        if op == "!=":
            return not loose_equal(left, right)
        if op in ("<", "<=", ">", ">="):
            return compare(op, left, right)
        if op in ("+", "-", "*", "/", "%"):
            try:
                return arithmetic(op, left, right)
            except Fault as fault:
                self.fail(str(fault), node)
        self.fail(f"the operator '{op}' is not part of the expression language", node)

    def conditional(self, node: ast.Conditional) -> object:
        test = self.eval(node.test)
        if test is UNKNOWN:
            return UNKNOWN
        return self.eval(node.then) if truthy(test) else self.eval(node.otherwise)

    # -- calls: only the allowlist, looked up by name, never by attribute

    def call(self, node: ast.Call) -> object:
        callee = node.callee
        if isinstance(callee, ast.Name):
            impl = jsbuiltins.global_function(callee.name)
            if impl is None:
                self.fail(f"'{callee.name}' is not a function the expression language allows", callee)
            args = [self.eval(a) for a in node.args]
            if contains_unknown(args):  # the list of them: one call, no generator
                return UNKNOWN
            return self.run(node, impl, self.env, args)
        if isinstance(callee, ast.Member):
            target = callee.target
            # `Math.max(...)`: a namespace, unless the playbook defines a name that hides it.
            if isinstance(target, ast.Name) and target.name in B.NAMESPACES and not self.defined(target.name):
                function = jsbuiltins.namespace_function(target.name, callee.name)
                if function is None:
                    self.fail(f"'{target.name}.{callee.name}' is not allowed in expressions", callee)
                args = [self.eval(a) for a in node.args]
                if contains_unknown(args):  # the list of them: one call, no generator
                    return UNKNOWN
                return self.run(node, function, args)
            receiver = self.eval(target)
            args = [self.eval(a) for a in node.args]
            if contains_unknown(receiver) or contains_unknown(args):
                return UNKNOWN
            method = self.method(receiver, callee)
            return self.run(node, method, receiver, args)
        self.fail("only named functions and methods can be called in expressions", callee)

    def method(self, receiver: object, callee: ast.Member) -> Callable[[object, list], object]:
        name = callee.name
        if receiver is None or receiver is UNDEFINED:
            self.fail(f"cannot read '{name}' of {to_text(receiver)}", callee)
        impl = jsbuiltins.method(receiver, name)
        if impl is None:
            self.fail(f"the method '{name}' is not allowed on {a_kind(receiver)}", callee)
        return impl

    def run(self, node: ast.Call, function: Callable[..., object], *args: object) -> object:
        """`function(*args)`, a Fault of it failing at the call (no closure made per call)."""
        try:
            return function(*args)
        except Fault as fault:
            self.fail(str(fault), node)


#: Nodes whose value is one they were given, not one they computed (see `_Evaluator.tracked`).
_HANDS_ON = (
    ast.Name,
    ast.Member,
    ast.Index,
    ast.ArrayExpr,
    ast.ObjectExpr,
    ast.Conditional,
    ast.PathRef,
    ast.ProtocolRef,
)
_CHOOSING = ("&&", "||", "??")

_HANDLERS: dict[type, Callable[[_Evaluator, object], object]] = {
    ast.Literal: _Evaluator.literal,
    ast.ArrayExpr: _Evaluator.array,
    ast.ObjectExpr: _Evaluator.object,
    ast.Name: _Evaluator.name,
    ast.Member: _Evaluator.member,
    ast.Index: _Evaluator.index,
    ast.Call: _Evaluator.call,
    ast.Unary: _Evaluator.unary,
    ast.Binary: _Evaluator.binary,
    ast.Conditional: _Evaluator.conditional,
    ast.PathRef: _Evaluator.reference,
    ast.ProtocolRef: _Evaluator.reference,
}


def _is_index(key: str) -> bool:
    """'0', '12': the canonical spelling of an array index ('01' and '+1' are not)."""
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0")


def member(value: object, key: str) -> object:
    """`value.key` / `value[key]`: own dict keys, list items and `.length`, nothing else."""
    if value is None or value is UNDEFINED:
        raise Fault(f"cannot read '{key}' of {to_text(value)}")
    if isinstance(value, dict):
        return value.get(key, UNDEFINED)
    if isinstance(value, str) or is_array(value):
        if key == "length":
            return len(value)  # type: ignore[arg-type]
        if _is_index(key):
            i = int(key)
            if i >= len(value):  # type: ignore[arg-type]
                return UNDEFINED
            item = value[i]  # type: ignore[index]
            # A character of a secret is part of it (never added to the masker: too short).
            return taint.mark(item, taint.taint_of(value)) if isinstance(value, taint.SecretText) else item
    return UNDEFINED


# -- public entry points -----------------------------------------------------------------------------


def evaluate(expr, env: Env, *, base: int = 0) -> object:
    """The value of one expression node; `base` is where its text starts in the template."""
    try:
        return _Evaluator(env, base).eval(expr)
    except RecursionError:
        raise EvaluationError(
            "the expression is nested too deeply to evaluate", base + expr.start, base + expr.end
        ) from None


def resolve_path(ref: ast.PathRef | ast.ProtocolRef, env: Env, *, base: int = 0) -> object:
    """`{{ a.b.0 }}`: the root from `env.lookup`, then dict keys, list indexes and `.length`."""
    return _reference(ref, env, base)


def _reference(ref: ast.PathRef | ast.ProtocolRef, env: Env, base: int) -> object:
    """`resolve_path`, without an evaluator: a reference computes nothing, so it has no
    secrets to follow (most `{{ }}` of a playbook are references)."""
    if isinstance(ref, ast.ProtocolRef):
        return env.protocol(ref.protocol, ref.path)
    try:
        value = env.lookup(ref.root)
    except KeyError:
        raise _error_at(f"'{ref.root}' is not defined", ref, base)
    for k, segment in enumerate(ref.segments):
        if value is UNKNOWN:
            return UNKNOWN
        try:
            value = member(value, segment)
        except Fault:
            path = ".".join((ref.root, *ref.segments[:k]))  # what was read so far, for the message only
            raise _error_at(f"cannot read '{segment}' of {to_text(value)}: '{path}' is {to_text(value)}", ref, base)
    return value


def _error_at(message: str, node, base: int) -> EvaluationError:
    """The failure of `node`, placed in the template text (`base`: where the expression starts)."""
    return EvaluationError(message, base + node.start, base + node.end)


def part_value(part: ast.RefPart | ast.ExprPart, env: Env) -> object:
    """The value of one `{{ }}` / `${{ }}` part of a template."""
    if isinstance(part, ast.RefPart):
        return resolve_path(part.ref, env, base=part.base)
    return evaluate(part.expr, env, base=part.base)


def render(tmpl: ParsedTemplate | str, env: Env) -> object:
    """A template's value: one `{{ }}`/`${{ }}` keeps its type, mixed text becomes a string."""
    parsed = parse_template(tmpl) if isinstance(tmpl, str) else tmpl
    if parsed.errors:
        # The checker reports these before a run; a template built at run time can still have them.
        error = parsed.errors[0]
        raise EvaluationError(error.message, error.start, error.end)
    return _rendered(parsed.parts, env)


#: How a value is written where it stands: (the text before it, its part, its value) ->
#: the value to write instead (runtime/values/url_values.py percent-encodes a URL's values).
Placing = Callable[[str, "ast.RefPart | ast.ExprPart", object], object]


def _rendered(parts: tuple[ast.Part, ...], env: Env, place: Placing | None = None) -> object:
    """`render` of a template's parts, read without errors; `place`, when given, writes
    each value of mixed text (a template that is one value keeps it as it is)."""
    single = single_part(parts)
    if single is not None:
        return part_value(single, env)
    pieces = []
    values = []
    for part in parts:
        value = part.text if isinstance(part, ast.TextPart) else part_value(part, env)
        if value is UNKNOWN:
            return UNKNOWN  # text around an unknown value is unknown too
        if place is not None and not isinstance(part, ast.TextPart):
            value = place("".join(pieces), part, value)
        values.append(value)
        pieces.append(value if isinstance(part, ast.TextPart) else to_text(value))
    text = "".join(pieces)
    return _marked_template(text, parts, values, env) if taint.active() else text


def _marked_template(text: str, parts: list, values: list, env: Env) -> str:
    """A template's text, marked when a piece is secret (see `taint.py`), with how a plan shows it."""
    found = taint.taint_of(values)
    masker = getattr(env, "masker", None)
    for i, value in enumerate(values):
        if (
            isinstance(value, str)
            and not isinstance(value, taint.SecretText)
            and not isinstance(parts[i], ast.TextPart)
        ):
            echoed = taint.revealing(value, masker)  # a program's output that echoes a secret
            if echoed:
                values[i] = taint.mark(value, echoed, joined=True)
                found.merge(echoed)
    if not found:
        return text
    # A plan shows the template with each secret piece as its placeholder.
    shown = "".join(v if isinstance(p, ast.TextPart) else to_text(taint.placeholders(v)) for p, v in zip(parts, values))
    return taint.mark(text, found, joined=True, shown=shown, parts=tuple(taint.marked_texts(values)))  # type: ignore[return-value]


def materialize(value: ir.Value, env: Env) -> object:
    """An IR config value as Python data, with every template rendered."""
    if isinstance(value, ir.Lit):
        return value.value
    if isinstance(value, ir.Tmpl):
        # The compiler's parts as they are (no ParsedTemplate made for each value rendered).
        return _rendered(value.parts, env) if value.parts else render(value.text, env)
    if isinstance(value, ir.ListV):
        return [materialize(item, env) for item in value.items]
    if isinstance(value, ir.MapV):
        return {entry.key: materialize(entry.value, env) for entry in value.entries}
    return value  # StepsV and InputsV are steps and declarations, not data


def render_placed(value: ir.Value, env: Env, place: Placing) -> object:
    """`materialize` of one config value, each value in its text written by `place`."""
    if not isinstance(value, ir.Tmpl):
        return materialize(value, env)
    parsed = template_of(value)
    if parsed.errors:
        error = parsed.errors[0]
        raise EvaluationError(error.message, error.start, error.end)
    return _rendered(parsed.parts, env, place)


def template_of(value: ir.Tmpl) -> ParsedTemplate:
    """The template of an IR text: the parts the compiler read, without parsing it again
    (a Tmpl made without parts is parsed here)."""
    return ParsedTemplate(value.text, value.parts) if value.parts else parse_template(value.text)


# -- explaining a failed condition -----------------------------------------------------------------


def _shown_nodes(node) -> list:
    """Sub-expressions worth a `where` line: value chains (names, members, calls), not literals.

    A chain such as `get('tests').exitCode` is shown whole, not its `get('tests')` inside;
    arguments and index expressions within it are looked at on their own.
    """
    if isinstance(node, ast.Literal):
        return []
    if not isinstance(node, (ast.Name, ast.Member, ast.Index, ast.Call)):
        return [n for child in ast.children(node) for n in _shown_nodes(child)]
    found = [node]
    link = node
    while isinstance(link, (ast.Member, ast.Index, ast.Call)):
        if isinstance(link, ast.Call):
            found += [n for a in link.args for n in _shown_nodes(a)]
            link = link.callee
        else:
            if isinstance(link, ast.Index):
                found += _shown_nodes(link.index)
            link = link.target
    if not isinstance(link, ast.Name):  # `(a + b).length`, `[1, 2].includes(x)`
        found += _shown_nodes(link)
    return found


def show(value: object) -> str:
    """A value compactly, JSON-like, for messages: strings quoted, `undefined` by name."""
    text = _show(value)
    return text if len(text) <= MAX_SHOWN_LENGTH else text[: MAX_SHOWN_LENGTH - 1] + "…"


def _show(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if is_array(value):
        return "[" + ", ".join(_show(v) for v in value) + "]"  # type: ignore[union-attr]
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_show(v)}" for k, v in value.items()) + "}"
    return to_text(value)


def explain(tmpl_text: str, env: Env) -> list[tuple[str, str]]:
    """For a failed condition: (source text, shown value) of its interesting sub-expressions.

    Each source text appears once, in source order; a part whose value reads exactly like
    its source (nothing learned) is left out. A sub-expression that fails to evaluate is
    shown as `<error: message>`, since a short-circuit may have skipped it in the real run.
    """
    parsed = parse_template(tmpl_text)
    candidates: list[tuple[int, int, object, int]] = []
    for part in parsed.parts:
        if isinstance(part, ast.RefPart):
            candidates.append((part.base + part.ref.start, part.base + part.ref.end, part.ref, part.base))
        elif isinstance(part, ast.ExprPart):
            for node in _shown_nodes(part.expr):
                candidates.append((part.base + node.start, part.base + node.end, node, part.base))
    candidates.sort(key=lambda c: (c[0], -c[1]))
    seen: set[str] = set()
    lines: list[tuple[str, str]] = []
    for start, end, node, base in candidates:
        source = tmpl_text[start:end]
        if source in seen:
            continue
        seen.add(source)
        try:
            # A secret, or a value computed from one, is named by its placeholder.
            if isinstance(node, (ast.PathRef, ast.ProtocolRef)):
                shown = show(taint.placeholders(resolve_path(node, env, base=base)))
            else:
                shown = show(taint.placeholders(evaluate(node, env, base=base)))
        except StepError as exc:
            shown = f"<error: {exc.message}>"
        if shown != source:
            lines.append((source, shown))
    return lines
