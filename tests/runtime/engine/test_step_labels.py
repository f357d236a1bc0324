"""One name per step: the run's lines, `runs show`, `approve` and `resume` all call a step
by its name (or `action@line`), with the loop iteration it ran in; never by its path."""

from __future__ import annotations

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.engine.paths import step_label
from catalyst_dsl.runtime.engine.step_run import StepRun

LOOP = """
name: loop
description: A checkpoint inside a loop.
owner: Engineer
steps:
  - for-each: item
    in: [a, b]
    steps:
      - name: say
        display: "{{ item }}"
      - checkpoint: "ok {{ item }}?"
"""


def test_a_label_names_the_iteration_and_attempt_counted_from_one():
    assert step_label("say", "steps/0") == "say"
    assert step_label("say", "steps/0/each/2/0") == "say [iteration 3]"
    assert step_label("say", "steps/0/each/1/0/then/0/each/0/1") == "say [iteration 2, iteration 1]"
    assert step_label("lint", "steps/1/attempt/2/0") == "lint [attempt 2]"


def test_a_step_a_dialect_named_for_people_is_shown_by_that_name_and_keeps_its_id():
    route = ir.Step("route", ir.MapV(()), display_name="decide")
    run = StepRun(route, None, None, "steps/0/each/1/1", "route@4")
    assert (run.label, run.sid) == ("decide [iteration 2]", "route@4")
    assert StepRun(ir.Step("route", ir.MapV(())), None, None, "steps/1", "route@4").label == "route@4"


def test_run_show_approve_and_resume_name_the_step_with_its_iteration(project):
    project.playbook("loop", LOOP)
    run = project.run("loop")
    assert "✓ say [iteration 1] (display)" in run.output
    assert "⏸ paused at checkpoint@10 [iteration 1]: ok a?" in run.output
    run_id = project.run_id()

    shown = project.cli("runs", "show", run_id).output
    assert "waiting at checkpoint@10 [iteration 1]: ok a?" in shown
    assert "completed say [iteration 1] (display)" in shown

    approved = project.cli("approve", run_id, "--as", "Engineer").output
    assert approved.startswith(f"approved checkpoint@10 [iteration 1] of run {run_id}")

    resumed = project.cli("resume", run_id).output
    assert "✓ say [iteration 2] (display)" in resumed
    assert "⏸ paused at checkpoint@10 [iteration 2]: ok b?" in resumed
    again = project.cli("resume", run_id).output
    assert "paused at checkpoint@10 [iteration 2]: still waiting" in again

    for text in (run.output, shown, approved, resumed, again):
        assert "steps/" not in text


FAILING_LOOP = """
name: failing-loop
description: A step that fails in the second iteration of a loop.
owner: Engineer
steps:
  - for-each: item
    in: [a, b]
    steps:
      - name: check
        if: "${{ item == 'b' }}"
        then:
          - throw: NotA
            message: "{{ item }} is not a"
"""


def test_a_failure_record_names_the_iteration_the_step_failed_in(project):
    project.playbook("failing-loop", FAILING_LOOP)
    run = project.run("failing-loop")
    assert run.exit_code == 2, run.output
    snapshot = project.snapshot()
    assert [(f["step"], f["label"]) for f in snapshot["failures"]] == [
        ("throw@11", "throw@11 [iteration 2]"),
        ("check", "check [iteration 2]"),
        ("for-each@5", "for-each@5"),
    ]
    assert snapshot["error"]["label"] == "for-each@5"

    shown = project.cli("runs", "show", project.run_id()).output
    assert "failure   check [iteration 2]: NotA: b is not a (attempt 1)" in shown
    assert "failure   throw@11 [iteration 2]: NotA" in shown
    assert "steps/" not in shown


CAUGHT = """
name: caught
description: Failures taken by a catch, in a loop, in a retry-block and by the playbook.
owner: Engineer
steps:
  - name: risky
    try:
      - throw: NotReady
    catch:
      - code: NotReady
        steps:
          - display: recovered
  - for-each: n
    in: [1, 2]
    steps:
      - try:
          - throw: Inner
        catch:
          - code: default
            steps:
              - display: "inner {{ n }}"
  - retry-block:
      - name: flaky
        throw: Flaky
    maxAttempts: 2
catch:
  - code: default
    steps:
      - display: given up
"""


def test_run_show_names_what_a_catch_or_a_retry_took_by_its_step(project):
    project.playbook("caught", CAUGHT)
    project.run("caught")
    shown = project.cli("runs", "show", project.run_id()).output
    lines = [line.strip() for line in shown.splitlines()]
    assert "caught    risky: NotReady from throw@7" in lines
    assert "caught    try@15 [iteration 2]: Inner from throw@16 [iteration 2]" in lines
    assert "failed    retry-block@21 [attempt 2]: Flaky from flaky" in lines
    assert "caught    playbook caught: IterationCapExceeded from retry-block@21" in lines
    timeline = shown[shown.index("timeline") :]
    assert "✗   risky (caught NotReady from throw@7)" in timeline
    assert "✗     try@15 [iteration 1] (caught Inner from throw@16 [iteration 1])" in timeline
    assert "✗ playbook caught (caught IterationCapExceeded from retry-block@21)" in timeline
    assert "steps/" not in shown and "(catch)" not in shown and "retry-block-attempt" not in shown


APPROVED_IN_RETRY = """
name: approved-in-retry
description: A program approved inside a retry-block attempt, which then fails.
owner: Engineer
allowedWritePaths: ["out/**"]
steps:
  - retry-block:
      - name: build
        bash: exit 3
        writes: ["out/**"]
    maxAttempts: 1
"""


def test_run_show_names_an_approval_by_its_step_not_its_path(project):
    project.playbook("approved-in-retry", APPROVED_IN_RETRY)
    project.run("approved-in-retry", "--mode", "autonomous")
    shown = project.cli("runs", "show", project.run_id()).output
    approvals = [line.strip() for line in shown.splitlines() if line.strip().startswith("approval")]
    assert approvals == ["approval  build [attempt 1] by catalyst as - via autonomous: released"], shown
    assert "steps/" not in shown
