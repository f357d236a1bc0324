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


def mermaid_flow(playbook, only=None) -> str:
    """The Mermaid flow of `playbook`, or of the steps at the paths `only` (a plan's
    `path`s) with the control steps around them: what a pull-request comment shows."""
    from catalyst_dsl.report.graph.flow import flow_graph
    from catalyst_dsl.report.graph.mermaid import to_mermaid

    return to_mermaid(flow_graph(playbook, only))
