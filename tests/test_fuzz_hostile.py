"""Fuzzing with hostile playbooks: structured files built from the pieces that once broke
the checker (numbers of thousands of digits, huge hexadecimal durations, lone surrogates,
deep expressions, merge keys, tags on the wrong node, unknown actions with steps under
them, blocks defining names), run through everything `catalyst check` and `catalyst
compile` do: compiling, the library checks, the text and JSON renderers and the IR's JSON.
No example may raise; each must end in IR or diagnostics. The run is bounded by its
number of examples (about a minute in all), never by a clock.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalyst_dsl.compiler import compile_bytes
from catalyst_dsl.ir.serialize import to_json
from catalyst_dsl.diagnostics.text import render_text
from catalyst_dsl.report.diagnostics import render_json

pytestmark = pytest.mark.slow

HOSTILE_SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))

#: Scalars as they are written in YAML (already quoted where they must be).
SCALARS = st.one_of(
    st.sampled_from(
        [
            "1" * 5000,
            "-" + "9" * 4400,
            "0x" + "f" * 400,
            "1e999999",
            ".nan",
            "~",
            "yes",
            "0o777",
            "0b101",
            '"\\ud800"',
            '"\\udfff x"',
            '"${{ \'\\ud800\' }}"',
            "'{{'",
            '"}}"',
            '"\\u0000"',
            '"\\x1b[31m"',
            '"${{ ' + "(" * 300 + "1" + ")" * 300 + ' }}"',
            '"${{ ' + " + ".join(["a"] * 300) + ' }}"',
            '"' + "{{x}} " * 2000 + '"',
            '"${{ get(\'x\').' + ".y" * 500 + ' }}"',
            "!!map x",
            "!!seq y",
            "!!binary zz",
            "*nowhere",
            "&anchor value",
            '"{{ inputs.nope }}"',
            '"${{ 1 + }}"',
            '"{{ a.b.c }}"',
            "[1, 2, 3]",
            "{a: 1}",
            "'" + "é" * 100 + "'",
            '"\\U0010ffff"',
            "1" * 50 + "s",
            "P" + "9" * 400 + "D",
        ]
    ),
    st.text(alphabet=st.sampled_from(list("{}$()[]'\"\\.-+*/!?:=&|<> abx019")), max_size=40).map(json.dumps),
)

ACTIONS = st.sampled_from(
    [
        "display",
        "var",
        "bash",
        "http-get",
        "file-write",
        "ai-prompt",
        "checkpoint",
        "return",
        "playbook",
        "throw",
        "wait",
        "retry-loop",
        "http-gett",
        "json-read",
        "script",
        "test",
    ]
)
KEYS = st.sampled_from(
    [
        "value",
        "name",
        "timeout",
        "writes",
        "condition",
        "errorPolicy",
        "content",
        "message",
        "url",
        "retries",
        "<<",
        "response-schema",
        "inputs",
        "in",
        "item",
        "steps",
        "then",
        "else",
    ]
)


@st.composite
def steps(draw, depth: int = 0) -> list[str]:
    """Lines of a step list at `depth` (indented two spaces a level)."""
    pad = "  " * (depth + 1)
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 5 if depth < 3 else 2))
        if kind <= 2:
            lines.append(f"{pad}- {draw(ACTIONS)}: {draw(SCALARS)}")
            for _ in range(draw(st.integers(0, 3))):
                lines.append(f"{pad}  {draw(KEYS)}: {draw(SCALARS)}")
        elif kind == 3:
            lines += [f"{pad}- if: {draw(SCALARS)}", f"{pad}  then:", *draw(steps(depth + 2))]
            if draw(st.booleans()):
                lines += [f"{pad}  else:", *draw(steps(depth + 2))]
        elif kind == 4:
            lines += [f"{pad}- {draw(st.sampled_from(['for-each: x', 'parallel:', 'try:', 'loop-forever:']))}"]
            lines += [f"{pad}  in: {draw(SCALARS)}", f"{pad}  steps:", *draw(steps(depth + 2))]
        else:
            lines += [
                f"{pad}- name: {draw(st.sampled_from(['a', 'b', 'Bad Name', 'x']))}",
                f"{pad}  var: {draw(SCALARS)}",
                f"{pad}  value: {draw(SCALARS)}",
            ]
    return lines


@st.composite
def playbooks(draw) -> bytes:
    head = ["name: fuzzed", "description: hostile", "owner: Engineer"]
    if draw(st.booleans()):
        head += ["inputs:", "  - string: x", f"    default: {draw(SCALARS)}"]
    if draw(st.booleans()):
        head += ["base: &base {timeout: 1s}", "<<: *base"]
    if draw(st.booleans()):
        head += [f"allowedWritePaths: [{draw(st.sampled_from(['out/**', '../x', '[', '**/.git/**', '{a,b}']))}]"]
    body = "\n".join([*head, "steps:", *draw(steps())]) + "\n"
    return body.encode("utf-8", "surrogatepass")


@HOSTILE_SETTINGS
@given(playbooks(), st.sampled_from(["fuzzed.yaml", "fuzzed.md"]))
def test_hostile_playbooks_end_in_diagnostics_or_ir(data: bytes, name: str) -> None:
    if name.endswith(".md"):
        data = b"---\n" + data.split(b"steps:")[0] + b"---\n# Fuzzed\n\n## Phase 1: " + data[-200:] + b"\n"
    result = compile_bytes(data, name)
    for diagnostic in result.diagnostics:
        assert diagnostic.code and diagnostic.message
    sources = {name: result.source} if result.source is not None else {}
    render_text(result.diagnostics, sources)
    json.loads(render_json(result.diagnostics, [name]))
    if result.playbook is not None and not result.has_errors:
        json.loads(to_json(result.playbook))


@HOSTILE_SETTINGS
@given(st.lists(playbooks(), min_size=2, max_size=4))
def test_hostile_libraries_check_without_a_traceback(tmp_path_factory, books: list[bytes]) -> None:
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.check import check_project
    from catalyst_dsl.project.config import load_project

    root = tmp_path_factory.mktemp("library")
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    (root / "playbooks").mkdir()
    files = []
    for i, data in enumerate(books):
        # Each calls the next, so the call, cycle and permission checks see hostile callees.
        path = root / "playbooks" / f"p{i}.yaml"
        path.write_bytes(data.replace(b"steps:\n", f"steps:\n  - playbook: p{(i + 1) % len(books)}\n".encode(), 1))
        files.append(str(path))
    project = load_project(root, DiagnosticSink())
    result = check_project(project, files)
    render_text(result.diagnostics, result.sources)
