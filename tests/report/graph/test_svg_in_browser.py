"""The SVG as a person sees it: drawn by a real headless browser (Chromium), then looked
at pixel by pixel: a white page with colours on it, each box filled with its kind's
colour where the layout put it, and the arrows between them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.compiler import compile_path
from catalyst_dsl.report.graph.flow import flow_graph
from catalyst_dsl.report.graph.layout import layout
from catalyst_dsl.report.graph.svg import fill_of, to_svg
from tests.helpers.png import read_png

TESTS = Path(__file__).parents[2]
BROWSER = next(
    (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        BROWSER is None, reason="no Chromium on this machine (Debian: apt-get install chromium; .ci/run installs it)"
    ),
]


def _screenshot(svg: str, width: int, height: int, tmp_path: Path):
    picture, shot = tmp_path / "picture.svg", tmp_path / "shot.png"
    picture.write_text(svg, encoding="utf-8")
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",  # the tests may run as root, where Chromium's sandbox refuses to start
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={width},{height}",
        f"--screenshot={shot}",
        picture.as_uri(),
    ]
    subprocess.run(command, capture_output=True, timeout=120, check=False, env={**os.environ, "HOME": str(tmp_path)})
    assert shot.is_file(), "Chromium wrote no screenshot"
    return read_png(shot.read_bytes())


def _close(one: tuple[int, int, int], other: str) -> bool:
    wanted = tuple(int(other[i : i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= 10 for a, b in zip(one, wanted))


def _look(graph, tmp_path: Path) -> None:
    placed = layout(graph)
    width, height = int(placed.width + 0.5), int(placed.height + 0.5)
    shot = _screenshot(to_svg(graph, placed), width, height, tmp_path)
    assert (shot.width, shot.height) == (width, height)
    assert shot.pixel(1, 1) == (255, 255, 255)  # the page
    assert len(shot.colours()) > 20  # not blank: boxes, text and arrows
    for node in graph.nodes:
        box = placed.boxes[node.id]
        # Below the label, inside the outline: the box's fill.
        seen = shot.pixel(box.x, box.y + box.height * 0.3)
        assert _close(seen, fill_of(node)), (node.label, seen, fill_of(node))
    for route in placed.routes:
        if route.back:
            continue
        (x0, y0), (x1, y1) = route.points[0], route.points[1]
        mid_x, mid_y = (x0 + x1) / 2, (y0 + y1) / 2
        if route.link.label or y1 - y0 < 20:
            continue  # a label sits on the arrow's middle
        darkest = min(sum(shot.pixel(mid_x + dx, mid_y)) for dx in (-2, -1, 0, 1, 2))
        assert darkest < 600, (route.link, darkest)  # a line crosses the middle of the arrow


def test_a_flow_looks_as_laid_out(tmp_path: Path) -> None:
    graph = flow_graph(compile_path(str(TESTS / "golden" / "graph" / "every-shape.yaml")).playbook)
    _look(graph, tmp_path)


def test_the_call_graph_looks_as_laid_out(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(TESTS / "golden" / "graph" / "calls")
    from catalyst_dsl.cli import graph as command

    graph = command._calls()
    assert any(node.marked for node in graph.nodes)  # the cycle's boxes, red
    _look(graph, tmp_path)
    result = CliRunner().invoke(cli, ["graph", "--format", "svg"])
    assert result.exit_code == 0 and result.output == to_svg(graph)
