"""cleo `.cantbook` playbooks: found, checked whole with the verdicts docs/dialects.md gives,
lowered to the IR, refused by `catalyst run` where this version lacks a construct, and run
where it does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catalyst_dsl.compiler import compile_bytes, compile_path, discover
from catalyst_dsl.ir import nodes as ir
from tests.helpers.corpus import SHARED_CORPUS

HERE = Path(__file__).parent
EXAMPLES = HERE / "examples"
CORPUS = SHARED_CORPUS / "cleo"
REPO = HERE.parents[2]

#: As docs/dialects.md says: the findings (line, code) each file must give,
#: errors and warnings; notes (info) are not verdicts.
VERDICTS = {
    "release-lite.cantbook": set(),
    "triage.cantbook": set(),
    "nightly-checks.cantbook": {(12, "C957"), (14, "C945"), (21, "C501"), (22, "C202"), (24, "C950"), (36, "C942")},
    "refactor.cantbook": {(1, "C940"), (7, "C303"), (12, "C303"), (13, "C203"), (22, "C303")},
    "fix-loop.cantbook": {(29, "C947"), (14, "C951"), (21, "C959")},
}


def findings(path: Path) -> set[tuple[int, str]]:
    result = compile_path(str(path))
    return {(d.span.line, d.code) for d in result.diagnostics if d.severity.value != "info"}


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_examples_give_exactly_the_written_verdicts(name):
    assert findings(EXAMPLES / name) == VERDICTS[name]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the repository")
@pytest.mark.parametrize("name", ["release.cantbook", "conditional-branch.cantbook"])
def test_corpus_cantbooks_are_clean(name):
    result = compile_path(str(CORPUS / name))
    assert result.playbook is not None and result.playbook.dialect == "cleo"
    assert findings(CORPUS / name) == set()


def test_every_mistake_of_a_file_comes_at_once():
    text = b"""version: 1.0
name: Many Mistakes
inputs:
  - name: tag
  - name: tag
nodes:
  - id: a
    type: deterministic
    command: "rm -rf"
    timeout_ms: 0
  - id: a
    type: agentic
  - id: b
    type: approval
    polcy: conservative
  - id: c
    type: wizard
edges:
  - from: a
    to: nowhere
error_handlers:
  - on: contract_violation
    action: explode
"""
    result = compile_bytes(text, "many.cantbook")
    codes = sorted(d.code for d in result.diagnostics)
    for code in ("C940", "C964", "C306", "C957", "C960", "C411", "C202", "C203", "C303", "C941"):
        assert code in codes, (code, codes)
    # `polcy` is reported with the fix, `wizard` and `explode` with the allowed values.
    messages = "\n".join(f"{d.message} | {d.help}" for d in result.diagnostics)
    assert "did you mean 'policy'?" in messages
    assert "wizard" in messages and "explode" in messages


def test_native_naming_rules_do_not_apply():
    text = (
        b'version: "1.0"\nname: release_lite\nnodes:\n'
        b'  - id: Version_Bump\n    type: deterministic\n    command: pnpm\n'
    )
    codes = {d.code for d in compile_bytes(text, "release_lite.cantbook").diagnostics}
    assert "C206" not in codes
    assert "C964" in codes  # the cleo warning, which names the reason


def test_on_is_read_as_text_without_a_yaml_11_note():
    text = (
        b'version: "1.0"\nname: h\nnodes:\n'
        b'  - id: a\n    type: deterministic\n    command: pnpm\n'
        b'error_handlers:\n  - on: contract_violation\n    action: abort\n'
    )
    result = compile_bytes(text, "h.cantbook")
    assert [d.code for d in result.diagnostics if d.severity.value != "info"] == []
    assert result.playbook.error_policy.by_code[0][0] == "ContractViolation"


def test_content_sniffing_and_the_ambiguous_file(tmp_path):
    cleo = tmp_path / "graph.yaml"
    cleo.write_text('version: "1.0"\nname: graph\nnodes:\n  - id: a\n    type: deterministic\n    command: "true"\n')
    assert compile_path(str(cleo)).playbook.dialect == "cleo"
    both = tmp_path / "both.yaml"
    both.write_text('version: "1.0"\nname: both\ndescription: d\nowner: o\nnodes: []\nsteps:\n  - display: hi\n')
    result = compile_path(str(both))
    assert result.playbook.dialect == "catalyst-yaml"
    assert "C968" in {d.code for d in result.diagnostics}


def test_cleo_playbooks_folder_is_scanned_and_other_hidden_files_are_not(tmp_path):
    books = tmp_path / ".cleo" / "playbooks"
    books.mkdir(parents=True)
    (books / "ship.cantbook").write_text(
        'version: "1.0"\nname: ship\nnodes:\n  - id: a\n    type: deterministic\n    command: "true"\n'
    )
    (books / "notes.yaml").write_text("a: 1\n")
    (tmp_path / ".cleo" / "tasks.yaml").write_text("a: 1\n")
    (tmp_path / "elsewhere.cantbook").write_text(
        'version: "1.0"\nname: elsewhere\nnodes:\n  - id: a\n    type: deterministic\n    command: "true"\n'
    )
    found = sorted(Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)]))
    assert found == [".cleo/playbooks/ship.cantbook", "elsewhere.cantbook"]


def _steps(pb: ir.Playbook) -> list[str]:
    """The lowered steps as `action name` lines, nested branches indented."""
    lines: list[str] = []

    def walk(steps, depth):
        for step in steps:
            cond = step.config.get("condition")
            lines.append(
                "  " * depth
                + " ".join(
                    x for x in (step.action, step.name or "", cond.text if isinstance(cond, ir.Tmpl) else "") if x
                )
            )
            for key in ("then", "else"):
                value = step.config.get(key)
                if isinstance(value, ir.StepsV):
                    lines.append("  " * depth + f" {key}:")
                    walk(value.steps, depth + 1)
            for branch in _branches(step):
                lines.append("  " * depth + f" when {branch.get('when').text}:")
                walk(branch.get("steps").steps, depth + 1)

    walk(pb.steps, 0)
    return lines


def _branches(step: ir.Step) -> list[ir.MapV]:
    branches = step.config.get("branches") if step.action == "route" else None
    return list(branches.items) if isinstance(branches, ir.ListV) else []


def test_triage_lowers_to_a_route_over_the_context_up_to_the_join():
    pb = compile_path(str(EXAMPLES / "triage.cantbook")).playbook
    has = 'Object.keys(bindings).includes("complexity")'
    assert _steps(pb) == [
        "ai-prompt classify",
        "route",
        f' when ${{{{ !({has} && bindings["complexity"] === "low") }}}}:',
        "  ai-prompt research",
        f' when ${{{{ ({has} && bindings["complexity"] === "low") }}}}:',
        "ai-prompt plan",
    ]
    route = pb.steps[1]
    # Messages name the node and the guards as the cantbook writes them, not the lowered expressions.
    assert route.config.get("label") == ir.Lit("the edges out of 'classify'")
    # Shown by the node the author wrote, not `route@10`; its name stays free for the node's step.
    assert (route.display_name, route.name) == ("classify", None)
    assert [b.get("label").value for b in _branches(route)] == [
        "to 'research' when complexity does not equal \"low\"",
        "to 'plan' when complexity equals \"low\"",
    ]
    assert pb.unrunnable == ()
    classify, plan = pb.steps[0], pb.steps[2]
    assert classify.config.get("skill") == ir.Lit("ct-research-agent")
    assert classify.bindings.text == "${{ classify }}"  # the agent's output merges into the context
    assert plan.requires.code == "ContractViolation"
    assert plan.requires.checks[0].args.get("expression").text == f"${{{{ {has} }}}}"


def test_dependency_order_is_the_graphs_not_the_files():
    text = b"""version: "1.0"
name: order
nodes:
  - id: third
    type: deterministic
    command: "true"
    depends: [second]
  - id: first
    type: deterministic
    command: "true"
  - id: second
    type: deterministic
    command: "true"
    depends: [first]
    timeout_ms: 1500
    on_failure:
      max_iterations: 3
"""
    pb = compile_bytes(text, "order.cantbook").playbook
    assert [s.name for s in pb.steps] == ["first", "second", "third"]
    second = pb.steps[1]
    assert second.timeout == 1.5
    assert second.error_policy.default.retry_count == 2
    assert pb.steps[0].error_policy.default.retry_count == 2  # cleo's default cap of 3
    assert pb.unrunnable == ()


def test_release_lite_lowers_its_gate_contract_and_identity():
    pb = compile_path(str(EXAMPLES / "release-lite.cantbook")).playbook
    assert pb.unrunnable == ()
    review = next(s for s in pb.steps if s.name == "review")
    assert review.action == "checkpoint" and isinstance(review.config.get("message"), ir.Tmpl)
    assert review.config.get("policy") == ir.Lit("human")  # conservative: a person, even --mode autonomous
    assert review.ensures.code == "ApprovalRejected"
    assert [e.key for e in review.bindings.entries] == ["__lastApproval"]
    publish = next(s for s in pb.steps if s.name == "publish")
    assert publish.config.get("agent") == ir.Lit("release-lead")
    assert publish.ensures.code == "ContractViolation"
    # the handler `contract_violation: abort` stops at once, whatever the cap
    assert dict(publish.error_policy.by_code)["ContractViolation"] == ir.PolicyAction(
        "Stop", message="Publishing did not report success; stop here."
    )
    assert pb.inputs[1].default == ir.Lit("latest") and not pb.inputs[1].required


@pytest.fixture
def project(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".cleo" / "playbooks").mkdir(parents=True)
    return tmp_path


def _catalyst(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", *args], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_deterministic_cantbook_runs_with_argv_and_no_shell(project):
    (project / ".cleo" / "playbooks" / "echo-twice.cantbook").write_text(
        """version: "1.0"
name: echo-twice
inputs:
  - name: word
    default: "$(touch pwned)"
nodes:
  - id: second
    type: python
    depends: [first]
""".replace(
            "    type: python\n",
            f"    type: deterministic\n    command: {sys.executable}\n    args: [-c, \"print('second')\"]\n",
        )
        + f"""  - id: first
    type: deterministic
    command: {sys.executable}
    args: [-c, "import sys; print('first', sys.argv[1])", "{{{{ inputs.word }}}}"]
"""
    )
    run = _catalyst(project, "run", "echo-twice", "--mode", "autonomous")
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "first $(touch pwned)" in out and out.index("first $(") < out.index("second")
    assert not (project / "pwned").exists()


def test_run_refuses_a_cantbook_with_errors(project):
    (project / ".cleo" / "playbooks" / "fix-loop.cantbook").write_text((EXAMPLES / "fix-loop.cantbook").read_text())
    run = _catalyst(project, "run", "fix-loop")
    assert run.returncode == 1
    assert "C947" in run.stdout + run.stderr and "nothing was run" in run.stdout + run.stderr


def test_list_addresses_cantbooks_by_file_stem(project):
    (project / ".cleo" / "playbooks" / "rl.cantbook").write_text((EXAMPLES / "release-lite.cantbook").read_text())
    listing = _catalyst(project, "list")
    assert "rl  (.cleo/playbooks/rl.cantbook)" in listing.stdout


# -- hostile cantbooks ----------------------------------------------------------------------------


def _chain(count: int, *, extra: str = "") -> bytes:
    lines = ['version: "1.0"', "name: big", "nodes:"]
    for i in range(count):
        lines += [f"  - id: n{i}", "    type: deterministic", "    command: \"true\""]
        if i:
            lines.append(f"    depends: [n{i - 1}]")
    return ("\n".join(lines) + "\n" + extra).encode()


@pytest.mark.slow
def test_a_10000_node_chain_is_checked_and_lowered():
    result = compile_bytes(_chain(10_000), "big.cantbook")
    assert [d.code for d in result.diagnostics if d.severity.value != "info"] == []
    assert len(result.playbook.steps) == 10_000


@pytest.mark.slow
def test_a_10000_node_cycle_is_a_diagnostic():
    result = compile_bytes(_chain(10_000, extra="edges:\n  - from: n9999\n    to: n0\n"), "big.cantbook")
    cycle = [d for d in result.diagnostics if d.code == "C944"]
    assert len(cycle) == 1 and cycle[0].message.count("→") == 10_000


def test_huge_fan_out_and_self_loops_are_diagnostics():
    nodes = "".join(
        f"  - id: leaf{i}\n    type: deterministic\n    command: \"true\"\n    depends: [root]\n" for i in range(2_000)
    )
    text = (
        f'version: "1.0"\nname: fan\nnodes:\n  - id: root\n    type: deterministic\n    command: "true"\n{nodes}'
    ).encode()
    routing = [d for d in compile_bytes(text, "fan.cantbook").diagnostics if d.code == "C947"]
    assert len(routing) == 1 and "2000 unguarded successors" in routing[0].message
    loop = (
        b'version: "1.0"\nname: loop\nnodes:\n'
        b'  - id: a\n    type: deterministic\n    command: "true"\n    depends: [a]\n'
    )
    assert "'a' \u2192 'a'" in next(
        d.message for d in compile_bytes(loop, "loop.cantbook").diagnostics if d.code == "C944"
    )


#: An id that could break out of its quotes, recolour the terminal or forge a line.
HOSTILE_ID = "a'b`c\x1b[31md\ne"


def _hostile_graph(*, cycle: bool) -> bytes:
    quoted = json.dumps(HOSTILE_ID)
    return (
        f"""version: "1.0"
name: hostile
nodes:
  - id: {quoted}
    type: deterministic
    command: "true"
  - id: b
    type: deterministic
    command: "true"
    depends: [{quoted}, {quoted}, {json.dumps(HOSTILE_ID + "x")}]
    on_failure:
      inject_into: {json.dumps(HOSTILE_ID + "y")}
  - id: c
    type: deterministic
    command: "true"
    requires:
      from: {json.dumps(HOSTILE_ID + "z")}
edges:
  - from: b
    to: {json.dumps(HOSTILE_ID + "w")}
  - from: {quoted}
    to: c
""".encode()
        + (f"  - from: c\n    to: {quoted}\n".encode() if cycle else b"")
    )


def test_node_ids_are_quoted_like_native_names_and_printed_escaped():
    from catalyst_dsl.diagnostics.text import render_text

    cycle = compile_bytes(_hostile_graph(cycle=True), "hostile.cantbook").diagnostics
    (message,) = [d.message for d in cycle if d.code == "C944"]
    assert message.count(f"'{HOSTILE_ID}'") == 2 and " \u2192 'c' \u2192 " in message
    result = compile_bytes(_hostile_graph(cycle=False), "hostile.cantbook")
    messages = {d.code: d.message for d in result.diagnostics}
    for code, suffix in [("C950", "y"), ("C953", "z")]:
        assert f"is '{HOSTILE_ID}{suffix}', which names no node" in messages[code]
    assert f"'b' depends on '{HOSTILE_ID}' twice" in messages["C942"]
    assert any(f"the edge's `to` is '{HOSTILE_ID}w'" in d.message for d in result.diagnostics)
    shown = render_text(result.diagnostics, {"hostile.cantbook": result.source})
    assert "\x1b" not in shown and "'a'b`c\\x1b[31md\\x0ae'" in shown
    assert not any(line.startswith("e'") for line in shown.splitlines())


def test_a_did_you_mean_input_is_a_fix():
    from catalyst_dsl.diagnostics.fixes import replacement

    text = (REPO / "tests" / "golden" / "check" / "cleo-C501-undeclared-input.cantbook").read_bytes()
    result = compile_bytes(text, "cleo-undeclared-input.cantbook")
    (undeclared,) = [d for d in result.diagnostics if d.code == "C501"]
    fix = replacement(undeclared, result.source)
    assert fix is not None and fix.text == "inputs.branch"


def test_deeply_nested_branches_are_refused_not_a_crash():
    # Diamonds inside diamonds: each guarded branch holds the next level.
    depth = 300
    nodes, edges = [], []
    for i in range(depth):
        nodes += [
            f"  - id: d{i}\n    type: agentic\n    skill: s\n",
            f"  - id: x{i}\n    type: agentic\n    skill: s\n",
        ]
        edges.append(
            f"  - from: d{i}\n    to: {'d' + str(i + 1) if i + 1 < depth else 'end'}\n"
            f"    when: {{ field: go, equals: true }}\n"
        )
        edges.append(f"  - from: d{i}\n    to: x{i}\n    when: {{ field: go, notEquals: true }}\n")
        edges.append(f"  - from: x{i}\n    to: {'j' + str(i)}\n")
        nodes.append(f"  - id: j{i}\n    type: agentic\n    skill: s\n")
        edges.append(f"  - from: {'j' + str(i + 1) if i + 1 < depth else 'end'}\n    to: j{i}\n")
    nodes.append("  - id: end\n    type: agentic\n    skill: s\n")
    text = ('version: "1.0"\nname: deep\nnodes:\n' + "".join(nodes) + "edges:\n" + "".join(edges)).encode()
    result = compile_bytes(text, "deep.cantbook")
    assert "C966" in {d.code for d in result.diagnostics}


@pytest.mark.parametrize("value", ["1", "1.5", "true", "null", "[1, 2]", "{a: 1}", '"x"', "~", ".nan", "2026-01-01"])
def test_guards_on_values_of_every_yaml_type(value):
    text = f"""version: "1.0"
name: guards
nodes:
  - id: a
    type: agentic
    skill: s
  - id: b
    type: agentic
    skill: s
  - id: c
    type: agentic
    skill: s
edges:
  - from: a
    to: b
    when: {{ field: f, equals: {value} }}
  - from: a
    to: c
    when: {{ field: f, notEquals: {value} }}
""".encode()
    result = compile_bytes(text, "guards.cantbook")
    assert result.playbook is not None
    errors = [d for d in result.diagnostics if d.severity.value == "error"]
    assert errors == [], errors


def test_a_cap_of_3_gives_exactly_3_attempts(project):
    # Confinement grants the project's directories (never the root itself, which holds .git/).
    (project / "out").mkdir()
    (project / ".cleo" / "playbooks" / "flaky.cantbook").write_text(f"""version: "1.0"
name: flaky
nodes:
  - id: attempt
    type: deterministic
    command: {sys.executable}
    args: [-c, "open('out/attempts.txt', 'a').write('x'); raise SystemExit(1)"]
    on_failure:
      max_iterations: 3
  - id: after
    type: deterministic
    command: {sys.executable}
    args: [-c, "open('out/after.txt', 'w').write('ran')"]
    depends: [attempt]
""")
    run = _catalyst(project, "run", "flaky", "--mode", "autonomous")
    assert run.returncode != 0
    assert (project / "out" / "attempts.txt").read_text() == "xxx"
    assert not (project / "out" / "after.txt").exists()


def test_guards_out_of_dashed_ids_and_on_spaced_fields_are_valid_conditions():
    text = b"""version: "1.0"
name: dashed
nodes:
  - id: deep-research
    type: agentic
    skill: s
  - id: b
    type: agentic
    skill: s
  - id: c
    type: agentic
    skill: s
edges:
  - from: deep-research
    to: b
    when: { field: "needs more", equals: "x}} ${{ 1 }}" }
  - from: deep-research
    to: c
    when: { field: "needs more", notEquals: "x}} ${{ 1 }}" }
"""
    result = compile_bytes(text, "dashed.cantbook")
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []
    condition = _branches(result.playbook.steps[1])[0].get("when")
    assert (
        condition.text
        == '${{ (Object.keys(bindings).includes("needs more") && bindings["needs more"] === "x}} ${{ 1 }}") }}'
    )
    assert result.playbook.steps[0].bindings.text == '${{ get("deep-research") }}'


def test_timeout_ms_zero_is_no_limit_and_negative_is_an_error():
    base = (
        'version: "1.0"\nname: t\nnodes:\n  - id: a\n    type: deterministic\n    command: "true"\n    timeout_ms: {}\n'
    )
    zero = compile_bytes(base.format(0).encode(), "t.cantbook")
    assert "C960" in {d.code for d in zero.diagnostics} and zero.playbook.steps[0].timeout is None
    negative = compile_bytes(base.format(-5).encode(), "t.cantbook")
    assert "C303" in {d.code for d in negative.diagnostics}


def test_inputs_take_their_type_from_the_default():
    text = b"""version: "1.0"
name: typed
inputs:
  - name: count
    default: 3
  - name: tags
    default: [a, b]
  - name: options
    default: {fast: true}
  - name: who
nodes:
  - id: a
    type: deterministic
    command: "true"
"""
    inputs = {i.name: i for i in compile_bytes(text, "typed.cantbook").playbook.inputs}
    assert [inputs[n].type for n in ("count", "tags", "options", "who")] == ["number", "array", "object", "string"]
    assert inputs["tags"].default == ir.ListV((ir.Lit("a"), ir.Lit("b")))


def _loops(*pairs: tuple[str, str], count: int = 5) -> bytes:
    """A chain n0 → n1 → … whose node N loops back to T for each (N, T) given."""
    lines = ['version: "1.0"', "name: loops", "nodes:"]
    back = dict(pairs)
    for i in range(count):
        lines += [f"  - id: n{i}", "    type: agentic", "    skill: s"]
        if i:
            lines.append(f"    depends: [n{i - 1}]")
        if f"n{i}" in back:
            lines += ["    on_failure:", f"      inject_into: {back[f'n{i}']}", "      max_iterations: 2"]
    return ("\n".join(lines) + "\n").encode()


def _shape(steps, depth=0) -> list[str]:
    lines = []
    for step in steps:
        lines.append("  " * depth + (step.name or step.action))
        inner = step.config.get("steps")
        if isinstance(inner, ir.StepsV):
            lines += _shape(inner.steps, depth + 1)
    return lines


def test_loop_backs_become_retry_blocks_inner_ones_inside_outer_ones():
    pb = compile_bytes(_loops(("n3", "n1"), ("n4", "n0"), ("n2", "n1")), "loops.cantbook").playbook
    assert pb.unrunnable == ()
    assert _shape(pb.steps) == [
        "retry-block",
        "  n0",
        "  retry-block",
        "    retry-block",
        "      n1",
        "      n2",
        "    n3",
        "  n4",
    ]
    outer = pb.steps[0]
    assert outer.config.get("maxAttempts") == ir.Lit(2)
    n4 = outer.config.get("steps").steps[-1]
    assert n4.error_policy.default.retry_count == 0  # its attempts are the block's


def test_loop_backs_that_overlap_without_nesting_or_jump_ahead_are_refused():
    result = compile_bytes(_loops(("n2", "n0"), ("n3", "n1")), "loops.cantbook")
    assert [d.code for d in result.diagnostics if d.severity.value == "error"] == ["C966"]
    assert "crosses" in next(d.message for d in result.diagnostics if d.code == "C966")
    assert result.playbook.steps == ()  # nothing half-lowered
    ahead = compile_bytes(_loops(("n1", "n3")), "loops.cantbook")
    assert [d.code for d in ahead.diagnostics if d.severity.value == "error"] == ["C966"]
    assert "runs after 'n1'" in next(d.message for d in ahead.diagnostics if d.code == "C966")


@pytest.mark.slow
def test_thousands_of_loop_backs_are_lowered_without_walking_the_chain_for_each():
    count = 4_000
    pairs = tuple((f"n{i}", f"n{i - 1}") for i in range(1, count, 2))  # n1→n0, n3→n2, …: side by side
    result = compile_bytes(_loops(*pairs, count=count), "loops.cantbook")
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []
    assert len(result.playbook.steps) == count // 2 and {s.action for s in result.playbook.steps} == {"retry-block"}


def test_a_contract_on_a_guarded_edge_into_a_join_is_checked_in_its_branch():
    text = b"""version: "1.0"
name: join
nodes:
  - id: a
    type: agentic
    skill: s
  - id: b
    type: agentic
    skill: s
  - id: c
    type: agentic
    skill: s
edges:
  - from: a
    to: b
    when: { field: go, equals: true }
  - from: a
    to: c
    when: { field: go, notEquals: true }
    contract:
      requires: [reason]
  - from: b
    to: c
"""
    result = compile_bytes(text, "join.cantbook")
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []
    [check] = _branches(result.playbook.steps[1])[1].get("steps").steps
    assert check.name == "a → c (contract)" and check.requires.code == "ContractViolation"
    ensured = compile_bytes(text.replace(b"requires: [reason]", b"ensures: [reason]"), "join.cantbook")
    assert [d for d in ensured.diagnostics if d.severity.value == "error"] == []
    # The branch records the edge it takes; the join's ensures hold `reason` only after that edge.
    [marker] = _branches(ensured.playbook.steps[1])[1].get("steps").steps
    assert marker.name == "a → c (edge)" and marker.bindings.entries[0].key == "__enteredBy"
    join = ensured.playbook.steps[2]
    [held] = [
        c.args.get("expression").text for c in join.ensures.checks if "__enteredBy" in c.args.get("expression").text
    ]
    assert 'bindings.__enteredBy !== "a → c"' in held and '"reason"' in held
