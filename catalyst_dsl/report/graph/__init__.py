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


def mermaid_flow(playbook, only=None) -> str | None:
    """The Mermaid flow of `playbook`, or of the steps at the paths `only` (a plan's
    `path`s) with the control steps around them: what a pull-request comment shows.
    None when Mermaid would refuse to draw it (too many arrows or characters)."""
    from catalyst_dsl.report.graph.flow import flow_graph
    from catalyst_dsl.report.graph.mermaid import to_mermaid

    graph = flow_graph(playbook, only)
    if len(graph.links) > MERMAID_MAX_ARROWS:
        return None
    text = to_mermaid(graph)
    return text if len(text) <= MERMAID_MAX_TEXT else None
