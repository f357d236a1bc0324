"""Step checks: a step's `requires:` and `ensures:` lowered into `ir.Checks`.

Either key holds a list of predicates, or a mapping `{code, checks}` when a failing
predicate should raise another error code than the default (a cleo contract raises
ContractViolation). A predicate is `- name: argument`, a `${{ }}` expression, or one of the
combinators `all: [...]`, `any: [...]` and `not: predicate`; next to its name a predicate
may carry its own `code:`, raised when that predicate is the one that fails.
Foreign dialects build the same `ir.Checks` directly (docs/checks.md, "For dialect authors").
"""

from __future__ import annotations

from catalyst_dsl.diagnostics.ids import (
    CHECK_FORM,
    CHECK_PATTERN,
    ERROR_CODE_CASE,
    MISSING_KEY,
    UNKNOWN_CHECK,
    UNKNOWN_KEY,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.values import ValueLowerer, kind_of, suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.expr.templates import might_be_template, parse_template
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span

#: The error code a failing check raises unless the playbook names another.
DEFAULT_CODES = {"requires": "PreconditionFailed", "ensures": "PostconditionFailed"}
#: Each predicate and its operands; `file-exists` also takes its path alone.
PREDICATES: dict[str, t.ObjectT] = {
    "file-exists": t.obj(path=t.req(t.STRING, "the file's path")),
    "file-contains": t.obj(
        path=t.req(t.STRING, "the file's path"), regex=t.req(t.STRING, "an RE2 pattern searched in the file")
    ),
    "command-output": t.obj(
        argv=t.req(t.ArrayT(t.STRING), "the program and its arguments"),
        expect=t.opt(t.STRING, "the exact output, trailing white space aside"),
        match=t.opt(t.STRING, "an RE2 pattern searched in the output"),
    ),
    "json-schema": t.obj(
        value=t.req(t.ANY, "the value to check, usually a ${{ }} expression"),
        schema=t.req(t.ObjectT((), t.ANY), "a JSON Schema (2020-12) the value must match"),
    ),
}
#: The operand a predicate written with a single value fills.
PRIMARY = {"file-exists": "path"}
#: Operands that are regular expressions, checked when written out (C612).
PATTERNS = {"file-contains": "regex", "command-output": "match"}
#: Predicates made of other predicates: all of a list, any of a list, the opposite of one.
COMBINATORS = ("all", "any", "not")
FORM = (
    "a check is `- file-exists: path`, `- file-contains: {path, regex}`, `- command-output: {argv, expect or match}`, "
    "`- json-schema: {value, schema}`, a `${{ expression }}`, or `all:`/`any:` of a list of checks or `not:` of one"
)
_PASCAL = LazyPattern(r"^[A-Z][A-Za-z0-9]*$")


def lower_checks(key: YScalar, node: YNode, values: ValueLowerer, sink: DiagnosticSink) -> ir.Checks:
    """The checks written under `key` (`requires` or `ensures`)."""
    where = f"'{key.text}'"
    code = DEFAULT_CODES[key.text]
    items: YNode | None = node
    if isinstance(node, YMap):
        items = None
        for k, v in node.pairs:
            if k.text == "code":
                if isinstance(v, YScalar) and isinstance(v.value, str) and v.value:
                    code = v.value
                if not (isinstance(v, YScalar) and isinstance(v.value, str) and _PASCAL.match(v.value)):
                    sink.report(
                        ERROR_CODE_CASE,
                        f"the error code '{getattr(v, 'text', kind_of(v))}' of {where} is not PascalCase",
                        head_span(v),
                        help=f"error codes look like ContractViolation; leave `code` out for {DEFAULT_CODES[key.text]}",
                    )
            elif k.text == "checks":
                items = v
            else:
                sink.report(
                    UNKNOWN_KEY,
                    f"unknown key '{k.text}' in {where}",
                    k.span,
                    help=suggest(k.text, ("code", "checks")) or "the keys are `code` and `checks`",
                )
        if items is None:
            sink.report(
                MISSING_KEY,
                f"{where} is missing the required key 'checks'",
                head_span(node),
                help="list the predicates under `checks:`",
            )
            return ir.Checks((), code, span=node.span)
    if not isinstance(items, YSeq):
        sink.report(CHECK_FORM, f"{where} expects a list of checks, got {kind_of(items)}", head_span(items), help=FORM)
        return ir.Checks((), code, span=node.span)
    checks = [check for item in items.items if (check := _check(item, where, values, sink)) is not None]
    return ir.Checks(tuple(checks), code, span=node.span)


def _check(node: YNode, where: str, values: ValueLowerer, sink: DiagnosticSink) -> ir.Check | None:
    if isinstance(node, YScalar):
        value = values.template(node, t.BOOLEAN) if isinstance(node.value, str) else None
        if value is not None:
            return ir.Check(
                "expression", ir.MapV((ir.Entry("expression", value, span=node.span),), span=node.span), span=node.span
            )
        if isinstance(node.value, str) and might_be_template(node.value) and parse_template(node.value).errors:
            return None  # a broken template, reported where it breaks
        sink.report(CHECK_FORM, f"a check of {where} is {kind_of(node)}, not a predicate", head_span(node), help=FORM)
        return None
    code = None
    pairs = list(node.pairs) if isinstance(node, YMap) else []
    for index, (k, v) in enumerate(pairs):
        if k.text == "code" and len(pairs) == 2:
            code = _code(v, sink)
            del pairs[index]
            break
    if isinstance(node, YMap) and len(pairs) > 1:
        extra = pairs[-1][0]
        sink.report(
            CHECK_FORM,
            f"a check of {where} names one predicate (and may have `code:`), but this one also has '{extra.text}'",
            extra.span,
            help="write each predicate as an item of its own, or combine them with `all:` or `any:`",
        )
        return None
    if not isinstance(node, YMap) or len(pairs) != 1:
        sink.report(
            CHECK_FORM,
            f"a check of {where} names one predicate, got {kind_of(node)}",
            head_span(node),
            help=FORM + "; besides its predicate a check may only have `code:`",
        )
        return None
    ((key, arg),) = pairs
    if key.text in COMBINATORS:
        return _combined(key, arg, code, node, where, values, sink)
    schema = PREDICATES.get(key.text)
    if schema is None:
        sink.report(
            UNKNOWN_CHECK,
            f"unknown check '{key.text}' in {where}",
            key.span,
            help=suggest(key.text, (*PREDICATES, *COMBINATORS))
            or f"the checks are: {', '.join(PREDICATES)}, all, any, not, or a ${{{{ expression }}}}",
        )
        return None
    name = f"the {key.text} check"
    if isinstance(arg, YMap):
        args = values.mapping(arg, schema, name)
    elif key.text in PRIMARY and isinstance(arg, YScalar) and arg.value is not None:
        args = ir.MapV((ir.Entry(PRIMARY[key.text], values.value(arg, t.STRING, name), span=key.span),), span=arg.span)
    else:
        sink.report(
            CHECK_FORM,
            f"{name} takes a mapping of {', '.join(n for n, _ in schema.fields)}, got {kind_of(arg)}",
            head_span(arg),
            help=FORM,
        )
        return None
    if key.text == "command-output":
        given = [k for k in ("expect", "match") if args.get(k) is not None]
        if len(given) != 1:
            sink.report(
                CHECK_FORM,
                f"{name} needs exactly one of `expect` (the exact output) and `match` (a pattern), got"
                f" {' and '.join(given) or 'neither'}",
                head_span(arg),
                help="write `expect: text` to compare the whole output, or `match: pattern` to search it",
            )
    if key.text == "json-schema":
        _schema_usable(args.get("schema"), name, sink)
    pattern = args.get(PATTERNS.get(key.text, ""))
    if isinstance(pattern, ir.Lit) and isinstance(pattern.value, str):
        from catalyst_dsl.syntax.regex import PatternError, check_pattern

        try:
            check_pattern(pattern.value)
        except PatternError as exc:
            sink.report(
                CHECK_PATTERN,
                f"the pattern of {name} cannot be used: {exc.message}",
                pattern.span,
                help="fix the pattern; remember that YAML double quotes need \\\\ for a backslash",
            )
    return ir.Check(key.text, args, span=node.span, code=code)


def _combined(
    key: YScalar, arg: YNode, code: str | None, node: YMap, where: str, values: ValueLowerer, sink: DiagnosticSink
) -> ir.Check | None:
    """`all: [...]`, `any: [...]` or `not: predicate`."""
    if key.text == "not":
        inner = _check(arg, where, values, sink)
        return None if inner is None else ir.Check("not", ir.MapV(()), span=node.span, checks=(inner,), code=code)
    if not isinstance(arg, YSeq) or not arg.items:
        sink.report(
            CHECK_FORM,
            f"`{key.text}:` in {where} takes a non-empty list of checks, got"
            f" {'an empty list' if isinstance(arg, YSeq) else kind_of(arg)}",
            head_span(arg),
            help=FORM,
        )
        return None
    inner = [c for item in arg.items if (c := _check(item, where, values, sink)) is not None]
    if len(inner) != len(arg.items):
        return None  # a broken part, reported where it breaks
    return ir.Check(key.text, ir.MapV(()), span=node.span, checks=tuple(inner), code=code)


def _code(node: YNode, sink: DiagnosticSink) -> str | None:
    if isinstance(node, YScalar) and isinstance(node.value, str) and _PASCAL.match(node.value):
        return node.value
    sink.report(
        ERROR_CODE_CASE,
        f"the error code '{getattr(node, 'text', kind_of(node))}' of a check is not PascalCase",
        head_span(node),
        help="error codes look like VerdictFailed; leave `code` out for the checks' own code",
    )
    return None


def _schema_usable(schema: ir.Value | None, name: str, sink: DiagnosticSink) -> None:
    """A schema written out (no templates) is checked now: C611 when it is not a usable
    JSON Schema, C612 for a pattern RE2 cannot use."""
    plain = _literal(schema)
    if plain is _NOT_LITERAL or schema is None:
        return
    from catalyst_dsl.json_schemas import SchemaUnusable, check_schema

    try:
        check_schema(plain)
    except SchemaUnusable as error:
        code = CHECK_PATTERN if "pattern" in str(error) else CHECK_FORM
        sink.report(
            code,
            f"the schema of {name} cannot be used: {error}",
            schema.span,
            help="write a JSON Schema (2020-12): `{type: object, required: [title]}`",
        )


_NOT_LITERAL = object()


def _literal(value: ir.Value | None):
    """The plain value an IR value writes out, or _NOT_LITERAL when it holds a template."""
    if isinstance(value, ir.Lit):
        return value.value
    if isinstance(value, ir.ListV):
        items = [_literal(i) for i in value.items]
        return _NOT_LITERAL if any(i is _NOT_LITERAL for i in items) else items
    if isinstance(value, ir.MapV):
        entries = {e.key: _literal(e.value) for e in value.entries}
        return _NOT_LITERAL if any(v is _NOT_LITERAL for v in entries.values()) else entries
    return _NOT_LITERAL
