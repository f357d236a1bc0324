"""The findings docs/checking.md shows for its misspelt playbook are the ones `catalyst
check` prints for it, in the text, GitHub and SARIF formats, to the last index; and its
suppression example, pasted as it is, checks clean."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from catalyst_dsl.cli.main import cli

PAGE = Path(__file__).parents[1] / "docs" / "checking.md"
#: The playbook the page's examples are of: its lines 5 and 7 are the ones they quote.
DEPLOY = """name: deploy
description: Deploy the service
owner: Engineer
steps:
  - dispaly: "deploying"
  - display: "waiting"
    timeout: 600000
"""
FENCE = re.compile(r"^```(text|json|yaml)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    return FENCE.findall(PAGE.read_text(encoding="utf-8"))


def _check(tmp_path: Path, monkeypatch, *options: str) -> str:
    (tmp_path / "playbooks").mkdir(parents=True)
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks" / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return CliRunner().invoke(cli, ["check", "--no-cache", *options, "playbooks/deploy.yaml"]).output


def test_the_text_and_github_examples_are_what_check_prints(tmp_path, monkeypatch):
    shown = [text for kind, text in _blocks() if kind == "text"]
    assert _check(tmp_path, monkeypatch) in shown
    assert _check(tmp_path / "again", monkeypatch, "--format", "github") in shown


def test_the_sarif_example_is_the_result_check_writes(tmp_path, monkeypatch):
    [shown] = [json.loads(text) for kind, text in _blocks() if kind == "json" and '"ruleId"' in text]
    log = json.loads(_check(tmp_path, monkeypatch, "--format", "sarif"))
    results = log["runs"][0]["results"]
    assert shown == results[0]
    assert log["runs"][0]["tool"]["driver"]["rules"][shown["ruleIndex"]]["id"] == shown["ruleId"]


def test_the_suppression_example_silences_every_finding_it_names(tmp_path, monkeypatch):
    [shown] = [text for kind, text in _blocks() if kind == "yaml" and "# catalyst: ignore[" in text]
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks" / "release.yaml").write_text(shown, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checked = CliRunner().invoke(cli, ["check", "--strict", "--no-cache", "playbooks/release.yaml"])
    assert checked.exit_code == 0 and "0 error(s), 0 warning(s)" in checked.output, checked.output
    # Without its comments, the playbook has each finding they name.
    lines = [line.split(" # catalyst:")[0] for line in shown.splitlines() if not line.strip().startswith("# catalyst:")]
    (tmp_path / "playbooks" / "release.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    unsilenced = CliRunner().invoke(cli, ["check", "--no-cache", "playbooks/release.yaml"]).output
    assert all(code in unsilenced for code in ("C409", "C817", "C821")), unsilenced
