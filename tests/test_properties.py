"""Property tests: any input gives IR or diagnostics, never a traceback; and a playbook the
check passes never fails at run time on a name, a type or a reference."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest
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


# -- a clean check is never contradicted by the run ------------------------------------------------------------

#: Names a generated step may read: the inputs (most often, so that many playbooks pass the
#: check), variables some steps set, a loop's item, the named steps' results, paths into them.
#: Only typed values: what the language types `any` (the items of an `array` input, here
#: `items`) is the author's to get right, and a clean check promises nothing about it; so
#: `items` is only ever shown, never computed with (docs/language.md, "Names and scope").
READS = ["who", "who", "count", "loud", "inputs.who", "first", "second", "item", "setter", "teller"]
SHOWN = [*READS, "items", "items.0"]
#: The same for an expression, where a path is written with dots only between names.
EXPRESSION_READS = ["who", "who", "count", "count", "loud", "first", "second", "item", "teller"]
EXPRESSIONS = [
    "{ref}",
    "{ref}.length",
    "{ref} + 1",
    "{ref}.toUpperCase()",
    "get('{ref}')",
    "[1, 2].concat({ref})",
    "{ref} ? 'yes' : 'no'",
    "{ref} * 2",
    "{ref}[0]",
    "{ref}.slice(1)",
    "{ref}.join('-')",
    "{ref} ?? 'none'",
]
NAMES = st.sampled_from(READS)
NEW_VARIABLES = st.sampled_from(["first", "second"])


def _expression(ref: str, form: str) -> str:
    return form.format(ref=ref)


def _step(children) -> st.SearchStrategy[list[str]]:
    """One step as YAML lines (indented by the caller)."""
    leaf = st.one_of(
        st.builds(lambda n, ref: [f"- var: {n}", f'  value: "{{{{ {ref} }}}}"'], NEW_VARIABLES, NAMES),
        # a var step named apart from its variable: the name holds no result, the variable its value
        st.builds(
            lambda n, ref: ["- name: setter", f"  var: {n}", f'  value: "{{{{ {ref} }}}}"'], NEW_VARIABLES, NAMES
        ),
        st.builds(
            lambda n, ref, form: [f"- var: {n}", f'  value: "${{{{ {_expression(ref, form)} }}}}"'],
            NEW_VARIABLES,
            st.sampled_from(EXPRESSION_READS),
            st.sampled_from(EXPRESSIONS),
        ),
        st.builds(lambda ref: [f'- display: "shown: {{{{ {ref} }}}}"'], st.sampled_from(SHOWN)),
        st.builds(
            lambda ref, form: [f'- display: "${{{{ String({_expression(ref, form)}) }}}}"'],
            st.sampled_from(EXPRESSION_READS),
            st.sampled_from(EXPRESSIONS),
        ),
        st.builds(lambda ref: ["- name: teller", f'  log-info: "{{{{ {ref} }}}}"'], NAMES),
    )
    if children is None:
        return leaf

    def nest(head: list[str], body: list[list[str]]) -> list[str]:
        return head + [f"    {line}" for step in body for line in step]

    return st.one_of(
        leaf,
        st.builds(
            lambda ref, then, other: (
                nest([f'- if: "${{{{ Boolean({ref}) }}}}"', "  then:"], then)
                + ["  else:"]
                + [f"    {line}" for step in other for line in step]
            ),
            st.sampled_from(EXPRESSION_READS),
            st.lists(children, min_size=1, max_size=2),
            st.lists(children, min_size=1, max_size=2),
        ),
        st.builds(
            lambda source, body: nest(['- for-each: item', f'  in: "{source}"', "  steps:"], body),
            st.sampled_from(["${{ [1, 2, 3] }}", "${{ ['a', 'b'] }}", "${{ [] }}", "{{ who }}", "{{ first }}"]),
            st.lists(children, min_size=1, max_size=2),
        ),
        # a try whose steps may fail part way (a file that is not there), and a handler
        # that reads the error
        st.builds(
            lambda body, fails_at, handler: (
                nest(["- try:"], body[:fails_at] + [FAILING] + body[fails_at:] if fails_at is not None else body)
                + ["  catch:", "    - code: default", "      steps:"]
                + [f"        {line}" for step in [*handler, CAUGHT] for line in step]
            ),
            st.lists(children, min_size=1, max_size=2),
            st.one_of(st.none(), st.integers(0, 2)),
            st.lists(children, max_size=1),
        ),
        # a route: exactly one branch holds for any count
        st.builds(
            lambda low, high: (
                nest(
                    ["- route:", '    - when: "${{ count < 3 }}"', "      steps:"], [[f"  {x}" for x in s] for s in low]
                )
                + ['    - when: "${{ count >= 3 }}"', "      steps:"]
                + [f"        {line}" for step in high for line in step]
            ),
            st.lists(children, min_size=1, max_size=2),
            st.lists(children, min_size=1, max_size=2),
        ),
    )


FAILING = ["- file-read: not-there.txt"]
CAUGHT = ['- display: "caught {{ $error.code }}"']
GENERATED_STEPS = st.lists(_step(_step(None)), min_size=1, max_size=5)
GENERATED_HEAD = """\
name: generated
description: a generated playbook
owner: Engineer
inputs:
  - string: who
    default: ann
  - number: count
    default: 2
  - array: items
    default: [1, 2]
  - boolean: loud
    default: false
steps:
"""
#: Codes of a run failing on a name, a type or a reference: what a clean check rules out.
MISTAKES = ("ExpressionError", "TypeMismatch", "InvalidBindings", "UnknownReference")


@contextlib.contextmanager
def _inside(folder: Path):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _the_run_agrees_with_the_check(steps: list[list[str]]) -> None:
    """Checked with `check --strict` (no error, no warning: a warning such as C508, a name
    defined on some paths only, says the run may fail), then run: a playbook the check
    passes completes. Its steps touch nothing outside, so any failure would be a name,
    a type or a reference the check missed."""
    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli

    text = GENERATED_HEAD + "".join(f"  {line}\n" for step in steps for line in step)
    with tempfile.TemporaryDirectory() as folder, _inside(Path(folder)):
        (Path(folder) / "catalyst.toml").write_text("", encoding="utf-8")
        (Path(folder) / "playbooks").mkdir()
        (Path(folder) / "playbooks" / "generated.yaml").write_text(text, encoding="utf-8")
        checked = CliRunner().invoke(cli, ["check", "--strict", "--no-cache", "--quiet"])
        if checked.exit_code != 0:
            return  # the check refused it: the run is not asked to agree
        ran = CliRunner().invoke(cli, ["run", "generated", "--mode", "autonomous"])
        assert not any(code in ran.output for code in MISTAKES), f"{text}\n{ran.output}"
        assert ran.exit_code == 0, f"{text}\n{ran.output}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GENERATED_STEPS)
def test_a_playbook_the_check_passes_never_fails_on_a_name_or_a_type(steps: list[list[str]]) -> None:
    _the_run_agrees_with_the_check(steps)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GENERATED_STEPS)
def test_a_playbook_the_check_passes_never_fails_on_a_name_or_a_type_at_length(steps: list[list[str]]) -> None:
    _the_run_agrees_with_the_check(steps)
