"""The command line, through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from catalyst_dsl.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_check_clean_sample_playbooks_exits_0() -> None:
    result = run("check", str(ROOT / "playbooks"))
    assert result.exit_code == 0, result.output
    assert "0 error(s)" in result.stdout


def test_check_errors_exit_1_with_caret(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ndescription: x\nowner: me\nsteps:\n  - dispaly: hi\n")
    result = run("check", str(bad))
    assert result.exit_code == 1
    assert "error[C404]: unknown action 'dispaly'" in result.stdout
    assert "^~~~~~~" in result.stdout
    assert "did you mean 'display'?" in result.stdout


def test_check_json_format(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ndescription: x\nowner: me\nsteps: []\n")
    result = run("check", "--format", "json", str(bad))
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    [d] = payload["diagnostics"]
    assert (d["code"], d["name"], d["severity"]) == ("C204", "no-steps", "error")
    assert d["span"]["line"] == 4 and d["span"]["col"] == 1
    assert payload["summary"] == {"error": 1, "warning": 0, "info": 0}


def test_usage_mistakes_exit_2(tmp_path: Path) -> None:
    assert run("check", str(tmp_path / "missing.yaml")).exit_code == 2
    assert run("check", "--format", "xml", str(ROOT / "playbooks")).exit_code == 2
    assert run("frobnicate").exit_code == 2


def test_compile_prints_versioned_ir() -> None:
    result = run("compile", str(ROOT / "playbooks" / "write-spec.yaml"))
    assert result.exit_code == 0, result.output
    ir = json.loads(result.stdout)
    assert ir["irVersion"] == 2 and ir["name"] == "write-spec"
    assert [s["action"] for s in ir["steps"]] == ["file-exists", "ai-prompt", "file-write", "checkpoint", "return"]


def test_compile_refuses_a_playbook_with_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\n")
    result = run("compile", str(bad))
    assert result.exit_code == 1
    assert "C203" in result.stderr
