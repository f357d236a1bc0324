"""Step checks (`requires:` / `ensures:`): part of the step, through retries and error
policies; what a what-if says of them; and the resume of a step killed in flight, which
its ensures complete without running it again."""

from __future__ import annotations

import time

import pytest

from catalyst_dsl.runtime.engine import attempts as interpreter
from tests.runtime.test_reliability import _side, catalyst, live_snapshots, make_project, spawn
from tests.runtime.simulation.test_whatif import by_path, plan_of


@pytest.fixture(autouse=True)
def no_retry_wait(monkeypatch):
    monkeypatch.setattr(interpreter, "RETRY_BASE_SECONDS", 0.0)


def test_a_requires_that_does_not_hold_fails_the_step_before_it_runs(project):
    project.playbook(
        "pre",
        """
        name: pre
        description: needs a spec first
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: write
            file-write: out/done.txt
            content: done
            requires:
              - file-exists: specs/spec.md
    """,
    )
    result = project.run("pre")
    assert result.exit_code == 2, result.output
    assert (
        "PreconditionFailed: requires check 1 does not hold: file-exists: specs/spec.md (no such file)" in result.output
    )
    assert not project.exists("out/done.txt")
    project.write("specs/spec.md", "# spec\n")
    assert project.run("pre").exit_code == 0
    assert project.read("out/done.txt") == "done"


def test_retry_count_runs_the_step_and_its_ensures_again_until_they_hold(project):
    # The program appends a line per run; the ensures want three lines: the third attempt passes.
    project.playbook(
        "again",
        """
        name: again
        description: retried until its output is complete
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: grow
            bash: "echo line >> out/log.txt"
            writes: [out/log.txt]
            errorPolicy: {default: {action: Stop, retryCount: 3}}
            ensures:
              - file-contains: {path: out/log.txt, regex: "(line\\n){3}"}
    """,
    )
    result = project.run("again", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/log.txt") == "line\n" * 3
    assert project.step("grow")["attempts"] == 3
    failures = project.snapshot()["failures"]
    assert [f["code"] for f in failures] == ["PostconditionFailed", "PostconditionFailed"]


def test_an_ensures_that_never_holds_fails_after_the_last_retry(project):
    project.playbook(
        "never",
        """
        name: never
        description: its output never says PASS
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: verdict
            bash: "echo 'verdict: PASSED' >> out/verdict.txt"
            writes: [out/verdict.txt]
            errorPolicy: {default: {action: Stop, retryCount: 1}}
            ensures:
              - file-contains: {path: out/verdict.txt, regex: "verdict:[ \\t]*PASS\\\\b"}
    """,
    )
    result = project.run("never", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert "PostconditionFailed: ensures check 1 does not hold" in result.output
    assert project.read("out/verdict.txt") == "verdict: PASSED\n" * 2  # two attempts, each checked


def test_error_policy_by_code_and_a_catch_see_the_checks_code(project):
    project.playbook(
        "coded",
        """
        name: coded
        description: a contract violation is caught, a failed postcondition let through
        owner: Engineer
        steps:
          - name: lenient
            display: "first"
            errorPolicy:
              PostconditionFailed: Continue
            ensures:
              - "${{ 1 > 2 }}"
          - try:
              - name: strict
                display: "second"
                ensures:
                  code: ContractViolation
                  checks:
                    - "${{ strict == null }}"
                    - "${{ 2 > 3 }}"
            catch:
              - code: ContractViolation
                steps:
                  - name: caught
                    log-info: "caught {{ $error.code }}: {{ $error.message }}"
    """,
    )
    result = project.run("coded")
    assert result.exit_code == 0, result.output
    assert project.step("lenient")["status"] == "failed"
    assert "caught ContractViolation: ensures check 2 does not hold: ${{ 2 > 3 }}" in result.output


def test_all_any_not_combine_checks_and_a_check_may_raise_its_own_code(project):
    # The verdict check raises VerdictFailed when the verdict says FAIL; otherwise a
    # missing PASS is an ordinary PostconditionFailed.
    project.playbook(
        "verdict",
        """
        name: verdict
        description: a verdict that fails with its own code
        owner: Engineer
        inputs:
          - string: said
        allowedWritePaths: [out/**]
        steps:
          - name: judge
            file-write: out/verdict.md
            content: "verdict: {{ said }}"
            errorPolicy:
              VerdictFailed: Continue
            ensures:
              - not: {file-contains: {path: out/verdict.md, regex: "verdict: FAIL"}}
                code: VerdictFailed
              - any:
                  - file-contains: {path: out/verdict.md, regex: "verdict: PASS"}
                  - all: [file-exists: out/waived.md, "${{ said == 'WAIVED' }}"]
    """,
    )
    result = project.run("verdict", "-i", "said=FAIL", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert (
        "VerdictFailed: ensures check 1 does not hold: not(file-contains: out/verdict.md ~ /verdict: FAIL/)"
        in result.output
    )
    result = project.run("verdict", "-i", "said=WAIVED", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert (
        "PostconditionFailed: ensures check 2 does not hold: any(file-contains: out/verdict.md ~ /verdict: PASS/, "
        "all(file-exists: out/waived.md, ${{ said == 'WAIVED' }}))"
    ) in result.output
    project.write("out/waived.md", "ok")
    assert project.run("verdict", "-i", "said=WAIVED", "--mode", "autonomous").exit_code == 0
    assert project.run("verdict", "-i", "said=PASS", "--mode", "autonomous").exit_code == 0


def test_ensures_read_the_steps_own_result_by_its_name(project):
    project.playbook(
        "own",
        """
        name: own
        description: checks what the program printed and that it ran
        owner: Engineer
        steps:
          - name: hello
            command: {argv: [echo, hello]}
            writes: []
            ensures:
              - "${{ hello.stdout.trim() == 'hello' }}"
              - command-output: {argv: [echo, "one two"], expect: "one two"}
              - command-output: {argv: [printf, "v=12"], match: "^v=[0-9]+$"}
    """,
    )
    result = project.run("own")
    assert result.exit_code == 0, result.output


def test_a_check_program_that_is_not_installed_is_unavailable_not_false(project):
    project.playbook(
        "absent",
        """
        name: absent
        description: a check that cannot run
        owner: Engineer
        steps:
          - display: "hi"
            errorPolicy:
              PreconditionFailed: Continue
            requires:
              - command-output: {argv: [no-such-program-here, x], expect: ""}
    """,
    )
    result = project.run("absent")
    assert result.exit_code == 2, result.output
    assert "ConditionUnavailable" in result.output


def test_a_check_reads_only_what_the_playbook_may_read(project):
    (project.root.parent / "outside.txt").write_text("secret", encoding="utf-8")
    project.playbook(
        "escape",
        """
        name: escape
        description: a check pointed outside the project
        owner: Engineer
        steps:
          - display: "hi"
            requires:
              - file-contains: {path: ../outside.txt, regex: secret}
    """,
    )
    result = project.run("escape")
    assert result.exit_code == 2, result.output
    assert "PermissionDenied" in result.output


def test_a_what_if_says_which_checks_hold_now_without_running_programs(project):
    project.write("specs/spec.md", "verdict: PASS\n")
    project.playbook(
        "planned",
        """
        name: planned
        description: checks seen in a plan
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: write
            file-write: out/report.md
            content: "ok"
            requires:
              - file-contains: {path: specs/spec.md, regex: "PASS"}
            ensures:
              - file-exists: out/report.md
              - command-output: {argv: [touch, out/ran.txt], expect: ""}
          - name: later
            display: "later"
            requires:
              - file-exists: out/missing.md
    """,
    )
    plan = by_path(plan_of(project, "planned"))
    assert plan["steps/0"]["checks"] == [
        {"when": "requires", "check": "file-contains: specs/spec.md ~ /PASS/", "holds": True},
        # the file the step itself would write, as the plan would leave it
        {"when": "ensures", "check": "file-exists: out/report.md", "holds": True},
        {"when": "ensures", "check": "command-output: touch out/ran.txt", "holds": "unknown"},
    ]
    assert plan["steps/0"]["change"] == "create"
    assert plan["steps/1"]["checks"] == [{"when": "requires", "check": "file-exists: out/missing.md", "holds": False}]
    assert plan["steps/1"]["change"] == "unknown"
    assert "PreconditionFailed" in plan["steps/1"]["reason"]
    assert not project.exists("out/ran.txt") and not project.exists("out/report.md")


# -- a step killed in flight, resumed ---------------------------------------------------------------

#: The step marks each start in the side folder, writes its result, then takes long enough
#: to be killed; run again it finishes at once. `{ensures}` is filled in per test.
IN_FLIGHT = """
name: in-flight
description: a step killed while it runs
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - name: build
    bash: |
      echo start >> {side}/starts.txt
      {write}
      if [ "$(wc -l < {side}/starts.txt)" -eq 1 ]; then sleep 60; fi
    writes: [out/**]
{ensures}
  - name: after
    file-write: out/after.txt
    content: after
"""
ENSURES = """    ensures:
      - file-exists: out/built.txt
"""


def _killed_in_flight(tmp_path, write: str, ensures: str):
    """Run the playbook, SIGKILL it while `build` runs, resume it; (project, run id, side, resume)."""
    side = _side(tmp_path)
    project = make_project(
        tmp_path / "project", {"in-flight": IN_FLIGHT.format(side=side, write=write, ensures=ensures)}
    )
    proc = spawn(project, "run", "in-flight", "--mode", "autonomous", log=tmp_path / "first")
    deadline = time.monotonic() + 30
    while not (side / "starts.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)  # past `write`, into the sleep
    proc.kill()
    proc.wait(timeout=30)
    [snapshot] = live_snapshots(project)
    run_id = snapshot.name[4:-5]
    resumed = catalyst(project, "resume", run_id)
    return project, run_id, side, resumed


def test_a_step_killed_in_flight_whose_ensures_hold_is_completed_without_running_again(tmp_path):
    project, run_id, side, resumed = _killed_in_flight(tmp_path, "echo built > out/built.txt", ENSURES)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (side / "starts.txt").read_text() == "start\n"  # not run again
    assert (project / "out/after.txt").read_text() == "after"
    assert "its ensures held on resume" in resumed.stdout


def test_a_step_killed_in_flight_whose_ensures_do_not_hold_runs_again(tmp_path):
    project, run_id, side, resumed = _killed_in_flight(tmp_path, ":", ENSURES.replace("out/built.txt", "out/never.txt"))
    assert (side / "starts.txt").read_text() == "start\nstart\n"
    assert "ensures do not hold" in resumed.stdout
    assert resumed.returncode == 2  # run again, and its ensures still do not hold
    assert "PostconditionFailed" in resumed.stdout


def test_a_step_killed_in_flight_without_ensures_always_runs_again(tmp_path):
    project, run_id, side, resumed = _killed_in_flight(tmp_path, "echo built > out/built.txt", "")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (side / "starts.txt").read_text() == "start\nstart\n"
    assert (project / "out/after.txt").read_text() == "after"


# -- retry-block ----------------------------------------------------------------------------------------

GROWING = """
    name: growing
    description: a block run again until its output is long enough
    owner: Engineer
    allowedWritePaths: [out/**]
    steps:
      - name: block
        retry-block:
          - name: note
            bash: "echo ${{{{ __lastError == null ? 'none' : __lastError.code }}}} >> out/log.txt"
            writes: [out/log.txt]
            ensures:
              - file-contains: {{path: out/log.txt, regex: "(.*\\\\n){{{need}}}"}}
        maxAttempts: 3
        retryOn: [{codes}]
      - log-info: "attempts: {{{{ block.attempts }}}}"
"""


def test_a_retry_block_runs_its_steps_again_with_the_last_error_until_they_pass(project):
    project.playbook("growing", GROWING.format(need=3, codes="PostconditionFailed"))
    result = project.run("growing", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    # attempt 1 saw no error; attempts 2 and 3 the postcondition that ended the one before
    assert project.read("out/log.txt") == "none\nPostconditionFailed\nPostconditionFailed\n"
    assert "attempts: 3" in result.output
    assert "block: attempt 1 of 3 failed (PostconditionFailed" in result.output
    journal = {s["path"]: s for s in project.steps()}
    assert {"steps/0/attempt/1/failed", "steps/0/attempt/2/failed", "steps/0/attempt/3/0"} <= set(journal)


def test_a_retry_block_whose_attempts_are_spent_fails_with_iteration_cap_exceeded(project):
    project.playbook("growing", GROWING.format(need=5, codes="PostconditionFailed"))
    result = project.run("growing", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert (
        "IterationCapExceeded: block: all 3 attempt(s) of the block failed (the last: PostconditionFailed"
        in result.output
    )
    assert project.read("out/log.txt").count("\n") == 3


def test_a_retry_block_lets_other_codes_through_at_once(project):
    project.playbook("growing", GROWING.format(need=5, codes="CommandFailed"))
    result = project.run("growing", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert "PostconditionFailed" in result.output and "IterationCapExceeded" not in result.output
    assert project.read("out/log.txt") == "none\n"


def test_a_retry_block_restarts_only_from_the_steps_retry_from_names(project):
    listed = GROWING.format(need=3, codes="PostconditionFailed").replace(
        "        maxAttempts: 3\n", "        maxAttempts: 3\n        retryFrom: [note]\n"
    )
    project.playbook("growing", listed)
    assert project.run("growing", "--mode", "autonomous").exit_code == 0
    project.write("out/log.txt", "")
    project.playbook(
        "growing",
        listed.replace("retryFrom: [note]", "retryFrom: [other]").replace(
            "        maxAttempts: 3\n", "          - name: other\n            log-info: other\n        maxAttempts: 3\n"
        ),
    )
    result = project.run("growing", "--mode", "autonomous")
    assert result.exit_code == 2, result.output  # note failed, and only `other` starts another attempt
    assert "PostconditionFailed" in result.output and "IterationCapExceeded" not in result.output
    assert project.read("out/log.txt") == "none\n"


def test_a_retry_blocks_attempts_are_counted_across_resumes(project):
    project.playbook(
        "paused",
        """
        name: paused
        description: each attempt pauses, then fails
        owner: Engineer
        steps:
          - name: block
            retry-block:
              - name: mark
                bash: 'echo attempt >> "$TMPDIR/attempts.txt"'
                writes: []
              - checkpoint: "look at the attempt after ${{ __lastError == null ? 'none' : __lastError.code }}"
              - throw: Flaky
            maxAttempts: 2
            retryOn: [Flaky]
    """,
    )
    outcomes = [project.run("paused")]
    run_id = project.run_id()
    while project.snapshot(run_id)["status"] == "paused" and len(outcomes) < 4:
        assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
        outcomes.append(project.cli("resume", run_id))
    assert [o.exit_code for o in outcomes] == [4, 4, 2]
    assert "look at the attempt after none" in outcomes[0].output
    assert "look at the attempt after Flaky" in outcomes[1].output
    assert project.read_temp("attempts.txt") == "attempt\nattempt\n"  # two attempts in all, over three processes
    assert "IterationCapExceeded" in outcomes[-1].output


# -- json-schema ----------------------------------------------------------------------------------------

TREE = """
    name: tree
    description: a value checked against a JSON Schema
    owner: Engineer
    inputs:
      - any: tree
    steps:
      - name: build
        var: made
        value: "${{ tree }}"
        ensures:
          - json-schema:
              value: "${{ made }}"
              schema:
                type: array
                minItems: 1
                items:
                  type: object
                  required: [title, acceptance]
                  properties:
                    title: {type: string, pattern: "\\\\S"}
                    acceptance: {type: array, contains: {type: string, pattern: "\\\\S"}}
"""


def test_a_json_schema_check_holds_for_a_matching_value_and_names_where_another_fails(project):
    project.playbook("tree", TREE)
    assert project.run("tree", tree='[{"title": "a", "acceptance": ["done"]}]').exit_code == 0
    failed = project.run("tree", tree='[{"title": "a", "acceptance": ["done"]}, {"title": " ", "acceptance": ["x"]}]')
    assert failed.exit_code == 2
    assert (
        "PostconditionFailed: ensures check 1 does not hold: "
        "json-schema: ${{ made }} (at $[1].title: ' ' does not match '\\\\S')"
    ) in failed.output
    # a hostile value is matched in linear time: RE2, never backtracking
    slow = project.run("tree", tree='[{"title": "' + "a" * 50_000 + '", "acceptance": []}]')
    assert slow.exit_code == 2 and "$[0].acceptance" in slow.output


def test_a_json_schema_that_cannot_be_used_is_refused_by_the_check(project):
    project.playbook(
        "bad",
        """
        name: bad
        description: unusable schemas
        owner: Engineer
        steps:
          - log-info: x
            ensures:
              - json-schema: {value: 1, schema: {type: nonsense}}
              - json-schema: {value: 1, schema: {type: string, pattern: "(?=a)"}}
    """,
    )
    checked = project.cli("check", "playbooks/bad.yaml")
    assert checked.exit_code == 1 and "C611" in checked.output and "C612" in checked.output
