"""The command line, through click's CliRunner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


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


def test_compile_takes_a_playbook_name_as_run_does(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    by_name = run("compile", "write-spec")
    assert by_name.exit_code == 0, by_name.output
    assert by_name.stdout == run("compile", str(ROOT / "playbooks" / "write-spec.yaml")).stdout
    missing = run("compile", "write-spc")
    assert missing.exit_code == 1
    assert "error: no playbook named `write-spc` in playbooks/" in missing.stderr
    assert "help: did you mean 'write-spec'?" in missing.stderr
    assert "Traceback" not in missing.output


def test_explain_a_code_by_code_number_or_name() -> None:
    for asked in ("C813", "813", "write-not-allowed"):
        result = run("explain", asked)
        assert result.exit_code == 0, result.output
        assert result.output.startswith("C813 write-not-allowed (error)\n")
        assert "error[C813]" in result.output  # the packaged example
    listed = run("explain", "--list")
    assert "C404  error    unknown-action" in listed.output


def test_explain_an_unknown_code_suggests_one() -> None:
    result = run("explain", "unknown-actoin")
    assert result.exit_code == 2
    assert "did you mean 'unknown-action'?" in result.output


def test_actions_lists_and_describes_the_catalog() -> None:
    listed = run("actions")
    assert listed.exit_code == 0 and any(line.startswith("file-write ") for line in listed.output.splitlines())
    one = run("actions", "file-write")
    assert "path (required)" in one.output and "result: {path, bytesWritten}" in one.output
    wrong = run("actions", "file-writ")
    assert wrong.exit_code == 2 and "did you mean 'file-write'?" in wrong.output


def test_a_directory_scan_skips_yaml_that_is_no_playbook(tmp_path, monkeypatch) -> None:
    (tmp_path / "catalyst.toml").write_text("")
    playbooks = tmp_path / "playbooks"
    playbooks.mkdir()
    (playbooks / "config.yaml").write_text("server:\n  port: 8080\n")
    (playbooks / "list.yaml").write_text("- just\n- a list\n")
    (playbooks / "hello.yaml").write_text("name: hello\ndescription: d\nowner: Engineer\nsteps:\n  - display: hi\n")
    monkeypatch.chdir(tmp_path)
    scanned = run("check")
    assert scanned.exit_code == 0, scanned.output
    assert "checked 1 file(s): 0 error(s)" in scanned.output
    named = run("check", "playbooks/config.yaml")
    assert named.exit_code == 1 and named.output.count("error[C018]") == 1, named.output


def test_the_run_commands_are_loaded_only_when_asked_for() -> None:
    import importlib
    import subprocess
    import sys

    from catalyst_dsl.cli.main import RUN_COMMANDS

    # each command is named with the module that defines it, and each such module's commands are named
    for module in set(RUN_COMMANDS.values()):
        commands = importlib.import_module(f"catalyst_dsl.{module}").COMMANDS
        assert sorted(c.name for c in commands) == sorted(name for name, home in RUN_COMMANDS.items() if home == module)
    probe = (
        "import sys; from click.testing import CliRunner; from catalyst_dsl.cli.main import cli; "
        "CliRunner().invoke(cli, ['--version']); "
        "print('catalyst_dsl.cli.run' in sys.modules, "
        "'catalyst_dsl.cli.lifecycle' in sys.modules, 'catalyst_dsl.runtime.lifecycle.session' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert done.stdout.split() == ["False", "False", "False"], done.stdout + done.stderr
    assert "runs" in run("--help").output and run("runs", "--help").exit_code == 0


# -- help texts that say what the docs say ----------------------------------------------------


def _exit_codes(text: str) -> set[int]:
    """The exit codes an "Exit codes: 0 done, 1 …" paragraph names (each a number then a word)."""
    paragraph = " ".join(text.split("Exit codes")[1].split("\n\n")[0].split())
    return {int(code) for code in re.findall(r"(?:^|[:,] )(\d+) [a-z]", paragraph)}


def test_run_and_resume_help_list_the_exit_codes_of_the_docs() -> None:
    documented = _exit_codes((ROOT / "docs" / "running.md").read_text(encoding="utf-8"))
    assert documented == {0, 1, 2, 3, 4, 5, 130}
    for command in ("run", "resume"):
        shown = run(command, "--help")
        assert shown.exit_code == 0, shown.output
        assert _exit_codes(shown.output) == documented, (command, shown.output)
        assert "5 cancelled" in " ".join(shown.output.split())


def test_check_help_names_every_default_playbook_directory() -> None:
    from catalyst_dsl.project.config import DEFAULT_PLAYBOOK_DIRS

    shown = " ".join(run("check", "--help").output.split())
    for folder in DEFAULT_PLAYBOOK_DIRS:
        assert f"{folder}/" in shown, folder


def test_runs_subcommands_are_named_in_its_help_and_in_the_readme() -> None:
    from catalyst_dsl.cli.lifecycle import runs

    names = set(runs.commands)
    assert names == {"list", "show", "export", "prune", "token", "approval-text"}
    summary = run("runs", "--help").output.split("\n\n")[1]
    readme_row = next(
        line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if "`catalyst runs " in line
    )
    for name in names:
        assert name in summary, name
        assert name in re.split(r"(?<!\\)\|", readme_row)[1], name


TWO_INPUTS = """
    name: two
    description: says its input
    owner: Engineer
    inputs:
      - string: a
    steps:
      - display: "{{a}}"
"""


@pytest.mark.parametrize("what_if", [(), ("--what-if",)])
def test_an_input_given_twice_is_a_usage_mistake_that_names_it_and_its_values(project, what_if) -> None:
    project.playbook("two", TWO_INPUTS)
    result = project.cli("run", "two", "-i", "a=b", "-i", "a=c", *what_if)
    assert result.exit_code == 2, result.output
    assert "the input `a` was given twice, as 'b' and as 'c'" in result.output
    assert "pass -i a=... once" in result.output
    assert "key=value" not in result.output and "Traceback" not in result.output
    assert project.live_snapshots() == []


def test_resume_does_not_show_the_values_of_an_input_given_twice(project) -> None:
    # resume's -i are the secret inputs again: neither value is shown.
    result = project.cli("resume", "-i", "token=hunter2", "-i", "token=hunter3")
    assert result.exit_code == 2, result.output
    assert "the input `token` was given twice (values not shown" in result.output
    assert "hunter" not in result.output


def test_an_input_given_twice_is_not_quoted_when_its_playbook_has_errors(project) -> None:
    # `secret: yes` is text in YAML 1.2: an error, and the input reads as not secret.
    project.playbook(
        "two",
        """
        name: two
        description: says its input
        owner: Engineer
        inputs:
          - string: token
            secret: yes
        steps:
          - display: hello
        """,
    )
    result = project.cli("run", "two", "-i", "token=hunter2", "-i", "token=hunter3")
    assert result.exit_code == 2, result.output
    assert "the input `token` was given twice (values not shown" in result.output
    assert "hunter" not in result.output


@pytest.mark.parametrize("twice", [True, False])
def test_an_input_name_with_a_newline_or_an_escape_cannot_forge_lines(project, twice) -> None:
    project.playbook("two", TWO_INPUTS)
    name = "a\x1b[2J\nerror: forged"
    given = ("-i", f"{name}=1", "-i", f"{name}=2") if twice else ("-i", name)
    result = project.cli("run", "two", *given)
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.output
    assert not any(line.startswith("error: forged") for line in result.output.splitlines()), result.output


@pytest.mark.parametrize("what_if", [(), ("--what-if",)])
def test_an_input_value_or_an_undeclared_name_cannot_forge_lines(project, what_if) -> None:
    project.playbook(
        "num",
        """
        name: num
        description: a number
        owner: Engineer
        inputs:
          - number: n
          - string: s
            allowed: [x, y]
        steps:
          - display: "{{n}}"
        """,
    )
    forged = "\nerror: forged"
    result = project.cli("run", "num", "-i", f"n=1{forged}", "-i", f"s=q{forged}", "-i", f"z{forged}=1", *what_if)
    assert result.exit_code == 1, result.output
    assert "3 input problems" in result.output and "'1\\x0aerror: forged' is not a number" in result.output
    assert not any(line.startswith("error: forged") for line in result.output.splitlines()), result.output
