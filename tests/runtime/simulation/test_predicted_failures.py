"""A what-if that foresees the run failing says so and exits 2, as that run would; one
whose failures the run goes on past (an error policy, a `try`, the playbook's `catch`, a
step that may not run) exits 0 (docs/plan-format.md, `fails`)."""

from __future__ import annotations

import json

import pytest

HEAD = "name: p\ndescription: d\nowner: Engineer\n"

FAILING = {
    "a step": """
steps:
  - name: notes
    file-read: missing.txt
  - display: after
""",
    "a condition": """
inputs:
  - string: settings
    default: "{"
steps:
  - display: never
    condition: "${{ JSON.parse(settings).ready }}"
""",
    "a write outside the grants": """
allowedWritePaths: ["out/**"]
inputs:
  - string: where
    default: elsewhere.txt
steps:
  - file-write: "{{ where }}"
    content: x
""",
    "a throw": """
steps:
  - throw: NotReady
    message: not yet
""",
    "a try that catches another code": """
steps:
  - try:
      - file-read: missing.txt
    catch:
      - code: CommandFailed
        steps:
          - display: caught
""",
}

SURVIVED = {
    "Continue": """
steps:
  - file-read: missing.txt
    errorPolicy: Continue
""",
    "the playbook's policy": """
errorPolicy: Ignore
steps:
  - file-read: missing.txt
""",
    "a try": """
steps:
  - try:
      - file-read: missing.txt
    catch:
      - code: FileNotFound
        steps:
          - display: caught
""",
    "the playbook's catch": """
steps:
  - file-read: missing.txt
catch:
  - code: default
    steps:
      - display: caught
""",
    "a branch that may not run": """
steps:
  - name: answer
    ai-prompt: "yes or no?"
  - if: "${{ answer == 'yes' }}"
    then:
      - throw: Refused
""",
}


@pytest.mark.parametrize("case", sorted(FAILING))
def test_a_foreseen_failure_exits_2_and_names_the_step(project, case: str) -> None:
    project.playbook("p", HEAD + FAILING[case])
    shown = project.cli("run", "p", "--what-if")
    assert shown.exit_code == 2, shown.output
    assert "A run would fail at " in shown.output
    plan = json.loads(project.cli("run", "p", "--what-if", "--format", "json").output)
    failing = [step for step in _entries(plan["steps"]) if step.get("fails")]
    assert failing and failing[0]["fails"]["code"], plan


@pytest.mark.parametrize("case", sorted(SURVIVED))
def test_a_failure_the_run_goes_on_past_exits_0(project, case: str) -> None:
    project.playbook("p", HEAD + SURVIVED[case])
    shown = project.cli("run", "p", "--what-if")
    assert shown.exit_code == 0, shown.output
    assert "would fail at" not in shown.output
    plan = json.loads(project.cli("run", "p", "--what-if", "--format", "json").output)
    assert not [step for step in _entries(plan["steps"]) if "fails" in step]


def _entries(steps):
    for step in steps:
        yield step
        yield from _entries(step.get("steps") or ())
