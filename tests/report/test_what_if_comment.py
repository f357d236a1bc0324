"""Sticky what-if comments on a pull request (`catalyst what-if-comment` and the GitHub
Action's step that runs it), against the local fake of GitHub's API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.helpers.fake_github import TOKEN, FakeGitHub
from tests.helpers.action_steps import run_bash_step

from catalyst_dsl.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
HELLO = (
    'name: hello\ndescription: x\nowner: Engineer\ninputs:\n  - string: who\n    default: world\n'
    'steps:\n  - display: "hi {{ who }}"\n'
)
BYE = 'name: bye\ndescription: x\nowner: Engineer\nsteps:\n  - file-write: notes/bye.md\n    content: bye\n'
PLAIN = 'name: plain\ndescription: x\nowner: Engineer\nsteps:\n  - display: "no golden plan"\n'


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "golden").mkdir()
    (root / "catalyst.toml").write_text("")
    for name, text in (("hello", HELLO), ("bye", BYE), ("plain", PLAIN)):
        (root / "playbooks" / f"{name}.yaml").write_text(text)
    for name in ("hello", "bye"):
        made = _approve_plan(root, name)
        assert made.returncode == 0, made.stderr
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


def _comment(root: Path, github: FakeGitHub, *changed: str, token: str = TOKEN):
    env = {
        "GITHUB_TOKEN": token,
        "GITHUB_REPOSITORY": "acme/widgets",
        "GITHUB_API_URL": github.url,
        "GITHUB_EVENT_PATH": str(root.parent / "event.json"),
    }
    (root.parent / "event.json").write_text(json.dumps({"pull_request": {"number": 1}}))
    old = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(cli, ["what-if-comment", *changed], env=env)
    finally:
        os.chdir(old)


def test_one_sticky_comment_per_changed_playbook(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with FakeGitHub() as github:
        github.add_issue("acme/widgets", "Change the greeting")
        github.add_comments("acme/widgets", 1, [f"review {i}" for i in range(150)])  # two pages to look through

        first = _comment(root, github, "playbooks/hello.yaml", "playbooks/plain.yaml", "README.md")
        assert first.exit_code == 0, first.output
        assert first.output.startswith(
            "posted the what-if comment of playbooks/hello.yaml: https://github.com/acme/widgets/issues/1#issuecomment-"
        )
        [posted] = [c for c in github.comments[("acme/widgets", 1)] if c["body"].startswith("<!-- catalyst-plan")]
        assert posted["body"].startswith(
            "<!-- catalyst-plan golden/hello.plan.json -->\nLabels: **nothing**\n\n"
            "The plan matches its golden plan `golden/hello.plan.json`.\n\n## What-if plan for `hello`"
        )
        assert "`who` = `\"world\"`" in posted["body"]
        first_body = posted["body"]

        # The next push: the same comment is updated, never a second one; a playbook newly
        # changed gets its own.
        (root / "playbooks" / "hello.yaml").write_text(HELLO.replace("hi {{ who }}", "hello {{ who }}"))
        second = _comment(root, github, "playbooks/hello.yaml", "playbooks/bye.yaml")
        # Its golden plan is stale now: both comments are posted, then the command fails.
        assert second.exit_code == 1, second.output
        assert [line.split(":")[0] for line in second.output.splitlines()] == [
            "posted the what-if comment of playbooks/bye.yaml",
            "updated the what-if comment of playbooks/hello.yaml",
            "error",
        ]
        assert second.output.splitlines()[-1] == (
            "error: 1 golden plan out of date: golden/hello.plan.json; "
            "regenerate with pytest --update-golden, review and commit"
        )
        ours = [c for c in github.comments[("acme/widgets", 1)] if c["body"].startswith("<!-- catalyst-plan")]
        assert [c["id"] for c in ours][0] == posted["id"] and len(ours) == 2
        assert ours[0]["body"] != first_body  # the new plan (its hash changed with the step)
        assert [r["method"] for r in github.writes()] == ["POST", "POST", "PATCH"]

        # A comment by an outside contributor that copies the marker is left alone.
        github.comments[("acme/widgets", 1)].insert(
            0,
            {
                "id": 1,
                "body": "<!-- catalyst-plan golden/plain2.plan.json -->\nlooks fine",
                "user": {"login": "mallory", "type": "User"},
                "author_association": "CONTRIBUTOR",
            },
        )
        (root / "playbooks" / "plain2.yaml").write_text(PLAIN.replace("plain", "plain2", 1))
        made = _approve_plan(root, "plain2")
        assert made.returncode == 0, made.stderr
        copied = _comment(root, github, "playbooks/plain2.yaml")
        # (hello's golden plan, stale since the second push, is commented on again: every stale one is)
        assert "\nposted the what-if comment of playbooks/plain2.yaml: " in copied.output
        assert github.comments[("acme/widgets", 1)][0]["body"].endswith("looks fine")

        # A playbook that can no longer be planned says so in its comment.
        (root / "playbooks" / "bye.yaml").write_text(BYE.replace("file-write", "file-wrte"))
        broken = _comment(root, github, "playbooks/bye.yaml")
        assert broken.exit_code == 1, broken.output  # a golden plan that cannot be made again does not hold
        bye = next(
            c
            for c in github.comments[("acme/widgets", 1)]
            if c["body"].startswith("<!-- catalyst-plan golden/bye.plan.json")
        )
        assert "could not be planned" in bye["body"] and "file-wrte" in bye["body"]

        # A golden plan naming a file outside the playbook directories is never planned.
        (root / "golden" / "escape.plan.json").write_text(
            json.dumps({"playbook": {"file": "../../../../etc/hostname"}, "inputs": {}})
        )
        escaped = _comment(root, github, "golden/escape.plan.json", "--no-fail-on-stale")
        assert escaped.exit_code == 0, escaped.output
        body = github.comments[("acme/widgets", 1)][-1]["body"]
        assert (
            body.startswith("<!-- catalyst-plan golden/escape.plan.json -->")
            and "is outside the playbook directories" in body
        )

        # A refused token: an error with GitHub's reason, no traceback, exit 1.
        refused = _comment(root, github, "playbooks/hello.yaml", token="wrong")
        assert (
            refused.exit_code == 1
            and "GitHub refused GET /repos/acme/widgets/issues/1/comments: 401 Bad credentials" in refused.output
        )
        assert "Traceback" not in refused.output


def test_a_stale_golden_plan_is_shown_as_its_changes_labelled_summarized_and_failed(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "playbooks" / "bye.yaml").write_text(
        BYE.replace("steps:\n", 'steps:\n  - name: wave\n    display: "bye"\n').replace("content: bye", "content: ciao")
    )
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    summary.write_text("# Earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
    old = os.getcwd()
    os.chdir(root)
    try:
        failed = CliRunner().invoke(cli, ["what-if-comment", "--print", "playbooks/bye.yaml"], env=env)
        passed = CliRunner().invoke(
            cli, ["what-if-comment", "--print", "--no-fail-on-stale", "playbooks/bye.yaml", "playbooks/hello.yaml"]
        )
    finally:
        os.chdir(old)
    assert failed.exit_code == 1 and "Traceback" not in failed.output
    body = failed.output.split("error: ")[0]
    assert body.startswith(
        "<!-- catalyst-plan golden/bye.plan.json -->\nLabels: **writes**\n\n"
        "## Changes against the golden plan `golden/bye.plan.json`\n\n"
        "The golden plan is out of date: regenerate it with `pytest --update-golden`"
    )
    assert (
        "```diff\n+ wave (display) will be added at steps/0: no-op\n"
        "~ file-write#1 (file-write) changed:\n"
        '    config.content: "bye" -> "ciao"\n'
    ) in body
    assert "\nPlan: 1 to add, 1 to change, 0 to remove.\n```\n\n### Flow of what changed\n\n```mermaid\n" in body
    # The flow marks the two steps that changed, and the comment's plan follows it.
    flow = body.split("```mermaid\n")[1].split("```")[0]
    assert flow.startswith("flowchart TD\n") and '"wave (display)"' in flow and "class n1,n2 marked" in flow
    assert "\n```\n\n## What-if plan for `bye`" in body
    # The job summary gets the same report, after what earlier steps wrote; the outputs are a workflow's.
    assert summary.read_text() == "# Earlier step\n" + body + "\n"
    assert outputs.read_text() == "labels=writes\nstale=1\n"
    assert passed.exit_code == 0, passed.output
    assert passed.output.endswith(
        "note: 1 golden plan out of date: golden/bye.plan.json "
        "(regenerate with pytest --update-golden, review and commit)\n"
    )


def test_a_comment_on_a_large_plan_stays_under_githubs_limit(tmp_path: Path) -> None:
    # 2,000 steps added to bye: the comment was 204,000 characters (GitHub refuses more than
    # 65,536), its flow of changes 2,000 arrows (GitHub's Mermaid draws at most 500).
    root = _project(tmp_path)
    added = "".join(f"  - name: step-{n}\n    display: x\n" for n in range(2000))
    (root / "playbooks" / "bye.yaml").write_text(BYE.replace("steps:\n", "steps:\n" + added))
    old = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, ["what-if-comment", "--print", "--no-fail-on-stale", "playbooks/bye.yaml"])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    body = result.output.split("note: ")[0]
    assert len(body) < 65_536
    assert "### Flow of what changed\n\nToo large for GitHub's Mermaid to draw (2000 steps changed;" in body
    assert "`catalyst graph playbooks/bye.yaml --format svg -o flow.svg` draws the whole flow" in body
    assert "<summary>2001 steps</summary>" in body and "… and 1801 more steps, in the JSON plan" in body
    # The plan's own flow (the step that writes) is drawn: it is small.
    assert "### Flow\n\n```mermaid\n" in body and '"file-write@' in body


def test_a_golden_plan_of_an_older_format_is_named_not_compared(tmp_path: Path) -> None:
    root = _project(tmp_path)
    golden = root / "golden" / "hello.plan.json"
    old_plan = json.loads(golden.read_text())
    old_plan["version"] = 1
    golden.write_text(json.dumps(old_plan))
    old = os.getcwd()
    os.chdir(root)
    try:
        printed = CliRunner().invoke(cli, ["what-if-comment", "--print", "playbooks/hello.yaml"])
    finally:
        os.chdir(old)
    assert printed.exit_code == 1, printed.output
    assert (
        "```diff\ngolden/hello.plan.json is in plan format 1, and this catalyst makes plans in format 2"
    ) in printed.output
    assert "~ " not in printed.output.split("```diff")[1].split("```")[0]  # no step compared


def _printed(root: Path, *args: str):
    old = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(cli, ["what-if-comment", "--print", *args])
    finally:
        os.chdir(old)


def _approved_caller(root: Path) -> None:
    """A playbook `caller` that calls `callee` (which has no golden plan), its plan approved."""
    (root / "playbooks" / "callee.yaml").write_text(PLAIN.replace("name: plain", "name: callee"))
    (root / "playbooks" / "caller.yaml").write_text(
        "name: caller\ndescription: x\nowner: Engineer\nallowedWritePaths: [notes/**]\n"
        "steps:\n  - playbook: callee\n    inheritPermissions: true\n"
    )
    assert _approve_plan(root, "caller").returncode == 0


def test_a_golden_plan_made_stale_by_a_playbook_it_calls_is_commented_on_and_fails(tmp_path: Path) -> None:
    # The pull request changes only the called playbook, which has no golden plan of its own.
    root = _project(tmp_path)
    _approved_caller(root)
    (root / "playbooks" / "callee.yaml").write_text(BYE.replace("name: bye", "name: callee"))

    printed = _printed(root, "playbooks/callee.yaml")

    assert printed.exit_code == 1, printed.output
    assert printed.output.startswith(
        "<!-- catalyst-plan golden/caller.plan.json -->\nLabels: **writes** · **approvals**\n"
    )
    assert "+ playbook#1/call/file-write#1 (file-write) will be added" in printed.output
    assert printed.output.endswith(
        "error: 1 golden plan out of date: golden/caller.plan.json; "
        "regenerate with pytest --update-golden, review and commit\n"
    )


def test_a_stale_comment_is_brought_up_to_date_when_its_plan_matches_again(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _approved_caller(root)
    callee = (root / "playbooks" / "callee.yaml").read_text()
    with FakeGitHub() as github:
        github.add_issue("acme/widgets", "Change the callee")
        (root / "playbooks" / "callee.yaml").write_text(BYE.replace("name: bye", "name: callee"))
        first = _comment(root, github, "playbooks/callee.yaml")
        # The next push takes the change back: the caller's plan matches its golden plan again.
        (root / "playbooks" / "callee.yaml").write_text(callee)
        second = _comment(root, github, "playbooks/callee.yaml")
    assert first.exit_code == 1 and second.exit_code == 0, first.output + second.output
    assert "posted the what-if comment of playbooks/caller.yaml" in first.output
    assert second.output.startswith("no golden plan in golden/ is changed or out of date\n")
    assert "updated the what-if comment of playbooks/caller.yaml" in second.output
    # hello and bye match and were not touched: no comment of theirs was posted.
    assert [r["method"] for r in github.writes()] == ["POST", "PATCH"]
    (body,) = [c["body"] for c in github.comments[("acme/widgets", 1)]]
    assert body.startswith("<!-- catalyst-plan golden/caller.plan.json -->\n")
    assert "will be added" not in body and "out of date" not in body


def test_a_comment_saved_in_githubs_editor_is_found_and_a_failed_refresh_fails_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "playbooks" / "hello.yaml").write_text(HELLO.replace("hi {{ who }}", "hello {{ who }}"))
    with FakeGitHub() as github:
        github.add_issue("acme/widgets", "Change the greeting")
        first = _comment(root, github, "playbooks/hello.yaml")
        # Saved in the browser: GitHub gives the body back with CRLF line ends.
        (posted,) = github.comments[("acme/widgets", 1)]
        posted["body"] = posted["body"].replace("\n", "\r\n")
        (root / "playbooks" / "hello.yaml").write_text(HELLO)  # the change taken back
        second = _comment(root, github, "README.md")
        # GitHub failing while only comments of matching plans would be refreshed.
        github.failures = 1
        third = _comment(root, github, "README.md")
    assert first.exit_code == 1 and second.exit_code == 0, first.output + second.output
    assert "updated the what-if comment of playbooks/hello.yaml" in second.output
    assert [r["method"] for r in github.writes()] == ["POST", "PATCH"]
    assert len(github.comments[("acme/widgets", 1)]) == 1
    assert third.exit_code == 0, third.output
    assert "warning: the what-if comments of golden plans that match were not updated: GitHub refused" in third.output


def test_a_comment_whose_id_is_not_a_number_is_never_taken_for_the_report(tmp_path: Path) -> None:
    # The id goes into the address of the PATCH: a path in its place is refused.
    root = _project(tmp_path)
    (root / "playbooks" / "hello.yaml").write_text(HELLO.replace("hi {{ who }}", "hello {{ who }}"))
    with FakeGitHub() as github:
        github.add_issue("acme/widgets", "Change the greeting")
        _comment(root, github, "playbooks/hello.yaml", "--no-fail-on-stale")
        (posted,) = github.comments[("acme/widgets", 1)]
        posted["id"] = "1/../../../repos/acme/vault"
        (root / "playbooks" / "hello.yaml").write_text(HELLO.replace("hi {{ who }}", "hey {{ who }}"))
        again = _comment(root, github, "playbooks/hello.yaml", "--no-fail-on-stale")
    assert again.exit_code == 0, again.output
    assert [r["method"] for r in github.writes()] == ["POST", "POST"]


def test_two_golden_plans_of_one_playbook_have_a_comment_each(tmp_path: Path) -> None:
    root = _project(tmp_path)
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "catalyst_dsl",
            "run",
            "hello",
            "--what-if",
            "-i",
            "who=moon",
            "--what-if-report",
            "golden/hello--moon.plan.json",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    (root / "playbooks" / "hello.yaml").write_text(HELLO.replace("hi {{ who }}", "hello {{ who }}"))
    with FakeGitHub() as github:
        github.add_issue("acme/widgets", "Change the greeting")
        done = _comment(root, github, "playbooks/hello.yaml", "--no-fail-on-stale")
        again = _comment(root, github, "playbooks/hello.yaml", "--no-fail-on-stale")
    assert done.exit_code == 0 and again.exit_code == 0, done.output + again.output
    bodies = [c["body"] for c in github.comments[("acme/widgets", 1)]]
    # Each its own marker (the `--` of the file's name encoded: an HTML comment cannot hold it).
    assert [body.splitlines()[0] for body in bodies] == [
        "<!-- catalyst-plan golden/hello%2D-moon.plan.json -->",
        "<!-- catalyst-plan golden/hello.plan.json -->",
    ]
    assert '"hi moon" -> "hello moon"' in bodies[0] and '"hi world" -> "hello world"' in bodies[1]
    # The second push changes no report: the comments are left as they are, not edited.
    assert [r["method"] for r in github.writes()] == ["POST", "POST"]
    assert again.output.count("kept the what-if comment of playbooks/hello.yaml (unchanged): ") == 2


def test_markers_of_two_paths_differ_and_never_close_the_html_comment() -> None:
    from catalyst_dsl.report.plan import marker_text

    paths = ["a--b.json", "a-b.json", "a<b.json", "a%2Db.json", "a b.json", "a->b.json", "a---b.json", "x-"]
    shown = [marker_text(path) for path in paths]
    assert len(set(shown)) == len(paths)
    assert not any("--" in text or ">" in text or " " in text for text in shown)
    assert shown[0] == "a%2D-b.json" and shown[3] == "a%252Db.json"


@pytest.mark.parametrize(
    "text, why",
    [
        ("{not json", "cannot be read as a what-if plan"),
        ('{"playbook": {"file": "playbooks/hello.yaml"}}', "needs `playbook.file` (a string) and `inputs`"),
        ('{"playbook": {"file": "playbooks/hello.yaml"}, "inputs": ["x"]}', "needs `playbook.file`"),
        ('["a list"]', "needs `playbook.file`"),
    ],
)
def test_a_file_in_the_golden_folder_that_is_not_a_golden_plan_is_named_not_planned(
    tmp_path: Path, text: str, why: str
) -> None:
    root = _project(tmp_path)
    (root / "golden" / "broken.plan.json").write_text(text)

    printed = _printed(root, "README.md")

    assert printed.exit_code == 1 and "Traceback" not in printed.output
    assert printed.output.startswith(
        "<!-- catalyst-plan golden/broken.plan.json -->\n"
        "## What-if plan for `golden/broken.plan.json`: not made\n\n```\ngolden/broken.plan.json "
    )
    assert why in printed.output
    assert "error: 1 golden plan out of date: golden/broken.plan.json" in printed.output


@pytest.mark.parametrize(
    "steps",
    [[1], "abc", [{"steps": 5}], [{"steps": [{"steps": ["x"]}]}]],
)
def test_a_golden_plan_with_damaged_steps_is_named_not_compared(tmp_path: Path, steps) -> None:
    root = _project(tmp_path)
    golden = root / "golden" / "hello.plan.json"
    damaged = json.loads(golden.read_text())
    damaged["steps"] = steps
    golden.write_text(json.dumps(damaged))

    printed = _printed(root, "playbooks/hello.yaml")
    expected = CliRunner().invoke(
        cli, ["run", str(root / "playbooks" / "hello.yaml"), "--what-if", "--expect-plan", str(golden)]
    )

    for result in (printed, expected):
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert "is not a what-if plan: its `steps` (and each entry's) must be a list of objects" in result.output


def test_a_comment_leaves_out_what_would_pass_githubs_limit_and_cuts_long_lines(tmp_path: Path) -> None:
    # Long step names in a 450-step playbook: its plan alone and its flow of changes each
    # came near the limit; the comment was 117,637 characters.
    root = _project(tmp_path)
    steps = "".join(
        f"  - name: {'a-long-step-name-' * 4}{n}\n    file-write: out/{n}.md\n    content: x\n" for n in range(450)
    )
    (root / "playbooks" / "wide.yaml").write_text(
        f"name: wide\ndescription: x\nowner: Engineer\nallowedWritePaths: [out/**]\nsteps:\n{steps}"
    )
    assert _approve_plan(root, "wide").returncode == 0
    (root / "playbooks" / "wide.yaml").write_text(
        (root / "playbooks" / "wide.yaml")
        .read_text()
        .replace("content: x", "content: y")
        .replace("name: a-long", "name: " + "b" * 5000 + "-a-long", 1)
    )

    body = _printed(root, "--no-fail-on-stale", "playbooks/wide.yaml").output.split("note: ")[0]

    assert len(body) < 65_536
    assert "## Changes against the golden plan `golden/wide.plan.json`" in body
    assert max(len(line) for line in body.split("```diff\n")[1].split("```")[0].splitlines()) <= 300
    assert "would pass GitHub's limit of 65,536 characters a comment: " in body
    assert "`catalyst run playbooks/wide.yaml --what-if --format markdown` shows the plan whole." in body


def test_bidi_controls_from_a_playbook_are_escaped_in_the_markdown_plan(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "playbooks" / "hello.yaml").write_text(HELLO.replace("hi {{ who }}", "a\u202eb {{ who }}"))

    printed = _printed(root, "--no-fail-on-stale", "playbooks/hello.yaml")

    assert "\u202e" not in printed.output and "a\\u202eb" in printed.output


def test_labels_say_what_a_plan_does() -> None:
    from catalyst_dsl.report.pr_comment import plan_labels

    def plan(*steps: dict) -> dict:
        return {"steps": list(steps)}

    assert plan_labels(plan({"action": "display", "change": "no-op"})) == ("nothing",)
    assert plan_labels(plan({"action": "checkpoint", "change": "would-pause"})) == ("approvals",)
    assert plan_labels(
        plan(
            {"action": "http-request", "change": "unknown", "request": {"url": "https://example.com"}},
            {
                "action": "if",
                "change": "no-op",
                "steps": [{"action": "file-delete", "change": "delete", "effects": [{}]}],
            },
        )
    ) == ("writes", "network")
    confined = {"mayWrite": ["temp://", "$TMPDIR"], "neverWrites": [".git/"]}
    # A program confined to scratch space writes nothing of the project's, but what it does
    # on the network is not restricted: its plan does not do nothing.
    assert plan_labels(plan({"action": "bash", "change": "unknown", "confinement": confined})) == ("programs",)
    assert plan_labels(plan({"action": "ai-prompt", "change": "unknown"})) == ("programs",)
    # A step the plan knows is skipped (its condition is false) does nothing.
    assert plan_labels(plan({"action": "http-request", "change": "skipped", "request": {"url": "x"}})) == ("nothing",)
    confined["mayWrite"].append("build/")
    assert plan_labels(plan({"action": "bash", "change": "unknown", "confinement": confined})) == (
        "writes",
        "programs",
    )


def test_labels_know_the_effects_of_installed_plugin_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    from catalyst_dsl.actions import plugins
    from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
    from catalyst_dsl.ir.types import STRING, obj, opt
    from catalyst_dsl.report.pr_comment import plan_labels

    def spec(name: str, effect: Effect) -> ActionSpec:
        return ActionSpec(name, "plugins", "A plugin action.", obj(to=opt(STRING)), "to", obj(), effect, WhatIf.UNKNOWN)

    specs = {"label-test-chat-post": spec("label-test-chat-post", Effect.NETWORK)}
    specs["label-test-linter"] = spec("label-test-linter", Effect.EXTERNAL)
    monkeypatch.setattr(plugins, "plugin_spec", specs.get)
    assert plan_labels({"steps": [{"action": "label-test-chat-post", "change": "unknown"}]}) == ("network",)
    assert plan_labels({"steps": [{"action": "label-test-linter", "change": "unknown"}]}) == ("programs",)
    assert plan_labels({"steps": [{"action": "label-test-unknown", "change": "unknown"}]}) == ("nothing",)


def test_nothing_to_post_and_what_is_missing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    old = os.getcwd()
    os.chdir(root)
    try:
        none = CliRunner().invoke(cli, ["what-if-comment", "README.md"], env={"GITHUB_TOKEN": ""})
        assert none.exit_code == 0 and none.output == "no golden plan in golden/ is changed or out of date\n"
        missing = CliRunner().invoke(
            cli,
            ["what-if-comment", "playbooks/hello.yaml"],
            env={"GITHUB_TOKEN": "", "GITHUB_REPOSITORY": "", "GITHUB_EVENT_PATH": ""},
        )
        assert missing.exit_code == 2 and "cannot post without --repo or $GITHUB_REPOSITORY" in missing.output
        printed = CliRunner().invoke(cli, ["what-if-comment", "--print", "golden/hello.plan.json"])
        assert printed.exit_code == 0 and printed.output.startswith("<!-- catalyst-plan golden/hello.plan.json -->")
    finally:
        os.chdir(old)


def test_a_token_is_never_posted_over_plain_http_to_another_machine(tmp_path: Path) -> None:
    root = _project(tmp_path)
    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "acme/widgets",
        "GITHUB_API_URL": "http://github.example.test/api/v3",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
    }
    (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 1}}))
    old = os.getcwd()
    os.chdir(root)
    try:
        refused = CliRunner().invoke(cli, ["what-if-comment", "playbooks/hello.yaml"], env=env)
    finally:
        os.chdir(old)
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert "the GitHub API at github.example.test is reached over plain http://" in refused.output
    assert "use an https:// URL" in refused.output and TOKEN not in refused.output


def _comment_step() -> dict:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    [step] = [s for s in action["runs"]["steps"] if s.get("name") == "Comment what-if plans"]
    return step


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root, check=True, capture_output=True
    )


def _approve_plan(root: Path, name: str) -> subprocess.CompletedProcess:
    """`catalyst run NAME --what-if --what-if-report golden/NAME.plan.json` in `root`: a golden
    plan approved as a user makes one, by a catalyst process of its own."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "catalyst_dsl",
            "run",
            name,
            "--what-if",
            "--what-if-report",
            f"golden/{name}.plan.json",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )


@pytest.mark.slow
def test_the_action_comments_on_the_playbooks_a_pull_request_changes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "base")
    _git(root, "update-ref", "refs/remotes/origin/main", "HEAD")  # as a checkout with fetch-depth: 0 has it
    _git(root, "checkout", "-qb", "feature")
    (root / "playbooks" / "hello.yaml").write_text(HELLO.replace("hi {{ who }}", "hello {{ who }}"))
    (root / "playbooks" / "plain.yaml").write_text(PLAIN.replace("no golden", "still no golden"))
    _git(root, "commit", "-qam", "change")

    step = _comment_step()
    assert "${{" not in step["run"]  # inputs reach the script as environment variables only
    # The action's defaults, as GitHub fills in the inputs a workflow leaves out.
    defaults = {
        name: spec.get("default", "")
        for name, spec in yaml.safe_load((ROOT / "action.yml").read_text())["inputs"].items()
    }
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    with FakeGitHub() as github:
        github.add_issue("acme/widgets", "Change the greeting")
        (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 1}}))
        script = tmp_path / "step.sh"
        script.write_text(step["run"])

        def run_step(**inputs: str) -> subprocess.CompletedProcess:
            env = _env(
                GITHUB_REPOSITORY="acme/widgets",
                GITHUB_API_URL=github.url,
                GITHUB_EVENT_PATH=str(tmp_path / "event.json"),
                GITHUB_STEP_SUMMARY=str(summary),
                GITHUB_OUTPUT=str(outputs),
            )
            given = {**defaults, "github-token": TOKEN, **inputs}
            for name, value in step["env"].items():
                key = value.removeprefix("${{ ").removesuffix(" }}")
                env[name] = (
                    given[key.removeprefix("inputs.")]
                    if key.startswith("inputs.")
                    else {"github.base_ref": "main", "github.event.pull_request.head.repo.full_name": "acme/widgets"}[
                        key
                    ]
                )
            return run_bash_step(script, root, env)

        # The greeting changed and its golden plan did not: commented, summarized, and failed by default.
        done = run_step()
        assert done.returncode == 1 and "error: 1 golden plan out of date: golden/hello.plan.json" in done.stderr
        assert done.stdout.startswith("posted the what-if comment of playbooks/hello.yaml")
        [posted] = github.comments[("acme/widgets", 1)]
        assert '~ display#1 (display) changed:\n    config.message: "hi world" -> "hello world"\n' in posted["body"]
        assert summary.read_text() == posted["body"] + "\n"
        assert outputs.read_text() == "labels=nothing\nstale=1\n"
        done = run_step(**{"fail-on-stale-golden": "false"})  # the next push, told not to fail: one comment
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("kept the what-if comment of playbooks/hello.yaml (unchanged)")
        assert [c["body"].splitlines()[0] for c in github.comments[("acme/widgets", 1)]] == [
            "<!-- catalyst-plan golden/hello.plan.json -->"
        ]

        # Without the base branch (a shallow checkout): a warning, and the job goes on.
        _git(root, "update-ref", "-d", "refs/remotes/origin/main")
        done = run_step()
        assert done.returncode == 0 and done.stdout.startswith("::warning title=catalyst::no what-if comments")


@pytest.mark.slow
def test_the_action_comments_on_a_playbook_whose_path_is_not_ascii(tmp_path: Path) -> None:
    # `git diff --name-only` writes such a path quoted, with octal escapes
    # ("playbooks/\303\251quipe/..."): it matched no golden plan, and got no comment.
    root = tmp_path / "project"
    folder = root / "playbooks" / "équipe"
    folder.mkdir(parents=True)
    (root / "golden").mkdir()
    (root / "catalyst.toml").write_text("")
    (folder / "hello.yaml").write_text(HELLO)
    made = _approve_plan(root, "hello")
    assert made.returncode == 0, made.stderr
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "base")
    _git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    _git(root, "checkout", "-qb", "feature")
    # A change that leaves the plan as it was: commented on only if its path is matched.
    (folder / "hello.yaml").write_text(HELLO + "# reviewed\n")
    _git(root, "commit", "-qam", "change")
    step = _comment_step()
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    with FakeGitHub() as github:
        github.add_issue("acme/widgets", "Change the greeting")
        (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 1}}))
        env = _env(
            GITHUB_REPOSITORY="acme/widgets",
            GITHUB_API_URL=github.url,
            GITHUB_EVENT_PATH=str(tmp_path / "event.json"),
            GITHUB_TOKEN=TOKEN,
            CATALYST_GOLDEN_DIR="golden",
            CATALYST_FAIL_ON_STALE="false",
            CATALYST_BASE_REF="main",
            CATALYST_HEAD_REPO="acme/widgets",
        )
        done = run_bash_step(script, root, env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("posted the what-if comment of playbooks/équipe/hello.yaml"), done.stdout
        [posted] = github.comments[("acme/widgets", 1)]
        assert posted["body"].startswith(
            "<!-- catalyst-plan golden/hello.plan.json -->\nLabels: **nothing**\n\nThe plan matches"
        )


def test_a_fork_playbook_cannot_put_the_checkout_token_or_an_untracked_file_in_its_comment(tmp_path: Path) -> None:
    # A pull request from a fork: its playbook reads .git/config (where actions/checkout
    # keeps the token), a link to it, and a file the checkout did not bring; the comment
    # is posted in public.
    secret_token, secret_text = "ghs_tokenOfTheCheckout", "untracked-secret-text"
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "golden").mkdir()
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "leak.yaml").write_text(
        "name: leak\ndescription: x\nowner: Engineer\nsteps:\n"
        "  - name: token\n    file-read: .git/config\n"
        "  - name: linked\n    file-read: link\n"
        "  - name: local\n    file-read: local.env\n"
        '  - display: "{{ token }} {{ linked }} {{ local }}"\n'
        "  - file-write: local.env\n    content: replaced\n"
    )
    (root / "link").symlink_to(".git/config")
    _git(root, "init", "-q")
    _git(root, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {secret_token}")
    made = _approve_plan(root, "leak")
    # Its reads of .git/config are refused: the plan foresees the run failing (exit 2), and is written.
    assert made.returncode == 2, made.stderr
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "the pull request")
    (root / "local.env").write_text(f"TOKEN={secret_text}\n")
    old = os.getcwd()
    os.chdir(root)
    try:
        # local.env is there now: the plan is not the golden one, and its changes are shown too.
        printed = CliRunner().invoke(cli, ["what-if-comment", "--print", "--no-fail-on-stale", "playbooks/leak.yaml"])
    finally:
        os.chdir(old)
    assert printed.exit_code == 0, printed.output
    assert printed.output.startswith("<!-- catalyst-plan golden/leak.plan.json -->")
    assert secret_token not in printed.output and secret_text not in printed.output
    assert "a what-if never reads" in printed.output and "not tracked by git" in printed.output
    assert "## Changes against the golden plan `golden/leak.plan.json`" in printed.output


def test_the_action_posts_nothing_for_a_pull_request_from_a_fork(tmp_path: Path) -> None:
    # Its token is read-only there: the step says so and passes, having run nothing.
    step = _comment_step()
    assert step["env"]["CATALYST_HEAD_REPO"] == "${{ github.event.pull_request.head.repo.full_name }}"
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    env = _env(
        GITHUB_REPOSITORY="acme/widgets",
        CATALYST_HEAD_REPO="mallory/widgets",
        CATALYST_BASE_REF="main",
        CATALYST_GOLDEN_DIR="golden",
        GITHUB_TOKEN="read-only",
        PATH=str(tmp_path / "no-programs"),
    )
    done = run_bash_step(script, tmp_path, env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "::notice title=catalyst::no what-if comments on a pull request from a fork (mallory/widgets)"
    )


def test_the_job_summary_holds_what_fits_and_says_what_it_left_out(tmp_path: Path) -> None:
    from catalyst_dsl.report.pr_comment import SUMMARY_CHARS, Report, to_workflow

    reports = [Report(f"playbooks/p{i}.yaml", "x" * 60_000, f"golden/p{i}.plan.json") for i in range(20)]
    summary = tmp_path / "summary.md"
    to_workflow(reports, {"GITHUB_STEP_SUMMARY": str(summary)})
    written = summary.read_text()
    assert len(written) <= SUMMARY_CHARS + 300
    assert written.count("x" * 60_000) == 13 and "*7 more reports left out: a step's summary holds 1 MiB;" in written
