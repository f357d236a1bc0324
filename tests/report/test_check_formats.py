"""`catalyst check --format sarif|github|json`: SARIF validated against the official
SARIF 2.1.0 schema, GitHub workflow commands and their escaping, the JSON style."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.diagnostics.codes import CODES
from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.report.github import escape_data, escape_property, render_github
from catalyst_dsl.syntax.source import Span

SARIF_SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

BROKEN = """\
name: broken
descripton: A playbook with mistakes
owner: Engineer
steps:
  - dispaly: "hello"
  - display: "waiting"
    timeout: 600000
"""


def check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str, env: dict | None = None):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(cli, ["check", *args], env=env, catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text("")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "broken.yaml").write_text(BROKEN)
    return tmp_path


def test_sarif_validates_against_the_official_schema(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = check(project, monkeypatch, "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(CODES)
    by_code = {r["ruleId"]: r for r in run["results"]}
    assert set(by_code) == {"C202", "C203", "C404", "C409"}
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert by_code["C409"]["level"] == "warning"
    unknown_action = by_code["C404"]
    assert unknown_action["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "playbooks/broken.yaml", "uriBaseId": "SRCROOT"},
        "region": {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 12},
    }
    [fix] = unknown_action["fixes"]
    [change] = fix["artifactChanges"]
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 12},
            "insertedContent": {"text": "display"},
        }
    ]
    assert [
        f["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] for f in by_code["C202"]["fixes"]
    ] == ["description"]
    # A help that proposes no replacement makes no fix.
    assert "fixes" not in by_code["C203"]


def test_sarif_fix_applied_gives_a_clean_line(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = json.loads(check(project, monkeypatch, "--format", "sarif").stdout)
    lines = BROKEN.split("\n")
    for result in log["runs"][0]["results"]:
        for fix in result.get("fixes", []):
            replacement = fix["artifactChanges"][0]["replacements"][0]
            region = replacement["deletedRegion"]
            line = lines[region["startLine"] - 1]
            lines[region["startLine"] - 1] = (
                line[: region["startColumn"] - 1]
                + replacement["insertedContent"]["text"]
                + line[region["endColumn"] - 1 :]
            )
    (project / "playbooks" / "broken.yaml").write_text("\n".join(lines))
    remaining = {
        r["ruleId"] for r in json.loads(check(project, monkeypatch, "--format", "sarif").stdout)["runs"][0]["results"]
    }
    assert remaining == {"C409"}


def test_sarif_of_a_clean_project_is_valid_and_empty(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "playbooks" / "broken.yaml").write_text(
        "name: broken\ndescription: x\nowner: Engineer\nsteps:\n  - display: hi\n"
    )
    result = check(project, monkeypatch, "--format", "sarif")
    assert result.exit_code == 0
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["runs"][0]["results"] == []


def test_github_annotates_the_right_lines(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = check(project, monkeypatch, "--format", "github")
    assert result.exit_code == 1
    commands = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert (
        "::error file=playbooks/broken.yaml,line=5,col=5,endLine=5,endColumn=11,"
        "title=C404 unknown-action::unknown action 'dispaly'%0Ahelp: did you mean 'display'?"
    ) in commands
    assert any(
        c.startswith("::warning file=playbooks/broken.yaml,line=7,col=14,") and "title=C409 timeout-milliseconds::" in c
        for c in commands
    )
    assert len(commands) == 4
    assert result.stdout.splitlines()[-1] == "checked 1 file(s): 3 error(s), 1 warning(s)"


def test_github_is_the_default_on_github_actions(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_actions = check(project, monkeypatch, env={"GITHUB_ACTIONS": "true"})
    assert on_actions.stdout.startswith("::error file=")
    elsewhere = check(project, monkeypatch, env={"GITHUB_ACTIONS": "false"})
    assert elsewhere.stdout.startswith("error[")
    chosen = check(project, monkeypatch, "--format", "text", env={"GITHUB_ACTIONS": "true"})
    assert chosen.stdout.startswith("error[")


def test_github_escaping() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    d = Diagnostic(
        "C202",
        Severity.ERROR,
        "key 'a,b' at x::y\n::error::injected",
        Span("/p/we,ird:name.yaml", 2, 3, 2, 6),
        notes=("50%",),
    )
    [line] = render_github([d], relative_to="/p").splitlines()
    assert line == (
        "::error file=we%2Cird%3Aname.yaml,line=2,col=3,endLine=2,endColumn=5,title=C202 unknown-key::"
        "key 'a,b' at x::y\\x0a::error::injected%0Anote: 50%25"
    )


def _keys(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def test_json_is_camel_case_and_versioned(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = json.loads(check(project, monkeypatch, "--format", "json").stdout)
    assert (payload["format"], payload["version"]) == ("catalyst-diagnostics", 2)
    span = payload["diagnostics"][0]["span"]
    assert set(span) == {"file", "line", "col", "endLine", "endCol"}
    assert not [k for k in _keys(payload) if "_" in k or "-" in k]


def test_compile_and_list_json_are_camel_case_and_versioned(monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    runner = CliRunner()
    ir = json.loads(runner.invoke(cli, ["compile", "playbooks/write-spec.yaml"]).stdout)
    assert ir["irVersion"] == 2 and "allowedWritePaths" in ir and "finally" in ir
    # Keys of the language's own (a step's config keys) are data and stay as written.
    field_names = [k for k in _keys(ir) if "_" in k]
    assert not field_names, field_names
    listing = json.loads(runner.invoke(cli, ["list", "--json", "playbooks"]).stdout)
    assert (listing["format"], listing["version"]) == ("catalyst-list", 1)
    assert not [k for k in _keys(listing) if "_" in k]


def test_ir_json_round_trips_and_refuses_other_versions() -> None:
    from catalyst_dsl.compiler import compile_path
    from catalyst_dsl.ir.serialize import from_dict, to_dict

    playbook = compile_path(str(Path(__file__).resolve().parents[2] / "playbooks" / "write-spec.yaml")).playbook
    data = to_dict(playbook)
    assert from_dict(data) == playbook
    with pytest.raises(ValueError, match="IR JSON version 1"):
        from_dict({**data, "irVersion": 1})
