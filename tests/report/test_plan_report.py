"""What-if plan reports: canonical JSON and its hash, plan diffs, text and Markdown, and the golden-plan pytest plugin.

The plans here are written by hand (docs/plan-format.md is the contract), so these tests
do not depend on the what-if engine. The rendered reports are golden files under
tests/golden/plans/; `python3 -m pytest tests/report/test_plan_report.py --update-golden`
rewrites them, to be reviewed as a diff.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from catalyst_dsl.report import plan as plan_report
from catalyst_dsl.report.plan import (
    markdown_view,
    render_markdown,
    render_text,
    summary_line,
)
from catalyst_dsl.runtime.lifecycle import golden as golden_plans
from catalyst_dsl.runtime.lifecycle import plan_data
from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json, count_changes, with_hash

pytest_plugins = ["pytester"]

GOLDEN = Path(__file__).parents[1] / "golden" / "plans"


# -- plans ---------------------------------------------------------------------------------------------------


def step(path: str, name: str, action: str, change: str, **fields: Any) -> dict[str, Any]:
    """A step entry with every key of the format, the ones not given empty."""
    entry = {
        "path": path,
        "step": name,
        "action": action,
        "change": change,
        "reason": None,
        "conditional": False,
        "config": {},
        "effects": [],
        "writes": [],
        "approval": None,
        "request": None,
        "steps": [],
    }
    entry.update(fields)
    return entry


def plan(name: str, steps: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    plan_data.address_steps(steps)
    body = {
        "format": "catalyst-plan",
        "version": plan_data.VERSION,
        "playbook": {"name": name, "file": f"playbooks/{name}.yaml"},
        "inputs": {},
        "permissions": {"allowedWritePaths": None},
        "locks": [],
        "conflicts": [],
        "steps": steps,
        "outputs": None,
        "summary": count_changes(steps),
    }
    body.update(fields)
    return body


SPEC_DIFF = "--- /dev/null\n+++ b/docs/spec/caching.md\n@@ -0,0 +1,3 @@\n+# Caching\n+\n+Cache the `résumé` | table.\n"
INDEX_DIFF = "--- a/docs/index.md\n+++ b/docs/index.md\n@@ -1,2 +1,3 @@\n # Specs\n - auth\n+- caching\n"
OLD_DIFF = "--- a/docs/old.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-# Old\n-gone\n"


def small_plan() -> dict[str, Any]:
    """Every change type once or more, nested steps, a name with `|` and a reason over two lines."""
    steps = [
        step("steps/0", "topic", "var", "no-op", config={"value": "caching"}),
        step("steps/1", "template", "file-read", "read", config={"path": "docs/template.md"}),
        step(
            "steps/2",
            "draft",
            "ai-prompt",
            "unknown",
            reason="an AI prompt cannot be simulated;\nits answer is unknown",
        ),
        step(
            "steps/3",
            "write spec",
            "file-write",
            "create",
            config={"path": "docs/spec/caching.md", "content": "<unknown>"},
            effects=[{"change": "create", "path": "docs/spec/caching.md", "diff": SPEC_DIFF}],
            writes=[{"path": "docs/spec/caching.md", "allowed": True}],
        ),
        step(
            "steps/4",
            "index",
            "if",
            "no-op",
            steps=[
                step(
                    "steps/4/then/0",
                    "add to index",
                    "file-write",
                    "modify",
                    conditional=True,
                    reason="depends on the result of `draft`, which is unknown",
                    effects=[{"change": "modify", "path": "docs/index.md", "diff": INDEX_DIFF}],
                    writes=[{"path": "docs/index.md", "allowed": True}],
                ),
            ],
        ),
        step(
            "steps/5",
            "old | stale",
            "file-delete",
            "delete",
            effects=[{"change": "delete", "path": "docs/old.md", "diff": OLD_DIFF}],
            writes=[{"path": "docs/old.md", "allowed": True}],
        ),
        step(
            "steps/6",
            "publish",
            "file-write",
            "refused",
            reason="docs/../secrets.txt is outside the playbook's write grants",
            writes=[{"path": "secrets.txt", "allowed": False, "refusal": "outside allowedWritePaths (docs/**)"}],
        ),
        step(
            "steps/7",
            "review",
            "checkpoint",
            "would-pause",
            reason="a real run waits here for approval",
            approval={"message": "Is the spec ready?", "roles": ["Architect", "Tech Lead"]},
        ),
        step(
            "steps/8",
            "notify",
            "http-request",
            "skipped",
            reason="`inputs.notify` is false",
            request={"method": "POST", "url": "https://example.com/hook"},
        ),
    ]
    return plan(
        "write-spec",
        steps,
        inputs={"notify": False, "token": "<secret:token>", "topic": "caching"},
        permissions={"allowedWritePaths": ["docs/**"]},
        locks=["path:docs/**"],
        conflicts=[{"resource": "path:docs/**", "run": "20260101-120000-write-spec-001"}],
        outputs={"spec": "docs/spec/caching.md"},
    )


def hundred_step_plan() -> dict[str, Any]:
    """100 step entries (80 at the top, 10 loops of 2): the plan of a large playbook, every diff 8 lines long."""
    kinds = ["create", "modify", "no-op", "read", "unknown", "modify", "create", "skipped", "delete", "would-pause"]
    steps: list[dict[str, Any]] = []
    for index in range(80):
        path = f"steps/{index}"
        change = kinds[index % len(kinds)]
        if index % 8 == 7:
            body = [_generated(f"{path}/each/{n}/0", f"item {index}.{n}", "create") for n in range(2)]
            steps.append(step(path, f"each-{index}", "for-each", "no-op", steps=body))
        else:
            steps.append(_generated(path, f"step-{index}", change))
    generated = plan("large", steps, inputs={"count": 100})
    assert sum(generated["summary"].values()) == 100
    return generated


def _generated(path: str, name: str, change: str) -> dict[str, Any]:
    file = f"out/{name.replace(' ', '-')}.md"
    fields: dict[str, Any] = {}
    if change in ("create", "modify", "delete"):
        diff = "".join(f"{'+' if change != 'delete' else '-'}line {n} of {name}\n" for n in range(5))
        fields["effects"] = [
            {"change": change, "path": file, "diff": f"--- a/{file}\n+++ b/{file}\n@@ -1 +1,5 @@\n{diff}"}
        ]
    if change == "unknown":
        fields["reason"] = "an AI prompt cannot be simulated"
    if change == "would-pause":
        fields["approval"] = {"message": f"Continue after {name}?", "roles": ["Reviewer"]}
    return step(path, name, "file-write" if fields.get("effects") else "display", change, **fields)


def shuffled(value: Any, rng: random.Random) -> Any:
    """The same value with the keys of every object in another order."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {key: shuffled(value[key], rng) for key in keys}
    if isinstance(value, list):
        return [shuffled(item, rng) for item in value]
    return value


def check_golden(name: str, actual: str, update_golden: bool) -> None:
    expected = GOLDEN / name
    if update_golden:
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(actual, encoding="utf-8", newline="\n")
    if not expected.exists():
        pytest.fail(
            f"tests/golden/plans/{name} is missing: run "
            "`python3 -m pytest tests/report/test_plan_report.py --update-golden` and review the new file",
            pytrace=False,
        )
    assert actual == expected.read_text(encoding="utf-8")


# -- canonical JSON and the hash -----------------------------------------------------------------------------


def test_canonical_json_is_the_same_bytes_whatever_the_key_order() -> None:
    original = with_hash(small_plan())
    text = canonical_json(original)
    rng = random.Random(7)
    for _ in range(5):
        assert canonical_json(shuffled(original, rng)) == text
    assert text.endswith("}\n") and not text.endswith("\n\n") and "\r" not in text
    assert "résumé" in text  # UTF-8 text, not \u escapes
    assert text.splitlines()[1] == '  "conflicts": ['  # sorted keys, two-space indent
    assert json.loads(text) == original


def test_canonical_json_of_the_small_plan(update_golden: bool) -> None:
    check_golden("small.plan.json", canonical_json(with_hash(small_plan())), update_golden)


def test_canonical_json_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        canonical_json({"inputs": {"ratio": float("nan")}})


def test_plan_hash_is_the_sha256_of_the_plan_without_it() -> None:
    original = small_plan()
    hashed = with_hash(original)
    assert "planHash" not in original  # the plan given is not changed
    assert hashed["planHash"] == hashlib.sha256(canonical_json(original).encode("utf-8")).hexdigest()
    assert with_hash(hashed) == hashed
    assert with_hash({**original, "planHash": "stale"}) == hashed
    assert with_hash(shuffled(original, random.Random(3)))["planHash"] == hashed["planHash"]
    changed = small_plan()
    changed["inputs"]["topic"] = "queues"
    assert with_hash(changed)["planHash"] != hashed["planHash"]


def test_count_changes_counts_nested_entries_and_names_every_change_type() -> None:
    counts = count_changes(small_plan()["steps"])
    assert list(counts) == [
        "create",
        "modify",
        "delete",
        "no-op",
        "read",
        "unknown",
        "skipped",
        "would-pause",
        "refused",
    ]
    assert counts["modify"] == 1 and counts["no-op"] == 2 and sum(counts.values()) == 10


# -- diffs of two plans ----------------------------------------------------------------------------------------


def test_render_text_of_the_small_plan(update_golden: bool) -> None:
    check_golden("small.txt", render_text(with_hash(small_plan())), update_golden)


def test_render_text_indents_nested_steps_and_their_diffs() -> None:
    lines = render_text(small_plan()).splitlines()
    at = lines.index("    ~ add to index (file-write) [conditional]")
    assert lines[at - 1] == "= index (if)"
    assert lines[at + 1] == "        # depends on the result of `draft`, which is unknown"
    assert lines[at + 2] == "        ~ docs/index.md"
    assert lines[at + 3] == "            --- a/docs/index.md"


def test_summary_line() -> None:
    assert (
        summary_line(small_plan())
        == "Plan: 1 to create, 1 to modify, 1 to delete, 1 unknown, 1 would pause, 1 refused."
    )
    counts = {"create": 2, "modify": 1, "delete": 0, "unknown": 3, "would-pause": 1, "refused": 0, "no-op": 4}
    assert summary_line({"summary": counts}) == "Plan: 2 to create, 1 to modify, 0 to delete, 3 unknown, 1 would pause."


def test_render_text_shows_terminal_controls_as_escapes() -> None:
    hostile = plan("x", [step("steps/0", "red\x1b[31m", "display", "no-op", reason="line\u202eevil")])
    text = render_text(hostile)
    assert "\x1b" not in text and "\u202e" not in text
    assert "= red\\x1b[31m (display)" in text and "# line\\u202eevil" in text


def test_render_text_of_a_change_type_it_does_not_know() -> None:
    text = render_text(plan("x", [step("steps/0", "s", "display", "teleport")]))
    assert "• s (display) [teleport]" in text.splitlines()


# -- Markdown -------------------------------------------------------------------------------------------------


def test_render_markdown_of_the_small_plan(update_golden: bool) -> None:
    check_golden("small.md", render_markdown(with_hash(small_plan())), update_golden)


def test_render_markdown_of_a_100_step_plan(update_golden: bool) -> None:
    check_golden("large.md", render_markdown(with_hash(hundred_step_plan())), update_golden)


def test_markdown_leads_with_what_needs_attention() -> None:
    text = render_markdown(with_hash(small_plan()))
    title = text.splitlines()[1]
    assert title == (
        "## What-if plan for `write-spec`: 1 to create, 1 to modify, 1 to delete, 1 unknown, 1 would pause, 1 refused"
    )
    sections = [text.index(heading) for heading in ("### Needs attention", "### Steps", "### File changes")]
    assert sections == sorted(sections)
    attention = text[sections[0] : sections[1]]
    order = [
        attention.index(f"- **{label}** `steps/{n}`")
        for label, n in (("refused", 6), ("delete", 5), ("unknown", 2), ("would pause", 7))
    ]
    assert order == sorted(order)
    assert "waits for approval by **Architect**, **Tech Lead**: Is the spec ready?" in attention
    assert "deletes `docs/old.md`" in attention
    assert "would write `secrets.txt`" in attention
    assert "- **lock held** `path:docs/**` by live run `20260101-120000-write-spec-001`" in attention


def test_markdown_lists_a_step_that_deletes_among_the_deletes_whatever_its_change() -> None:
    cleanup = step(
        "steps/0",
        "tidy",
        "file-write",
        "modify",
        effects=[
            {"change": "modify", "path": "a.md", "diff": "--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-a\n+b\n"},
            {"change": "delete", "path": "b.md", "diff": "--- a/b.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-b\n"},
        ],
    )
    text = render_markdown(plan("x", [cleanup]))
    assert "- **delete** `steps/0` tidy (`file-write`): deletes `b.md`" in text


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| `")]


def test_markdown_table_escapes_pipes_newlines_and_markup() -> None:
    odd = plan(
        "x",
        [
            step("steps/0", "a | b\nc", "display", "no-op"),
            step("steps/1", "<details>*bold*", "my|action", "no-op"),
            step("steps/2", "tick", "`quoted`", "no-op"),
        ],
    )
    rows = table_rows(render_markdown(odd))
    assert rows[0] == "| `steps/0` | a \\| b<br>c | `display` | = no-op |"
    assert rows[1] == "| `steps/1` | \\<details\\>\\*bold\\* | `my\\|action` | = no-op |"
    assert rows[2] == "| `steps/2` | tick | `` `quoted` `` | = no-op |"
    for row in rows + table_rows(render_markdown(with_hash(small_plan()))):
        assert len(re.findall(r"(?<!\\)\|", row)) == 5, row  # four cells, whatever the text


def test_markdown_of_100_steps_stays_short() -> None:
    large = with_hash(hundred_step_plan())
    text = render_markdown(large)
    assert len(text.splitlines()) < 400
    assert len(text) < 65_536  # GitHub's limit for a comment
    rows = table_rows(text)
    assert [row.split("`")[1] for row in rows] == [s["path"] for s, _depth in plan_data.walk(large["steps"])]
    assert "<details><summary>100 steps</summary>" in text  # a long table starts folded
    assert "Not shown here (42 more file changes, in the JSON plan):" in text


def test_markdown_is_deterministic() -> None:
    large = with_hash(hundred_step_plan())
    assert render_markdown(shuffled(large, random.Random(1))) == render_markdown(large)


def test_markdown_lists_at_most_20_steps_of_a_kind() -> None:
    many = plan("x", [step(f"steps/{n}", f"ask-{n}", "ai-prompt", "unknown", reason="AI") for n in range(30)])
    text = render_markdown(many)
    assert text.count("- **unknown** ") == 20
    assert "- … and 10 more unknown (see the table)" in text


def test_markdown_with_nothing_to_review() -> None:
    text = render_markdown(plan("x", [step("steps/0", "hi", "display", "no-op")]))
    assert "Nothing: no deletes, refusals, unknown steps, approvals or lock conflicts." in text
    assert "### File changes" not in text
    assert text.endswith("</details>\n") and not text.endswith("\n\n")


def test_markdown_diff_fence_is_longer_than_backticks_in_the_diff() -> None:
    diff = "--- /dev/null\n+++ b/README.md\n@@ -0,0 +1,3 @@\n+````python\n+x = 1\n+````\n"
    text = render_markdown(
        plan(
            "x",
            [
                step(
                    "steps/0",
                    "w",
                    "file-write",
                    "create",
                    effects=[{"change": "create", "path": "README.md", "diff": diff}],
                )
            ],
        )
    )
    assert "`````diff\n--- /dev/null" in text and "+````\n`````\n" in text


def test_markdown_cuts_a_long_diff() -> None:
    diff = "--- /dev/null\n+++ b/big.md\n@@ -0,0 +1,100 @@\n" + "".join(f"+{n}\n" for n in range(100))
    view = markdown_view(
        plan(
            "x",
            [
                step(
                    "steps/0",
                    "w",
                    "file-write",
                    "create",
                    effects=[{"change": "create", "path": "big.md", "diff": diff}],
                )
            ],
        )
    )
    assert len(view["diffs"][0]["diff"].splitlines()) == plan_report.MD_DIFF_EACH
    assert view["diffs"][0]["cut"] == 103 - plan_report.MD_DIFF_EACH


def test_template_ships_in_the_package() -> None:
    from importlib.resources import files

    assert (files("catalyst_dsl.report") / "templates" / "plan.md.j2").is_file()


# -- re-planning a golden plan ----------------------------------------------------------------------------------


def hello_plan(greeting: str = "hello world") -> dict[str, Any]:
    return plan(
        "hello", [step("steps/0", "greet", "display", "no-op", config={"message": greeting})], inputs={"who": "world"}
    )


def fake_project(root: Path) -> None:
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    (root / "playbooks").mkdir(exist_ok=True)
    (root / "playbooks" / "hello.yaml").write_text(
        "name: hello\ndescription: Greets\nowner: Engineer\nsteps:\n  - display: hello\n", encoding="utf-8"
    )


def test_replan_plans_the_golden_playbook_with_its_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catalyst_dsl.runtime.lifecycle.session import Session

    fake_project(tmp_path)
    calls = []

    def fake_plan(self, file, inputs, *, from_text):
        calls.append((file, inputs, from_text, self.options.interactive, isinstance(self.options.out, io.StringIO)))
        return hello_plan()

    monkeypatch.setattr(Session, "plan", fake_plan, raising=False)
    assert golden_plans.replan(tmp_path, with_hash(hello_plan())) == hello_plan()
    assert calls == [(str(tmp_path / "playbooks" / "hello.yaml"), {"who": "world"}, False, False, True)]


def test_replan_reports_a_playbook_that_cannot_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catalyst_dsl.runtime.errors import RunAbort
    from catalyst_dsl.runtime.lifecycle.session import Session

    fake_project(tmp_path)

    def fake_plan(self, file, inputs, *, from_text):
        raise RunAbort(
            1, "playbooks/hello.yaml has errors; nothing was run", help="fix them", details=("error[C101]: bad",)
        )

    monkeypatch.setattr(Session, "plan", fake_plan, raising=False)
    with pytest.raises(golden_plans.ReplanError, match="has errors; nothing was run\nerror\\[C101\\]: bad\nfix them"):
        golden_plans.replan(tmp_path, with_hash(hello_plan()))


# -- the pytest plugin --------------------------------------------------------------------------------------------

#: Inner runs without the installed plugins they do not need (hypothesis alone costs a second
#: a run), the catalyst entry point among them: it would load the plugin a second time.
BARE = ("-p", "no:catalyst", "-p", "no:hypothesispytest", "-p", "no:benchmark")
#: The plugin by its module.
PLUGIN = (*BARE, "-p", "catalyst_dsl.pytest_plugin")


@pytest.fixture
def golden_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """A project with playbooks/hello.yaml and golden/hello.plan.json; `replan` returns `state["plan"]`."""
    pytester.makeini("[pytest]\n")
    fake_project(pytester.path)
    (pytester.path / "golden").mkdir()
    (pytester.path / "golden" / "hello.plan.json").write_text(canonical_json(with_hash(hello_plan())), encoding="utf-8")
    state: dict[str, Any] = {"plan": hello_plan(), "calls": []}

    def fake_replan(root: Path, golden: dict[str, Any]) -> dict[str, Any]:
        state["calls"].append((root, golden))
        return state["plan"]

    monkeypatch.setattr(golden_plans, "replan", fake_replan)
    return pytester, state


def test_plugin_passes_a_golden_plan_that_still_holds(golden_project) -> None:
    pytester, state = golden_project
    (pytester.path / "other").mkdir()
    (pytester.path / "other" / "stray.plan.json").write_text("{}", encoding="utf-8")  # not under golden/
    result = pytester.runpytest(*PLUGIN, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["golden/hello.plan.json::what-if PASSED*"])
    [(root, golden)] = state["calls"]
    assert root.resolve() == pytester.path.resolve()
    assert golden["inputs"] == {"who": "world"} and golden["playbook"]["file"] == "playbooks/hello.yaml"


def test_plugin_fails_with_the_changed_steps_when_the_plan_changed(golden_project) -> None:
    pytester, state = golden_project
    state["plan"] = hello_plan("hello there")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden/hello.plan.json: the what-if plan of playbooks/hello.yaml has changed",
            "",
            "~ greet (display) changed:",
            '    config.message: "hello world" -> "hello there"',
            "",
            "Plan: 0 to add, 1 to change, 0 to remove.",
            "",
            "run pytest --update-golden to accept*",
        ]
    )
    assert "Traceback" not in result.stdout.str() and "def runtest" not in result.stdout.str()


def test_plugin_shows_an_inserted_step_as_one_added_step(golden_project) -> None:
    pytester, state = golden_project
    greet = step("steps/1", "greet", "display", "no-op", config={"message": "hello world"})
    state["plan"] = plan(
        "hello",
        [step("steps/0", "intro", "display", "no-op", config={"message": "first"}), greet],
        inputs={"who": "world"},
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "+ intro (display) will be added at steps/0: no-op",
            "  (1 step only moved: same address, new position)",
            "",
            "Plan: 1 to add, 0 to change, 0 to remove.",
        ]
    )
    assert "greet (display) changed" not in result.stdout.str()


def test_plugin_asks_to_regenerate_a_golden_plan_of_an_older_format(golden_project) -> None:
    pytester, state = golden_project
    old = {**with_hash(hello_plan()), "version": 1}
    for entry in old["steps"]:
        del entry["address"]
    (pytester.path / "golden" / "hello.plan.json").write_text(canonical_json(old), encoding="utf-8")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden/hello.plan.json is in plan format 1, and this catalyst makes plans in format 2 *; "
            "regenerate it with pytest --update-golden *"
        ]
    )
    assert state["calls"] == []  # not planned, nor compared: a diff against another format would mislead
    pytester.runpytest(*PLUGIN, "--update-golden").assert_outcomes(passed=1)
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_plugin_names_a_file_the_plan_reads_that_is_not_as_committed(golden_project) -> None:
    import subprocess

    pytester, state = golden_project
    reads = lambda exists: plan(
        "hello",
        [
            step(
                "steps/0",
                "existing",
                "file-exists",
                "read",
                config={"path": "out/spec.md"},
                reason="exists" if exists else None,
            )
        ],
        inputs={"who": "world"},
    )
    (pytester.path / "golden" / "hello.plan.json").write_text(canonical_json(with_hash(reads(False))), encoding="utf-8")
    git = lambda *args: subprocess.run(["git", *args], cwd=pytester.path, check=True, capture_output=True)
    git("init", "-q")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "plans")
    # A run wrote the file the plan looks for; the plan changes with no change to the playbook.
    (pytester.path / "out").mkdir()
    (pytester.path / "out" / "spec.md").write_text("# Spec\n", encoding="utf-8")
    state["plan"] = reads(True)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["note: files this plan reads or writes are not as committed*out/spec.md (not committed)*"]
    )


def test_plugin_update_golden_rewrites_the_plan(golden_project) -> None:
    pytester, state = golden_project
    state["plan"] = hello_plan("hello there")
    golden = pytester.path / "golden" / "hello.plan.json"
    result = pytester.runpytest(*PLUGIN, "--update-golden")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*catalyst: 1 golden plan rewritten*", "golden/hello.plan.json"])
    assert golden.read_bytes() == canonical_json(with_hash(hello_plan("hello there"))).encode("utf-8")
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_plugin_fails_when_the_playbook_is_gone(golden_project) -> None:
    pytester, _state = golden_project
    (pytester.path / "playbooks" / "hello.yaml").unlink()
    result = pytester.runpytest(*PLUGIN, "--update-golden")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["golden/hello.plan.json: its playbook playbooks/hello.yaml no longer exists; delete this golden plan*"]
    )


def test_plugin_only_plans_playbooks_under_the_playbook_dirs(golden_project) -> None:
    pytester, state = golden_project
    pytester.makeini("[pytest]\ncatalyst_playbook_dirs = books\n")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*its playbook playbooks/hello.yaml is outside the playbook directories (books)*"])
    assert state["calls"] == []


def test_plugin_reads_its_settings(golden_project) -> None:
    pytester, _state = golden_project
    pytester.makeini("[pytest]\ncatalyst_golden_dir = checks/plans\ncatalyst_playbook_dirs = books playbooks\n")
    (pytester.path / "checks").mkdir()
    (pytester.path / "golden").rename(pytester.path / "checks" / "plans")
    result = pytester.runpytest(*PLUGIN, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["checks/plans/hello.plan.json::what-if PASSED*"])


def test_plugin_reports_a_broken_golden_file(golden_project) -> None:
    pytester, _state = golden_project
    (pytester.path / "golden" / "hello.plan.json").write_text("{not json", encoding="utf-8")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["golden/hello.plan.json is not valid JSON (*"])


def test_plugin_reports_a_playbook_that_cannot_be_planned(golden_project, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester, _state = golden_project

    def failing(root, golden):
        raise golden_plans.ReplanError("playbooks/hello.yaml has errors; nothing was run")

    monkeypatch.setattr(golden_plans, "replan", failing)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["golden/hello.plan.json: playbooks/hello.yaml cannot be planned:", "playbooks/hello.yaml has errors*"]
    )


CONFTEST_WITH_OPTION = '''
import pytest

def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden expected files")

@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")
'''


def test_plugin_works_beside_a_conftest_that_defines_update_golden(golden_project) -> None:
    pytester, state = golden_project
    pytester.makeconftest(CONFTEST_WITH_OPTION)
    pytester.makepyfile(test_flag="def test_flag(update_golden):\n    assert update_golden\n")
    state["plan"] = hello_plan("hello there")
    result = pytester.runpytest(*PLUGIN, "--update-golden")
    result.assert_outcomes(passed=2)
    assert "hello there" in (pytester.path / "golden" / "hello.plan.json").read_text(encoding="utf-8")


def test_plugin_loaded_by_a_conftest_adds_update_golden(golden_project) -> None:
    pytester, state = golden_project
    pytester.makeconftest('pytest_plugins = ["catalyst_dsl.pytest_plugin"]\n')
    state["plan"] = hello_plan("hello there")
    result = pytester.runpytest(*BARE, "--update-golden")
    result.assert_outcomes(passed=1)
    assert "hello there" in (pytester.path / "golden" / "hello.plan.json").read_text(encoding="utf-8")


def test_plugin_alone_adds_update_golden_and_its_fixture(golden_project) -> None:
    pytester, _state = golden_project
    result = pytester.runpytest(*PLUGIN, "--help")
    result.stdout.fnmatch_lines(["*--update-golden*rewrite golden expected files*", "*catalyst_golden_dir*"])
    pytester.makepyfile(test_flag="def test_flag(update_golden):\n    assert update_golden\n")
    pytester.runpytest(*PLUGIN, "--update-golden", "test_flag.py").assert_outcomes(passed=1)


def test_every_golden_report_has_its_test() -> None:
    written = {"small.plan.json", "small.txt", "small.md", "large.md"}
    orphans = sorted(p.name for p in GOLDEN.iterdir() if p.name not in written)
    assert not orphans, f"files in tests/golden/plans/ that no test writes (delete them): {', '.join(orphans)}"


def test_the_markdown_plan_draws_the_flow_of_the_steps_that_act(project):
    project.playbook(
        "notes",
        """
        name: notes
        description: reads, then writes a note
        owner: Engineer
        steps:
          - name: greet
            display: hello
          - name: note
            file-write: out/note.md
            content: hi
    """,
    )
    shown = project.run("notes", "--what-if", "--format", "markdown")
    assert shown.exit_code == 0, shown.output
    flow = shown.output.split("### Flow\n\n```mermaid\n")[1].split("```")[0]
    assert '"note (file-write)"' in flow and "greet" not in flow and "1 other step" in flow
    project.write("out/note.md", "hi")
    quiet = project.run("notes", "--what-if", "--format", "markdown")
    assert "### Flow" not in quiet.output  # nothing would change: nothing to draw


def test_a_flow_too_large_to_draw_is_named_with_the_command_that_draws_it(project):
    # 600 writing steps: 600 arrows, more than GitHub's Mermaid draws.
    steps = "".join(f"  - file-write: out/n{i}.md\n    content: x\n" for i in range(600))
    project.playbook("many", "name: many\ndescription: writes many notes\nowner: Engineer\nsteps:\n" + steps)
    shown = project.run("many", "--what-if", "--format", "markdown")
    assert shown.exit_code == 0, shown.output
    assert "```mermaid" not in shown.output
    assert (
        "### Flow\n\nToo large for GitHub's Mermaid to draw (it draws at most 500 arrows and 50,000 characters):"
        " `catalyst graph playbooks/many.yaml --format svg -o flow.svg` draws the whole flow.\n\n### Steps"
    ) in shown.output


def test_the_command_that_draws_a_large_flow_can_be_pasted_whatever_the_file_name(project):
    steps = "".join(f"  - file-write: out/n{i}.md\n    content: x\n" for i in range(600))
    project.write("playbooks/my notes;$(id).yaml", "name: many\ndescription: d\nowner: Engineer\nsteps:\n" + steps)
    shown = project.run("many", "--what-if", "--format", "markdown")
    assert shown.exit_code == 0, shown.output
    assert "`catalyst graph 'playbooks/my notes;$(id).yaml' --format svg -o flow.svg`" in shown.output


def test_markdown_file_change_summary_stays_one_html_block() -> None:
    # A blank line ends the <details> HTML block: a file name holding one would let the
    # rest of the name be read as Markdown (a heading, a mention, an image).
    hostile = "out/a\n\n# Heading @someone\n\n<img src=x>.txt"
    diff = "--- /dev/null\n+++ b/out/a.txt\n@@ -0,0 +1 @@\n+x\n"
    text = render_markdown(
        plan(
            "x",
            [
                step(
                    "steps/0",
                    "w\n\nx",
                    "file-write",
                    "create",
                    effects=[{"change": "create", "path": hostile, "diff": diff}],
                )
            ],
        )
    )
    summary = next(line for line in text.splitlines() if line.startswith("<details><summary>+ "))
    assert summary.endswith("</summary>")
    assert "<code>out/a  # Heading @\u200bsomeone  &lt;img src=x&gt;.txt</code>" in summary
    assert "\n# Heading" not in text


def test_markdown_mentions_and_references_of_a_playbook_are_not_links() -> None:
    # GitHub reads `@name` and `#12` after the Markdown, whatever backslash is before them:
    # a comment quoting them would notify those people or reference those issues.
    checkpoint = step(
        "steps/0",
        "ask @octocat",
        "checkpoint",
        "would-pause",
        approval={"message": "ping @org/team about other/repo#12 and #3"},
    )
    effect = {"change": "create", "path": "notes-@octocat-#4.md", "diff": "+x\n"}
    text = render_markdown(
        plan("x", [checkpoint, step("steps/1", "w @octocat", "file-write", "create", effects=[effect])])
    )
    assert not re.search(r"[@#][A-Za-z0-9]", text.split("```diff")[0].replace("`steps/", "")), text
    zw = plan_report.ZERO_WIDTH_SPACE
    assert f"ping @{zw}org/team about other/repo\\#{zw}12 and \\#{zw}3" in text
    assert f"<code>notes-@{zw}octocat-#{zw}4.md</code>" in text
