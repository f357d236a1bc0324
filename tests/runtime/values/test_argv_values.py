"""Values in argv steps (`command`, cleo's deterministic nodes): each word is one argument,
the word a program runs is refused, and the code of `bash -c` gets its values by reference."""

from __future__ import annotations

import json

import pytest

PAYLOADS = ["x; touch PWNED", "$(touch PWNED)", "'\"; touch PWNED #", "a[$(touch PWNED)]", "\ntouch PWNED", "-c"]


def _command(project, argv: list[str], writes: str = "[out/**]") -> None:
    project.playbook(
        "argv",
        (
            "name: argv\ndescription: values in argv\nowner: Engineer\n"
            "inputs:\n  - name: v\n    type: string\n"
            f"steps:\n  - command:\n      argv: {json.dumps(argv)}\n    writes: {writes}\n"
        ),
    )


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_code_of_bash_c_reads_its_values_by_reference(project, payload):
    (project.root / "out").mkdir()
    _command(project, ["bash", "-c", "printf '%s|' {{ inputs.v }} \"{{ inputs.v }}\" '{{ inputs.v }}' > out/got", "_"])
    result = project.run("argv", "--mode", "autonomous", v=payload)
    assert result.exit_code == 0, result.output
    assert not project.exists("PWNED")
    assert project.read("out/got") == f"{payload}|{payload}|{payload}|"


def test_the_plan_shows_the_code_with_references(project):
    _command(project, ["env", "A=1", "sh", "-c", "echo {{ inputs.v }}"])
    plan = json.loads(project.run("argv", "--what-if", "--format", "json", v="x; y").stdout)
    step = next(s for s in plan["steps"] if s["action"] == "command")
    assert step["config"]["argv"] == ["env", "A=1", "sh", "-c", 'echo "${CATALYST_V_0}"']
    assert step["config"]["env"] == {"CATALYST_V_0": "x; y"}


@pytest.mark.parametrize(
    "argv",
    [
        ["{{ inputs.v }}", "--version"],
        ["env", "{{ inputs.v }}"],
        ["env", "A=1", "{{ inputs.v }}"],
        ["sudo", "-u", "root", "{{ inputs.v }}"],
        ["xargs", "{{ inputs.v }}"],
        ["timeout", "5", "{{ inputs.v }}"],
        ["find", ".", "-exec", "{{ inputs.v }}", ";"],
        ["python3", "-c", "{{ inputs.v }}"],
        ["python3", "-c", "print('{{ inputs.v }}')"],
        ["node", "-e", "{{ inputs.v }}"],
        ["bash", "{{ inputs.v }}"],
        ["sh", "-c", "eval {{ inputs.v }}"],
        ["bash", "-c", "echo $(( {{ inputs.v }} ))"],
        ["env", "LD_PRELOAD={{ inputs.v }}", "true"],
        ["git", "-c", "{{ inputs.v }}", "status"],
        ["eval", "{{ inputs.v }}"],
        ["bash", "-c", "eval \"$1\"", "_", "{{ inputs.v }}"],
        ["sh", "-c", "echo $(( $1 ))", "_", "{{ inputs.v }}"],
        ["bash", "-c", "echo {{ inputs.v }} | bash"],
    ],
)
def test_a_value_a_program_would_run_is_refused_by_check_and_run(project, argv):
    _command(project, argv, writes="[]")
    checked = project.cli("check")
    assert checked.exit_code == 1 and "C822" in checked.output, checked.output
    result = project.run("argv", "--mode", "autonomous", v="touch PWNED")
    assert result.exit_code != 0 and "C822" in result.output, result.output
    assert not project.exists("PWNED")


@pytest.mark.parametrize(
    "argv",
    [
        ["printf", "%s", "{{ inputs.v }}"],
        ["python3", "-c", "import sys; print(sys.argv[1])", "{{ inputs.v }}"],
        ["bash", "-c", "printf %s \"$1\"", "_", "{{ inputs.v }}"],
        ["env", "A={{ inputs.v }}", "true"],
        ["timeout", "5", "printf", "%s", "{{ inputs.v }}"],
    ],
)
def test_a_value_that_is_an_argument_runs(project, argv):
    _command(project, argv, writes="[]")
    assert project.cli("check").exit_code == 0
    result = project.run("argv", "--mode", "autonomous", v="touch PWNED")
    assert result.exit_code == 0, result.output
    assert not project.exists("PWNED")


def test_a_cleo_deterministic_node_gets_the_same_treatment(project):
    (project.root / "out").mkdir()
    project.write(
        ".cleo/playbooks/node.cantbook",
        """version: "1.0"
name: node
inputs:
  - name: word
    default: "x"
nodes:
  - id: said
    type: deterministic
    command: bash
    args: [-c, "printf '%s' {{ inputs.word }} > out/said"]
  - id: ran
    type: deterministic
    command: env
    args: ["{{ inputs.word }}"]
    depends: [said]
""",
    )
    checked = project.cli("check", ".cleo/playbooks/node.cantbook")
    assert checked.exit_code == 1 and "C822" in checked.output and "behind `env`" in checked.output, checked.output


@pytest.mark.parametrize(
    "argv, runs",
    [
        (["tar", "cf", "out/a.tar", "{{ inputs.v }}"], False),
        (["tar", "cf", "out/a.tar", "--", "{{ inputs.v }}"], True),
        (["git", "ls-remote", "{{ inputs.v }}"], False),
        (["printf", "%s", "{{ inputs.v }}"], True),
        (["git", "ls-remote", "{{ inputs.v }}.git"], False),
        (["git", "ls-remote", "--end-of-options", "{{ inputs.v }}"], True),
    ],
)
def test_a_value_that_would_be_an_option_running_a_program_is_refused_at_run_time(project, argv, runs):
    (project.root / "out").mkdir()
    _command(project, argv)
    result = project.run("argv", "--mode", "autonomous", v="--checkpoint-action=exec=touch PWNED")
    assert not project.exists("PWNED")
    if not runs:
        assert result.exit_code != 0 and "UnsafeValue" in result.output and "as an option" in result.output, (
            result.output
        )
    else:
        assert "UnsafeValue" not in result.output, result.output
