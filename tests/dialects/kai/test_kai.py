"""The kai dialect: which files are kai playbooks, what the checker says about them (the
examples of DIALECTS A7 and kai's own playbooks), the IR they lower to, and `kai init`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.compiler import compile_bytes, compile_path, discover
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.project.check import check_project
from catalyst_dsl.project.config import load_project
from catalyst_dsl.diagnostics.text import render_text
from tests.helpers.corpus import SHARED_CORPUS

HERE = Path(__file__).parent
CASES = HERE.parents[1] / "golden" / "kai"
PROJECT = HERE.parents[1] / "golden" / "kai-project"
CORPUS = SHARED_CORPUS / "kai"

SPEC_TO_TASKS = (PROJECT / ".playbooks" / "playbooks" / "spec-to-tasks.yaml").read_text(encoding="utf-8")


def _findings(diagnostics) -> set[tuple[int, str]]:
    return {(d.span.line, d.code) for d in diagnostics}


def _kai(text: str, name: str = "x.yaml") -> object:
    return compile_bytes(text.encode("utf-8"), f"/project/.playbooks/playbooks/{name}")


# -- golden cases of the rules that use existing codes ------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in CASES.glob("*.yaml")))
def test_golden_kai_case(name: str, update_golden: bool) -> None:
    path = CASES / name
    result = compile_path(str(path))
    text = render_text(result.diagnostics, {str(path): result.source}, relative_to=str(CASES)).rstrip("\n") + "\n"
    expected = CASES / (name + ".expected")
    if update_golden:
        expected.write_text(text, encoding="utf-8", newline="\n")
    assert result.playbook is None or result.playbook.dialect == "kai"
    assert text == expected.read_text(encoding="utf-8")


def test_golden_cases_are_named_after_a_code_they_show() -> None:
    for case in CASES.glob("*.yaml"):
        code = case.name.split("-", 1)[0]
        assert f"[{code}]" in (CASES / (case.name + ".expected")).read_text(encoding="utf-8"), case.name


# -- the verdicts of DIALECTS A7 and of kai's own playbooks ------------------------------------------

#: Every finding of `catalyst check` on the A7 examples (the commands exist in the project):
#: (file, line, code). C911, the note that kai's agents are granted the project, is on
#: every playbook's `name` line.
A7 = {
    "spec-to-tasks.yaml": set(),
    "release-checks.yaml": {(36, "C910")},
    "hotfix.yaml": {(9, "C306"), (17, "C006"), (22, "C901"), (31, "C903"), (31, "C909")},
    "nightly.yaml": {(1, "C303"), (10, "C501"), (12, "C303"), (13, "C303"), (14, "C303")},
    "document-feature.yaml": set(),
}


def test_the_examples_get_exactly_their_verdicts(monkeypatch) -> None:
    monkeypatch.chdir(PROJECT)
    sink = DiagnosticSink()
    project = load_project(PROJECT, sink)
    assert not sink.sorted()
    files = discover([str(PROJECT / ".playbooks" / "playbooks")])
    result = check_project(project, files)
    by_file: dict[str, set] = {}
    for d in result.diagnostics:
        by_file.setdefault(Path(d.span.file).name, set()).add((d.span.line, d.code))
    assert sorted(Path(f).name for f in files) == sorted(A7)
    for name, expected in A7.items():
        assert by_file.get(name, set()) == expected | {(1, "C911")}, name
    errors = {
        name: sum(1 for d in result.diagnostics if Path(d.span.file).name == name and d.severity.value == "error")
        for name in A7
    }
    assert errors == {
        "spec-to-tasks.yaml": 0,
        "release-checks.yaml": 0,
        "hotfix.yaml": 4,
        "nightly.yaml": 5,
        "document-feature.yaml": 0,
    }


def test_did_you_mean_for_values_keys_and_arg_names() -> None:
    result = _kai(
        SPEC_TO_TASKS.replace('"spec_exists"', '"spec_exist"')
        .replace("error_policy: \"stop\"", "error_polcy: \"stop\"")
        .replace('args: "{{feature}}"', 'args: "{{featur}}"')
        .replace('model: "opus"', 'model: "Opus"'),
        "spec-to-tasks.yaml",
    )
    helps = {d.code: [] for d in result.diagnostics}
    for d in result.diagnostics:
        helps[d.code].append(d.help)
    assert "did you mean 'spec_exists'?" in helps["C303"]
    assert "did you mean 'opus'?" in helps["C303"]
    assert "did you mean 'error_policy'?" in helps["C202"]
    assert "did you mean 'feature'?" in helps["C501"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")
@pytest.mark.parametrize(
    "name,expected",
    [
        ("auto-feature.yaml", {(1, "C911"), (54, "C908")}),  # `implement` escalates on postconditions it does not have
        ("auto-validate.yaml", {(1, "C911")}),
        ("playbook.tpl.yaml", {(64, "C911")}),
    ],
)
def test_kais_own_playbooks_are_valid(name: str, expected: set) -> None:
    result = compile_path(str(CORPUS / name))
    assert result.playbook is not None and result.playbook.dialect == "kai"
    assert _findings(result.diagnostics) == expected
    assert not result.has_errors


def test_every_mistake_of_a_file_comes_at_once() -> None:
    text = """name: "Bad Name"
description: ""
version: "1.0"
args:
  - name: "feature"
    description: "Feature branch name"
    required: maybe
steps:
  - id: "One"
    command: "speckit.plan"
    autonomy: "always"
    error_policy: "stop"
    preconditions: ["spec_exists", "nope"]
  - id: "two"
    command: "/speckit.tasks"
    args: "{{ feature }} {{ missing }}"
    autonomy: "auto"
    error_polcy: "stop"
    escalation_triggers: ["postcondition_fail"]
    model: "gpt"
"""
    assert _findings(_kai(text).diagnostics) - {(1, "C911")} == {
        (1, "C303"),
        (2, "C203"),
        (7, "C302"),
        (9, "C303"),
        (10, "C901"),
        (11, "C303"),
        (13, "C303"),
        (14, "C203"),
        (16, "C501"),
        (18, "C202"),
        (19, "C908"),
        (20, "C303"),
    }


def test_kai_quirks_are_valid_yaml() -> None:
    text = """name: "quirks"
description: >
  Folded text
  over two lines.
version: 1.0
args: []
steps:
    -   {id: "plan", command: "/speckit.plan", autonomy: auto, error_policy: stop}
    -   preconditions:
        - "plan_exists"
        id: tasks    # a comment after a value is not part of it
        command: /speckit.tasks
        autonomy: auto # fast
        error_policy: "stop"
        postconditions: [tasks_exists,]
"""
    result = _kai(text, "quirks.yaml")
    assert [d.code for d in result.diagnostics] == ["C911"]
    assert result.playbook.description == "Folded text over two lines.\n"


def test_kai_names_keep_their_own_rules() -> None:
    """kai allows a leading digit in names and ids, which the native kebab-case rule refuses."""
    text = SPEC_TO_TASKS.replace('name: "spec-to-tasks"', 'name: "2nd-pass"').replace('id: "plan"', 'id: "1-plan"')
    result = _kai(text, "2nd-pass.yaml")
    assert [d.code for d in result.diagnostics] == ["C911"]
    assert result.playbook.name == "2nd-pass"
    assert result.playbook.steps[0].name == "1-plan"


@pytest.mark.parametrize(
    "text",
    [
        "- a\n- b\n",
        "name: x\nsteps: {a: 1}\nversion: 1\n",
        "steps:\n  - plain\nversion: '1'\nname: x\n",
        (
            "name: [x]\ndescription: {a: b}\nversion: ~\nargs: {a: 1}\n"
            "steps:\n  - id: [a]\n    command: {b: c}\n    args: [x]\n"
            "    autonomy: [auto]\n    error_policy: {}\n"
            "    preconditions: [[a]]\n    parallel_group: [g]\n    model: 3\n"
        ),
        "",
        "# only a comment\n",
        "name: x\nversion: '1'\nsteps:\n  - id: a\n    args: '{{'\n    autonomy: auto\n    error_policy: stop\n",
    ],
)
def test_malformed_kai_files_are_diagnosed_not_crashed(text: str) -> None:
    result = _kai(text)
    assert result.has_errors


# -- recognition -------------------------------------------------------------------------------------------


def test_the_folder_decides_then_the_content(tmp_path: Path) -> None:
    native = "name: native\ndescription: d\nowner: Engineer\nsteps:\n  - display: hi\n"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "spec-to-tasks.yaml").write_text(SPEC_TO_TASKS)
    (tmp_path / "elsewhere" / "native.yaml").write_text(native)
    assert compile_path(str(tmp_path / "elsewhere" / "spec-to-tasks.yaml")).playbook.dialect == "kai"
    assert compile_path(str(tmp_path / "elsewhere" / "native.yaml")).playbook.dialect == "catalyst-yaml"
    # In kai's folder a file is kai's whatever it holds (here: mistakes, not native findings).
    result = compile_bytes(native.encode(), str(tmp_path / ".playbooks" / "playbooks" / "native.yaml"))
    assert result.playbook.dialect == "kai"
    assert {d.code for d in result.diagnostics} >= {"C202", "C203"}


def test_a_file_of_both_shapes_is_reported_and_read_as_native() -> None:
    text = SPEC_TO_TASKS.replace('    error_policy: "stop"\n', '    error_policy: "stop"\n    timeout: 5m\n', 1)
    result = compile_bytes(text.encode(), "/project/elsewhere/spec-to-tasks.yaml")
    assert result.playbook.dialect == "catalyst-yaml"
    assert "C900" in {d.code for d in result.diagnostics}


def test_scans_take_kai_playbooks_but_not_the_template_index_or_sessions(tmp_path: Path) -> None:
    base = tmp_path / ".playbooks"
    for path in (
        base / "playbooks" / "plan.yaml",
        base / "playbooks" / "playbook.tpl.yaml",
        base / "_index.yaml",
        base / "sessions" / "20261124-abc" / "session.yaml",
        base / "templates" / "x.yaml",
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SPEC_TO_TASKS)
    assert [Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)])] == [
        ".playbooks/playbooks/plan.yaml"
    ]


def test_list_and_check_find_kai_playbooks_by_default_and_name_them_by_file_stem(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "catalyst.toml").write_text("")
    folder = tmp_path / ".playbooks" / "playbooks"
    folder.mkdir(parents=True)
    (folder / "plan-only.yaml").write_text(SPEC_TO_TASKS)
    monkeypatch.chdir(tmp_path)
    listed = CliRunner().invoke(cli, ["list"])
    assert listed.exit_code == 0, listed.output
    assert listed.output.startswith("plan-only  (.playbooks/playbooks/plan-only.yaml)")
    checked = CliRunner().invoke(cli, ["check"])
    assert "warning[C803]: the playbook 'spec-to-tasks' is in the file 'plan-only.yaml'" in checked.output
    assert checked.exit_code == 0


# -- lowering ---------------------------------------------------------------------------------------------


def test_release_checks_lowers_to_a_parallel_group_of_agent_steps() -> None:
    result = compile_path(str(PROJECT / ".playbooks" / "playbooks" / "release-checks.yaml"))
    pb = result.playbook
    assert (pb.name, pb.dialect, pb.owner) == ("release-checks", "kai", None)
    assert [(i.name, i.type, i.required) for i in pb.inputs] == [
        ("feature", "string", True),
        ("reviewer", "string", False),
    ]
    assert [r.kind for r in pb.inputs[0].validation] == ["regex"]
    assert [v.value for v in pb.allowed_write_paths] == ["**", "specs/**", ".agreements/**", ".qa/**"]
    group, pr = pb.steps
    assert group.action == "parallel"
    members = group.config.get("steps").steps
    assert [s.name for s in members] == ["agreement-check", "qa-run"]
    assert members[1].config.get("model").value == "haiku"
    assert [v.value for v in members[1].config.get("tools").items] == ["read", "write", "edit", "shell"]
    command = pr.config.get("command")
    assert command.text == "/feature.pr {{feature}} --reviewer {{reviewer}}"
    assert [p.ref.root for p in command.parts if hasattr(p, "ref")] == ["feature", "reviewer"]
    assert pr.config.get("prompt").text == "Feature: {{feature}}"
    assert pr.error_policy.default == ir.PolicyAction("Stop")
    assert (pr.gate.when, pr.gate.options, pr.gate.policy.value) == ("before", ("yes", "skip", "abort"), "human")
    assert [c.kind for c in pr.requires.checks] == ["file-contains", "any"] and pr.requires.code == "PreconditionFailed"
    assert [c.kind for c in pr.ensures.checks] == ["command-output"]
    assert all(s.approved for s in (*members, pr))
    gate = members[0].error_policy
    assert gate.default == ir.PolicyAction("Inquire")
    assert gate.by_code == (
        ("PreconditionFailed", ir.PolicyAction("Suspend")),
        ("AgreementBreaking", ir.PolicyAction("Inquire")),
        ("AgreementBreaking", ir.PolicyAction("Inquire")),
    )
    # gate_on_breaking asks whenever the agreement breaks; the trigger only when the step failed too.
    breaking, trigger, post = members[0].ensures.checks
    assert (breaking.kind, breaking.code, trigger.kind, trigger.code, post.kind, post.code) == (
        "not",
        "AgreementBreaking",
        "any",
        "AgreementBreaking",
        "file-contains",
        None,
    )
    verdict, post = members[1].ensures.checks
    assert (verdict.code, post.kind) == ("VerdictFailed", "any")


def test_policies_triggers_and_skip() -> None:
    text = SPEC_TO_TASKS.replace('autonomy: "gate_always"', 'autonomy: "skip"')
    pb = _kai(text, "spec-to-tasks.yaml").playbook
    plan, tasks = pb.steps
    assert plan.error_policy.default == ir.PolicyAction("Stop", 1)
    assert [code for code, _ in plan.error_policy.by_code] == [
        "PreconditionFailed",
        "PostconditionFailed",
        "AIAdapterError",
        "AIAdapterUnavailable",
        "StepTimeout",
    ]
    assert tasks.condition == ir.Lit(False)
    assert tasks.config.get("command").text == "/speckit.tasks"


def test_an_undeclared_feature_is_an_implicit_required_input() -> None:
    text = SPEC_TO_TASKS.replace(
        'args:\n  - name: "feature"\n    description: "Feature branch name"\n    required: true\n', "args: []\n"
    ).replace('    args: "{{feature}}"\n', "")
    pb = _kai(text, "spec-to-tasks.yaml").playbook
    assert [(i.name, i.required) for i in pb.inputs] == [("feature", True)]


@pytest.mark.parametrize(
    "feature,ok",
    [
        ("012-playbook", True),
        ("a.b_c", True),
        (".hidden", True),
        ("...", True),
        (".", False),
        ("..", False),
        ("../x", False),
        ("a/b", False),
        ("", False),
    ],
)
def test_the_feature_is_one_path_segment(feature: str, ok: bool) -> None:
    import re

    from catalyst_dsl.dialects.kai.model import FEATURE_PATTERN

    assert bool(re.match(FEATURE_PATTERN, feature)) is ok


def test_every_kai_construct_runs(monkeypatch) -> None:
    for name in ("spec-to-tasks", "release-checks", "document-feature"):
        pb = compile_path(str(PROJECT / ".playbooks" / "playbooks" / f"{name}.yaml")).playbook
        assert pb.unrunnable == (), name


def test_compile_prints_the_ir_of_a_kai_playbook() -> None:
    result = CliRunner().invoke(cli, ["compile", str(PROJECT / ".playbooks" / "playbooks" / "document-feature.yaml")])
    assert result.exit_code == 0, result.output
    assert '"dialect": "kai"' in result.output


# -- kai init ------------------------------------------------------------------------------------------------


def test_init_scaffolds_and_keeps_what_exists(tmp_path: Path) -> None:
    first = CliRunner().invoke(cli, ["kai", "init", "--no-stock", str(tmp_path)])
    assert first.exit_code == 0, first.output
    base = tmp_path / ".playbooks"
    assert {p.relative_to(base).as_posix() for p in base.rglob("*")} == {
        "playbooks",
        "sessions",
        "templates",
        "playbooks/playbook.tpl.yaml",
        "_index.yaml",
    }
    assert (base / "_index.yaml").read_text().endswith("playbooks: []\n")
    template = compile_path(str(base / "playbooks" / "playbook.tpl.yaml"))
    assert template.playbook.dialect == "kai" and not template.has_errors
    (base / "_index.yaml").write_text("mine\n")
    second = CliRunner().invoke(cli, ["kai", "init", str(tmp_path)])
    assert "kept     .playbooks/_index.yaml" in second.output
    assert (base / "_index.yaml").read_text() == "mine\n"


def test_init_offers_kais_stock_workflows_which_check_clean_and_are_indexed(tmp_path: Path, monkeypatch) -> None:
    result = CliRunner().invoke(cli, ["kai", "init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / ".playbooks" / "playbooks"
    for name, steps in (("auto-feature", 8), ("auto-validate", 2)):
        assert f"created  .playbooks/playbooks/{name}.yaml" in result.output
        compiled = compile_path(str(folder / f"{name}.yaml"))
        assert compiled.playbook.dialect == "kai" and compiled.playbook.name == name
        assert [d.severity.value for d in compiled.diagnostics if d.severity.value != "info"] == []
        assert f'  - name: "{name}"\n    file: "playbooks/{name}.yaml"\n' in (folder.parent / "_index.yaml").read_text()
        assert f"    steps: {steps}\n" in (folder.parent / "_index.yaml").read_text()
    monkeypatch.chdir(tmp_path)
    checked = CliRunner().invoke(cli, ["check", "--no-cache"])
    assert checked.exit_code == 0 and "0 error(s), 0 warning(s)" in checked.output, checked.output


def test_init_force_rewrites_the_index_from_the_playbooks(tmp_path: Path) -> None:
    folder = tmp_path / ".playbooks" / "playbooks"
    folder.mkdir(parents=True)
    (folder / "plan.yaml").write_text(SPEC_TO_TASKS)
    (tmp_path / ".playbooks" / "_index.yaml").write_text("stale\n")
    result = CliRunner().invoke(cli, ["kai", "init", "--force", str(tmp_path)])
    assert "replaced .playbooks/_index.yaml" in result.output
    index = (tmp_path / ".playbooks" / "_index.yaml").read_text()
    assert '  - name: "spec-to-tasks"\n    file: "playbooks/plan.yaml"\n' in index
    assert '    description: "Plan a specified feature and break it into tasks"\n    steps: 2\n' in index


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")
def test_checking_kais_folder_of_playbooks_finds_no_error(tmp_path: Path, monkeypatch) -> None:
    """`catalyst check` on the corpus folder, with the library checks: kai's files are valid;
    the template, checked outside kai's folder, is named `my-workflow` in another file (C803)."""
    monkeypatch.chdir(tmp_path)
    # --no-cache: the corpus is read, never written (a check keeps its cache in the project).
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", str(CORPUS)])
    assert result.exit_code == 0, result.output
    import json

    found = {
        (Path(d["span"]["file"]).name, d["span"]["line"], d["code"]) for d in json.loads(result.output)["diagnostics"]
    }
    assert found == {
        ("auto-feature.yaml", 1, "C911"),
        ("auto-feature.yaml", 54, "C908"),
        ("auto-validate.yaml", 1, "C911"),
        ("playbook.tpl.yaml", 64, "C911"),
        ("playbook.tpl.yaml", 64, "C803"),
    }


def test_required_step_keys_written_without_a_value_are_reported() -> None:
    text = (
        'name: "e"\ndescription: "d"\nversion: "1.0"\nargs: []\n'
        'steps:\n  - id: ""\n    command: "/a.b"\n    autonomy:\n    error_policy: ""\n'
    )
    assert _findings(_kai(text, "e.yaml").diagnostics) == {(1, "C911"), (6, "C203"), (8, "C203"), (9, "C203")}


def test_a_scan_of_kais_folder_itself_takes_only_its_playbooks(tmp_path: Path, monkeypatch) -> None:
    base = tmp_path / ".playbooks"
    for path in (
        base / "playbooks" / "plan.yaml",
        base / "_index.yaml",
        base / "sessions" / "20261124-abc" / "session.yaml",
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SPEC_TO_TASKS)
    monkeypatch.chdir(tmp_path)
    assert discover([".playbooks"]) == [".playbooks/playbooks/plan.yaml"]
    assert discover([".playbooks/sessions"]) == []
