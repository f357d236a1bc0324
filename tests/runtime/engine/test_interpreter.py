"""`catalyst run` end to end: the interpreter's behaviours, one per test, through the real CLI.

Each test writes a small playbook into a throwaway project and runs it in-process with
click's CliRunner (see run_helpers.py), then reads the exit code, the console and the
run snapshot under `.xe/runs/`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest


@pytest.fixture
def fast_retries(monkeypatch):
    from catalyst_dsl.runtime.engine import attempts as interpreter

    monkeypatch.setattr(interpreter, "RETRY_BASE_SECONDS", 0.01)


# =====================================================================================
# inputs
# =====================================================================================

TYPED_INPUTS = """
    name: typed
    description: inputs of every kind
    owner: Engineer
    inputs:
      - string: feature-id
        required: true
        transform: kebab-case
      - number: count
        default: 2
      - boolean: loud
        default: false
      - enum: env
        allowed: [dev, staging, prod]
        default: staging
    steps:
      - return:
          feature: "{{feature-id}}"
          count: "{{count}}"
          loud: "{{loud}}"
          env: "{{env}}"
"""


def test_cli_strings_are_coerced_to_the_declared_types(project):
    project.playbook("typed", TYPED_INPUTS)
    result = project.run("typed", feature_id="login-page", count="7", loud="true", env="prod")
    assert result.exit_code == 0, result.output
    snap = project.snapshot()
    assert snap["inputs"] == {"feature-id": "login-page", "count": 7, "loud": True, "env": "prod"}
    assert snap["outputs"] == {"feature": "login-page", "count": 7, "loud": True, "env": "prod"}


def test_defaults_apply_when_an_input_is_not_given(project):
    project.playbook("typed", TYPED_INPUTS)
    assert project.run("typed", feature_id="x-y").exit_code == 0
    assert project.snapshot()["outputs"] == {"feature": "x-y", "count": 2, "loud": False, "env": "staging"}


def test_transform_is_applied_before_the_steps_see_the_value(project):
    project.playbook("typed", TYPED_INPUTS)
    assert project.run("typed", feature_id="Login Page").exit_code == 0
    assert project.snapshot()["outputs"]["feature"] == "login-page"


def test_every_input_problem_is_reported_together_and_nothing_runs(project):
    project.playbook(
        "strict",
        """
        name: strict
        description: strict inputs
        owner: Engineer
        inputs:
          - string: feature-id
            required: true
            validation:
              - regex: "^[a-z0-9-]+$"
                code: InvalidFeatureId
                message: must be kebab-case
          - number: retries
            validation: [{min: 1, max: 5}]
          - enum: env
            allowed: [dev, prod]
          - boolean: dry
        steps:
          - bash: "touch out/ran.txt"
            writes: [out/ran.txt]
    """,
    )
    result = project.run("strict", feature_id="Not Kebab", retries="9", env="qa", dry="maybe")
    assert result.exit_code == 1
    err = result.stderr
    assert "4 input problems" in err
    for name in ("feature-id", "retries", "env", "dry"):
        assert name in err
    assert "must be kebab-case" in err
    assert "fix:" in err
    assert not project.exists("out/ran.txt")
    assert project.snapshot_files() == []


def test_missing_required_input_exits_1(project):
    project.playbook("typed", TYPED_INPUTS)
    result = project.run("typed")
    assert result.exit_code == 1
    assert "feature-id" in result.stderr
    assert project.snapshot_files() == []


def test_undeclared_input_exits_1_with_a_suggestion(project):
    project.playbook("typed", TYPED_INPUTS)
    result = project.run("typed", feature_id="a-b", cuont="3")
    assert result.exit_code == 1
    assert "cuont" in result.stderr
    assert "count" in result.stderr  # did you mean 'count'?
    assert project.snapshot_files() == []


# =====================================================================================
# order and conditions
# =====================================================================================


def test_steps_run_in_definition_order(project):
    project.playbook(
        "order",
        """
        name: order
        description: order
        owner: Engineer
        steps:
          - bash: "echo one >> out/order.txt"
            writes: [out/order.txt]
          - bash: "echo two >> out/order.txt"
            writes: [out/order.txt]
          - bash: "echo three >> out/order.txt"
            writes: [out/order.txt]
    """,
    )
    result = project.run("order", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/order.txt").split() == ["one", "two", "three"]
    assert [s["path"] for s in project.steps()] == ["steps/0", "steps/1", "steps/2"]


def test_false_condition_skips_with_sub_expression_values(project):
    project.playbook(
        "cond",
        """
        name: cond
        description: conditions
        owner: Engineer
        inputs:
          - number: x
            default: 3
        steps:
          - name: big
            bash: "touch out/big.txt"
            writes: [out/big.txt]
            condition: "${{ get('x') > 5 }}"
          - name: small
            bash: "touch out/small.txt"
            writes: [out/small.txt]
            condition: "${{ get('x') <= 5 }}"
    """,
    )
    result = project.run("cond", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert not project.exists("out/big.txt") and project.exists("out/small.txt")
    assert "where get('x') = 3" in result.output
    skipped = project.step("big")
    assert skipped["status"] == "skipped"
    assert "get('x') > 5" in skipped["reason"]
    assert "where get('x') = 3" in skipped["reason"]
    assert project.step("small")["status"] == "completed"


def test_skip_reason_shows_each_part_of_a_compound_condition(project):
    project.playbook(
        "cond2",
        """
        name: cond2
        description: conditions
        owner: Engineer
        inputs:
          - number: coverage
            default: 84.2
        steps:
          - name: tests
            bash: "true"
          - name: ship
            display: shipped
            condition: "${{ get('coverage') >= 90 && get('tests').exitCode == 0 }}"
    """,
    )
    assert project.run("cond2").exit_code == 0
    reason = project.step("ship")["reason"]
    assert "where get('coverage') = 84.2" in reason
    assert "get('tests').exitCode = 0" in reason


# =====================================================================================
# variables, step results, templates
# =====================================================================================


def test_var_inside_a_block_is_seen_after_it_and_assignment_updates_the_outer_var(project):
    project.playbook(
        "scope",
        """
        name: scope
        description: scopes
        owner: Engineer
        steps:
          - var: counter
            value: 1
          - if: "${{ true }}"
            then:
              - var: counter
                value: 2
              - var: inner
                value: only here
          - return:
              counter: "{{counter}}"
              inner-visible: "${{ get('in' + 'ner') !== undefined }}"
    """,
    )
    result = project.run("scope")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"counter": 2, "inner-visible": True}


def test_a_name_from_a_branch_not_taken_is_a_warning_then_a_failure_where_it_is_read(project):
    project.playbook(
        "outside",
        """
        name: outside
        description: scopes
        owner: Engineer
        steps:
          - if: "${{ false }}"
            then:
              - var: inner
                value: 1
          - bash: "touch out/ran.txt"
            writes: [out/ran.txt]
          - display: "{{inner}}"
    """,
    )
    checked = project.cli("check")
    assert checked.exit_code == 0 and "warning[C508]: 'inner' may be undefined here" in checked.output, checked.output
    result = project.run("outside", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert project.exists("out/ran.txt")
    assert "inner" in project.snapshot()["error"]["message"]


def test_named_step_results_are_usable_later(project):
    project.playbook(
        "results",
        """
        name: results
        description: step results
        owner: Engineer
        steps:
          - name: greet
            bash: "echo hello"
          - name: info
            json-read: data.json
          - return:
              said: "{{greet.stdout}}"
              code: "{{greet.exitCode}}"
              owner: "{{info.owner.name}}"
    """,
    )
    project.write("data.json", json.dumps({"owner": {"name": "ada"}}))
    result = project.run("results")
    assert result.exit_code == 0, result.output
    outputs = project.snapshot()["outputs"]
    assert outputs == {"said": "hello\n", "owner": "ada"}  # `code` says how the run ended, not an output


def test_single_template_keeps_its_type_and_mixed_text_is_a_string(project):
    project.playbook(
        "types",
        """
        name: types
        description: template typing
        owner: Engineer
        steps:
          - var: items
            value: [1, 2, 3]
          - var: n
            value: 41
          - return:
              same: "{{items}}"
              number: "{{n}}"
              mixed: "n is {{n}}"
              sum: "${{ get('n') + 1 }}"
    """,
    )
    assert project.run("types").exit_code == 0
    assert project.snapshot()["outputs"] == {"same": [1, 2, 3], "number": 41, "mixed": "n is 41", "sum": 42}


# =====================================================================================
# control actions
# =====================================================================================


def test_if_runs_then_or_else(project):
    project.playbook(
        "branch",
        """
        name: branch
        description: if
        owner: Engineer
        inputs:
          - number: n
        steps:
          - var: size
            value: unknown
          - if: "${{ get('n') > 10 }}"
            then:
              - var: size
                value: big
            else:
              - var: size
                value: small
          - return:
              size: "{{size}}"
    """,
    )
    assert project.run("branch", n="50").exit_code == 0
    assert project.snapshot()["outputs"] == {"size": "big"}
    assert project.run("branch", n="5").exit_code == 0
    assert project.snapshot()["outputs"] == {"size": "small"}


def test_for_each_gives_item_and_index_and_nests(project):
    project.playbook(
        "loops",
        """
        name: loops
        description: for-each
        owner: Engineer
        steps:
          - var: seen
            value: []
          - for-each: row
            in: [a, b]
            index: i
            steps:
              - for-each: col
                in: [1, 2]
                steps:
                  - var: seen
                    value: "${{ get('seen').concat([get('row') + get('i') + '-' + get('col') + get('index')]) }}"
          - return:
              seen: "{{seen}}"
    """,
    )
    result = project.run("loops")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"seen": ["a0-10", "a0-21", "b1-10", "b1-21"]}


def test_try_catch_finally_sees_the_error_code_and_message(project):
    project.playbook(
        "trying",
        """
        name: trying
        description: try
        owner: Engineer
        steps:
          - var: log
            value: []
          - try:
              - var: log
                value: "${{ get('log').concat(['body']) }}"
              - throw: QuotaExceeded
                message: over the limit
              - var: log
                value: "${{ get('log').concat(['not reached']) }}"
            catch:
              - code: QuotaExceeded
                steps:
                  - var: log
                    value: "${{ get('log').concat([get('$error').code + ': ' + get('$error').message]) }}"
            finally:
              - var: log
                value: "${{ get('log').concat(['finally']) }}"
          - return:
              log: "{{log}}"
    """,
    )
    result = project.run("trying")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"log": ["body", "QuotaExceeded: over the limit", "finally"]}


def test_error_code_in_a_catch_block_via_template(project):
    project.playbook(
        "trying2",
        """
        name: trying2
        description: try with $error in templates
        owner: Engineer
        steps:
          - try:
              - bash: "exit 3"
            catch:
              - code: CommandFailed
                steps:
                  - return:
                      code-seen: "{{$error.code}}"
                      text: "{{$error.message}}"
    """,
    )
    result = project.run("trying2")
    assert result.exit_code == 0, result.output
    outputs = project.snapshot()["outputs"]
    assert outputs["code-seen"] == "CommandFailed"
    assert "exited with code 3" in outputs["text"]


def test_catch_that_does_not_match_lets_the_error_through_but_finally_runs(project):
    project.playbook(
        "nomatch",
        """
        name: nomatch
        description: try without a matching catch
        owner: Engineer
        steps:
          - try:
              - throw: Boom
            catch:
              - code: Other
                steps:
                  - bash: "touch out/caught.txt"
                    writes: [out/caught.txt]
            finally:
              - bash: "touch out/finally.txt"
                writes: [out/finally.txt]
    """,
    )
    result = project.run("nomatch", "--mode", "autonomous")
    assert result.exit_code == 2
    assert project.exists("out/finally.txt") and not project.exists("out/caught.txt")
    assert project.snapshot()["error"]["code"] == "Boom"


def test_top_level_catch_matches_the_thrown_code(project):
    project.playbook(
        "topcatch",
        """
        name: topcatch
        description: top-level catch by code
        owner: Engineer
        steps:
          - throw: DeployFailed
            message: the deploy broke
        catch:
          - code: Other
            steps:
              - bash: "touch out/other.txt"
                writes: [out/other.txt]
          - code: DeployFailed
            steps:
              - bash: "echo '{{$error.message}}' > out/handled.txt"
                writes: [out/handled.txt]
    """,
    )
    result = project.run("topcatch", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/handled.txt").strip() == "the deploy broke"
    assert not project.exists("out/other.txt")
    assert project.snapshot()["status"] == "completed"


def test_top_level_catch_default_matches_any_code(project):
    project.playbook(
        "anycatch",
        """
        name: anycatch
        description: top-level catch default
        owner: Engineer
        steps:
          - bash: "exit 1"
        catch:
          - code: default
            steps:
              - bash: "echo '{{$error.code}}' > out/handled.txt"
                writes: [out/handled.txt]
    """,
    )
    result = project.run("anycatch", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/handled.txt").strip() == "CommandFailed"


@pytest.mark.parametrize("fails", [False, True])
def test_top_level_finally_always_runs(project, fails):
    project.playbook(
        "fin",
        """
        name: fin
        description: finally
        owner: Engineer
        inputs:
          - boolean: fail
        steps:
          - throw: Broken
            condition: "{{fail}}"
          - bash: "touch out/body.txt"
            writes: [out/body.txt]
        finally:
          - bash: "touch out/finally.txt"
            writes: [out/finally.txt]
    """,
    )
    result = project.run("fin", "--mode", "autonomous", fail=str(fails).lower())
    assert result.exit_code == (2 if fails else 0), result.output
    assert project.exists("out/finally.txt")
    assert project.exists("out/body.txt") is not fails


def test_return_ends_the_run_with_its_outputs(project):
    project.playbook(
        "early",
        """
        name: early
        description: return
        owner: Engineer
        outputs:
          answer: number
          label: string
        steps:
          - return:
              answer: 42
              label: done
          - bash: "touch out/after.txt"
            writes: [out/after.txt]
    """,
    )
    result = project.run("early")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"answer": 42, "label": "done"}
    assert not project.exists("out/after.txt")


def test_declared_output_not_returned_fails_the_run(project):
    project.playbook(
        "noout",
        """
        name: noout
        description: missing output
        owner: Engineer
        inputs:
          - boolean: give
            default: false
        outputs:
          answer: number
        steps:
          - if: "{{give}}"
            then:
              - return:
                  answer: 1
    """,
    )
    result = project.run("noout")
    assert result.exit_code == 2
    assert "output `answer` was not returned" in result.output
    snap = project.snapshot()
    assert snap["status"] == "failed"
    assert snap["error"]["code"] == "OutputMissing"
    assert project.run("noout", give="true").exit_code == 0


def test_artifacts_must_exist_after_success(project):
    project.playbook(
        "arts",
        """
        name: arts
        description: artifacts
        owner: Engineer
        inputs:
          - boolean: make
            default: false
        artifacts:
          - "out/report.txt"
        steps:
          - file-write: out/report.txt
            content: report
            condition: "{{make}}"
    """,
    )
    result = project.run("arts")
    assert result.exit_code == 2
    assert "out/report.txt" in result.output
    assert project.snapshot()["error"]["code"] == "ArtifactMissing"
    assert project.run("arts", make="true").exit_code == 0
    assert project.read("out/report.txt") == "report"


@pytest.mark.parametrize("artifact", [".", "{{where}}"])
def test_an_artifact_that_names_no_path_fails_the_run_in_words(project, artifact):
    project.playbook(
        "arts",
        f"""
        name: arts
        description: artifacts
        owner: Engineer
        inputs:
          - string: where
            default: ""
        artifacts:
          - "{artifact}"
        steps:
          - log-info: hi
    """,
    )
    result = project.run("arts")
    assert "Traceback" not in result.output and "is not a file or a pattern in the project" in result.output
    if artifact == ".":  # written as it is: the check says it (C812), and nothing runs
        assert result.exit_code == 1 and "error[C812]" in result.output, result.output
        assert project.live_snapshots() == [] and project.archived_snapshots() == []
        return
    assert result.exit_code == 2, result.output
    assert project.snapshot()["error"]["code"] == "InvalidArtifact"


def test_an_artifact_that_is_not_a_string_is_refused_before_the_run(project):
    # `- null` (or an entry left empty) was found missing only when the run ended.
    project.playbook(
        "arts",
        """
        name: arts
        description: artifacts
        owner: Engineer
        artifacts:
          - null
        steps:
          - log-info: hi
    """,
    )
    result = project.run("arts")
    assert result.exit_code == 1, result.output
    assert "nothing was run" in result.output and "C302" in result.output
    assert "each artifact is a path string" in result.output


# =====================================================================================
# functions
# =====================================================================================

FUNCTIONS = """
    name: funcs
    description: functions
    owner: Engineer
    steps:
      - function: greet
        inputs:
          - string: who
            required: true
          - string: greeting
            default: hello
        steps:
          - return:
              text: "{{greeting}}, {{who}}"
      - name: named
        greet:
          who: ada
          greeting: hi
      - name: positional
        greet: grace
      - return:
          named: "{{named.text}}"
          positional: "{{positional.text}}"
"""


def test_function_called_with_named_and_positional_inputs_returns_values(project):
    project.playbook("funcs", FUNCTIONS)
    result = project.run("funcs")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"named": "hi, ada", "positional": "hello, grace"}


# =====================================================================================
# parallel
# =====================================================================================


def test_parallel_branches_run_concurrently(project):
    project.playbook(
        "par",
        """
        name: par
        description: parallel
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - parallel:
              - bash: "touch out/a; n=0; until [ -e out/b ] || [ $n -ge 1000 ]; \
do sleep 0.01; n=$((n+1)); done; test -e out/b"
                writes: [out/a]
              - bash: "touch out/b; n=0; until [ -e out/a ] || [ $n -ge 1000 ]; \
do sleep 0.01; n=$((n+1)); done; test -e out/a"
                writes: [out/b]
    """,
    )
    # Each branch waits until the other has started: one after the other, the first would
    # give up waiting and fail.
    result = project.run("par", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert sorted(s["path"] for s in project.steps() if s["action"] == "bash") == [
        "steps/0/branch/0",
        "steps/0/branch/1",
    ]


# =====================================================================================
# playbook calls
# =====================================================================================

CHILD = """
    name: child
    description: a called playbook
    owner: Engineer
    inputs:
      - string: who
        required: true
    outputs:
      greeting: string
    steps:
      - var: shared
        value: changed by the child
      - return:
          greeting: "hello, {{who}}"
"""


def test_child_playbook_is_isolated_and_returns_its_outputs(project):
    project.playbook("child", CHILD)
    project.playbook(
        "parent",
        """
        name: parent
        description: calls child
        owner: Engineer
        steps:
          - var: shared
            value: parent value
          - name: call
            playbook: child
            inputs:
              who: ada
          - return:
              shared: "{{shared}}"
              greeting: "{{call.greeting}}"
    """,
    )
    result = project.run("parent")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"shared": "parent value", "greeting": "hello, ada"}
    assert project.snapshot()["permissions"]["calls"]["child"]["inheritPermissions"] is False


def test_call_leaving_out_a_required_input_is_rejected_before_running(project):
    project.playbook("child", CHILD)
    project.playbook(
        "parent",
        """
        name: parent
        description: calls child without its input
        owner: Engineer
        steps:
          - playbook: child
    """,
    )
    result = project.run("parent")
    assert result.exit_code == 1
    assert "'who'" in result.stderr
    assert project.snapshot_files() == []


def test_call_by_computed_name_validates_inputs_at_run_time(project):
    project.playbook("child", CHILD)
    project.playbook(
        "parent",
        """
        name: parent
        description: calls a child chosen by input, without its input
        owner: Engineer
        inputs:
          - string: target
        steps:
          - playbook: "{{target}}"
            inputs:
              whom: ada
    """,
    )
    result = project.run("parent", target="child")
    assert result.exit_code == 2
    error = project.snapshot()["error"]
    assert error["code"] == "InvalidInputs"
    assert "who" in error["message"]


WRITER = """
    name: writer
    description: a child that writes where it is told
    owner: Engineer
    inputs:
      - string: path
        required: true
    allowedWritePaths:
      - "shared/**"
      - "child-only/**"
    steps:
      - file-write: "{{path}}"
        content: from the child
"""


def _caller(inherit: str) -> str:
    return f"""
        name: caller
        description: calls the writer by a computed name
        owner: Engineer
        inputs:
          - string: target
          - string: path
        allowedWritePaths:
          - "shared/**"
          - "parent-only/**"
        steps:
          - playbook: "{{{{target}}}}"
            inputs:
              path: "{{{{path}}}}"
            {inherit}
    """


def test_child_without_inherit_permissions_cannot_write(project):
    project.playbook("writer", WRITER)
    project.playbook("caller", _caller(""))
    result = project.run("caller", target="writer", path="shared/a.txt")
    assert result.exit_code == 2
    assert project.snapshot()["error"]["code"] == "PermissionDenied"
    assert "inheritPermissions" in project.snapshot()["error"]["message"]
    assert not project.exists("shared/a.txt")


def test_a_call_that_passes_its_permissions_down_waits_for_an_approval_first(project):
    project.settings('roles = ["Engineer", "Architect"]\n')
    project.playbook("writer", WRITER)
    reviewed = "owner: Engineer\n        reviewers:\n          required: [Architect]"
    project.playbook("caller", _caller("inheritPermissions: true").replace("owner: Engineer", reviewed, 1))
    paused = project.run("caller", target="writer", path="shared/a.txt")
    assert paused.exit_code == 4, paused.output
    assert "approve before it lets the playbook 'writer' write with this playbook's permissions" in paused.output
    assert not project.exists("shared/a.txt")
    run_id = project.run_id()
    recorded = project.cli("approve", run_id, "--as", "Engineer")  # not a required role: recorded only
    assert recorded.exit_code == 4, recorded.output
    assert project.cli("resume", run_id).exit_code == 4 and not project.exists("shared/a.txt")
    assert project.cli("approve", run_id, "--as", "Architect", "--by", "ana").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0
    assert project.read("shared/a.txt") == "from the child"
    [approval] = [a for a in project.snapshot(run_id)["approvals"] if a.get("released")]
    assert approval["path"].endswith("/approve-effects") and approval["role"] == "Architect"


def test_inherited_permissions_are_the_intersection(project):
    project.playbook("writer", WRITER)
    project.playbook("caller", _caller("inheritPermissions: true"))
    ok = project.run("caller", "--mode", "autonomous", target="writer", path="shared/a.txt")
    assert ok.exit_code == 0, ok.output
    assert project.read("shared/a.txt") == "from the child"
    assert project.snapshot()["permissions"]["calls"]["writer"]["inheritPermissions"] is True
    for outside in ("child-only/b.txt", "parent-only/c.txt"):
        refused = project.run("caller", "--mode", "autonomous", target="writer", path=outside)
        assert refused.exit_code == 2, outside
        assert project.snapshot()["error"]["code"] == "PermissionDenied"
        assert not project.exists(outside)


RECURSE = """
    name: recurse
    description: calls itself while n is below a limit
    owner: Engineer
    inputs:
      - number: n
        default: 1
      - number: stop
        default: 100
    outputs:
      depth: number
    steps:
      - name: deeper
        playbook: recurse
        inputs:
          n: "${{ get('n') + 1 }}"
          stop: "{{stop}}"
        condition: "${{ get('n') < get('stop') }}"
      - return:
          depth: "${{ get('n') < get('stop') ? get('deeper').depth : get('n') }}"
"""


def test_guarded_self_call_recurses_within_the_limit(project):
    project.settings("max-depth = 3\n")
    project.playbook("recurse", RECURSE)
    result = project.run("recurse", stop="3")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"depth": 3}


def test_recursion_beyond_max_depth_fails(project):
    project.settings("max-depth = 3\n")
    project.playbook("recurse", RECURSE)
    result = project.run("recurse")
    assert result.exit_code == 2
    error = project.snapshot()["error"]
    assert error["code"] == "RecursionLimit"
    assert "max-depth 3" in error["message"]


# =====================================================================================
# error policies
# =====================================================================================


def test_stop_policy_fails_the_run_with_a_failure_record(project):
    project.playbook(
        "stopping",
        """
        name: stopping
        description: default policy is Stop
        owner: Engineer
        steps:
          - name: breaks
            bash: "echo doomed >&2; exit 7"
          - bash: "touch out/after.txt"
            writes: [out/after.txt]
    """,
    )
    result = project.run("stopping")
    assert result.exit_code == 2
    assert not project.exists("out/after.txt")
    snap = project.snapshot()
    assert snap["status"] == "failed"
    [failure] = snap["failures"]
    assert failure["code"] == "CommandFailed"
    assert "exited with code 7" in failure["message"] and "doomed" in failure["message"]
    assert failure["step"] == "breaks"
    assert failure["attempt"] == 1
    assert isinstance(failure["duration"], (int, float)) and failure["duration"] >= 0
    assert snap["error"]["code"] == "CommandFailed"
    assert "CommandFailed" in result.output


def test_continue_policy_goes_on_and_keeps_the_exit_code_readable(project):
    project.playbook(
        "going",
        """
        name: going
        description: Continue
        owner: Engineer
        steps:
          - name: breaks
            bash: "exit 3"
            errorPolicy: Continue
          - return:
              code-was: "{{breaks.exitCode}}"
    """,
    )
    result = project.run("going")
    assert result.exit_code == 0, result.output
    snap = project.snapshot()
    assert snap["outputs"] == {"code-was": 3}
    assert snap["status"] == "completed"
    assert project.step("breaks")["status"] == "failed"
    assert [f["code"] for f in snap["failures"]] == ["CommandFailed"]
    assert "errorPolicy Continue" in result.output


def test_silently_continue_goes_on_without_reporting_on_the_console(project):
    project.playbook(
        "quiet",
        """
        name: quiet
        description: SilentlyContinue
        owner: Engineer
        steps:
          - name: breaks
            bash: "exit 3"
            errorPolicy: SilentlyContinue
          - bash: "touch out/after.txt"
            writes: [out/after.txt]
    """,
    )
    result = project.run("quiet", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.exists("out/after.txt")
    assert "CommandFailed" not in result.output
    assert project.step("breaks")["status"] == "failed"


def test_ignore_policy_treats_the_failure_as_done(project):
    project.playbook(
        "ignoring",
        """
        name: ignoring
        description: Ignore
        owner: Engineer
        steps:
          - name: breaks
            bash: "exit 3"
            errorPolicy: Ignore
          - bash: "touch out/after.txt"
            writes: [out/after.txt]
    """,
    )
    result = project.run("ignoring", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.exists("out/after.txt")
    assert project.step("breaks")["status"] == "completed"
    assert project.snapshot()["status"] == "completed"


def test_per_code_policy_applies_only_to_its_code(project):
    project.playbook(
        "bycode",
        """
        name: bycode
        description: per-code policy
        owner: Engineer
        inputs:
          - string: code
        steps:
          - throw: "{{code}}"
            errorPolicy:
              CommandFailed:
                action: Continue
          - bash: "touch out/after.txt"
            writes: [out/after.txt]
    """,
    )
    assert project.run("bycode", "--mode", "autonomous", code="CommandFailed").exit_code == 0
    assert project.exists("out/after.txt")
    (project.root / "out/after.txt").unlink()
    assert project.run("bycode", "--mode", "autonomous", code="OtherFailure").exit_code == 2
    assert not project.exists("out/after.txt")
    assert project.snapshot()["error"]["code"] == "OtherFailure"


def test_retry_count_retries_until_the_step_succeeds(project, fast_retries):
    project.playbook(
        "flaky",
        """
        name: flaky
        description: fails the first time
        owner: Engineer
        steps:
          - name: flaky
            bash: |
              if [ ! -f out/marker ]; then touch out/marker; exit 1; fi
              echo second time lucky
            writes: [out/marker]
            errorPolicy:
              default:
                action: Stop
                retryCount: 2
    """,
    )
    result = project.run("flaky", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    step = project.step("flaky")
    assert step["status"] == "completed" and step["attempts"] == 2
    assert step["result"]["stdout"] == "second time lucky\n"
    snap = project.snapshot()
    assert [(f["code"], f["attempt"]) for f in snap["failures"]] == [("CommandFailed", 1)]
    assert "attempt 2 of 3" in result.output


def test_retries_back_off_exponentially_then_apply_the_policy(project, fast_retries, monkeypatch):
    from types import SimpleNamespace

    from catalyst_dsl.runtime.engine import attempts as interpreter

    waits = []
    monkeypatch.setattr(interpreter, "time", SimpleNamespace(monotonic=time.monotonic, sleep=waits.append))
    project.playbook(
        "hopeless",
        """
        name: hopeless
        description: always fails
        owner: Engineer
        steps:
          - name: hopeless
            bash: "exit 1"
            errorPolicy:
              default:
                action: Stop
                retryCount: 3
    """,
    )
    result = project.run("hopeless")
    assert result.exit_code == 2
    assert waits == [0.01, 0.02, 0.04]
    assert [f["attempt"] for f in project.snapshot()["failures"]] == [1, 2, 3, 4]


def test_timeout_raises_step_timeout_quickly(project):
    project.playbook(
        "slow",
        """
        name: slow
        description: timeout
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: slow
            bash: "sleep 5; touch out/finished"
            writes: [out/finished]
            timeout: 0.3s
    """,
    )
    result = project.run("slow", "--mode", "autonomous")
    assert result.exit_code == 2
    assert not (project.root / "out" / "finished").exists()  # stopped, not waited for
    assert project.snapshot()["error"]["code"] == "StepTimeout"
    assert project.snapshot()["failures"][0]["step"] == "slow"


def test_timeout_goes_through_the_error_policy(project):
    project.playbook(
        "slow2",
        """
        name: slow2
        description: timeout with Continue
        owner: Engineer
        steps:
          - name: slow
            bash: "sleep 5"
            timeout: 0.3s
            errorPolicy:
              StepTimeout:
                action: Continue
          - bash: "touch out/after.txt"
            writes: [out/after.txt]
    """,
    )
    result = project.run("slow2", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.exists("out/after.txt")
    assert project.snapshot()["failures"][0]["code"] == "StepTimeout"


def test_playbook_level_error_policy_is_the_default_for_every_step(project):
    project.playbook(
        "lenient",
        """
        name: lenient
        description: playbook-level policy
        owner: Engineer
        errorPolicy: Continue
        steps:
          - bash: "exit 1"
          - bash: "exit 2"
          - name: strict
            bash: "exit 3"
            errorPolicy: Stop
          - bash: "touch out/after.txt"
            writes: [out/after.txt]
    """,
    )
    result = project.run("lenient")
    assert result.exit_code == 2
    assert [f["code"] for f in project.snapshot()["failures"]] == ["CommandFailed"] * 3
    assert project.snapshot()["error"]["step"] == "strict"
    assert "code 3" in project.snapshot()["error"]["message"]
    assert not project.exists("out/after.txt")


def test_the_run_error_record_names_the_attempt_that_ended_it(project, fast_retries):
    project.playbook(
        "hopeless",
        """
        name: hopeless
        description: always fails
        owner: Engineer
        steps:
          - name: hopeless
            bash: "sleep 0.05; exit 1"
            errorPolicy:
              default:
                action: Stop
                retryCount: 2
    """,
    )
    assert project.run("hopeless").exit_code == 2
    snap = project.snapshot()
    last = snap["failures"][-1]
    assert last["attempt"] == 3
    assert snap["error"]["step"] == "hopeless"
    assert snap["error"]["attempt"] == 3
    assert snap["error"]["duration"] > 0


def test_timeout_applies_to_a_step_that_runs_other_steps(project):
    project.playbook(
        "slowloop",
        """
        name: slowloop
        description: timeout on a for-each
        owner: Engineer
        steps:
          - name: loop
            for-each: i
            in: [1, 2, 3, 4, 5, 6]
            timeout: 0.5s
            steps:
              - bash: "sleep 0.3; touch out/{{ i }}"
                writes: ["out/*"]
    """,
    )
    result = project.run("slowloop", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert project.snapshot()["error"]["code"] == "StepTimeout"
    assert len(list((project.root / "out").glob("*"))) < 6  # the loop was cut short


# =====================================================================================
# checkpoints and approvals
# =====================================================================================


def on_a_terminal(project, monkeypatch, name: str, keys: str) -> tuple[int, str]:
    """Run playbook NAME as on a terminal whose user types KEYS; the exit code and the log."""
    import io

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.runtime.lifecycle.context import RunOptions
    from catalyst_dsl.runtime.lifecycle.session import Session

    monkeypatch.setattr(sys, "stdin", io.StringIO(keys))
    out = io.StringIO()
    session = Session(load_project(project.root, DiagnosticSink()), RunOptions(out=out, interactive=True))
    code = session.start(str(project.root / "playbooks" / f"{name}.yaml"), {})
    return code, out.getvalue()


def paused_approved_resumed(project, name: str, role: str = "Engineer"):
    """Run NAME to its first pause, approve it as ROLE and resume: the run id and the resume."""
    assert project.run(name).exit_code == 4
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", role).exit_code == 0
    return run_id, project.cli("resume", run_id)


# Its bash steps declare no `writes:` (they log to the temp folder): one that did would first
# pause for its own approval (see the effects approval tests), which is not what these tests are about.
REVIEWED = """
    name: reviewed
    description: a checkpoint between two steps
    owner: Engineer
    reviewers:
      required: [Architect]
      optional: [Engineer]
    steps:
      - bash: "echo before >> $TMPDIR/log.txt"
      - checkpoint: "Review the plan"
      - bash: "echo after >> $TMPDIR/log.txt"
"""


def test_checkpoint_without_a_terminal_pauses_with_exit_4(project):
    project.playbook("reviewed", REVIEWED)
    result = project.run("reviewed")
    assert result.exit_code == 4, result.output
    snap = project.snapshot()
    assert snap["status"] == "paused"
    assert snap["pause"]["message"] == "Review the plan"
    assert snap["pause"]["roles"] == ["Architect"]
    assert project.live_snapshots() and not project.archived_snapshots()
    assert project.read_temp("log.txt").split() == ["before"]
    assert "Review the plan" in result.output and f"catalyst approve {snap['runId']}" in result.output


def test_approval_from_a_role_not_required_is_recorded_but_does_not_release(project):
    project.playbook("reviewed", REVIEWED)
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    approve = project.cli("approve", run_id, "--as", "Engineer", "--by", "eve", "--comment", "looks fine")
    assert approve.exit_code == 4, approve.output  # recorded; the run is still paused
    assert "stays paused" in approve.output
    [approval] = project.snapshot()["approvals"]
    assert (approval["role"], approval["by"], approval["comment"], approval["via"], approval["released"]) == (
        "Engineer",
        "eve",
        "looks fine",
        "cli",
        False,
    )
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 4, resumed.output
    assert project.snapshot()["status"] == "paused"
    assert project.read_temp("log.txt").split() == ["before"]


def test_approval_from_a_required_role_releases_and_resume_completes(project):
    project.playbook("reviewed", REVIEWED)
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    approve = project.cli("approve", run_id, "--as", "Architect", "--by", "ada")
    assert approve.exit_code == 0, approve.output
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    snap = project.snapshot(run_id)
    assert snap["status"] == "completed"
    assert project.archived_snapshots() and not project.live_snapshots()
    assert project.read_temp("log.txt").split() == ["before", "after"]  # the first step did not run again
    [approval] = snap["approvals"]
    assert (approval["role"], approval["by"], approval["released"]) == ("Architect", "ada", True)
    assert approval["at"]


def test_autonomous_mode_approves_and_records_it(project):
    project.playbook("reviewed", REVIEWED)
    result = project.run("reviewed", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    snap = project.snapshot()
    assert snap["mode"] == "autonomous" and snap["status"] == "completed"
    [approval] = snap["approvals"]
    assert approval["via"] == "autonomous" and approval["released"] is True
    assert project.read_temp("log.txt").split() == ["before", "after"]


def test_checkpoint_flag_pauses_after_its_step_which_resume_does_not_rerun(project):
    project.playbook(
        "flagged",
        """
        name: flagged
        description: checkpoint flag
        owner: Engineer
        steps:
          - name: draft
            bash: "echo draft >> $TMPDIR/log.txt; echo drafted"
            checkpoint: true
          - bash: "echo '{{draft.stdout}}' >> $TMPDIR/log.txt"
    """,
    )
    assert project.run("flagged").exit_code == 4
    run_id = project.run_id()
    assert project.read_temp("log.txt").split() == ["draft"]
    assert project.snapshot()["pause"]["path"].startswith("steps/0")
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    # draft ran once; its restored result feeds the next step
    assert project.read_temp("log.txt").split() == ["draft", "drafted"]


CHOICE = """
    name: choice
    description: checkpoint with options
    owner: Engineer
    steps:
      - name: cp
        checkpoint:
          message: "Which way?"
          options:
            - key: left
              label: Go left
            - key: right
              label: Go right
          default: left
      - return:
          chosen: "{{cp.selected}}"
"""


def test_checkpoint_options_and_select(project):
    project.playbook("choice", CHOICE)
    assert project.run("choice").exit_code == 4
    run_id = project.run_id()
    assert [o["key"] for o in project.snapshot()["pause"]["options"]] == ["left", "right"]
    assert project.cli("approve", run_id, "--as", "Engineer", "--select", "right").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.snapshot(run_id)["outputs"] == {"chosen": "right"}


def test_autonomous_checkpoint_selects_the_default_option(project):
    project.playbook("choice", CHOICE)
    assert project.run("choice", "--mode", "autonomous").exit_code == 0
    assert project.snapshot()["outputs"] == {"chosen": "left"}


def test_approving_without_select_takes_the_checkpoint_default(project):
    project.playbook("choice", CHOICE)
    assert project.run("choice").exit_code == 4
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.snapshot(run_id)["outputs"] == {"chosen": "left"}


def test_selecting_an_option_the_checkpoint_does_not_offer_is_refused(project):
    project.playbook("choice", CHOICE)
    assert project.run("choice").exit_code == 4
    run_id = project.run_id()
    approve = project.cli("approve", run_id, "--as", "Engineer", "--select", "bogus")
    assert approve.exit_code != 0, approve.output
    assert "left" in approve.output and "right" in approve.output
    assert all(a["selected"] != "bogus" for a in project.snapshot(run_id)["approvals"])


def test_inquire_pauses_on_failure_and_approval_continues_past_it(project):
    project.playbook(
        "asking",
        """
        name: asking
        description: Inquire
        owner: Engineer
        steps:
          - name: shaky
            bash: "echo attempt >> $TMPDIR/tries.txt; exit 1"
            errorPolicy: Inquire
          - bash: "touch $TMPDIR/after.txt"
    """,
    )
    result = project.run("asking")
    assert result.exit_code == 4, result.output
    run_id = project.run_id()
    snap = project.snapshot()
    assert snap["status"] == "paused" and "shaky" in snap["pause"]["message"]
    assert not (project.temp / "after.txt").exists()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert (project.temp / "after.txt").exists()
    assert project.read_temp("tries.txt").split() == ["attempt"]  # continued past it, not run again


def test_inquire_needs_a_required_reviewer_like_a_checkpoint(project):
    project.playbook(
        "asking",
        """
        name: asking
        description: Inquire with reviewers
        owner: Engineer
        reviewers:
          required: [Architect]
        steps:
          - bash: "exit 1"
            errorPolicy: Inquire
          - bash: "touch $TMPDIR/after.txt"
            writes: [out/after.txt]
    """,
    )
    assert project.run("asking").exit_code == 4
    run_id = project.run_id()
    assert project.snapshot()["pause"]["roles"] == ["Architect"]
    approve = project.cli("approve", run_id, "--as", "Engineer")
    assert "stays paused" in approve.output and approve.exit_code == 4
    assert project.cli("resume", run_id).exit_code == 4
    assert not (project.temp / "after.txt").exists()


def test_inquire_in_autonomous_mode_pauses_for_a_person(project):
    project.playbook(
        "asking",
        """
        name: asking
        description: Inquire
        owner: Engineer
        steps:
          - bash: "echo attempt >> $TMPDIR/tries.txt; exit 1"
            errorPolicy: Inquire
          - bash: "touch $TMPDIR/after.txt"
    """,
    )
    # Nobody is there to accept the failure: the run waits instead of going on as if it passed.
    assert project.run("asking", "--mode", "autonomous").exit_code == 4
    run_id = project.run_id()
    snap = project.snapshot()
    assert snap["status"] == "paused" and snap["pause"]["kind"] == "inquire" and snap["pause"]["person"] is True
    assert snap["approvals"] == [] and not (project.temp / "after.txt").exists()
    # A resume without an approval does not run the failed step again, even in autonomous mode.
    assert project.cli("resume", run_id).exit_code == 4
    assert project.read_temp("tries.txt").split() == ["attempt"]
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0
    assert (project.temp / "after.txt").exists()
    assert [a["via"] for a in project.snapshot()["approvals"]] == ["cli"]


def test_suspend_pauses_and_resume_runs_the_step_again(project):
    project.playbook(
        "suspending",
        """
        name: suspending
        description: Suspend
        owner: Engineer
        steps:
          - name: needs-file
            bash: "echo attempt >> $TMPDIR/tries.txt; cat input.txt"
            errorPolicy: Suspend
          - return:
              got: "{{needs-file.stdout}}"
    """,
    )
    result = project.run("suspending")
    assert result.exit_code == 4, result.output
    run_id = project.run_id()
    assert project.snapshot()["status"] == "paused"
    project.write("input.txt", "now here\n")
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.read_temp("tries.txt").split() == ["attempt", "attempt"]
    assert project.snapshot(run_id)["outputs"] == {"got": "now here\n"}


# =====================================================================================
# cancel
# =====================================================================================


def test_cancel_a_paused_run(project):
    project.playbook("reviewed", REVIEWED)
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    cancelled = project.cli("cancel", run_id, "--reason", "wrong branch", "--by", "ada")
    assert cancelled.exit_code == 0, cancelled.output
    snap = project.snapshot(run_id)
    assert snap["status"] == "cancelled"
    assert (snap["cancel"]["by"], snap["cancel"]["reason"]) == ("ada", "wrong branch")
    assert snap["endedAt"]
    assert project.archived_snapshots() and not project.live_snapshots()
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 1  # the run is over (3 would say its snapshot is damaged)
    assert "cancelled" in resumed.stderr
    assert project.read_temp("log.txt").split() == ["before"]


def test_cancelling_a_finished_run_is_refused(project):
    project.playbook(
        "quick",
        """
        name: quick
        description: quick
        owner: Engineer
        steps:
          - bash: "exit 0"
    """,
    )
    assert project.run("quick").exit_code == 0
    result = project.cli("cancel", project.run_id(), "--reason", "too late")
    assert result.exit_code == 3
    assert project.snapshot()["status"] == "completed"


# =====================================================================================
# ai-prompt with the mock adapter
# =====================================================================================


def test_ai_prompt_default_mock_answer_is_deterministic(project):
    project.playbook(
        "asker",
        """
        name: asker
        description: ai-prompt
        owner: Engineer
        steps:
          - name: answer
            ai-prompt: |
              Summarise the plan for {{topic}}.
              Be brief.
          - return:
              answer: "{{answer}}"
        inputs:
          - string: topic
            default: login
    """,
    )
    assert project.run("asker").exit_code == 0
    first = project.snapshot()["outputs"]
    assert first == {"answer": "mock answer to: Summarise the plan for login."}
    assert project.run("asker").exit_code == 0
    assert project.snapshot()["outputs"] == first


def test_ai_prompt_answers_come_from_the_mock_script(project, monkeypatch):
    script = project.write(
        "ai-script.yaml",
        textwrap.dedent("""\
        - match: "plan"
          response: "step 1, step 2"
          chunks: 3
        - match: "JSON"
          json: {verdict: ok, score: 9}
    """),
    )
    monkeypatch.setenv("CATALYST_MOCK_AI_SCRIPT", str(script))
    project.playbook(
        "scripted",
        """
        name: scripted
        description: scripted ai
        owner: Engineer
        steps:
          - name: plan
            ai-prompt: "Write the plan"
          - name: review
            ai-prompt: "Review it, answer as JSON"
            return: a verdict
          - return:
              plan: "{{plan}}"
              verdict: "{{review.verdict}}"
              score: "{{review.score}}"
    """,
    )
    result = project.run("scripted")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"plan": "step 1, step 2", "verdict": "ok", "score": 9}


def test_ai_answer_streamed_in_chunks_shows_as_its_lines(project, monkeypatch):
    script = project.write(
        "ai-script.yaml",
        textwrap.dedent("""\
        - response: "first line of the answer\\nsecond line"
          chunks: 4
    """),
    )
    monkeypatch.setenv("CATALYST_MOCK_AI_SCRIPT", str(script))
    project.playbook(
        "chunky",
        """
        name: chunky
        description: streamed ai answer
        owner: Engineer
        steps:
          - ai-prompt: "anything"
    """,
    )
    result = project.run("chunky")
    assert result.exit_code == 0, result.output
    shown = [line.strip().lstrip("│").strip() for line in result.output.splitlines() if "│" in line]
    assert shown == ["first line of the answer", "second line"]


def test_ai_script_entries_are_used_once_across_steps(project, monkeypatch):
    script = project.write(
        "ai-script.yaml",
        textwrap.dedent("""\
        - response: first answer
        - response: second answer
    """),
    )
    monkeypatch.setenv("CATALYST_MOCK_AI_SCRIPT", str(script))
    project.playbook(
        "twice",
        """
        name: twice
        description: two prompts, two scripted answers
        owner: Engineer
        steps:
          - name: one
            ai-prompt: "question one"
          - name: two
            ai-prompt: "question two"
          - return:
              one: "{{one}}"
              two: "{{two}}"
    """,
    )
    result = project.run("twice")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"one": "first answer", "two": "second answer"}


def test_scripted_ai_error_fails_the_step_with_its_code(project, monkeypatch):
    script = project.write("ai-script.yaml", "- error: RateLimitExceeded\n")
    monkeypatch.setenv("CATALYST_MOCK_AI_SCRIPT", str(script))
    project.playbook(
        "limited",
        """
        name: limited
        description: scripted ai error
        owner: Engineer
        steps:
          - ai-prompt: "anything"
    """,
    )
    assert project.run("limited").exit_code == 2
    assert project.snapshot()["error"]["code"] == "RateLimitExceeded"


# =====================================================================================
# --log-format json
# =====================================================================================

JSON_KEYS = {"runId", "playbookId", "stepId", "timestamp", "level", "status"}


@pytest.mark.parametrize("last, exit_code", [('bash: "exit 0"', 0), ('bash: "exit 1"', 2)])
def test_json_log_lines_are_objects_with_the_run_fields(project, last, exit_code):
    project.playbook(
        "logged",
        f"""
        name: logged
        description: json logs
        owner: Engineer
        steps:
          - name: speak
            bash: "echo hello; echo oops >&2"
          - log-info: "a message"
          - name: skipped
            display: never
            condition: "${{{{ false }}}}"
          - name: last
            {last}
    """,
    )
    result = project.run("logged", "--log-format", "json")
    assert result.exit_code == exit_code
    lines = result.stdout.splitlines()
    assert lines
    records = [json.loads(line) for line in lines]
    for record in records:
        assert isinstance(record, dict)
        assert JSON_KEYS <= set(record), record
        assert record["runId"] == project.run_id() and record["playbookId"] == "logged"
    steps = {r["stepId"] for r in records}
    assert {"speak", "skipped", "last"} <= steps
    assert any(r["status"] == "skipped" and r["stepId"] == "skipped" for r in records)
    assert any(r.get("stream") == "stdout" and "hello" in r["message"] for r in records)


# =====================================================================================
# runs list / show / export / prune
# =====================================================================================


def test_runs_commands(project):
    project.playbook("reviewed", REVIEWED)
    project.playbook(
        "quick",
        """
        name: quick
        description: quick
        owner: Engineer
        steps:
          - bash: "exit 0"
    """,
    )
    assert project.run("quick").exit_code == 0
    assert project.run("quick").exit_code == 0
    assert project.run("reviewed").exit_code == 4
    [live] = project.live_snapshots()
    paused = json.loads(live.read_text())["runId"]
    listed = project.cli("runs", "list")
    assert listed.exit_code == 0, listed.output
    assert paused in listed.output and "paused" in listed.output and "completed" in listed.output
    as_json = json.loads(project.cli("runs", "list", "--json").stdout)
    assert (as_json["format"], as_json["version"]) == ("catalyst-runs", 1)
    assert sorted(r["status"] for r in as_json["runs"]) == ["completed", "completed", "paused"]
    assert {"runId", "startedAt", "updatedAt", "archived"} <= set(as_json["runs"][0])

    shown = project.cli("runs", "show", paused)
    assert shown.exit_code == 0, shown.output
    assert "paused" in shown.output and "Review the plan" in shown.output

    exported = project.cli("runs", "export", paused)
    assert exported.exit_code == 0, exported.output
    audit = json.loads(exported.stdout)
    assert audit["format"] == "catalyst-audit" and audit["runId"] == paused
    assert audit["steps"] and all("result" not in s for s in audit["steps"])

    history = project.state_dir / "history"
    assert "*" in (history / ".gitignore").read_text().splitlines()

    pruned = project.cli("runs", "prune", "--keep-last", "1")
    assert pruned.exit_code == 0, pruned.output
    assert "removed 1 archived run" in pruned.output
    assert len(project.archived_snapshots()) == 1
    assert len(project.live_snapshots()) == 1  # the paused run is never pruned


def test_runs_show_of_an_unknown_run_is_a_mistake_of_the_command(project):
    result = project.cli("runs", "show", "20990101-000000-nothing-001")
    assert result.exit_code == 1 and "no run" in result.stderr


# =====================================================================================
# process actions
# =====================================================================================


def test_bash_env_cwd_and_result(project):
    project.write("sub/dir/here.txt", "x")
    project.playbook(
        "shell",
        """
        name: shell
        description: bash
        owner: Engineer
        steps:
          - name: where
            bash: |
              echo "$GREETING from $(basename "$PWD")"
              ls
            cwd: sub/dir
            env:
              GREETING: hello
          - return:
              out: "{{where.stdout}}"
              status: "{{where.exitCode}}"
    """,
    )
    result = project.run("shell")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"out": "hello from dir\nhere.txt\n", "status": 0}
    assert project.step("where")["result"]["exitCode"] == 0


def test_bash_failure_keeps_stdout_stderr_and_exit_code(project):
    project.playbook(
        "shellfail",
        """
        name: shellfail
        description: bash failing
        owner: Engineer
        steps:
          - name: bad
            bash: "echo out; echo err >&2; exit 5"
            errorPolicy: Continue
          - return:
              out: "{{bad.stdout}}"
              err: "{{bad.stderr}}"
              status: "${{ get('bad').exitCode }}"
    """,
    )
    assert project.run("shellfail").exit_code == 0
    assert project.snapshot()["outputs"] == {"out": "out\n", "err": "err\n", "status": 5}


def test_bash_is_strict_a_failing_command_stops_the_script(project):
    project.playbook(
        "strict-shell",
        """
        name: strict-shell
        description: bash -e
        owner: Engineer
        steps:
          - bash: |
              false
              touch out/reached.txt
            writes: [out/reached.txt]
    """,
    )
    assert project.run("strict-shell", "--mode", "autonomous").exit_code == 2
    assert not project.exists("out/reached.txt")


def test_bash_output_is_streamed_while_the_step_runs(project):
    project.playbook(
        "stream",
        """
        name: stream
        description: streaming
        owner: Engineer
        steps:
          - name: talk
            bash: "echo first; sleep 0.4; echo second"
    """,
    )
    result = project.run("stream", "--log-format", "json")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    lines = {r["message"].strip("│ ").strip(): r for r in records if r.get("stream") == "stdout"}
    finished = next(r for r in records if r.get("event") == "step-finished" and r["stepId"] == "talk")

    def at(record):
        from datetime import datetime

        return datetime.strptime(record["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")

    assert (at(lines["second"]) - at(lines["first"])).total_seconds() >= 0.3
    assert at(lines["first"]) < at(finished)
    text = project.run("stream")
    assert text.output.index("first") < text.output.index("second") < text.output.index("talk (bash)")


def test_command_passes_argv_without_a_shell(project):
    project.playbook(
        "argv",
        """
        name: argv
        description: command
        owner: Engineer
        steps:
          - name: echoed
            command: [python3, -c, "import sys, json; print(json.dumps(sys.argv[1:]))", "two words", "$HOME", "*"]
          - return:
              args: "{{echoed.stdout}}"
    """,
    )
    result = project.run("argv")
    assert result.exit_code == 0, result.output
    assert json.loads(project.snapshot()["outputs"]["args"]) == ["two words", "$HOME", "*"]


def test_command_not_installed_fails_clearly(project):
    project.playbook(
        "missing-program",
        """
        name: missing-program
        description: command
        owner: Engineer
        steps:
          - command: [definitely-not-a-program-xyz, --version]
    """,
    )
    assert project.run("missing-program").exit_code == 2
    assert project.snapshot()["error"]["code"] == "CommandNotFound"
    project.playbook(
        "missing-handled",
        """
        name: missing-handled
        description: a missing program is an unavailable action too
        owner: Engineer
        steps:
          - command: [definitely-not-a-program-xyz, --version]
            errorPolicy: {ActionUnavailable: Continue}
          - log-info: "went on"
    """,
    )
    went = project.run("missing-handled")
    assert went.exit_code == 0 and "went on" in went.output, went.output


# =====================================================================================
# file actions
# =====================================================================================


def test_file_read_exists_list_and_delete(project):
    project.write("docs/a.md", "alpha\n")
    project.write("docs/b.txt", "beta\n")
    project.write("docs/sub/c.md", "gamma\n")
    project.playbook(
        "files",
        """
        name: files
        description: file actions
        owner: Engineer
        steps:
          - name: text
            file-read: docs/a.md
          - name: there
            file-exists: docs/b.txt
          - name: absent
            file-exists: docs/nope.txt
          - name: markdown
            file-list: docs
            pattern: "*.md"
          - name: deleted
            file-delete: docs/b.txt
          - name: deleted-again
            file-delete: docs/b.txt
          - return:
              text: "{{text}}"
              there: "{{there}}"
              absent: "{{absent}}"
              markdown: "{{markdown}}"
              deleted: "{{deleted}}"
              deleted-again: "{{deleted-again}}"
    """,
    )
    result = project.run("files")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {
        "text": "alpha\n",
        "there": True,
        "absent": False,
        "markdown": ["docs/a.md", "docs/sub/c.md"],
        "deleted": True,
        "deleted-again": False,
    }
    assert not project.exists("docs/b.txt")


def test_file_read_of_a_missing_file_fails_with_file_not_found(project):
    project.playbook(
        "readmissing",
        """
        name: readmissing
        description: file-read
        owner: Engineer
        steps:
          - file-read: nowhere.txt
    """,
    )
    assert project.run("readmissing").exit_code == 2
    assert project.snapshot()["error"]["code"] == "FileNotFound"


def test_json_write_then_read(project):
    project.playbook(
        "jsons",
        """
        name: jsons
        description: json actions
        owner: Engineer
        steps:
          - name: written
            json-write: out/data.json
            value:
              name: ada
              tags: [x, y]
              n: 3
          - name: back
            json-read: out/data.json
          - return:
              name: "{{back.name}}"
              tags: "{{back.tags}}"
              bytes: "{{written.bytesWritten}}"
    """,
    )
    result = project.run("jsons")
    assert result.exit_code == 0, result.output
    on_disk = project.read("out/data.json")
    assert json.loads(on_disk) == {"name": "ada", "tags": ["x", "y"], "n": 3}
    assert on_disk.startswith("{\n  ")  # pretty by default
    outputs = project.snapshot()["outputs"]
    assert outputs["name"] == "ada" and outputs["tags"] == ["x", "y"]
    assert outputs["bytes"] == len(on_disk.encode())


def test_gitignore_edit_adds_under_a_header_and_is_idempotent(project):
    project.write(".gitignore", "node_modules/\n")
    project.playbook(
        "ignore",
        """
        name: ignore
        description: gitignore-edit
        owner: Engineer
        steps:
          - name: edit
            gitignore-edit: .gitignore
            header: catalyst
            add: [".xe/runs/", "*.tmp"]
            remove: ["node_modules/"]
          - return:
              changed: "{{edit.changed}}"
    """,
    )
    assert project.run("ignore").exit_code == 0
    assert project.snapshot()["outputs"] == {"changed": True}
    assert project.read(".gitignore") == "# catalyst\n.xe/runs/\n*.tmp\n"
    assert project.run("ignore").exit_code == 0
    assert project.snapshot()["outputs"] == {"changed": False}
    assert project.read(".gitignore") == "# catalyst\n.xe/runs/\n*.tmp\n"


GUARDED = """
    name: guarded
    description: allowedWritePaths
    owner: Engineer
    inputs:
      - string: path
    allowedWritePaths:
      - "out/**"
    steps:
      - file-write: "{{path}}"
        content: data
"""


def test_writes_outside_allowed_paths_are_refused_at_run_time(project):
    project.playbook("guarded", GUARDED)
    assert project.run("guarded", path="out/ok.txt").exit_code == 0
    assert project.read("out/ok.txt") == "data"
    result = project.run("guarded", path="elsewhere.txt")
    assert result.exit_code == 2
    assert project.snapshot()["error"]["code"] == "PermissionDenied"
    assert "out/**" in project.snapshot()["error"]["message"]
    assert not project.exists("elsewhere.txt")


@pytest.mark.parametrize("bad", ["../escape.txt", "out/../../escape.txt", "/tmp/catalyst-absolute-escape.txt"])
def test_write_paths_leaving_the_project_are_refused_cleanly(project, bad):
    project.playbook("guarded", GUARDED)
    result = project.run("guarded", path=bad)
    assert result.exit_code == 2, result.output
    snap = project.snapshot()
    assert snap["status"] == "failed"
    assert snap["error"]["code"] == "PermissionDenied"
    assert not (project.root.parent / "escape.txt").exists()


def test_bash_declared_writes_are_checked_before_it_runs(project):
    project.playbook(
        "declared",
        """
        name: declared
        description: writes of a shell step
        owner: Engineer
        inputs:
          - string: target
        allowedWritePaths:
          - "out/**"
        steps:
          - bash: "touch out/ran.txt"
            writes: ["{{target}}"]
    """,
    )
    result = project.run("declared", target="secret/x.txt")
    assert result.exit_code == 2
    assert project.snapshot()["error"]["code"] == "PermissionDenied"
    assert not project.exists("out/ran.txt")


# =====================================================================================
# plugins, installed for real
# =====================================================================================

BROKEN_PLUGIN = {"catalyst_broken_plugin.py": "raise ImportError('needs the missing_sdk package')\n"}


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory, plugin_wheel):
    """A folder with the `hello` plugin and a broken `broken` plugin installed."""
    base = tmp_path_factory.mktemp("plugins")
    site = base / "site"
    plugin_wheel.install_wheel(plugin_wheel.build_wheel(base / "dist"), site)
    plugin_wheel.install_wheel(
        plugin_wheel.build_wheel(
            base / "dist",
            name="catalyst_broken_plugin",
            modules=BROKEN_PLUGIN,
            entry_points={"catalyst.actions": {"broken": "catalyst_broken_plugin:ACTION"}},
        ),
        site,
    )
    return site


def _catalyst(project, plugin_wheel, site, *args):
    return subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        env=plugin_wheel.plugin_env(site),
        timeout=120,
    )


def test_plugin_action_runs_end_to_end(project, plugin_wheel, plugin_site):
    project.playbook(
        "greet",
        """
        name: greet
        description: uses the hello plugin
        owner: Engineer
        steps:
          - name: hi
            hello: tests
          - return:
              greeting: "{{hi.greeting}}"
    """,
    )
    result = _catalyst(project, plugin_wheel, plugin_site, "run", "greet")
    assert result.returncode == 0, result.stdout + result.stderr
    assert project.snapshot()["outputs"] == {"greeting": "hello, tests"}
    assert project.step("hi")["action"] == "hello"


def test_broken_plugin_does_not_break_a_playbook_that_does_not_use_it(project, plugin_wheel, plugin_site):
    project.playbook(
        "plain",
        """
        name: plain
        description: no plugins
        owner: Engineer
        steps:
          - bash: "echo fine"
    """,
    )
    result = _catalyst(project, plugin_wheel, plugin_site, "run", "plain")
    assert result.returncode == 0, result.stdout + result.stderr
    assert project.snapshot()["status"] == "completed"


def test_broken_plugin_is_reported_by_name_when_used(project, plugin_wheel, plugin_site):
    project.playbook(
        "usebroken",
        """
        name: usebroken
        description: uses the broken plugin
        owner: Engineer
        steps:
          - broken: x
    """,
    )
    result = _catalyst(project, plugin_wheel, plugin_site, "run", "usebroken")
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "plugin 'broken'" in output
    assert "needs the missing_sdk package" in output
    assert project.snapshot_files() == []


# =====================================================================================
# pauses and resumes, terminals, secrets
# =====================================================================================


def test_top_level_finally_runs_at_the_end_not_when_the_run_pauses(project):
    project.playbook(
        "cleanup",
        """
        name: cleanup
        description: finally around a checkpoint
        owner: Engineer
        steps:
          - bash: "echo before >> $TMPDIR/log.txt"
          - checkpoint: "Go on?"
          - bash: "echo after >> $TMPDIR/log.txt"
        finally:
          - bash: "echo cleanup >> $TMPDIR/log.txt"
    """,
    )
    assert project.run("cleanup").exit_code == 4
    run_id = project.run_id()
    assert project.read_temp("log.txt").split() == ["before"]
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0
    assert project.read_temp("log.txt").split() == ["before", "after", "cleanup"]


def test_try_finally_runs_after_its_body_even_across_a_pause(project):
    project.playbook(
        "tryfin",
        """
        name: tryfin
        description: try/finally around a checkpoint
        owner: Engineer
        steps:
          - try:
              - checkpoint: "Go on?"
              - bash: "echo body >> $TMPDIR/log.txt"
            finally:
              - bash: "echo finally >> $TMPDIR/log.txt"
    """,
    )
    assert project.run("tryfin").exit_code == 4
    run_id = project.run_id()
    assert not project.exists("log.txt")
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0
    assert project.read_temp("log.txt").split() == ["body", "finally"]


def test_checkpoint_inside_a_child_playbook_pauses_the_run_and_resume_continues_there(project):
    project.playbook(
        "inner",
        """
        name: inner
        description: a child with a checkpoint
        owner: Engineer
        reviewers:
          required: [Architect]
        allowedWritePaths: ["log.txt"]
        outputs:
          done: boolean
        steps:
          - bash: "echo child-before >> $TMPDIR/log.txt"
          - checkpoint: "Child review"
          - bash: "echo child-after >> $TMPDIR/log.txt"
          - return:
              done: true
    """,
    )
    project.playbook(
        "outer",
        """
        name: outer
        description: calls inner
        owner: Engineer
        steps:
          - bash: "echo parent-before >> $TMPDIR/log.txt"
          - name: call
            playbook: inner
            inheritPermissions: true
          - return:
              child-done: "{{call.done}}"
    """,
    )
    assert project.run("outer").exit_code == 4
    run_id = project.run_id()
    # First the call itself: it passes the caller's permissions down.
    assert project.snapshot()["pause"]["path"].endswith("/approve-effects")
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 4
    pause = project.snapshot()["pause"]
    assert pause["message"] == "Child review" and pause["roles"] == ["Architect"]
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.read_temp("log.txt").split() == ["parent-before", "child-before", "child-after"]
    assert project.snapshot(run_id)["outputs"] == {"child-done": True}


def test_resuming_a_completed_run_is_refused(project):
    project.playbook(
        "quick",
        """
        name: quick
        description: quick
        owner: Engineer
        steps:
          - bash: "exit 0"
    """,
    )
    assert project.run("quick").exit_code == 0
    result = project.cli("resume", project.run_id())
    assert result.exit_code == 1  # the run is over; its snapshot is fine (3 says it is damaged)
    assert "completed" in result.stderr


def test_checkpoint_on_a_terminal_is_approved_with_enter(project, monkeypatch):
    project.playbook("reviewed", REVIEWED)
    code, log = on_a_terminal(project, monkeypatch, "reviewed", "\n")
    assert code == 0, log
    snap = project.snapshot()
    assert snap["status"] == "completed"
    [approval] = snap["approvals"]
    assert approval["via"] == "terminal" and approval["released"] is True
    assert project.read_temp("log.txt").split() == ["before", "after"]


def test_resuming_after_the_playbook_changed_a_completed_step_is_refused(project):
    project.playbook("reviewed", REVIEWED)
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    project.playbook("reviewed", REVIEWED.replace("echo before", "echo BEFORE"))
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    result = project.cli("resume", run_id)
    assert result.exit_code == 3
    assert "changed" in result.stderr
    assert project.read_temp("log.txt").split() == ["before"]


def test_secret_inputs_are_masked_in_the_console_and_the_snapshot(project):
    project.playbook(
        "sec",
        """
        name: sec
        description: a secret input
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - name: show
            bash: "echo token is {{token}}"
          - return:
              echoed: "{{show.stdout}}"
    """,
    )
    result = project.run("sec", token="hunter2-xyz")
    assert result.exit_code == 0, result.output
    assert "hunter2-xyz" not in result.output
    for path in project.snapshot_files():
        assert "hunter2-xyz" not in path.read_text()
    assert project.snapshot()["inputs"]["token"] != "hunter2-xyz"


def test_temp_paths_in_a_bash_script_reach_the_scratch_space(project):
    project.playbook(
        "scratchy",
        """
        name: scratchy
        description: writes a scratch file, then reads it back in a script
        owner: Engineer
        steps:
          - file-write: temp://notes/a.txt
            content: "from the playbook"
          - name: shown
            bash: "cat temp://notes/a.txt; echo more > temp://notes/b.txt"
            writes: ["temp://notes/b.txt"]
          - name: back
            file-read: temp://notes/b.txt
          - log-info: "{{shown.stdout}}|{{back}}"
    """,
    )
    result = project.run("scratchy")
    assert result.exit_code == 0, result.output
    assert "from the playbook|more" in result.output


# =====================================================================================
# approval before unbounded effects (LANGUAGE 4 and 7): a program that declares writes,
# an AI given tools that change things
# =====================================================================================

EFFECTS = """
    name: effects
    description: a program that writes, an AI that may edit
    owner: Engineer
    reviewers:
      required: [Architect]
    allowedWritePaths: [out/**]
    inputs:
      - string: where
        default: out/log.txt
    steps:
      - bash: "mkdir -p out && echo ran >> out/log.txt"
        writes: ["{{where}}"]
      - name: look
        ai-prompt: summarize the log
        tools: [read, grep]
      - name: edit
        ai-prompt: tidy the log
        tools: [read, Edit]
      - bash: "echo scratch > temp://notes.txt"
        writes: ["temp://notes.txt"]
"""


def test_a_program_that_declares_writes_waits_for_approval_before_it_runs(project):
    project.playbook("effects", EFFECTS)
    result = project.run("effects")
    assert result.exit_code == 4, result.output
    assert "⏸ paused at bash@11: approve before it runs a program that may write out/log.txt" in result.output
    assert not project.exists("out/log.txt")  # nothing ran before the approval
    snap = project.snapshot()
    assert snap["pause"]["path"] == "steps/0/approve-effects" and snap["pause"]["roles"] == ["Architect"]
    run_id = project.run_id()

    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    resumed = project.cli("resume", run_id)
    # The program ran; the read-only AI step did not ask; the editing one does.
    assert resumed.exit_code == 4, resumed.output
    assert project.read("out/log.txt") == "ran\n"
    assert "approve before it gives the AI tools that change things (Edit)" in resumed.output
    assert project.snapshot(run_id)["pause"]["path"] == "steps/2/approve-effects"

    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    done = project.cli("resume", run_id)
    # The scratch-only program needs no approval: the run's scratch space is its own.
    assert done.exit_code == 0, done.output
    snap = project.snapshot(run_id)
    assert [a["path"] for a in snap["approvals"]] == ["steps/0/approve-effects", "steps/2/approve-effects"]
    assert project.read("out/log.txt") == "ran\n"  # it ran once, not again on resume


def test_autonomous_mode_approves_unbounded_effects_and_records_each(project):
    project.playbook("effects", EFFECTS)
    result = project.run("effects", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    approvals = project.snapshot()["approvals"]
    assert [(a["path"], a["via"]) for a in approvals] == [
        ("steps/0/approve-effects", "autonomous"),
        ("steps/2/approve-effects", "autonomous"),
    ]


def test_a_declared_write_outside_the_grants_is_refused_without_asking(project):
    project.playbook("effects", EFFECTS)
    result = project.run("effects", where="elsewhere/x.txt")
    assert result.exit_code == 2, result.output
    assert "paused" not in result.output
    assert project.snapshot()["error"]["code"] == "PermissionDenied"


def test_one_approval_covers_every_retry_and_a_false_condition_asks_nothing(project):
    project.playbook(
        "flaky",
        """
        name: flaky
        description: a writing program that fails once, and one that never runs
        owner: Engineer
        steps:
          - bash: |
              echo try >> out/tries.txt
              test "$(wc -l < out/tries.txt)" -ge 2
            writes: [out/tries.txt]
            errorPolicy:
              default: {action: Stop, retryCount: 2}
          - condition: ${{ false }}
            bash: "echo never > never.txt"
            writes: [never.txt]
    """,
    )
    assert project.run("flaky").exit_code == 4
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.read("out/tries.txt").split() == ["try", "try"]
    assert len(project.snapshot(run_id)["approvals"]) == 1


def test_unbounded_effects_are_approved_with_enter_on_a_terminal(project, monkeypatch, capsys):
    project.playbook("effects", EFFECTS)
    code, log = on_a_terminal(project, monkeypatch, "effects", "\n\n")
    assert code == 0, log
    assert [a["via"] for a in project.snapshot()["approvals"]] == ["terminal", "terminal"]
    asked = capsys.readouterr().out
    assert "⏸ bash@11: approve before it runs a program that may write out/log.txt" in asked
    assert "⏸ edit: approve before it gives the AI tools that change things (Edit)" in asked


def test_a_plan_shows_the_approvals_unbounded_effects_would_wait_for(project):
    import json

    project.playbook("effects", EFFECTS)
    result = project.run("effects", "--what-if", "--format", "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    pauses = [(s["path"], s["approval"]["message"]) for s in plan["steps"] if s["change"] == "would-pause"]
    assert pauses == [
        ("steps/0/approve-effects", "approve before it runs a program that may write out/log.txt"),
        ("steps/2/approve-effects", "approve before it gives the AI tools that change things (Edit)"),
    ]


def test_an_approval_counts_only_for_what_was_shown_and_the_step_as_written(project):
    project.write("in/m.txt", "m")
    project.playbook(
        "each",
        """
        name: each
        description: a writing program per file
        owner: Engineer
        steps:
          - name: files
            file-list: in
          - for-each: f
            in: "{{files}}"
            steps:
              - bash: "echo {{f}} >> out/{{f}}"
                writes: ["out/{{f}}"]
    """,
    )
    assert project.run("each").exit_code == 4
    run_id = project.run_id()
    assert "may write out/in/m.txt" in project.snapshot(run_id)["pause"]["message"]
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    # Another file now comes first: the loop refuses to go on for another item.
    project.write("in/a.txt", "a")
    again = project.cli("resume", run_id)
    assert again.exit_code == 2 and "LoopListChanged" in again.output, again.output
    assert not project.exists("out/in/m.txt")
    (project.root / "in" / "a.txt").unlink()

    # The step itself changed while paused: asked again, though the paths are the same.
    edited = project.root / "playbooks" / "each.yaml"
    edited.write_text(edited.read_text().replace("echo {{f}}", "echo changed {{f}}"))
    changed = project.cli("resume", run_id)
    assert changed.exit_code == 4, changed.output
    assert "may write out/in/m.txt" in project.snapshot(run_id)["pause"]["message"]
    assert not project.exists("out/in/m.txt")
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0
    assert project.read("out/in/m.txt") == "changed in/m.txt\n"


def _changes_requested(project, role: str, comment: str):
    """EFFECTS paused at its first approval, and a request-changes token from ROLE handed in."""
    project.playbook("effects", EFFECTS)
    assert project.run("effects").exit_code == 4
    run_id = project.run_id()
    token = project.cli("runs", "token", run_id, "--as", role, "--decision", "request-changes").output.strip()
    return run_id, project.cli("approve", run_id, "--token", token, "--comment", comment)


def test_request_changes_fails_the_step_once_then_a_resume_asks_again(project):
    run_id, said = _changes_requested(project, "Architect", "log elsewhere")
    assert said.exit_code == 0
    failed = project.cli("resume", run_id)
    assert failed.exit_code == 2 and project.snapshot(run_id)["error"]["code"] == "ChangesRequested"
    # Fixed (or not): resuming asks for a fresh approval instead of failing forever.
    asks = project.cli("resume", run_id)
    assert asks.exit_code == 4, asks.output
    assert project.snapshot(run_id)["pause"]["path"] == "steps/0/approve-effects"
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 4  # now at the AI step's pause
    assert project.read("out/log.txt") == "ran\n"


def test_a_request_changes_from_a_role_that_cannot_release_holds_nothing_back(project):
    run_id, said = _changes_requested(project, "Intern", "no")
    assert "may not hold this step back" in said.output
    assert project.cli("resume", run_id).exit_code == 4  # still waiting, not failed


def test_a_plan_shows_the_pause_of_a_program_whose_writes_it_cannot_know(project):
    import json

    project.playbook(
        "unknown-writes",
        """
        name: unknown-writes
        description: a program writes where another said
        owner: Engineer
        steps:
          - name: where
            bash: "printf out/gen.txt"
            writes: []
          - bash: "touch {{where.stdout}}"
            writes: ["{{where.stdout}}"]
    """,
    )
    plan = json.loads(project.run("unknown-writes", "--what-if", "--format", "json").output)
    assert [s["approval"]["message"] for s in plan["steps"] if s["change"] == "would-pause"] == [
        "approve before it runs a program that may write <unknown>"
    ]


def test_the_terminal_prompt_masks_secrets(project, monkeypatch, capsys):
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", "hunter2xyz")
    project.playbook(
        "secretive",
        """
        name: secretive
        description: writes a file named after a secret
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - bash: "true"
            writes: ["out/{{token}}.txt"]
    """,
    )
    assert on_a_terminal(project, monkeypatch, "secretive", "\n")[0] == 0
    asked = capsys.readouterr().out
    assert "may write out/***.txt" in asked and "hunter2xyz" not in asked
    assert "hunter2xyz" not in json.dumps(project.snapshot())


def test_a_caught_failure_is_not_run_again_when_its_handler_pauses(project):
    project.playbook(
        "handled",
        """
        name: handled
        description: a failing body whose catch and finally wait for approval
        owner: Engineer
        steps:
          - try:
              - bash: "echo body >> out/t.txt; exit 1"
                writes: [out/t.txt]
            catch:
              - code: CommandFailed
                steps:
                  - bash: "echo catch {{$error.code}} >> out/t.txt"
                    writes: [out/t.txt]
            finally:
              - bash: "echo finally >> out/t.txt"
                writes: [out/t.txt]
        catch:
          - code: default
            steps:
              - log-error: "never: the try handled it"
    """,
    )
    assert project.run("handled").exit_code == 4
    run_id = project.run_id()
    for _ in range(2):
        assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
        assert project.cli("resume", run_id).exit_code == 4
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    done = project.cli("resume", run_id)
    assert done.exit_code == 0, done.output
    assert project.read("out/t.txt").split("\n") == ["body", "catch CommandFailed", "finally", ""]
    assert "never" not in done.output
    caught = [s for s in project.steps(run_id) if s["action"] == "catch"]
    assert [(s["path"], s["result"]["error"]["code"], s["result"]["error"]["path"]) for s in caught] == [
        ("steps/0/catch/caught", "CommandFailed", "steps/0/steps/0")
    ]


def test_a_caught_failure_keeps_its_aliases_across_a_resume(project, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    project.playbook(
        "offline",
        """
        name: offline
        description: a network failure caught by the original engine's code
        owner: Engineer
        steps:
          - try:
              - http-get: http://example.invalid/
            catch:
              - code: HttpNetworkError
                steps:
                  - checkpoint: "offline: go on?"
                  - return:
                      said: "{{$error.code}}"
    """,
    )
    run_id, done = paused_approved_resumed(project, "offline")
    assert done.exit_code == 0, done.output
    # Its code is ConnectionError; the catch matched it by its alias, before and after the resume.
    assert project.snapshot(run_id)["outputs"] == {"said": "ConnectionError"}


LOOPED = """
    name: looped
    description: a checkpoint in every iteration over a file's lines
    owner: Engineer
    steps:
      - name: lines
        file-read: items.txt
      - for-each: item
        in: "${{ get('lines').trim().split('\\\\n') }}"
        steps:
          - log-info: "doing {{item}}"
          - checkpoint: "done {{item}}?"
"""


def test_a_loop_whose_list_changed_while_paused_is_refused_on_resume(project):
    project.write("items.txt", "a\nb\n")
    project.playbook("looped", LOOPED)
    assert project.run("looped").exit_code == 4
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    # Items after the ones it went through may change; an item it went through may not.
    project.write("items.txt", "z\nb\n")
    refused = project.cli("resume", run_id)
    assert refused.exit_code == 2, refused.output
    assert (
        "✗ for-each@7 (for-each)" in refused.output
        and "LoopListChanged: the list of the for-each changed since this run went through it: "
        "item 1 is not the one iteration 1 ran for"
        in refused.output
    )
    assert "fix: put the list back as it was" in refused.output
    project.write("items.txt", "a\nb\nc\n")
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 4, resumed.output  # on to item 1's checkpoint
    assert "doing b" in resumed.output and "doing a" not in resumed.output
    markers = [s["path"] for s in project.steps(run_id) if s["action"] == "for-each-item"]
    assert markers == ["steps/1/each/0/item", "steps/1/each/1/item"]


def test_a_retried_try_or_loop_keeps_one_journal_entry_per_path_and_resumes(project):
    project.playbook(
        "retried",
        """
        name: retried
        description: a try and a loop that are retried, then fail
        owner: Engineer
        steps:
          - try:
              - file-read: flag.txt
            catch:
              - code: FileNotFound
                steps:
                  - throw: Again
            errorPolicy:
              default: {action: Stop, retryCount: 1}
          - for-each: it
            in: [a, b]
            steps:
              - file-read: "f-{{it}}.txt"
            errorPolicy:
              default: {action: Stop, retryCount: 1}
          - log-info: "END"
    """,
    )
    assert project.run("retried", "--mode", "autonomous").exit_code == 2
    run_id = project.run_id()
    assert project.cli("runs", "show", run_id).exit_code == 0  # the snapshot is sound
    project.write("flag.txt", "x")
    project.write("f-a.txt", "a")
    assert project.cli("resume", run_id).exit_code == 2  # on to the loop, which still fails at b
    paths_seen = [s["path"] for s in project.steps(run_id)]
    assert len(paths_seen) == len(set(paths_seen))
    project.write("f-b.txt", "b")
    done = project.cli("resume", run_id)
    assert done.exit_code == 0, done.output
    assert "END" in done.output


def test_a_failed_run_whose_catch_rethrew_runs_the_failed_step_again_on_resume(project):
    project.playbook(
        "notify",
        """
        name: notify
        description: a top-level catch that notifies and fails
        owner: Engineer
        steps:
          - name: inp
            file-read: input.txt
          - log-info: "GOT {{inp}}"
        catch:
          - code: default
            steps:
              - log-error: "notify: {{$error.code}}"
              - throw: Failed
                message: "run failed: {{$error.message}}"
        finally:
          - log-info: "FINALLY"
    """,
    )
    assert project.run("notify").exit_code == 2
    run_id = project.run_id()
    project.write("input.txt", "data")
    done = project.cli("resume", run_id)
    assert done.exit_code == 0, done.output
    assert "GOT data" in done.output


def test_changes_requested_on_a_completed_step_resume_in_the_handler_that_took_them(project):
    project.playbook(
        "reviewed-body",
        """
        name: reviewed-body
        description: a reviewed step whose change request a catch handles
        owner: Engineer
        steps:
          - try:
              - log-info: "BODY"
                checkpoint: "review the body"
              - log-info: "BODY-AFTER"
            catch:
              - code: ChangesRequested
                steps:
                  - log-info: "HANDLER"
                  - checkpoint: "handler pause"
                  - log-info: "HANDLER-END"
    """,
    )
    assert project.run("reviewed-body").exit_code == 4
    run_id = project.run_id()
    token = project.cli("runs", "token", run_id, "--as", "Engineer", "--decision", "request-changes").output.strip()
    assert project.cli("approve", run_id, "--token", token).exit_code == 0
    handler = project.cli("resume", run_id)
    assert handler.exit_code == 4 and "HANDLER" in handler.output, handler.output
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    done = project.cli("resume", run_id)
    assert done.exit_code == 0, done.output
    assert "HANDLER-END" in done.output and "BODY-AFTER" not in done.output


def test_only_the_pull_request_action_pauses_for_a_review(project):
    project.write("data.json", '{"waitForReview": true, "number": 7, "url": "https://example.test/7"}')
    project.playbook(
        "lookalike",
        """
        name: lookalike
        description: a result that merely looks like a pull request's
        owner: Engineer
        steps:
          - json-read: data.json
          - log-info: "AFTER"
    """,
    )
    result = project.run("lookalike")
    assert result.exit_code == 0, result.output


def test_failing_parallel_branches_in_a_try_run_once_across_a_resume(project):
    project.playbook(
        "branches",
        """
        name: branches
        description: two failing branches, a handler that pauses
        owner: Engineer
        steps:
          - try:
              - parallel:
                  steps:
                    - bash: "echo A >> $TMPDIR/par.log; exit 1"
                    - bash: "sleep 0.2; echo B >> $TMPDIR/par.log; exit 1"
            catch:
              - code: default
                steps:
                  - checkpoint: "handler"
                  - return:
                      step: "{{$error.step}}"
    """,
    )
    run_id, done = paused_approved_resumed(project, "branches")
    assert done.exit_code == 0, done.output
    assert sorted(project.read_temp("par.log").split()) == ["A", "B"]
    assert project.snapshot(run_id)["outputs"] == {"step": "bash@8"}  # the first branch's failure, both times


def test_a_loop_whose_list_shrank_under_it_is_refused_too(project):
    project.write("items.txt", "a\nb\nc\n")
    project.playbook("looped", LOOPED)
    run_id = None
    for _ in range(2):  # through item a, paused at item b
        result = project.run("looped") if run_id is None else project.cli("resume", run_id)
        assert result.exit_code == 4, result.output
        run_id = run_id or project.run_id()
        assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    project.write("items.txt", "a\n")
    refused = project.cli("resume", run_id)
    assert refused.exit_code == 2 and "it had more than 1 item(s)" in refused.output, refused.output


def test_a_number_or_boolean_where_text_belongs_is_written_as_its_text(project):
    project.playbook(
        "numtext",
        """
        name: numtext
        description: numbers written as text
        owner: Engineer
        steps:
          - var: data
            value: "${{ {answer: 42, ratio: 0.5, ok: true} }}"
          - file-write: out/answer.txt
            content: "{{data.answer}}"
          - file-write: out/ratio.txt
            content: "${{ get('data').ratio }}"
          - file-write: out/ok.txt
            content: "${{ get('data').ok }}"
    """,
    )
    result = project.run("numtext", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert [project.read(f"out/{name}.txt") for name in ("answer", "ratio", "ok")] == ["42", "0.5", "true"]


def test_an_object_where_text_belongs_says_how_to_convert_it():
    from catalyst_dsl.actions.installed import builtin_catalog
    from catalyst_dsl.runtime.engine.config_check import check_config
    from catalyst_dsl.runtime.errors import StepError

    with pytest.raises(StepError) as caught:
        check_config(builtin_catalog().get("file-write"), {"path": "out/x.txt", "content": {"a": 1}})
    assert "JSON.stringify" in caught.value.message


def test_names_defined_in_blocks_are_seen_after_them(project):
    project.playbook(
        "flow",
        """
        name: flow
        description: names flow out of blocks
        owner: Engineer
        inputs:
          - boolean: deep
        steps:
          - if: ${{ deep }}
            then:
              - var: depth
                value: 3
            else:
              - var: depth
                value: 1
          - for-each: x
            in: [a, b]
            steps:
              - var: last
                value: "{{ x }}"
          - try:
              - throw: Boom
                message: failed on purpose
            catch:
              - code: Boom
                steps:
                  - var: handled
                    value: "by the handler"
          - parallel:
              - var: left
                value: L
              - var: right
                value: R
          - checkpoint: "look at the values"
          - display: "depth={{ depth }} last={{ last }} handled={{ handled }} {{ left }}{{ right }}"
    """,
    )
    first = project.run("flow", "--mode", "manual", deep="true")
    assert first.exit_code == 4, first.output
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    # Resumed: the blocks are replayed from the journal and hand out the same names.
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert "depth=3 last=b handled=by the handler LR" in resumed.output


PROMPT_FILE = """
    name: from-file
    description: a prompt kept in a file
    owner: Engineer
    inputs:
      - string: topic
      - string: token
        secret: true
        required: false
    steps:
      - name: ask
        ai-prompt:
          promptFile: prompts/ask.md
      - display: "{{ ask }}"
"""


def test_a_prompt_file_is_rendered_like_an_inline_prompt(project):
    project.write("prompts/ask.md", "Write about {{ topic }} in ${{ 1 + 2 }} lines; a literal \\{{ brace }}.\n")
    project.playbook("from-file", PROMPT_FILE)
    result = project.run("from-file", "--mode", "autonomous", topic="cats")
    assert result.exit_code == 0, result.output
    assert "mock answer to: Write about cats in 3 lines; a literal {{ brace }}." in result.output


def test_a_prompt_file_whose_template_fails_names_the_file(project):
    project.write("prompts/ask.md", "Write about {{ nowhere }}\n")
    project.playbook("from-file", PROMPT_FILE)
    result = project.run("from-file", "--mode", "autonomous", topic="cats")
    assert result.exit_code == 2, result.output
    error = project.snapshot()["error"]
    assert error["code"] == "TemplateError" and "prompts/ask.md" in error["message"]


def test_a_prompt_file_may_not_put_a_secret_into_the_prompt(project):
    project.write("prompts/ask.md", "Here is the key: {{ token }}\n")
    project.playbook("from-file", PROMPT_FILE)
    result = project.run("from-file", "--mode", "autonomous", topic="cats", token="s3cr3t-value-123")
    assert result.exit_code == 2, result.output
    assert project.snapshot()["error"]["code"] == "SecretInPrompt"
    assert "s3cr3t-value-123" not in result.output


def test_the_prompt_an_ai_step_sent_is_kept_masked_with_the_run(project):
    project.playbook(
        "ask",
        """
        name: ask
        description: asks with a secret nearby
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - name: answer
            ai-prompt: "Summarise the release; never print {{ token }}"
    """,
    )
    result = project.run("ask", "--mode", "autonomous", token="tok-1234567890")
    assert result.exit_code == 0, result.output
    [record] = [s for s in project.snapshot()["steps"] if s["action"] == "ai-prompt"]
    assert record["prompt"].startswith("Summarise the release; never print ")
    assert "tok-1234567890" not in record["prompt"] and "tok-1234567890" not in json.dumps(project.snapshot())


def test_keep_prompts_false_keeps_only_the_answers(project):
    project.write("catalyst.toml", "keep-prompts = false\n")
    project.playbook(
        "ask",
        """
        name: ask
        description: asks
        owner: Engineer
        steps:
          - name: answer
            ai-prompt: "Summarise the release"
    """,
    )
    assert project.run("ask", "--mode", "autonomous").exit_code == 0
    [record] = [s for s in project.snapshot()["steps"] if s["action"] == "ai-prompt"]
    assert record["prompt"] is None and record["result"] == "mock answer to: Summarise the release"
