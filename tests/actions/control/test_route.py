"""`route`: exactly one branch runs; several holding or none (without `otherwise`) stop the
step naming the route and the branches; the checker and the what-if agree with the run."""

from __future__ import annotations

import json

import pytest

ROUTED = """
name: routed
description: picks a level by score
owner: Engineer
inputs:
  - number: score
    default: 5
steps:
  - name: verdict
    route:
      - when: "${{ score >= 8 }}"
        label: high
        steps:
          - var: level
            value: high
      - when: "${{ score >= 4 }}"
        label: middle
        steps:
          - var: level
            value: middle
    otherwise:
      - var: level
        value: low
  - display: "{{ level }} by {{ verdict.branch }}"
"""

WITHOUT_OTHERWISE = """
name: strict
description: no otherwise
owner: Engineer
inputs:
  - number: score
    default: 1
steps:
  - route:
      - when: "${{ score > 3 }}"
        steps:
          - display: big
      - when: "${{ score < 0 }}"
        steps:
          - display: negative
"""


@pytest.mark.parametrize(("score", "shown"), [("4", "middle by middle"), ("1", "low by otherwise")])
def test_the_one_branch_that_holds_runs(project, score: str, shown: str) -> None:
    project.playbook("routed", ROUTED)
    ran = project.run("routed", score=score)
    assert ran.exit_code == 0, ran.output
    assert shown in ran.output


def test_several_branches_holding_fail_the_step_naming_them(project) -> None:
    project.playbook("routed", ROUTED)
    ran = project.run("routed", score="9")
    assert ran.exit_code == 2, ran.output
    assert "RouteAmbiguous: verdict: 2 branches hold (high; middle); exactly one may" in ran.output
    assert "by high" not in ran.output  # no branch ran


def test_no_branch_holding_without_otherwise_is_routing_failed(project) -> None:
    project.playbook("strict", WITHOUT_OTHERWISE)
    ran = project.run("strict")
    assert ran.exit_code == 2, ran.output
    assert "RoutingFailed" in ran.output and "no branch holds" in ran.output


def test_a_what_if_foresees_the_ambiguity_and_shows_unknown_branches_as_conditional(project) -> None:
    project.playbook("routed", ROUTED)
    foreseen = project.run("routed", "--what-if", score="9")
    assert foreseen.exit_code == 2 and "A run would fail at verdict: RouteAmbiguous." in foreseen.output
    project.playbook(
        "asked",
        """
        name: asked
        description: routes on an answer the plan cannot know
        owner: Engineer
        steps:
          - name: answer
            ai-prompt: "yes or no?"
          - route:
              - when: "${{ answer == 'yes' }}"
                steps:
                  - display: agreed
              - when: "${{ answer != 'yes' }}"
                steps:
                  - display: refused
        """,
    )
    plan = project.run("asked", "--what-if", "--format", "json")
    assert plan.exit_code == 0, plan.output
    route = json.loads(plan.stdout)["steps"][1]
    assert [(s["config"]["message"], s["conditional"]) for s in route["steps"]] == [
        ("agreed", True),
        ("refused", True),
    ]


def test_the_checker_reads_every_way_out(project) -> None:
    project.playbook(
        "scoped",
        """
        name: scoped
        description: a name one branch leaves undefined
        owner: Engineer
        inputs:
          - number: score
            default: 5
        steps:
          - route:
              - when: "${{ score > 3 }}"
                steps:
                  - var: level
                    value: high
              - when: "${{ score <= 3 }}"
                steps:
                  - display: low
          - display: "{{ level }}"
        """,
    )
    checked = project.cli("check", "playbooks/scoped.yaml")
    assert "C508" in checked.output and "defined only when the route at line 8 takes its branch 1" in checked.output


PAUSING = """
name: pausing
description: a checkpoint inside a branch and inside otherwise
owner: Engineer
inputs:
  - number: score
    default: 5
steps:
  - route:
      - when: "${{ score > 3 }}"
        steps:
          - display: before
          - checkpoint: "high: go on?"
          - display: after high
    otherwise:
      - checkpoint: "low: go on?"
      - display: after low
"""


@pytest.mark.parametrize(("score", "shown"), [("5", "after high"), ("1", "after low")])
def test_a_run_paused_inside_a_branch_resumes_there(project, score: str, shown: str) -> None:
    project.playbook("pausing", PAUSING)
    paused = project.run("pausing", score=score)
    assert paused.exit_code == 4, paused.output
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output  # the paused step is found again by its path
    assert shown in resumed.output and "before" not in resumed.output
