"""A playbook's flow and the library's call graph as Mermaid: golden pictures of one
playbook of each dialect and of a project with a call cycle, and partial flows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.compiler import compile_bytes, compile_path
from catalyst_dsl.report.graph import mermaid_flow
from catalyst_dsl.report.graph.flow import flow_graph

TESTS = Path(__file__).parents[2]
GOLDEN = TESTS / "golden" / "graph"

#: One playbook of each dialect and form, and the golden picture of its flow.
FLOWS = {
    "every-shape.mmd": GOLDEN / "every-shape.yaml",
    "markdown-create-feature.mmd": TESTS.parent / "playbooks" / "create-feature.md",
    "kai-spec-to-tasks.mmd": TESTS / "golden" / "kai-project" / ".playbooks" / "playbooks" / "spec-to-tasks.yaml",
    "cleo-triage.mmd": TESTS / "dialects" / "cleo" / "examples" / "triage.cantbook",
}


def _compiled(path: Path):
    result = compile_path(str(path))
    assert result.playbook is not None, result.diagnostics
    return result.playbook


def _golden(name: str, text: str, update: bool) -> None:
    expected = GOLDEN / name
    if update:
        expected.write_text(text, encoding="utf-8", newline="\n")
    assert text == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(FLOWS))
def test_each_dialect_draws_its_flow(name: str, update_golden: bool) -> None:
    _golden(name, mermaid_flow(_compiled(FLOWS[name])), update_golden)


def test_the_call_graph_shows_cycles_missing_and_computed_calls(update_golden: bool, monkeypatch) -> None:
    monkeypatch.chdir(GOLDEN / "calls")
    result = CliRunner().invoke(cli, ["graph"])
    assert result.exit_code == 0, result.output
    _golden("calls.mmd", result.output, update_golden)
    # review and draft call each other: both marked, and the calls between them thick and red.
    assert "class p0,p2 marked" in result.output
    assert "p0 ==> p2" in result.output and "p2 ==> p0" in result.output
    assert "p1 --> p2" in result.output  # release calls review, but is on no cycle


def test_every_construct_has_its_box_and_arrows() -> None:
    graph = flow_graph(_compiled(GOLDEN / "every-shape.yaml"))
    kinds = {node.kind for node in graph.nodes}
    assert {"start", "end", "step", "decision", "loop", "fork", "join", "checkpoint", "call", "try"} <= kinds
    styles = {link.style for link in graph.links}
    assert {"normal", "back", "error"} <= styles
    labels = {link.label for link in graph.links}
    assert {"then", "else", "quick route", "otherwise", "each", "next", "failed", "skipped"} <= labels
    by_path = {node.path: node for node in graph.nodes if node.kind == "step"}
    # Paths as a run's journal and a plan write them.
    assert by_path["steps/1/then/0"].label == "display@21 (display)"
    assert by_path["steps/3/each/0/0"].label.startswith("display@")
    assert by_path["steps/4/attempt/1/0"].label == "flaky (bash)"
    assert by_path["steps/5/branch/1"].label == "right (bash)"


def test_a_partial_flow_keeps_the_steps_asked_for_and_what_holds_them() -> None:
    playbook = _compiled(GOLDEN / "every-shape.yaml")
    graph = flow_graph(playbook, only=["steps/4/attempt/3/0", "steps/7"])  # attempt 3: the body drawn once
    marked = sorted(node.label for node in graph.nodes if node.marked)
    assert marked == ["child: call helper", "flaky (bash)"]
    kept = {node.label for node in graph.nodes}
    assert "retry, 3 attempts at most" in kept  # the retry-block that holds the step
    assert "prepare (bash)" not in kept and "left (bash)" not in kept
    elided = [node.label for node in graph.nodes if node.kind == "elided"]
    assert elided and all(label.startswith("… ") for label in elided)
    # Every link joins boxes that are drawn.
    ids = {node.id for node in graph.nodes}
    assert all(link.source in ids and link.target in ids for link in graph.links)


def test_steps_after_a_return_in_a_try_go_through_its_finally() -> None:
    graph = flow_graph(_compiled(TESTS.parent / "playbooks" / "feature.yaml"))
    by_label = {node.label: node.id for node in graph.nodes}
    final = by_label["json-write@147 (json-write)"]
    sources = {link.source for link in graph.links if link.target == final}
    assert by_label["return@132 (return)"] in sources and by_label["throw@142 (throw)"] in sources


def test_the_cli_draws_a_flow_by_name_and_infers_the_format_from_the_file(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(TESTS.parent)
    out = tmp_path / "hello.svg"
    result = CliRunner().invoke(cli, ["graph", "hello", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("<svg ")
    dot = CliRunner().invoke(cli, ["graph", "hello", "--format", "dot"])
    assert dot.exit_code == 0 and dot.output.startswith('digraph "hello" {')


def test_the_cli_refuses_what_it_cannot_draw(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(TESTS.parent)
    missing = CliRunner().invoke(cli, ["graph", "no-such-playbook"])
    assert missing.exit_code == 1 and "help:" in missing.output
    alone = CliRunner().invoke(cli, ["graph", "--step", "steps/0"])
    assert alone.exit_code == 2 and "name the playbook" in alone.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n", encoding="utf-8")
    refused = CliRunner().invoke(cli, ["graph", str(broken)])
    assert refused.exit_code == 1 and "Traceback" not in refused.output and "fix these errors" in refused.output
    # A path at which no step sits would fold every step and mark none.
    nowhere = CliRunner().invoke(cli, ["graph", "hello", "--step", "steps/99", "--step", "steps/3/each/2/0"])
    assert nowhere.exit_code == 2 and "--step steps/99 names no step of hello" in nowhere.output
    assert CliRunner().invoke(cli, ["graph", "hello", "--step", "steps/3/each/2/0"]).exit_code == 0
    unwritable = CliRunner().invoke(cli, ["graph", "hello", "-o", str(tmp_path / "no" / "such" / "x.svg")])
    assert unwritable.exit_code == 2 and "there is no folder" in unwritable.output


def test_a_playbook_with_errors_is_still_drawn_with_a_note(tmp_path) -> None:
    sketch = tmp_path / "sketch.yaml"
    sketch.write_text("name: sketch\ndescription: d\nsteps:\n  - display: hi\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["graph", str(sketch)])
    assert result.exit_code == 0
    assert "error(s), which `catalyst check` shows" in result.output
    assert 'n1["display@4 (display)"]' in result.output
    assert os.path.exists(sketch)


#: The pictures docs/graph.md shows, and the command that draws each from the sample playbooks.
DOC_PICTURES = {"feature-flow.svg": ["graph", "feature"], "library-calls.svg": ["graph"]}


@pytest.mark.parametrize("name", sorted(DOC_PICTURES))
def test_the_pictures_in_the_docs_are_current(name: str, update_golden: bool, monkeypatch) -> None:
    monkeypatch.chdir(TESTS.parent)
    result = CliRunner().invoke(cli, [*DOC_PICTURES[name], "--format", "svg"])
    assert result.exit_code == 0, result.output
    picture = TESTS.parent / "docs" / "images" / name
    if update_golden:
        picture.write_text(result.output, encoding="utf-8", newline="\n")
    assert result.output == picture.read_text(encoding="utf-8")


def test_steps_with_conditions_in_a_row_meet_at_one_point_each() -> None:
    # Each skipped step's arrow drawn from every way into it made a run of N such steps
    # N * N arrows: 100 of them took 12 s and 4.5 MB of SVG, and Mermaid refuses a chart
    # of more than 500 arrows.
    steps = "".join(f"  - var: v{i}\n    condition: \"${{{{ get('go') }}}}\"\n    value: {i}\n" for i in range(200))
    source = "name: many\ndescription: d\nowner: Engineer\ninputs:\n  - boolean: go\nsteps:\n" + steps
    graph = flow_graph(compile_bytes(source.encode(), "many.yaml").playbook)
    assert len(graph.links) < 4 * 200
    merges = [node for node in graph.nodes if node.kind == "merge"]
    assert len(merges) == 199
    # Each merge point leads to its step, and round it when the step is skipped.
    first = merges[0]
    out = sorted(link.label for link in graph.links if link.source == first.id)
    assert out == ["", "skipped"]


# -- charts GitHub's Mermaid refuses ---------------------------------------------------------------


def _library_of_calls(root: Path, playbooks: int = 26, calls: int = 20) -> None:
    """A project of `playbooks` playbooks, each calling the `calls` after it (in a ring)."""
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    names = [f"p{i:02d}" for i in range(playbooks)]
    for i, name in enumerate(names):
        steps = "".join(f"  - playbook: {names[(i + k) % playbooks]}\n" for k in range(1, calls + 1))
        text = f"name: {name}\ndescription: d\nowner: Engineer\nsteps:\n{steps}"
        (root / "playbooks" / f"{name}.yaml").write_text(text, encoding="utf-8")


def test_a_call_graph_past_mermaids_arrows_is_written_whole_with_one_line_saying_so(tmp_path, monkeypatch) -> None:
    _library_of_calls(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["graph"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("flowchart TD\n") and result.stdout.count(" ==> ") == 520
    (warning,) = result.stderr.splitlines()
    # The line docs/graph.md shows, as the command prints it.
    assert warning in (TESTS.parent / "docs" / "graph.md").read_text(encoding="utf-8")
    assert "(520 arrows, and it draws at most 500)" in warning and "`-o calls.svg`" in warning
    # Written to a Mermaid file, the same; as SVG, nothing to say.
    to_file = CliRunner().invoke(cli, ["graph", "-o", str(tmp_path / "calls.mmd")])
    assert to_file.stderr == result.stderr
    assert (tmp_path / "calls.mmd").read_text(encoding="utf-8") == result.stdout
    assert CliRunner().invoke(cli, ["graph", "-o", str(tmp_path / "calls.svg")]).stderr == ""
    # 500 arrows are drawn: no word.
    small = tmp_path / "small"
    _library_of_calls(small, playbooks=25)
    monkeypatch.chdir(small)
    assert CliRunner().invoke(cli, ["graph"]).stderr == ""


def test_a_flow_past_mermaids_arrows_offers_svg_and_a_part(tmp_path) -> None:
    long = tmp_path / "long.yaml"
    steps = "".join(f"  - display: step {i}\n" for i in range(500))
    long.write_text(f"name: long\ndescription: d\nowner: Engineer\nsteps:\n{steps}", encoding="utf-8")
    whole = CliRunner().invoke(cli, ["graph", str(long)])
    assert whole.exit_code == 0 and whole.stdout.count(" --> ") == 501
    assert whole.stderr == (
        "warning: GitHub will not draw this Mermaid chart (501 arrows, and it draws at most 500): `-o flow.svg` draws"
        " it as SVG, and `--step PATH` a part of it\n"
    )
    part = CliRunner().invoke(cli, ["graph", str(long), "--step", "steps/3"])
    assert part.exit_code == 0 and part.stderr == ""


def test_mermaids_text_limit_counts_as_javascript_does() -> None:
    from catalyst_dsl.report.graph import MERMAID_MAX_TEXT, mermaid_refusal
    from catalyst_dsl.report.graph.mermaid import to_mermaid
    from catalyst_dsl.report.graph.model import Graph, Node

    # Each emoji is one character in Python and two UTF-16 units in JavaScript's length,
    # which Mermaid compares with maxTextSize (a browser showed this chart refused).
    graph = Graph("emoji", tuple(Node(f"n{i}", "😀" * 60) for i in range(420)), ())
    text = to_mermaid(graph)
    assert len(text) < MERMAID_MAX_TEXT < len(text.encode("utf-16-le")) // 2
    assert "characters, and it draws at most 50,000" in mermaid_refusal(graph, text)
    ascii_graph = Graph("ascii", tuple(Node(f"n{i}", "x" * 60) for i in range(420)), ())
    assert mermaid_refusal(ascii_graph, to_mermaid(ascii_graph)) is None


def test_a_loop_over_a_literal_list_names_the_list() -> None:
    from catalyst_dsl.compiler import compile_bytes

    text = b"name: fe\ndescription: x\nowner: me\nsteps:\n  - for-each: n\n    in: [a, 2]\n"
    text += b"    steps:\n      - display: x\n"
    [loop] = [node for node in flow_graph(compile_bytes(text, "fe.yaml").playbook).nodes if node.kind == "loop"]
    assert loop.label == "for each n in [a, 2]"
