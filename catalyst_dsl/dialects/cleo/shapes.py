"""The generic shapes a cantbook's reading is made of: allowed keys, mappings, texts, lists
of strings, booleans, enums and string maps, each mistake reported at its place.
"""

from __future__ import annotations

from typing import Iterator, Optional

from catalyst_dsl.diagnostics.ids import INVALID_VALUE, MISSING_KEY, UNKNOWN_KEY, WRONG_TYPE
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.cleo.vocabulary import MISPLACED
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


class Shapes:
    """Reading of one cantbook's values into Python values, reporting into the sink."""

    def __init__(self, source: SourceFile, sink: DiagnosticSink) -> None:
        self.source = source
        self.sink = sink

    def keys(
        self, node: YMap, allowed, where: str, *, misplaced: dict[str, str] | None = None
    ) -> dict[str, tuple[YScalar, YNode]]:
        """The mapping's known keys; every other key reported with the fix (CLE-06)."""
        found = {}
        for key, value in node.pairs:
            if key.text in allowed:
                found[key.text] = (key, value)
                continue
            belongs = (misplaced or {}).get(key.text) or MISPLACED.get(key.text)
            hint = (
                f"did you mean '{belongs}'?"
                if belongs
                else suggest(key.text, allowed) or f"the keys {where} are: {', '.join(allowed)}"
            )
            self.sink.report(UNKNOWN_KEY, f"unknown key '{key.text}' {where}", key.span, help=hint)
        return found

    def mapping(self, entry, what: str) -> Optional[YMap]:
        if entry is None:
            return None
        key, value = entry
        if not isinstance(value, YMap):
            self.sink.report(
                WRONG_TYPE,
                f"`{what}` is a mapping, not {kind_of(value)}",
                head_span(value),
                help=f"write the keys of `{what}` indented below it",
            )
            return None
        return value

    def mappings(self, entry, what: str, one: str, *, help: str, item_help: str) -> Iterator[YMap]:
        """The mappings listed under `what` (`one` names an item: "an input"). A value that
        is no list is reported with `help`, an item that is no mapping with `item_help`, and
        both are left out. Items are given one by one, so that what their reader reports
        comes in the order of the file."""
        if entry is None:
            return
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(WRONG_TYPE, f"`{what}` is a list, not {kind_of(value)}", head_span(value), help=help)
            return
        for item in value.items:
            if isinstance(item, YMap):
                yield item
            else:
                self.sink.report(
                    WRONG_TYPE, f"{one} is a mapping, not {kind_of(item)}", head_span(item), help=item_help
                )

    def text(self, entry, what: str, *, required_in: YMap | None = None, non_empty: bool = True) -> Optional[str]:
        if entry is None:
            if required_in is not None:
                self.sink.report(
                    MISSING_KEY, f"the required key '{what}' is missing", head_span(required_in), help=f"add `{what}:`"
                )
            return None
        _, value = entry
        if not (isinstance(value, YScalar) and isinstance(value.value, str)):
            self.sink.report(
                WRONG_TYPE,
                f"`{what}` is a string, not {kind_of(value)}",
                head_span(value),
                help=f"quote it: {what}: \"...\""
                if isinstance(value, YScalar) and value.value is not None
                else f"give `{what}` a text value",
            )
            return None
        if non_empty and not value.value.strip():
            self.sink.report(WRONG_TYPE, f"`{what}` is empty", value.span, help=f"give `{what}` a value")
            return None
        return value.value

    def strings(self, entry, what: str) -> list[tuple[str, YScalar]]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(
                WRONG_TYPE,
                f"`{what}` is a list of strings, not {kind_of(value)}",
                head_span(value),
                help=f"write `{what}: [a, b]`",
            )
            return []
        result = []
        for item in value.items:
            if isinstance(item, YScalar) and isinstance(item.value, str):
                result.append((item.value, item))
            else:
                self.sink.report(
                    WRONG_TYPE,
                    f"an entry of `{what}` is {kind_of(item)}, not a string",
                    head_span(item),
                    help="quote it",
                )
        return result

    def boolean(self, entry, what: str) -> Optional[bool]:
        if entry is None:
            return None
        _, value = entry
        if isinstance(value, YScalar) and isinstance(value.value, bool):
            return value.value
        self.sink.report(
            WRONG_TYPE,
            f"`{what}` is true or false, not {kind_of(value)}",
            head_span(value),
            help=f"write `{what}: true` or `{what}: false`",
        )
        return None

    def enum(self, entry, what: str, allowed) -> Optional[str]:
        text = self.text(entry, what)
        if text is None:
            return None
        if text not in allowed:
            hint = suggest(text, allowed) or suggest(text.lower(), allowed)
            self.sink.report(
                INVALID_VALUE,
                f"`{what}` is '{text}', which is not one of {', '.join(allowed)}",
                entry[1].span,
                help=hint or f"use one of {', '.join(allowed)}",
            )
            return None
        return text

    def string_map(self, entry, what: str) -> list[tuple[str, YScalar]]:
        value = self.mapping(entry, what)
        result = []
        for key, item in value.pairs if value is not None else ():
            if isinstance(item, YScalar) and isinstance(item.value, str):
                result.append((key.text, item))
            else:
                self.sink.report(
                    WRONG_TYPE,
                    f"'{key.text}' of `{what}` is a string, not {kind_of(item)}",
                    head_span(item),
                    help="quote it",
                )
        return result
