"""Expressions typed: the `${{ }}` language's literals, names, members, operators and calls.

A mixin of the reference checker: the expression types read the names in scope through
the checker's `resolve_name` and `reference`, and the checker's subclasses (the language
server's recorder) see every node through `expr`, so they stay methods of one object.
Also the protocol paths (`xe://...`) a template or a plain string may name (C106).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.diagnostics.ids import (
    MEMBER_OF_NON_OBJECT,
    NOT_ALLOWED_CALL,
    NO_SUCH_MEMBER,
    OPERAND_TYPE,
    PROTOCOL_PATH,
)
from catalyst_dsl.diagnostics.suggest import suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.paths.protocols import leaves_base, literal_leaving_base
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.source import Span

if TYPE_CHECKING:
    from catalyst_dsl.checks.references.scopes import Scope
    from catalyst_dsl.diagnostics.model import DiagnosticSink


class Part:
    """The template part being checked: turns expression offsets into file spans."""

    def __init__(self, tmpl: ir.Tmpl, base: int) -> None:
        self.tmpl = tmpl
        self.base = base

    def span(self, node) -> Span | None:
        if self.tmpl.smap is None:
            return self.tmpl.span
        return self.tmpl.smap.span(self.base + node.start, self.base + node.end)


class _InputsMark(t.AnyT):
    pass


#: What `inputs` resolves to when no name hides it: its members are the declared inputs.
INPUTS_MARK = _InputsMark()


class ExpressionTyping:
    """The types of expressions, and the mistakes in them (C106, C107, C504-C506)."""

    sink: DiagnosticSink

    def member(self, current: t.Type, segment: str, path: str, span: Span | None) -> t.Type | None:
        if t.is_any(current):
            return t.ANY
        options = [o for o in t.options_of(current) if not isinstance(o, t.NullT)]
        if not options:
            self.sink.report(
                MEMBER_OF_NON_OBJECT,
                f"'{path}' is null; it has no member '{segment}'",
                span,
                help=f"'{path}' is always null (a step that gives no result, or a value set to null): "
                f"read '{segment}' from the value that holds it",
            )
            return None
        found: list[t.Type] = []
        #: A text, list, number or truth value the value may be that has no such member (a
        #: name set to a text, then to a number): there it reads as undefined, and the run
        #: fails at the next member read. An object without it is left to the run, as a
        #: value that may be null is.
        refused: t.Type | None = None
        for option in options:
            got = _member_of(option, segment)
            if got is not None:
                found.append(got)
            elif not isinstance(option, t.ObjectT):
                refused = refused or option
        if found and refused is not None:
            self.sink.report(
                MEMBER_OF_NON_OBJECT,
                f"'{path}' may be {t.a_type(refused)}, which has no member '{segment}'",
                span,
                help="give the value one type on every path (convert it where it is set), or test its type first",
            )
        if found:
            return t.join(found)
        if len(options) == 1 and isinstance(options[0], t.ObjectT):
            names = options[0].names()
            self.sink.report(
                NO_SUCH_MEMBER,
                f"'{path}' has no member '{segment}'",
                span,
                help=suggest(segment, names) or (f"its members are: {', '.join(names)}" if names else None),
            )
            return None
        self.sink.report(
            MEMBER_OF_NON_OBJECT,
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
                PROTOCOL_PATH,
                f"unknown path protocol '{protocol}://'",
                span,
                help=suggest(protocol, B.PROTOCOLS, prefix="did you mean ")
                or f"protocols are: {', '.join(p + '://' for p in B.PROTOCOLS)}",
            )
            return
        how = leaves_base(path)
        if how == "absolute":
            self.sink.report(
                PROTOCOL_PATH,
                f"'{protocol}://{path}' is an absolute path; protocol paths are relative to their base",
                span,
                help=f"drop the leading '/': {protocol}://{path.lstrip('/')}",
            )
        elif how == "climbs":
            self.sink.report(
                PROTOCOL_PATH,
                f"'{protocol}://{path}' climbs out of its base with '..'",
                span,
                help="name the file inside the protocol's base directory",
            )

    def expr(self, node, part: Part, scope: Scope) -> t.Type:
        if isinstance(node, ast.Literal):
            return {"number": t.NUMBER, "string": t.STRING, "boolean": t.BOOLEAN}.get(node.kind, t.NULL)
        if isinstance(node, ast.ArrayExpr):
            return t.ArrayT(t.join(self.expr(i, part, scope) for i in node.items) if node.items else t.ANY)
        if isinstance(node, ast.ObjectExpr):
            return t.ObjectT(tuple((e.key, t.Field(self.expr(e.value, part, scope), True)) for e in node.entries), None)
        if isinstance(node, ast.Name):
            if node.name in B.NAMESPACES or node.name in B.FUNCTIONS:
                self.sink.report(
                    NOT_ALLOWED_CALL,
                    f"'{node.name}' can only be called",
                    part.span(node),
                    help=f"call it: {node.name}(...)"
                    if node.name in B.FUNCTIONS
                    else f"use one of its functions: {', '.join(node.name + '.' + f for f in B.NAMESPACES[node.name])}",
                )
                return t.ANY
            found = self.resolve_name(node.name, part.span(node), scope)
            return t.ANY if found is None or found is INPUTS_MARK else found
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

    def _arithmetic(self, operand: t.Type, node, op: str, part: Part) -> None:
        if t.is_any(operand):
            return
        bad = [o for o in t.options_of(operand) if not isinstance(o, (t.NumberT, t.NullT, t.AnyT))]
        if bad and len(bad) == len(t.options_of(operand)):
            self.sink.report(
                OPERAND_TYPE,
                f"'{op}' needs numbers, but this is {t.a_type(operand)}",
                part.span(node),
                help="convert it first with Number(...)" if t.is_stringish(bad[0]) else None,
            )

    def call(self, node: ast.Call, part: Part, scope: Scope) -> t.Type:
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
                NOT_ALLOWED_CALL,
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
                    NOT_ALLOWED_CALL,
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
        self.sink.report(
            NOT_ALLOWED_CALL, "only named functions and methods can be called in expressions", part.span(callee)
        )
        return t.ANY

    def method(self, receiver: t.Type, callee: ast.Member, part: Part) -> t.Type:
        name = callee.name
        results: list[t.Type] = []
        #: A text, list, number or truth value the value may be that has no such method (a
        #: name one branch set to a number and another to a text): the run fails on that path.
        refused: t.Type | None = None
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
            if got is None and (table or isinstance(option, t.BooleanT)):  # a truth value has no methods
                refused = refused or option
            if got == "SAME":
                results.append(option)
            elif got == "ITEM":
                results.append(option.item)  # type: ignore[union-attr]
            elif got is not None:
                results.append(got)  # type: ignore[arg-type]
        if results and refused is not None:
            self.sink.report(
                NOT_ALLOWED_CALL,
                f"the method '{name}' is not allowed on {t.a_type(refused)}, which this value may be",
                part.span(callee),
                help="give the value one type on every path (convert it where it is set), or test its type first",
            )
            return t.join(results)
        if results:
            return t.join(results)
        known = sorted(set(B.STRING_METHODS) | set(B.ARRAY_METHODS) | set(B.NUMBER_METHODS))
        what = "this value" if t.is_any(receiver) else t.a_type(receiver)
        self.sink.report(
            NOT_ALLOWED_CALL,
            f"the method '{name}' is not allowed on {what}",
            part.span(callee),
            help=suggest(name, known) or "see the list of allowed methods in the docs",
        )
        return t.ANY

    def get_call(self, node: ast.Call, part: Part, scope: Scope) -> t.Type:
        if len(node.args) != 1:
            self.sink.report(
                NOT_ALLOWED_CALL,
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
