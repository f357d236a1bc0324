"""The layered layout: boxes in rows that never overlap, arrows that go down except the
ones that close a loop or a cycle, everything inside the picture."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalyst_dsl.compiler import compile_path
from catalyst_dsl.report.graph.flow import flow_graph
from catalyst_dsl.report.graph.layout import COLUMN_GAP, layout
from catalyst_dsl.report.graph.model import Graph, Link, Node

TESTS = Path(__file__).parents[2]
PLAYBOOKS = [TESTS / "golden" / "graph" / "every-shape.yaml", *sorted((TESTS.parent / "playbooks").glob("*.yaml"))]


def _flow(path: Path) -> Graph:
    return flow_graph(compile_path(str(path)).playbook)


@pytest.mark.parametrize("path", PLAYBOOKS, ids=lambda p: p.name)
def test_boxes_never_overlap_and_arrows_go_down(path: Path) -> None:
    graph = _flow(path)
    placed = layout(graph)
    boxes = list(placed.boxes.values())
    assert len(boxes) == len(graph.nodes)
    for box in boxes:
        assert 0 <= box.x - box.width / 2 and box.x + box.width / 2 <= placed.width
        assert 0 <= box.y - box.height / 2 and box.y + box.height / 2 <= placed.height
    for i, one in enumerate(boxes):
        for other in boxes[i + 1 :]:
            apart_x = abs(one.x - other.x) >= (one.width + other.width) / 2 + COLUMN_GAP - 0.01
            apart_y = abs(one.y - other.y) >= (one.height + other.height) / 2
            assert apart_x or apart_y, (one, other)
    for route in placed.routes:
        if not route.back:
            ys = [y for _, y in route.points]
            assert ys == sorted(ys) and ys[0] < ys[-1], route.link
    assert len(placed.routes) == len(graph.links)


def test_the_arrows_that_close_a_cycle_are_drawn_back() -> None:
    nodes = tuple(Node(name, name) for name in "abc")
    links = (Link("a", "b"), Link("b", "c"), Link("c", "a"), Link("b", "b"))
    placed = layout(Graph("cycle", nodes, links))
    back = sorted((r.link.source, r.link.target) for r in placed.routes if r.back)
    assert back == [("b", "b"), ("c", "a")]
    assert placed.boxes["a"].y < placed.boxes["b"].y < placed.boxes["c"].y


def test_a_chain_runs_straight() -> None:
    # A fork that joins again: the box after the join sits under the box before the fork.
    nodes = tuple(Node(name, name) for name in ("top", "left", "right", "join", "after"))
    links = (
        Link("top", "left"),
        Link("top", "right"),
        Link("left", "join"),
        Link("right", "join"),
        Link("join", "after"),
    )
    placed = layout(Graph("diamond", nodes, links))
    assert placed.boxes["top"].x == pytest.approx(placed.boxes["after"].x)
    assert placed.boxes["left"].x < placed.boxes["right"].x
