"""Lowering YAML values against an expected type: literals, templates and collections.

This is the one place that turns a YAML node into an IR value, reports literal type
mistakes and YAML 1.1 readings, and parses templates (reporting their syntax errors
at the right column). Step lists are lowered by the dialect through `lower_steps`.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from typing import Callable, Sequence

from catalyst_dsl.diagnostics.ids import (
    INVALID_VALUE,
    MISSING_KEY,
    TIMEOUT_MILLISECONDS,
    UNKNOWN_KEY,
    WRONG_TYPE,
    YAML11_VALUE,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.diagnostics.suggest import suggest  # noqa: F401 (imported from here by the dialects and checks)
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl._internal.lazy_module import lazy_module
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.expr.templates import might_be_template, parse_template
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


#: Imported at the first plain string lowered: a run whose check was replayed from the
#: cache lowers nothing, and yaml_schema (PyYAML with it) costs it about 2 ms.
_yaml_schema = lazy_module("catalyst_dsl.syntax.yaml_schema")


#: The config, entries, templates and literals of every step are made as `_new(Cls)` with
#: `Cls.__init__` called as a function, not by calling the class: a class call copies the
#: keyword arguments (their spans) into a dict and out again (CPython 3.11).
_new = object.__new__
#: The expected types whose values are not lowered by the node's kind: steps, input
#: declarations, and unions (which pick the option the node fits).
_LOWERED_APART = (t.StepsT, t.InputsT, t.UnionT)


def kind_of(node: YNode) -> str:
    if isinstance(node, YScalar):
        v = node.value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return f"the boolean {node.text}"
        if isinstance(v, (int, float)):
            return f"the number {node.text}"
        return f"the string '{_short(node.text)}'"
    return "a list" if isinstance(node, YSeq) else "a mapping"


def _reading_here(node: YScalar) -> str:
    return f"the text '{node.text}'" if isinstance(node.value, str) else f"the number {node.value}"


def _short(text: str, width: int = 40) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= width else text[: width - 1] + "…"


def _is_number_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class ValueLowerer:
    """Lowers values for one file; `lower_steps` is supplied by the dialect."""

    def __init__(
        self,
        sink: DiagnosticSink,
        lower_steps: Callable[[YNode], ir.StepsV],
        lower_inputs: Callable[[YNode], ir.InputsV],
    ) -> None:
        self.sink = sink
        self.lower_steps = lower_steps
        self.lower_inputs = lower_inputs

    # -- scalars ---------------------------------------------------------------------------

    def template(
        self, node: YScalar, expected: t.Type | None, literal: Sequence[tuple[int, int]] = ()
    ) -> ir.Tmpl | None:
        """The template `node` holds, or None when it holds none. `literal` are ranges of
        its text (Markdown code) whose braces are text, not templates."""
        text = node.text
        if not might_be_template(text):
            return None
        parsed = parse_template(_blanked(text, literal) if literal else text)
        has_templates = parsed.has_templates
        if not parsed.errors and not has_templates:
            return None
        smap = ScalarMap(node)
        for error in parsed.errors:
            self.sink.report(error.code, error.message, smap.span(error.start, error.end), help=error.help)
        if not has_templates:
            return None
        parts = _with_literal_text(parsed.parts, text, literal) if literal else parsed.parts
        tmpl = _new(ir.Tmpl)  # see `_new`
        ir.Tmpl.__init__(tmpl, text, parts, span=node.span, smap=smap, expected=expected)
        return tmpl

    def scalar(self, node: YScalar, expected: t.Type, where: str) -> ir.Value:
        value = node.value
        if isinstance(value, str):
            tmpl = self.template(node, expected)
            if tmpl is not None:
                return tmpl
            escaped = _unescaped(node)
            if escaped is not None:
                return ir.Lit(escaped, span=node.span)
            if node.is_plain and isinstance(expected, (t.StringT, t.AnyT, t.EnumT)):
                self._yaml11(node)
        elif node.is_plain and isinstance(expected, (t.StringT, t.EnumT)) and value is not None:
            # A string was expected: take the text as written, and say why it matters.
            self._yaml11(node)
            return ir.Lit(node.text, span=node.span)
        elif node.is_plain and isinstance(expected, t.AnyT):
            self._yaml11(node)
        self.check_literal(node, expected, where)
        lit = _new(ir.Lit)  # see `_new`
        ir.Lit.__init__(lit, value, span=node.span)
        return lit

    def _yaml11(self, node: YScalar) -> None:
        schema = _yaml_schema()
        if len(node.text) > schema.MAX_NUMBER_DIGITS:
            return  # a number that long is C016 already, whatever a tool reads it as
        reading = schema.yaml11_reading(node)
        if reading is None:
            return
        self.sink.report(
            YAML11_VALUE,
            f"{node.text} is read here as {_reading_here(node)}, but YAML 1.1 tools read it as {reading}",
            node.span,
            help=f'quote it to make the meaning plain to every tool: "{node.text}"',
        )

    def check_literal(self, node: YScalar, expected: t.Type, where: str) -> None:
        if node.value is None:
            return  # a null where a value is required is reported as missing by the caller
        actual = t.type_of_value(node.value)
        if isinstance(node.value, float) and node.value != node.value:
            actual = t.NUMBER
        if isinstance(expected, t.EnumT) and isinstance(node.value, str):
            if node.value not in expected.values:
                hint = suggest(node.value, expected.values)
                self.sink.report(
                    INVALID_VALUE,
                    f"{where} must be one of {', '.join(expected.values)}, not '{node.text}'",
                    node.span,
                    help=hint or f"use one of: {', '.join(expected.values)}",
                )
            return
        if isinstance(expected, t.DurationT):
            if parse_duration(node.value) is None:
                self.sink.report(
                    WRONG_TYPE,
                    f"{where} is not a duration: '{node.text}'",
                    node.span,
                    help="write seconds as a number, or a number with a unit: 500ms, 30s, 5m, 1h",
                )
            else:
                warn_milliseconds(self.sink, node, where)
            return
        if t.assignable(actual, expected):
            return
        help_text = None
        if isinstance(expected, t.NumberT) and isinstance(node.value, str) and _is_number_text(node.value):
            help_text = f"remove the quotes: {node.value}"
        elif isinstance(expected, t.BooleanT) and isinstance(node.value, str):
            help_text = "write true or false" + (
                " (yes/no/on/off are text here)" if node.text.lower() in ("yes", "no", "on", "off", "y", "n") else ""
            )
        elif isinstance(expected, t.ArrayT):
            help_text = f"write a list: [{node.text}]"
        self.sink.report(
            WRONG_TYPE, f"{where} expects {t.a_type(expected)}, got {kind_of(node)}", node.span, help=help_text
        )

    # -- any node --------------------------------------------------------------------------

    def value(self, node: YNode | None, expected: t.Type, where: str) -> ir.Value:
        if node is None:
            return ir.Lit(None)
        if isinstance(expected, _LOWERED_APART):  # rarely: one question for most values
            if isinstance(expected, t.StepsT):
                return self.lower_steps(node)
            if isinstance(expected, t.InputsT):
                return self.lower_inputs(node)
            return self._union(node, expected, where)
        if isinstance(node, YScalar):
            return self.scalar(node, expected, where)
        if isinstance(node, YSeq):
            if isinstance(expected, t.ArrayT):
                item = expected.item
                return ir.ListV(tuple(self.value(n, item, f"an item of {where}") for n in node.items), span=node.span)
            if not isinstance(expected, t.AnyT):
                self.sink.report(WRONG_TYPE, f"{where} expects {t.a_type(expected)}, got a list", head_span(node))
            return ir.ListV(tuple(self.value(n, t.ANY, where) for n in node.items), span=node.span)
        # mapping
        if isinstance(expected, t.ObjectT):
            return self.mapping(node, expected, where)
        if not isinstance(expected, t.AnyT):
            self.sink.report(WRONG_TYPE, f"{where} expects {t.a_type(expected)}, got a mapping", head_span(node))
        return ir.MapV(
            tuple(ir.Entry(k.text, self.value(v, t.ANY, f"'{k.text}'"), span=k.span) for k, v in node.pairs),
            span=node.span,
        )

    def _union(self, node: YNode, expected: t.UnionT, where: str) -> ir.Value:
        for option in expected.options:
            if isinstance(node, YSeq) and isinstance(option, t.ArrayT):
                return self.value(node, option, where)
            if isinstance(node, YMap) and isinstance(option, t.ObjectT):
                return self.value(node, option, where)
        if isinstance(node, YScalar):
            tmpl = self.template(node, expected) if isinstance(node.value, str) else None
            if tmpl is not None:
                return tmpl
            escaped = _unescaped(node) if isinstance(node.value, str) else None
            if escaped is not None:
                return ir.Lit(escaped, span=node.span)
            actual = t.type_of_value(node.value)
            if node.value is not None and not t.assignable(actual, expected):
                self.sink.report(WRONG_TYPE, f"{where} expects {t.a_type(expected)}, got {kind_of(node)}", node.span)
            elif isinstance(node.value, str) and all(
                isinstance(o, (t.EnumT, t.ArrayT, t.ObjectT, t.NumberT, t.BooleanT, t.NullT)) for o in expected.options
            ):
                # The only texts the union takes are its enums' values (`policy: human`).
                self.check_literal(
                    node, t.EnumT(tuple(v for o in expected.options if isinstance(o, t.EnumT) for v in o.values)), where
                )
            return ir.Lit(node.value, span=node.span)
        self.sink.report(WRONG_TYPE, f"{where} expects {t.a_type(expected)}, got {kind_of(node)}", head_span(node))
        return self.value(node, t.ANY, where)

    def mapping(
        self, node: YMap, schema: t.ObjectT, where: str, *, extra_allowed=(), suggestions=(), pairs=None
    ) -> ir.MapV:
        """`pairs`: the pairs to read in place of `node`'s, which then gives the positions
        only (a step's config: its action's value and the keys written beside it)."""
        entries = []
        for key, value in node.pairs if pairs is None else pairs:
            field = schema.field(key.text)
            if field is None and not schema.open:
                if key.text in extra_allowed:
                    continue
                hint = suggest(key.text, [*schema.names(), *suggestions])
                self.sink.report(
                    UNKNOWN_KEY,
                    f"unknown key '{key.text}' in {where}",
                    key.span,
                    help=hint or (f"allowed keys: {', '.join(schema.names())}" if schema.names() else None),
                )
                # Not config, but its templates are still read, so their own mistakes show.
                self.value(value, t.ANY, f"'{key.text}'")
                continue
            ftype = field.type if field is not None else schema.rest or t.ANY
            # Keys repeat in every step of every playbook: one string each for the library.
            entry = _new(ir.Entry)  # see `_new`
            ir.Entry.__init__(entry, sys.intern(key.text), self.value(value, ftype, f"'{key.text}'"), span=key.span)
            entries.append(entry)
        self.require(
            node, schema, where, {e.key for e in entries if not (isinstance(e.value, ir.Lit) and e.value.value is None)}
        )
        config = _new(ir.MapV)  # see `_new`
        ir.MapV.__init__(config, tuple(entries), span=node.span)
        return config

    def require(self, node: YMap, schema: t.ObjectT, where: str, present: set[str]) -> None:
        for name, field in schema.fields:
            if field.required and name not in present:
                self.sink.report(
                    MISSING_KEY,
                    f"{where} is missing the required key '{name}'",
                    head_span(node),
                    help=f"add '{name}:'" + (f" ({field.doc})" if field.doc else ""),
                )


def _unescaped(node: YScalar) -> str | None:
    """The text of a string whose only template syntax is escapes (`\\{{`): the escapes
    removed, as a template would render it. None when there is nothing to unescape."""
    if not might_be_template(node.text):
        return None
    parsed = parse_template(node.text)
    if parsed.errors or parsed.has_templates:
        return None
    text = "".join(part.text for part in parsed.parts)
    return text if text != node.text else None


#: Durations of this many seconds or more are almost always milliseconds from another engine.
SUSPICIOUS_SECONDS = 1000


def warn_milliseconds(sink: DiagnosticSink, node: YScalar, where: str) -> None:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < SUSPICIOUS_SECONDS:
        return
    sink.report(
        TIMEOUT_MILLISECONDS,
        f"{where} of {node.text} is {_human(float(value))}: a bare number counts seconds",
        node.span,
        help=f"if milliseconds were meant, write {node.text}ms"
        + (f" (or {int(value) // 1000}s)" if value % 1000 == 0 else ""),
    )


def _human(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    if seconds >= 60:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds:g} seconds"


def parse_duration(value: object) -> float | None:
    """Seconds from a number or a string such as 500ms, 30s, 5m, 1h."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value) if value >= 0 else None
        except OverflowError:
            return None  # more seconds than a float holds: not a duration
    if not isinstance(value, str):
        return None
    text = value.strip()
    for unit, scale in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(unit):
            number = text[: -len(unit)].strip()
            try:
                amount = float(number)
            except ValueError:
                continue
            return amount * scale if amount >= 0 else None
    try:
        amount = float(text)
    except ValueError:
        return None
    return amount if amount >= 0 else None


def _blanked(text: str, ranges: Sequence[tuple[int, int]]) -> str:
    """`text` with each range replaced by spaces (newlines kept): offsets stay the same, and
    nothing in a range can open or close a template."""
    chars = list(text)
    for start, end in ranges:
        for i in range(start, min(end, len(chars))):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _with_literal_text(parts, text: str, ranges: Sequence[tuple[int, int]]):
    """The parts of a blanked template with the literal ranges' own text put back (as
    written: escapes mean nothing in code), the rest of each text part as parsed."""
    from catalyst_dsl.syntax.expr import nodes as ast

    ranges = sorted(ranges)
    ends = [end for _, end in ranges]
    restored = []
    for part in parts:
        if not isinstance(part, ast.TextPart):
            restored.append(part)
            continue
        pieces, at = [], part.start
        # Only the ranges that end after the part starts, up to the first that starts after it.
        for start, end in ranges[bisect_right(ends, part.start) :]:
            if start >= part.end:
                break
            start, end = max(start, part.start), min(end, part.end)
            if start >= end:
                continue
            pieces.append(_plain_text(text[at:start]))
            pieces.append(text[start:end])
            at = end
        pieces.append(_plain_text(text[at : part.end]))
        restored.append(ast.TextPart("".join(pieces), start=part.start, end=part.end))
    return tuple(restored)


def _plain_text(raw: str) -> str:
    """Text between templates as a template reads it (escaped braces unescaped). A piece
    the blanked template read as text may hold a template of its own when an unclosed
    `{{` or `${{` before the code swallowed it: that part is text as written."""
    from catalyst_dsl.syntax.expr import nodes as ast

    parts = parse_template(raw).parts if raw else ()
    return "".join(p.text if isinstance(p, ast.TextPart) else raw[p.start : p.end] for p in parts)
