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
    project.playbook("hidden", """
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
    """)
    result = project.cli("check", "playbooks/hidden.yaml")
    assert result.exit_code == 1
    assert result.output.count("C614") == 2
    assert "'bindings' expects" in result.output
