"""The playbook's `bindings` object: steps merge values into it with `bindings:`, later
steps read `{{ bindings.x }}` and `get('bindings.x')`, and a resume rebuilds it from the
journal."""

from __future__ import annotations

BOUND = """
    name: bound
    description: steps merge what they produce into the bindings
    owner: Engineer
    reviewers:
      required: [Architect]
    inputs:
      - any: seed
    steps:
      - name: first
        command: {argv: [echo, one]}
        writes: []
        bindings:
          first_stdout: "${{ first.stdout.trim() }}"
          seed: "{{ seed }}"
      - name: pause
        checkpoint: "look"
      - var: n
        value: 2
        bindings: {n: "{{ n }}", seed: "replaced"}
      - name: show
        log-info: "{{ bindings.first_stdout }} ${{ get('bindings.seed') }} ${{ JSON.stringify(bindings) }}"
"""


def test_steps_merge_values_into_the_bindings_and_a_resume_rebuilds_them(project):
    project.playbook("bound", BOUND)
    paused = project.run("bound", seed="[1, 2]")
    assert paused.exit_code == 4, paused.output
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    resumed = project.cli("resume", run_id, "-i", "seed=[1, 2]")
    assert resumed.exit_code == 0, resumed.output
    # `first` was not run again: its journaled result gave the bindings back
    assert 'one replaced {"first_stdout":"one","seed":"replaced","n":2}' in resumed.output
    assert resumed.output.count("│ one") == 0


def test_the_checker_types_bindings_and_refuses_inputs_and_steps_that_would_hide_them(project):
    project.playbook(
        "hidden",
        """
        name: hidden
        description: names that hide the bindings
        owner: Engineer
        inputs:
          - string: bindings
        steps:
          - name: bindings
            display: "x"
            bindings: [not, a, mapping]
          - display: "{{ bindings.anything.at.all }}"
    """,
    )
    result = project.cli("check", "playbooks/hidden.yaml")
    assert result.exit_code == 1
    assert result.output.count("C614") == 2
    assert "'bindings' expects" in result.output


SPREAD = """
    name: spread
    description: a step merges every key of an object it produced
    owner: Engineer
    steps:
      - name: report
        var: r
        value: {passed: true, count: 3}
        bindings: "${{ r }}"
      - name: gate
        checkpoint: "ok?"
        bindings:
          approval: "${{ gate.approval }}"
      - name: text
        var: t
        value: "not an object"
        bindings: "${{ JSON.parse(JSON.stringify(t)) }}"
      - log-info: "never ${{ bindings.count }}"
"""


def test_a_bindings_expression_merges_every_key_of_an_object_and_refuses_anything_else(project):
    project.playbook("spread", SPREAD)
    run = project.run("spread", "--mode", "autonomous")
    assert run.exit_code == 2, run.output
    assert "InvalidBindings" in run.output and "a string" in run.output
    assert project.snapshot()["approvals"][-1]["via"] == "autonomous"
    gate = project.step("gate")
    assert gate["result"]["approval"]["via"] == "autonomous" and gate["result"]["approval"]["by"] == "catalyst"
    assert gate["result"]["approval"]["at"].endswith("Z")
    assert "never" not in run.output


def test_the_checker_refuses_a_bindings_expression_that_is_not_an_object(project):
    project.playbook(
        "typed",
        """
        name: typed
        description: a text is not an object to merge
        owner: Engineer
        steps:
          - var: t
            value: "text"
            bindings: "${{ t }}"
    """,
    )
    result = project.cli("check", "playbooks/typed.yaml")
    assert result.exit_code == 1 and "C502" in result.output


def test_an_error_policy_message_is_the_fix_of_a_stop_and_shown_beside_a_continue(project):
    project.playbook(
        "told",
        """
        name: told
        description: error policies with their own words
        owner: Engineer
        steps:
          - throw: {code: Broken, message: "it broke"}
            errorPolicy: {default: {action: Continue, message: "carry on regardless"}}
          - throw: {code: Broken, message: "it broke again"}
            errorPolicy: {Broken: {action: Stop, message: "call the on-call engineer"}}
    """,
    )
    run = project.run("told")
    assert run.exit_code == 2, run.output
    assert "it broke (carry on regardless)" in run.output
    assert "fix: call the on-call engineer" in run.output
    project.playbook(
        "wrong",
        """
        name: wrong
        description: a message that is not text
        owner: Engineer
        steps:
          - log-info: hi
            errorPolicy: {default: {action: Stop, message: [a]}, Other: {action: Stop, mesage: x}}
    """,
    )
    checked = project.cli("check", "playbooks/wrong.yaml")
    assert checked.exit_code == 1 and "C302" in checked.output and "C202" in checked.output
