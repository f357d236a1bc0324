"""Pictures of playbooks (`catalyst graph`): one playbook's flow and the library's call
graph, as Mermaid, SVG or DOT. `flow_graph` builds a flow (or part of one, by step
paths), `call_graph` the calls; `render` writes either in a format."""

from __future__ import annotations

from catalyst_dsl.report.graph.model import Graph

FORMATS = ("mermaid", "svg", "dot")


def render(graph: Graph, fmt: str) -> str:
    if fmt == "svg":
        from catalyst_dsl.report.graph.svg import to_svg

        return to_svg(graph)
    if fmt == "dot":
        from catalyst_dsl.report.graph.dot import to_dot

        return to_dot(graph)
    from catalyst_dsl.report.graph.mermaid import to_mermaid

    return to_mermaid(graph)


#: What Mermaid draws at most, by its defaults (`maxEdges`, `maxTextSize`), which GitHub
#: keeps: a larger chart is shown as an error where the picture would be.
MERMAID_MAX_ARROWS = 500
MERMAID_MAX_TEXT = 50_000


def mermaid_refusal(graph: Graph, text: str) -> str | None:
    """Why Mermaid would refuse to draw `text`, the Mermaid of `graph`, in a few words
    ("612 arrows, and it draws at most 500"); None when it draws it."""
    if len(graph.links) > MERMAID_MAX_ARROWS:
        return f"{len(graph.links):,} arrows, and it draws at most {MERMAID_MAX_ARROWS}"
    # Mermaid measures a JavaScript string: UTF-16 units, two for a character past U+FFFF
    # (most emoji), so a chart of emoji is refused before its count of characters says so.
    size = len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
    if size > MERMAID_MAX_TEXT:
        return f"{size:,} characters, and it draws at most {MERMAID_MAX_TEXT:,}"
    return None


def mermaid_flow(playbook, only=None) -> str | None:
    """The Mermaid flow of `playbook`, or of the steps at the paths `only` (a plan's
    `path`s) with the control steps around them: what a pull-request comment shows.
    None when Mermaid would refuse to draw it (too many arrows or characters)."""
    from catalyst_dsl.report.graph.flow import flow_graph
    from catalyst_dsl.report.graph.mermaid import to_mermaid

    graph = flow_graph(playbook, only)
    if len(graph.links) > MERMAID_MAX_ARROWS:
        return None  # not written out: a flow of many thousand steps costs its text for nothing
    text = to_mermaid(graph)
    return None if mermaid_refusal(graph, text) else text
