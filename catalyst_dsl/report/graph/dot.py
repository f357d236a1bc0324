"""A graph as Graphviz DOT text, for those who lay it out with `dot` themselves.

Labels are quoted strings in which backslashes and quotes are escaped, `&` is an entity
(Graphviz reads entities in labels) and every line break is a space, so no label can end
its string, start a statement or be drawn as other text than it is.
"""

from __future__ import annotations

from catalyst_dsl.report.graph.model import Graph, shown

_SHAPES = {
    "start": "oval",
    "end": "oval",
    "decision": "diamond",
    "loop": "trapezium",
    "fork": "box3d",
    "join": "circle",
    "merge": "point",
    "checkpoint": "hexagon",
    "call": "component",
    "try": "cds",
}
_STYLES = {
    "back": 'style=dashed, constraint=false',
    "error": 'style=dashed, color="#b91c1c"',
    "cycle": 'penwidth=2, color="#b91c1c"',
}


def quoted(text: str) -> str:
    text = shown(text)
    # Graphviz decodes HTML entities in any label (`&lt;` is drawn `<`): `&` is written as one.
    return '"' + text.replace("&", "&amp;").replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(graph: Graph) -> str:
    lines = [f"digraph {quoted(graph.title)} {{", "    node [shape=box, style=rounded, fontname=sans];"]
    for node in graph.nodes:
        attrs = [f"label={quoted(node.label)}", f"shape={_SHAPES.get(node.kind, 'box')}"]
        if node.marked:
            attrs.append('color="#b91c1c", fontcolor="#7f1d1d"')
        if node.kind in ("elided", "missing"):
            attrs.append('style="rounded,dashed"')
        lines.append(f"    {node.id} [{', '.join(attrs)}];")
    for link in graph.links:
        attrs = [f"label={quoted(link.label)}"] if link.label else []
        if link.style in _STYLES:
            attrs.append(_STYLES[link.style])
        tail = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"    {link.source} -> {link.target}{tail};")
    lines.append("}")
    return "\n".join(lines) + "\n"
