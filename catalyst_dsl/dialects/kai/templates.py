"""kai's `{{ name }}` references: found in a step's `args` (KAI-19), and IR templates built
from text and references for the lowering.
"""

from __future__ import annotations

from catalyst_dsl.diagnostics.ids import NESTED_TEMPLATE, UNCLOSED_TEMPLATE
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.source import Span
from catalyst_dsl.syntax.yaml_nodes import YScalar


@record
class Reference:
    name: str
    span: Span
    start: int  # in the scalar's text
    end: int


def references(node: YScalar, sink: DiagnosticSink | None) -> list[Reference]:
    """The `{{ name }}` of a kai `args` string; unclosed and nested braces go to `sink` (KAI-19).

    Only `{{` and `}}` are special: `$` or `\\` before them is plain text, as in kai.
    """
    text = node.text
    smap = ScalarMap(node)
    found: list[Reference] = []
    i = text.find("{{")
    while i != -1:
        close = text.find("}}", i + 2)
        nested = text.find("{{", i + 2)
        if close == -1:
            if sink is not None:
                sink.report(UNCLOSED_TEMPLATE, "this {{ is never closed", smap.span(i, i + 2), help="close it with }}")
            break
        if nested != -1 and nested < close:
            if sink is not None:
                sink.report(
                    NESTED_TEMPLATE,
                    "{{ cannot start inside another {{ }}",
                    smap.span(nested, nested + 2),
                    help="close the first reference before opening another",
                )
            i = text.find("{{", close + 2)
            continue
        inner = text[i + 2 : close]
        name = inner.strip()
        lead = len(inner) - len(inner.lstrip())
        at = i + 2 + lead
        found.append(
            Reference(name, smap.span(at, at + max(len(name), 1)) if name else smap.span(i, close + 2), i, close + 2)
        )
        i = text.find("{{", close + 2)
    return found


class Template:
    """Builds an `ir.Tmpl` piece by piece: text, and references to inputs by name."""

    def __init__(self) -> None:
        self.parts: list[ast.Part] = []
        self.text = ""

    def add_text(self, piece: str) -> "Template":
        if piece:
            self.parts.append(ast.TextPart(piece, start=len(self.text), end=len(self.text) + len(piece)))
            self.text += piece
        return self

    def add_ref(self, name: str) -> "Template":
        written = "{{" + name + "}}"
        ref = ast.PathRef(name, (), start=0, end=len(name))
        self.parts.append(
            ast.RefPart(ref, start=len(self.text), end=len(self.text) + len(written), base=len(self.text) + 2)
        )
        self.text += written
        return self

    def done(self, span: Span | None, expected=None) -> ir.Tmpl:
        return ir.Tmpl(self.text, tuple(self.parts), span=span, expected=expected)
