"""Plan diffs by step address (report/plan_diff.py) and the addresses plans give steps
(runtime/lifecycle/plan_data.address_steps), on plans written by hand."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from tests.report.test_plan_report import plan, step

from catalyst_dsl.report import plan_diff
from catalyst_dsl.runtime.lifecycle import golden as golden_plans
from catalyst_dsl.runtime.lifecycle.plan_data import address_steps

# -- addresses ------------------------------------------------------------------------------------------------

#: (path, step, action) of each entry, nested ones as (path, step, action, [children]).
CASES = [
    pytest.param(
        [("steps/0", "existing", "file-exists"), ("steps/1", "file-write@38", "file-write")],
        ["existing", "file-write#1"],
        id="a named step is its name, an unnamed one its action and rank",
    ),
    pytest.param(
        [
            ("steps/0", "file-write@3", "file-write"),
            ("steps/1", "var@5", "var"),
            ("steps/2", "file-write@7", "file-write"),
        ],
        ["file-write#1", "var#1", "file-write#2"],
        id="unnamed steps are ranked among those of their action only",
    ),
    pytest.param(
        [
            ("steps/0/approve-effects", "tests", "checkpoint"),
            ("steps/0", "tests", "bash"),
            ("steps/0/checkpoint", "tests", "checkpoint"),
            ("steps/1/checkpoint", "bash@9", "checkpoint"),
            ("steps/1", "bash@9", "bash"),
        ],
        ["tests/approve-effects", "tests", "tests/checkpoint", "bash#1/checkpoint", "bash#1"],
        id="a pause shown at a step is the step's address and its word",
    ),
    pytest.param(
        [
            (
                "steps/0",
                "release",
                "if",
                [("steps/0/then/0", "notes", "file-write"), ("steps/0/else/0", "notes", "file-write")],
            ),
            (
                "steps/1",
                "tasks",
                "for-each",
                [("steps/1/each/0/0", "write", "file-write"), ("steps/1/each/1/0", "write", "file-write")],
            ),
            ("steps/2", "docs", "playbook", [("steps/2/call/steps/0", "draft", "ai-prompt")]),
            ("steps/3", "try@20", "try", [("steps/3/steps/0", "build", "bash")]),
        ],
        [
            "release",
            "release/then/notes",
            "release/else/notes",
            "tasks",
            "tasks/each/0/write",
            "tasks/each/1/write",
            "docs",
            "docs/call/draft",
            "try#1",
            "try#1/build",
        ],
        id="nested steps under the names of what they run in",
    ),
]


def _entries(shape: list[tuple]) -> list[dict[str, Any]]:
    return [
        step(item[0], item[1], item[2], "no-op", steps=_entries(item[3]) if len(item) > 3 else []) for item in shape
    ]


def _addresses(steps: list[dict[str, Any]]) -> list[str]:
    return [a for entry in steps for a in (entry["address"], *_addresses(entry["steps"]))]


@pytest.mark.parametrize(("shape", "expected"), CASES)
def test_addresses(shape: list[tuple], expected: list[str]) -> None:
    steps = _entries(shape)
    address_steps(steps)
    assert _addresses(steps) == expected


def test_an_inserted_step_leaves_the_other_addresses_as_they_were() -> None:
    before = _entries([("steps/0", "draft", "ai-prompt"), ("steps/1", "file-write@9", "file-write")])
    after = _entries(
        [
            ("steps/0", "notes", "file-exists"),
            ("steps/1", "var@6", "var"),
            ("steps/2", "draft", "ai-prompt"),
            ("steps/3", "file-write@12", "file-write"),
        ]
    )
    address_steps(before)
    address_steps(after)
    assert set(_addresses(before)) <= set(_addresses(after))


def test_catch_clauses_and_route_branches_are_named_where_the_plan_knows_their_names() -> None:
    steps = _entries(
        [
            (
                "steps/0",
                "try@3",
                "try",
                [("steps/0/catch/0/0", "report", "display"), ("steps/0/catch/1/0", "bash@9", "bash")],
            ),
            ("steps/1", "pick", "route", [("steps/1/branches/0/0", "docs", "display")]),
            ("catch/0/0", "alert", "display"),
        ]
    )
    address_steps(steps, {"steps/0/catch/0": "E1", "steps/1/branches/0": "docs", "catch/0": "default"})
    # A clause the plan names nothing for keeps its position (`catch/1`).
    assert _addresses(steps) == [
        "try#1",
        "try#1/catch/E1/report",
        "try#1/catch/1/bash#1",
        "pick",
        "pick/branches/docs/docs",
        "catch/default/alert",
    ]


def test_an_address_met_twice_is_told_apart() -> None:
    steps = _entries([("steps/0", "greet", "display"), ("steps/0", "greet", "display")])
    address_steps(steps)
    assert _addresses(steps) == ["greet", "greet~2"]


# -- diffs ------------------------------------------------------------------------------------------------------


def _spec_plan() -> dict[str, Any]:
    return plan(
        "write-spec",
        [
            step("steps/0", "existing", "file-exists", "read", config={"path": "docs/spec.md"}),
            step("steps/1", "draft", "ai-prompt", "unknown", prompt="Write a spec.\nNumber the requirements.\n"),
            step(
                "steps/2",
                "file-write@38",
                "file-write",
                "create",
                effects=[{"change": "create", "path": "docs/spec.md", "diff": "+a\n"}],
            ),
            step("steps/3", "checkpoint@41", "checkpoint", "would-pause", approval={"message": "Review", "roles": []}),
        ],
        inputs={"depth": "standard"},
    )


def _changed(old: dict[str, Any], edit) -> dict[str, Any]:
    new = copy.deepcopy(old)
    edit(new)
    for entry in new["steps"]:
        entry.pop("address", None)
    address_steps(new["steps"])
    return new


def test_equal_plans_have_no_changes() -> None:
    diff = plan_diff.diff_plans(_spec_plan(), _spec_plan())
    assert diff.empty
    assert (
        plan_diff.render_text(diff)
        == "  (no change to what the run would do)\n\nPlan: 0 to add, 0 to change, 0 to remove.\n"
    )


def test_an_inserted_step_is_one_added_step_and_the_rest_only_moved() -> None:
    def insert(new: dict[str, Any]) -> None:
        new["steps"].insert(1, step("steps/1", "notes", "file-exists", "read"))
        for index, entry in enumerate(new["steps"]):
            entry["path"] = f"steps/{index}"
        new["steps"][3]["step"] = "file-write@41"
        new["steps"][4]["step"] = "checkpoint@44"

    assert plan_diff.render_text(plan_diff.diff_plans(_spec_plan(), _changed(_spec_plan(), insert))) == (
        "+ notes (file-exists) will be added at steps/1: read\n"
        "  (3 steps only moved: same address, new position)\n"
        "\n"
        "Plan: 1 to add, 0 to change, 0 to remove.\n"
    )


def test_changed_fields_removed_steps_and_plan_fields() -> None:
    def edit(new: dict[str, Any]) -> None:
        del new["steps"][0]
        new["steps"][0]["prompt"] = "Write a spec.\nNumber them FR-1, FR-2.\n"
        new["steps"][1]["effects"][0]["change"] = "modify"
        new["steps"][1]["change"] = "modify"
        new["inputs"]["depth"] = "brief"

    diff = plan_diff.diff_plans(_spec_plan(), _changed(_spec_plan(), edit))
    assert plan_diff.render_text(diff) == (
        "- existing (file-exists) removed (was read)\n"
        "~ draft (ai-prompt) changed:\n"
        '    prompt, line 2: "Number the requirements." -> "Number them FR-1, FR-2."\n'
        "~ file-write#1 (file-write) changed:\n"
        '    change: "create" -> "modify"\n'
        '    effects[docs/spec.md].change: "create" -> "modify"\n'
        '~ inputs.depth: "standard" -> "brief"\n'
        "\n"
        "Plan: 0 to add, 3 to change, 1 to remove.\n"
    )
    assert [(s.kind, s.address) for s in diff.steps] == [
        ("remove", "existing"),
        ("change", "draft"),
        ("change", "file-write#1"),
    ]


def test_a_long_value_is_cut() -> None:
    def edit(new: dict[str, Any]) -> None:
        new["steps"][0]["config"]["path"] = "x" * 300

    [line] = [
        line
        for line in plan_diff.render_text(plan_diff.diff_plans(_spec_plan(), _changed(_spec_plan(), edit))).splitlines()
        if "config.path" in line
    ]
    assert line.endswith("…") and len(line) < 250


@pytest.mark.parametrize(
    ("golden", "says"),
    [
        ({"format": "catalyst-plan", "version": 1}, "is in plan format 1, and this catalyst makes plans in format 2"),
        ({"format": "other", "version": 2}, "is in no known format"),
        ({}, "is in no known format"),
    ],
)
def test_a_plan_of_another_format_is_not_compared(golden: dict[str, Any], says: str) -> None:
    problem = plan_diff.format_problem(golden, "golden/x.plan.json")
    assert problem is not None and problem.startswith(f"golden/x.plan.json {says}")
    assert "regenerate it with pytest --update-golden" in problem
    assert plan_diff.format_problem(_spec_plan(), "golden/x.plan.json") is None


def test_the_example_of_the_plan_format_page_is_what_a_diff_shows(tmp_path: Path) -> None:
    """docs/plan-format.md, "Comparing two plans": the sample write-spec, a step added and its checkpoint reworded."""
    root = Path(__file__).parents[2]
    project = tmp_path / "project"
    (project / "playbooks").mkdir(parents=True)
    (project / "catalyst.toml").write_text("")
    playbook = project / "playbooks" / "write-spec.yaml"
    playbook.write_text((root / "playbooks" / "write-spec.yaml").read_text(encoding="utf-8"), encoding="utf-8")

    def planned() -> dict[str, Any]:
        return golden_plans.replan(
            project, {"playbook": {"file": "playbooks/write-spec.yaml"}, "inputs": {"feature-id": "search"}}
        )

    golden = planned()
    text = playbook.read_text(encoding="utf-8")
    playbook.write_text(
        text.replace("  - name: draft", '  - name: notes\n    file-exists: "docs/notes.md"\n\n  - name: draft').replace(
            "Review the spec for", "Please review the spec for"
        ),
        encoding="utf-8",
    )
    shown = plan_diff.render_text(plan_diff.diff_plans(golden, planned()))
    page = (root / "docs" / "plan-format.md").read_text(encoding="utf-8")
    assert f"has changed\n\n{shown}\nrun pytest --update-golden" in page


def test_a_comment_cuts_a_long_list_of_changes_and_keeps_its_summary() -> None:
    from tests.report.test_plan_report import hundred_step_plan

    from catalyst_dsl.report import pr_comment
    from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json, walk

    golden = hundred_step_plan()
    new = copy.deepcopy(golden)
    for entry, _depth in walk(new["steps"]):
        entry["reason"] = "changed"
    section = pr_comment._against_golden(canonical_json(golden), new, "golden/large.plan.json", stale=True)
    block = section.split("```diff\n")[1].split("\n```")[0].splitlines()
    full = pr_comment.plan_diff.explain(canonical_json(golden), new, "golden/large.plan.json").splitlines()
    assert len(block) == pr_comment.MD_CHANGE_LINES and block[: len(block) - 2] == full[: len(block) - 2]
    hidden = len(full) - (len(block) - 1)  # all but the lines shown and the summary
    assert block[-2] == f"… {hidden} more lines: run pytest to see them all"
    assert block[-1] == "Plan: 0 to add, 100 to change, 0 to remove."


def test_control_characters_in_names_reach_the_terminal_as_escapes() -> None:
    # A file name made from an input (`out/{{who}}.txt`) with an OSC sequence retitled the
    # terminal of whoever ran pytest or `--expect-plan` on the changed plan.
    hostile = "out/\x1b]0;owned\x07\x1b[2J.txt"
    old = _spec_plan()
    old["steps"][2]["effects"][0]["path"] = hostile
    old["steps"][2]["address"] = "write\x1b[31m"
    new = copy.deepcopy(old)
    new["steps"][2]["effects"][0]["diff"] = "changed"
    text = plan_diff.render_text(plan_diff.diff_plans(old, new))
    assert "\x1b" not in text and "\x07" not in text
    assert "~ write\\x1b[31m (file-write) changed:" in text
    assert "effects[out/\\x1b]0;owned\\x07\\x1b[2J.txt].diff" in text


def test_long_values_are_cut_around_their_difference_and_lists_say_what_came_and_went() -> None:
    from catalyst_dsl.report.plan_diff import FieldChange, _field_lines

    long = "a" * 150
    assert _field_lines(FieldChange("config.content", long + "B", long + "C")) == (
        f'    config.content: …{"a" * 25}B" -> …{"a" * 25}C"'
    )
    locks = ["path:out/alpha.txt", "path:out/inner-u.txt", "path:out/beta.txt", "path:out/omega.txt"]
    assert _field_lines(FieldChange("locks", locks, ["path:out/zero.txt", *locks[:3]])) == (
        '    locks: + "path:out/zero.txt", - "path:out/omega.txt"'
    )


def test_an_unnamed_steps_own_name_quoted_in_its_gate_moves_with_it() -> None:
    # "approve before file-write@38 runs": a line added above makes it @39, and that is no change.
    def gated(name: str, message: str) -> dict[str, Any]:
        return plan("p", [step("steps/0/before", name, "file-write", "would-pause", approval={"message": message})])

    old = gated("file-write@38", "approve before file-write@38 runs")
    moved = _changed(
        old,
        lambda new: new["steps"][0].update(
            step="file-write@39", approval={"message": "approve before file-write@39 runs"}
        ),
    )
    reworded = _changed(old, lambda new: new["steps"][0].update(approval={"message": "approve file-write@38 now"}))
    assert plan_diff.render_text(plan_diff.diff_plans(old, moved)).startswith("  (1 step only moved")
    assert "approval.message" in plan_diff.render_text(plan_diff.diff_plans(old, reworded))


def test_only_the_steps_own_name_is_taken_for_it() -> None:
    from catalyst_dsl.report.plan_diff import _without_name

    assert _without_name({"m": ["approve shell@1 and shell@12 and x-shell@1"]}, "shell@1") == {
        "m": ["approve <this step> and shell@12 and x-shell@1"]
    }
