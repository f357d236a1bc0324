"""Property tests: any input gives IR or diagnostics, never a traceback."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalyst_dsl.compiler import compile_bytes
from catalyst_dsl.syntax.expr.templates import parse_template

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "playbooks" / "write-spec.yaml").read_bytes()
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    compile_bytes(data, "random.yaml")
    compile_bytes(data, "random.md")


@FAST
@given(st.text(alphabet=st.sampled_from(list("{}$()[]'\"\\.-+*/!?:=&|<> \nabget0129")), max_size=80))
def test_random_templates(text: str) -> None:
    parsed = parse_template(text)
    for error in parsed.errors:
        assert 0 <= error.start <= error.end <= len(text) + 1


@FAST
@given(st.integers(0, len(SEED) - 1), st.integers(1, 12), st.binary(min_size=0, max_size=6))
def test_mutated_playbook(at: int, cut: int, insert: bytes) -> None:
    data = SEED[:at] + insert + SEED[at + cut :]
    result = compile_bytes(data, "mutated.yaml")
    for d in result.diagnostics:
        assert d.code and d.message


@FAST
@given(st.text(max_size=200))
def test_random_yaml_text_under_a_step(text: str) -> None:
    body = b"name: x\ndescription: d\nowner: o\nsteps:\n  - display: " + text.encode("utf-8", "replace") + b"\n"
    compile_bytes(body, "p.yaml")


@FAST
@given(
    st.lists(
        st.sampled_from(list("{}$()`'\"\\#@<>-;|&[]\n\t =aEOFv‘“") + ["{{v}}", "<<EOF\n", "\nEOF\n", "$((", "${"]),
        max_size=40,
    )
)
def test_random_scripts(pieces: list[str]) -> None:
    text = "".join(pieces)
    from catalyst_dsl.syntax.shell import BASH, POWERSHELL, script_slots

    placeholders = [p for p in parse_template(text).parts if type(p).__name__ != "TextPart"]
    for language in (BASH, POWERSHELL):
        slots = script_slots(text, language)
        assert [(s.start, s.end) for s in slots] == [(p.start, p.end) for p in placeholders]
