"""The small readers a kai playbook's reading is made of: allowed keys, texts, enums and
lists of enums, and `{{ }}` written where kai does not replace it.
"""

from __future__ import annotations

from catalyst_dsl.diagnostics.ids import (
    INVALID_VALUE,
    KAI_NOT_INTERPOLATED,
    KAI_REPEATED_VALUE,
    MISSING_KEY,
    UNKNOWN_KEY,
    WRONG_TYPE,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.kai.model import Named
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_nodes import YMap, YScalar, YSeq, head_span


class Pieces:
    """Reading of one kai file's values, each mistake reported into the sink."""

    def __init__(self, source: SourceFile, sink: DiagnosticSink) -> None:
        self.source = source
        self.sink = sink

    def _keys(self, node: YMap, allowed: tuple[str, ...], where: str) -> None:
        for key, _ in node.pairs:
            if key.text not in allowed:
                self.sink.report(
                    UNKNOWN_KEY,
                    f"unknown key '{key.text}' {where}",
                    key.span,
                    help=suggest(key.text, allowed) or f"the keys here are: {', '.join(allowed)}",
                )

    def _text(self, node: YMap, key: str, where: str, *, required: bool) -> Named | None:
        """A string key as kai reads it: the scalar's text as written (`1.0` stays `1.0`)."""
        value = node.get(key)
        if value is None:
            if required:
                self.sink.report(
                    MISSING_KEY, f"{where} is missing the required key '{key}'", head_span(node), help=f"add `{key}:`"
                )
            return None
        if not isinstance(value, YScalar):
            self.sink.report(
                WRONG_TYPE,
                f"'{key}' expects a string, got {kind_of(value)}",
                head_span(value),
                help=f"write one value after `{key}:`",
            )
            return None
        if value.value is None or value.text.strip() == "":
            if required:
                self.sink.report(
                    MISSING_KEY,
                    f"'{key}' of {where} has no value",
                    node.key_node(key).span,
                    help=f"write the {key.replace('_', ' ')} after `{key}:`",
                )
            return None
        return Named(value.text, value.span)

    def _enum(self, node: YMap, key: str, values: tuple[str, ...], what: str, *, required: bool) -> Named | None:
        named = self._text(node, key, "the step", required=required)
        if named is None:
            return None
        if named.text not in values:
            self.sink.report(
                INVALID_VALUE,
                f"{what} '{named.text}' is not one of {', '.join(values)}",
                named.span,
                help=suggest(named.text, values) or f"use one of: {', '.join(values)}",
            )
            return None
        return named

    def _list(self, node: YMap, key: str, values: tuple[str, ...], what: str) -> tuple[Named, ...]:
        value = node.get(key)
        if value is None or (isinstance(value, YScalar) and value.value is None):
            return ()
        if not isinstance(value, YSeq):
            example = f"[{value.text}]" if isinstance(value, YScalar) else "[a, b]"
            self.sink.report(
                WRONG_TYPE,
                f"'{key}' expects a list of {what}s, got {kind_of(value)}",
                head_span(value),
                help=f"write a list: {key}: {example}",
            )
            return ()
        found: list[Named] = []
        seen: dict[str, Named] = {}
        for item in value.items:
            if not isinstance(item, YScalar) or not isinstance(item.value, str):
                self.sink.report(
                    WRONG_TYPE,
                    f"a {what} in '{key}' is a name, not {kind_of(item)}",
                    head_span(item),
                    help=f"use one of: {', '.join(values)}",
                )
                continue
            if item.text not in values:
                self.sink.report(
                    INVALID_VALUE,
                    f"unknown {what} '{item.text}'",
                    item.span,
                    help=suggest(item.text, values) or f"use one of: {', '.join(values)}",
                )
                continue
            named = Named(item.text, item.span)
            if item.text in seen:
                self.sink.report(
                    KAI_REPEATED_VALUE,
                    f"the {what} '{item.text}' is listed twice in '{key}'",
                    item.span,
                    labels=[Label(seen[item.text].span, "first listed here")],
                    help="remove the second one",
                )
                continue
            seen[item.text] = named
            found.append(named)
        return tuple(found)

    def _templates_outside_args(self, node: YMap, where: str, skip: tuple[str, ...] = ("steps", "args")) -> None:
        """KAI-09: kai replaces `{{ }}` only in a step's `args`; anywhere else it stays as written."""
        for key, value in node.pairs:
            if key.text in skip or not isinstance(value, YScalar) or "{{" not in value.text:
                continue
            at = value.text.index("{{")
            self.sink.report(
                KAI_NOT_INTERPOLATED,
                f"kai does not replace {{{{ }}}} in '{key.text}' of {where}: it stays as written",
                ScalarMap(value).span(at, at + 2),
                help="only a step's `args:` is interpolated; write the text as it should appear",
            )
