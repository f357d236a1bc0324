"""A cleo node needs an object: when the mock AI adapter answered it with text, the
failure names the mock's answer as the cause, and the fix says how to configure an AI
adapter or give the mock an answer."""

from __future__ import annotations

import json

NODE = """version: "1.0"
name: think
nodes:
  - id: plan
    type: agentic
    skill: ct-task-executor
    on_failure:
      max_iterations: 1
"""


def test_the_mocks_text_answer_is_named_as_why_a_node_got_no_object(project):
    project.write(".cleo/playbooks/think.cantbook", NODE)
    run = project.cli("run", "think", "--mode", "autonomous")
    assert run.exit_code == 2, run.output
    assert "the AI's answer is text, not a JSON object; the mock AI adapter gave that answer" in run.output
    assert "fix: configure a real AI adapter" in run.output
    assert "CATALYST_MOCK_AI_SCRIPT" in run.output


def test_a_mock_scripted_with_an_object_satisfies_the_node(project, monkeypatch):
    script = project.write("answers.json", json.dumps([{"json": {"plan": "done"}, "repeat": True}]))
    monkeypatch.setenv("CATALYST_MOCK_AI_SCRIPT", str(script))
    project.write(".cleo/playbooks/think.cantbook", NODE)
    run = project.cli("run", "think", "--mode", "autonomous")
    assert run.exit_code == 0, run.output
