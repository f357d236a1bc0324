"""`catalyst check --select/--ignore/--statistics/--output-file`, and the `select` and
`ignore` settings with prefixes of codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli

PLAYBOOK = """\
name: deploy
description: "Deploy"
owner: me
steps:
  - dispaly: "deploying"
  - bash: "make deploy"
    timeout: 600000
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "deploy.yaml").write_text(PLAYBOOK, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def codes(*args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", *args])
    return [d["code"] for d in json.loads(result.stdout)["diagnostics"]]


def test_all_findings(project: Path) -> None:
    assert codes() == ["C404", "C817", "C409"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--select", "C4"], ["C404", "C409"]),
        (["--select", "C404,c817"], ["C404", "C817"]),
        (["--select", "C4", "--select", "C8"], ["C404", "C817", "C409"]),
        (["--ignore", "C8"], ["C404", "C409"]),
        (["--select", "C4", "--ignore", "C409"], ["C404"]),
    ],
)
def test_select_and_ignore_take_codes_and_prefixes(project: Path, args: list[str], expected: list[str]) -> None:
    assert codes(*args) == expected


def test_select_replaces_the_settings_and_ignore_adds_to_them(project: Path) -> None:
    (project / "catalyst.toml").write_text('select = ["C8"]\nignore = ["C409"]\n', encoding="utf-8")
    assert codes() == ["C817"]
    assert codes("--select", "C4") == ["C404"]
    assert codes("--ignore", "C817") == []


def test_settings_take_prefixes_too(project: Path) -> None:
    (project / "catalyst.toml").write_text('ignore = ["C4"]\n', encoding="utf-8")
    assert codes() == ["C817"]


def test_an_unknown_setting_code_is_still_reported(project: Path) -> None:
    (project / "catalyst.toml").write_text('ignore = ["C99"]\n', encoding="utf-8")
    assert codes()[0] == "C801"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("C4O4", "no code is or starts with 'C4O4': did you mean 'C404'?"),
        ("C", "no code is or starts with 'C'"),
        ("nope", "no code is or starts with 'NOPE'"),
    ],
)
def test_an_unknown_code_is_a_usage_mistake(project: Path, value: str, said: str) -> None:
    result = CliRunner().invoke(cli, ["check", "--select", value])
    assert result.exit_code == 2
    assert said in result.output


def test_statistics_count_each_code_with_its_name(project: Path) -> None:
    (project / "playbooks" / "more.yaml").write_text(
        PLAYBOOK.replace("deploy", "more").replace("deploying", "more"), encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["check", "--statistics"])
    assert result.exit_code == 1
    assert result.stdout == (
        "2  C404  unknown-action (error)\n"
        "2  C409  timeout-milliseconds (warning)\n"
        "2  C817  unchecked-shell-writes (info)\n"
        "checked 2 file(s): 2 error(s), 2 warning(s), 2 note(s)\n"
    )


def test_statistics_are_text(project: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--statistics", "--format", "json"])
    assert result.exit_code == 2
    assert "--statistics prints a table of text" in result.output


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_output_file_holds_what_standard_output_would(project: Path, fmt: str) -> None:
    printed = CliRunner().invoke(cli, ["check", "--format", fmt])
    written = CliRunner().invoke(cli, ["check", "--format", fmt, "--output-file", "report.out"])
    assert written.exit_code == printed.exit_code == 1
    assert written.stdout == ""
    assert (project / "report.out").read_text(encoding="utf-8") == printed.stdout


@pytest.mark.parametrize("fix", [[], ["--fix"]])
def test_output_file_never_replaces_a_playbook_checked(project: Path, fix: list[str]) -> None:
    caller = project / "playbooks" / "release.yaml"
    caller.write_text('name: release\ndescription: R\nowner: me\nsteps:\n  - playbook: deploy\n', encoding="utf-8")
    for target in ["playbooks/deploy.yaml", "./playbooks/../playbooks/release.yaml"]:
        result = CliRunner().invoke(cli, ["check", *fix, "--output-file", target, "playbooks/release.yaml"])
        assert result.exit_code == 2, result.output
        assert "is a playbook this check reads: the report would replace it" in result.stderr
    assert (project / "playbooks" / "deploy.yaml").read_text(encoding="utf-8") == PLAYBOOK
    assert caller.read_text(encoding="utf-8").endswith("  - playbook: deploy\n")


@pytest.mark.parametrize(
    "command",
    [
        ["run", "deploy", "--what-if", "--what-if-report", "playbooks/deploy.yaml"],
        ["run", "release", "--what-if", "--what-if-report", "./playbooks/../playbooks/deploy.yaml"],
        ["graph", "deploy", "-o", "playbooks/deploy.yaml"],
        ["graph", "-o", "playbooks/release.yaml"],
    ],
)
def test_a_plan_or_a_picture_never_replaces_a_playbook(project: Path, command: list[str]) -> None:
    release = 'name: release\ndescription: R\nowner: me\nsteps:\n  - playbook: deploy\n'
    (project / "playbooks" / "release.yaml").write_text(release, encoding="utf-8")
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2, result.output
    assert "is a playbook of this project: the" in result.stderr and "would replace it" in result.stderr
    assert (project / "playbooks" / "deploy.yaml").read_text(encoding="utf-8") == PLAYBOOK
    assert (project / "playbooks" / "release.yaml").read_text(encoding="utf-8") == release


def test_checking_one_file_reports_calls_elsewhere_to_a_playbook_that_is_gone(project: Path) -> None:
    # As after `git mv greet.yaml hi.yaml`: the hook names hi.yaml, not the caller.
    (project / "playbooks" / "deploy.yaml").write_text(
        'name: deploy\ndescription: D\nowner: me\nsteps:\n  - display: "deploying"\n', encoding="utf-8"
    )
    (project / "playbooks" / "welcome.yaml").write_text(
        "name: welcome\ndescription: W\nowner: me\nsteps:\n  - playbook: greet\n", encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["check", "--format", "json", "playbooks/deploy.yaml"])
    found = [(d["code"], d["span"]["file"], d["span"]["line"]) for d in json.loads(result.stdout)["diagnostics"]]
    assert result.exit_code == 1 and found == [("C804", "playbooks/welcome.yaml", 5)]


@pytest.mark.parametrize(
    "command",
    [
        ["check", "--output-file", "missing/report.txt"],
        ["check", "--output-file", ""],
        ["graph", "-o", "missing/calls.svg"],
        ["run", "deploy", "--what-if", "--what-if-report", "missing/deploy.plan.json"],
    ],
)
def test_an_output_with_nowhere_to_go_is_a_usage_mistake(project: Path, command: list[str]) -> None:
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2, result.output  # not 1, which a check gives for its findings
    assert "there is no folder" in result.stderr or "an empty path names no file" in result.stderr
