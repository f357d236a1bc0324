"""Labels are user text: no quote, bracket, pipe, backtick, tag, keyword or control
character in a step's name or condition may break a picture or inject into it."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest

from catalyst_dsl.compiler import compile_bytes
from catalyst_dsl.report.graph.dot import to_dot
from catalyst_dsl.report.graph.flow import flow_graph
from catalyst_dsl.report.graph.mermaid import to_mermaid
from catalyst_dsl.report.graph.model import Graph, Link, Node, shown
from catalyst_dsl.report.graph.svg import to_svg

HOSTILE = [
    'a"] --> evil[("x',
    "`**markdown**` string",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "end",
    "click n0 call alert()",
    "%%{init: {'theme': 'dark'}}%%",
    "x|label| y ==> z",
    "#quot; #35; &amp; &#60;",
    "two\nlines\rand\x1b[31mred\x1b[0m",
    "subgraph s; style n0 fill:#f00",
    "x" * 200,
    "} ] ) > {{ [[ (( {",
    "\u202eright-to-left",
]


def _graph() -> Graph:
    nodes = [Node(f"n{i}", label) for i, label in enumerate(HOSTILE)]
    links = [Link(f"n{i}", f"n{i + 1}", HOSTILE[-1 - i]) for i in range(len(HOSTILE) - 1)]
    return Graph("<title>&\"", tuple(nodes), tuple(links))


#: What a Mermaid label may hold once escaped: no quote, tag, backtick, `#` or backslash,
#: and `&` only to start one of the entities we write.
_SAFE_LABEL = re.compile(r'(?:[^"<>`#\\&%]|&(?:amp|lt|gt|quot|num|grave|bsol|percnt);)*')
_LINE = re.compile(
    r'^    (n\d+|nEnd)(\[|\(\[|\{|\[/|\[\[|\(\(|\{\{|>)"(?P<label>[^"]*)"(\]|\]\)|\}|\\\]|\]\]|\)\)|\}\})$'
)
_ARROW = re.compile(r'^    n\d+ (-->|-\.->|==>)(\|"(?P<label>[^"]*)"\|)? (n\d+|nEnd)$')


def _decoded(label: str) -> str:
    return html.unescape(label)  # as the browser reads the label Mermaid hands it


def test_mermaid_labels_stay_labels() -> None:
    text = to_mermaid(_graph())
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    nodes = [line for line in lines if _LINE.match(line)]
    arrows = [line for line in lines if _ARROW.match(line)]
    assert len(nodes) == len(HOSTILE) and len(arrows) == len(HOSTILE) - 1
    for line, label in zip(nodes, HOSTILE):
        said = _LINE.match(line).group("label")
        assert _SAFE_LABEL.fullmatch(said), line
        assert _decoded(said) == shown(label)  # escaped, not changed
    # Nothing else: the classDefs and nothing a label could have started.
    rest = [line for line in lines[1:] if line not in nodes and line not in arrows]
    assert all(line.startswith(("    classDef ", "    class ", "    linkStyle ")) for line in rest), rest


def test_svg_is_well_formed_and_draws_labels_as_text() -> None:
    svg = to_svg(_graph())
    root = ET.fromstring(svg)  # well-formed XML, whatever the labels
    ns = "{http://www.w3.org/2000/svg}"
    tags = {element.tag.removeprefix(ns) for element in root.iter()}
    assert tags <= {"svg", "title", "defs", "marker", "path", "rect", "g", "text", "polygon"}
    texts = [element.text for element in root.iter(f"{ns}text")]
    for label in HOSTILE:
        assert shown(label) in texts
    assert "<script" not in svg and "<img" not in svg
    assert "\x1b" not in svg and "\r" not in svg


def test_dot_labels_stay_strings() -> None:
    text = to_dot(_graph())
    assert '"#quot; #35; &amp;amp; &amp;#60;"' in text  # Graphviz would draw `&#60;` as `<`
    for line in text.splitlines()[2:-1]:
        # Outside the quoted strings, only ids, arrows and attribute syntax.
        outside = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        assert re.fullmatch(r'    (n\d+( -> n\d+)?( \[[a-z]+=[^\[\]]*\])?;)', outside), line


@pytest.mark.parametrize("render", [to_mermaid, to_svg, to_dot])
def test_a_playbook_with_hostile_text_is_drawn_safely(render) -> None:
    source = """name: hostile
description: Step names and conditions that look like diagram syntax.
owner: Engineer
steps:
  - name: 'x"] --> y[("z'
    display: hi
  - if: "${{ '<b>' == '\\"]; end' }}"
    then:
      - name: "end"
        display: "`code`"
"""
    result = compile_bytes(source.encode("utf-8"), "/project/playbooks/hostile.yaml")
    assert result.playbook is not None
    out = render(flow_graph(result.playbook))
    if render is to_mermaid:
        lines = out.splitlines()[1:]
        assert not any(line.strip().startswith("end") for line in lines)
        drawn = [line for line in lines if _LINE.match(line) or _ARROW.match(line)]
        assert all(line in drawn or line.startswith(("    class", "    linkStyle")) for line in lines), lines
    elif render is to_svg:
        assert "<b>" not in out and "&lt;b&gt;" in out
    else:
        assert '\\"]; end' in out  # the quote escaped inside its string
