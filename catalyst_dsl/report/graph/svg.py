"""A graph drawn as a standalone SVG picture, laid out by layout.py.

Every label is user text: it is written as XML character data (escaped `&`, `<`, `>`)
or an escaped attribute, never as markup, so a step named `<script>` is drawn as
those characters. The picture uses no script, no external resource and no CSS.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl.report.graph.layout import FONT_SIZE, Box, Layout, layout
from catalyst_dsl.report.graph.model import Graph, Node, shown

#: Each kind's fill and outline.
COLOURS = {
    "start": ("#e5e7eb", "#374151"),
    "end": ("#e5e7eb", "#374151"),
    "step": ("#dbeafe", "#1d4ed8"),
    "decision": ("#fef3c7", "#b45309"),
    "loop": ("#ede9fe", "#6d28d9"),
    "fork": ("#cffafe", "#0e7490"),
    "join": ("#cffafe", "#0e7490"),
    "merge": ("#4b5563", "#4b5563"),
    "checkpoint": ("#fce7f3", "#be185d"),
    "call": ("#dcfce7", "#15803d"),
    "try": ("#ffedd5", "#c2410c"),
    "elided": ("#f3f4f6", "#9ca3af"),
    "playbook": ("#dbeafe", "#1d4ed8"),
    "missing": ("#f3f4f6", "#6b7280"),
}
#: A marked box (on a call cycle, a step a partial flow asks for).
MARKED = ("#fee2e2", "#b91c1c")
_LINK_COLOURS = {"normal": "#4b5563", "back": "#6d28d9", "error": "#b91c1c", "cycle": "#b91c1c"}


def fill_of(node: Node) -> str:
    """The colour a box is filled with (what a look at the picture finds inside it)."""
    return (MARKED if node.marked else COLOURS.get(node.kind, COLOURS["step"]))[0]


def to_svg(graph: Graph, placed: Layout | None = None) -> str:
    placed = placed or layout(graph)
    width, height = int(placed.width + 0.5), int(placed.height + 0.5)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" '
        f'font-size="{FONT_SIZE}">',
        f"<title>{escape(shown(graph.title))}</title>",
        "<defs>",
        *(
            f'<marker id="arrow-{style}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" '
            f'markerUnits="userSpaceOnUse" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
            for style, colour in _LINK_COLOURS.items()
        ),
        "</defs>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for route in placed.routes:
        out.extend(_arrow(route))
    for node in graph.nodes:
        out.extend(_box(node, placed.boxes[node.id]))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _arrow(route) -> list[str]:
    style = route.link.style
    colour = _LINK_COLOURS.get(style, _LINK_COLOURS["normal"])
    points = route.points
    if route.back:
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = points
        d = f"M{x0:.1f},{y0:.1f} C{x1:.1f},{y1:.1f} {x2:.1f},{y2:.1f} {x3:.1f},{y3:.1f}"
    else:
        d = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dash = ' stroke-dasharray="5 4"' if style in ("back", "error") else ""
    thick = "2.5" if style == "cycle" else "1.5"
    lines = [
        f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{thick}"{dash} marker-end="url(#arrow-{style})"/>'
    ]
    if route.link.label:
        text = shown(route.link.label)
        if route.link.source == route.link.target:
            x, y = points[0][0], points[3][1] + 26  # below the loop, clear of the arrows coming in
        elif route.back:
            x, y = points[1][0] - 4, (points[0][1] + points[2][1]) / 2
        else:
            (ax, ay), (bx, by) = points[0], points[1]
            x, y = (ax + bx) / 2, (ay + by) / 2
        w = len(text) * 6.6 + 8
        lines.append(
            f'<rect x="{x - w / 2:.1f}" y="{y - 9:.1f}" width="{w:.1f}" height="18" rx="3" '
            'fill="#ffffff" opacity="0.9"/>'
        )
        lines.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" dominant-baseline="central" font-size="11" '
            f'fill="{colour}">{escape(text)}</text>'
        )
    return lines


def _box(node: Node, box: Box) -> list[str]:
    fill, stroke = MARKED if node.marked else COLOURS.get(node.kind, COLOURS["step"])
    x, y, w, h = box.x, box.y, box.width, box.height
    left, top, right, bottom = x - w / 2, y - h / 2, x + w / 2, y + h / 2
    paint = f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"'
    if node.kind in ("elided", "missing"):
        paint += ' stroke-dasharray="4 3"'
    if node.kind == "decision":
        shape = (
            f'<polygon points="{x:.1f},{top:.1f} {right:.1f},{y:.1f} {x:.1f},{bottom:.1f} {left:.1f},{y:.1f}" {paint}/>'
        )
    elif node.kind == "checkpoint":
        cut = 12
        shape = (
            f'<polygon points="{left + cut:.1f},{top:.1f} {right - cut:.1f},{top:.1f} {right:.1f},{y:.1f} '
            f'{right - cut:.1f},{bottom:.1f} {left + cut:.1f},{bottom:.1f} {left:.1f},{y:.1f}" {paint}/>'
        )
    elif node.kind == "loop":
        slant = 12
        shape = (
            f'<polygon points="{left + slant:.1f},{top:.1f} {right - slant:.1f},{top:.1f} {right:.1f},{bottom:.1f} '
            f'{left:.1f},{bottom:.1f}" {paint}/>'
        )
    else:
        radius = h / 2 if node.kind in ("start", "end", "join", "merge") else 6
        shape = f'<rect x="{left:.1f}" y="{top:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{radius:.1f}" {paint}/>'
    lines = [f"<g><title>{escape(safe_text(node.label))}</title>", shape]
    if node.kind in ("call", "fork"):
        # A call's and a fork's double sides, as flowcharts draw a subroutine.
        lines.append(
            f'<path d="M{left + 8:.1f},{top:.1f} V{bottom:.1f} M{right - 8:.1f},{top:.1f} V{bottom:.1f}" '
            f'stroke="{stroke}" stroke-width="1.5"/>'
        )
    if node.label:
        lines.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" dominant-baseline="central" fill="#111827">'
            f"{escape(shown(node.label))}</text>"
        )
    lines.append("</g>")
    return lines
