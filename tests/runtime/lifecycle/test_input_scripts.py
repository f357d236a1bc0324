"""An input validated by a script: JavaScript run with node when a run starts, before any
step, with the value as data; a what-if lists it without starting it."""

from __future__ import annotations

import json
import shutil

import pytest

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

VALIDATED = """
name: validated
description: An input a script validates.
owner: Engineer
allowedWritePaths: ["out/**"]
inputs:
  - string: ticket
    validation:
      - script: |
          const v = get('value');
          return v.length % 2 === 0 && get('ticket') === v;
        code: OddTicket
        message: an even number of characters
steps:
  - file-write: out/ran.txt
    content: "{{ ticket }}"
"""


@needs_node
def test_a_value_the_script_accepts_starts_the_run(project):
    project.playbook("validated", VALIDATED)
    run = project.run("validated", ticket="ab")
    assert run.exit_code == 0, run.output
    assert project.read("out/ran.txt") == "ab"


@needs_node
def test_a_value_the_script_refuses_stops_the_run_before_any_step(project):
    project.playbook("validated", VALIDATED)
    run = project.run("validated", ticket="abc")
    assert run.exit_code == 1, run.output
    assert "ticket: 'abc' does not pass its validation script (rule 1) (an even number of characters)" in run.output
    assert "fix: pass -i ticket=<a value the script accepts>" in run.output
    assert not project.exists("out/ran.txt") and project.live_snapshots() == []


@needs_node
def test_the_value_is_data_never_code(project):
    project.playbook("validated", VALIDATED)
    attack = "x'); require('fs').writeFileSync('PWNED', 'x'); ('"
    run = project.run("validated", ticket=attack)  # of an even length: the script accepts it as text
    assert run.exit_code == 0, run.output
    assert project.read("out/ran.txt") == attack and not project.exists("PWNED")


@needs_node
def test_the_script_is_confined_like_a_step(project):
    project.playbook(
        "validated",
        VALIDATED.replace(
            "const v = get('value');", "require('fs').writeFileSync('out/escaped.txt', 'x'); const v = get('value');"
        ),
    )
    (project.root / "out").mkdir()
    run = project.run("validated", ticket="ab")
    assert run.exit_code == 1, run.output
    assert "its validation script (rule 1) failed" in run.output
    assert not project.exists("out/escaped.txt")


def test_the_what_if_says_the_script_would_run_and_starts_nothing(project):
    project.playbook("validated", VALIDATED)
    shown = project.run("validated", "--what-if", "--format", "json", ticket="abc")
    assert shown.exit_code == 0, shown.output
    [script, write] = json.loads(shown.output)["steps"]
    assert (script["step"], script["action"], script["change"]) == ("ticket (validation script)", "script", "unknown")
    assert "validates the input ticket before any step runs" in script["reason"]
    assert write["action"] == "file-write"


def test_check_knows_the_script_rule(project):
    project.playbook("validated", VALIDATED)
    checked = project.cli("check", "playbooks/validated.yaml")
    assert checked.exit_code == 0, checked.output


CALLER = """
name: caller
description: Calls the validated playbook with a ticket.
owner: Engineer
allowedWritePaths: ["out/**"]
inputs:
  - string: given
steps:
  - playbook: validated
    inheritPermissions: true
    inputs:
      ticket: "{{ given }}"
"""


@needs_node
def test_the_inputs_a_caller_passes_are_validated_by_the_script_too(project):
    project.playbook("validated", VALIDATED)
    project.playbook("caller", CALLER)
    accepted = project.run("caller", "--mode", "autonomous", given="abcd")
    assert accepted.exit_code == 0, accepted.output
    assert project.read("out/ran.txt") == "abcd"
    refused = project.run("caller", "--mode", "autonomous", given="abc")
    assert refused.exit_code == 2, refused.output
    assert "InvalidInputs" in refused.output and "does not pass its validation script (rule 1)" in refused.output
    assert project.read("out/ran.txt") == "abcd"  # the called playbook's step never ran
