"""kai playbooks run end to end, with a stand-in agent program behind the
`command` AI adapter (kai_agent.py): autonomy, gates, conditions, error policies, triggers,
parallel groups, a crash inside a step, and kai's own session files kept all along."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from catalyst_dsl.runtime.engine import attempts as interpreter

pytest_plugins = ["pytester"]

AGENT = Path(__file__).parents[1] / "helpers" / "kai_agent.py"

STEP = """
  - id: "{id}"
    command: "{command}"
    args: "{{{{feature}}}}"
    autonomy: "{autonomy}"
    preconditions: {pre}
    postconditions: {post}
    error_policy: "{policy}"
    escalation_triggers: {triggers}
"""


def kai_playbook(*steps: dict) -> str:
    text = (
        'name: "flow"\ndescription: "a kai flow"\nversion: "1.0"\n'
        'args:\n  - name: "feature"\n    description: "Feature"\n    required: true\nsteps:'
    )
    for step in steps:
        fields = {"pre": [], "post": [], "policy": "stop", "triggers": [], "autonomy": "auto", **step}
        fields = {k: json.dumps(v) if isinstance(v, list) else v for k, v in fields.items()}
        text += STEP.format(**fields)
        if "group" in step:
            text += f'    parallel_group: "{step["group"]}"\n'
    return text


@pytest.fixture(autouse=True)
def no_retry_wait(monkeypatch):
    monkeypatch.setattr(interpreter, "RETRY_BASE_SECONDS", 0.0)


@pytest.fixture
def kai(project):
    """The project, set up for kai: the agent program, its plan, `.claude/commands/`."""
    project.settings('ai-adapters = ["command"]\n')
    project.user_settings(f"ai-command = {json.dumps([sys.executable, str(AGENT)])}\n")
    project.write(".claude/commands/speckit.plan.md", "Plan it.\n")

    def setup(playbook: str, commands: dict, log: Path | None = None) -> None:
        """`log`: where the agent logs its calls, the temp folder the `project` fixture keeps
        unless said (a run in a process of its own gives each program a temp folder of its
        own: such a test logs in the project)."""
        project.log = log or project.temp
        project.log.mkdir(parents=True, exist_ok=True)
        project.write(".playbooks/playbooks/flow.yaml", playbook)
        project.write("agent-plan.json", json.dumps({"log": str(project.log), "commands": commands}))

    project.setup = setup
    return project


def calls(project) -> list[str]:
    path = project.log / "calls.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def session_of(project) -> tuple[dict, list[dict]]:
    """kai's session.yaml and journal entries of the only session, read as YAML."""
    import yaml

    [folder] = list((project.root / ".playbooks" / "sessions").iterdir())
    session = yaml.safe_load((folder / "session.yaml").read_text(encoding="utf-8"))
    journal = yaml.safe_load((folder / "journal.yaml").read_text(encoding="utf-8"))
    return session, journal["entries"]


def statuses(entries: list[dict]) -> list[tuple[str, str, str]]:
    return [(e["step_id"], e["status"], e["decision"]) for e in entries]


def test_auto_gate_always_skip_and_a_false_precondition(kai):
    kai.setup(
        kai_playbook(
            {"id": "plan", "command": "/speckit.plan", "pre": ["spec_exists"], "post": ["plan_exists"]},
            {
                "id": "tasks",
                "command": "/speckit.tasks",
                "autonomy": "gate_always",
                "post": ["tasks_exists"],
                "policy": "retry_once",
            },
            {"id": "docs", "command": "/docs.write", "autonomy": "skip"},
        ),
        {
            "/speckit.plan": [{"write": {"specs/f1/plan.md": "# plan"}}],
            "/speckit.tasks": [{"write": {"specs/f1/tasks.md": "# tasks"}}],
        },
    )
    # No spec yet: the precondition pauses the run before the agent starts (A4.3 step 2).
    first = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert first.exit_code == 4, first.output
    assert "PreconditionFailed: requires check 1 does not hold: file-exists: specs/f1/spec.md" in first.output
    assert calls(kai) == []
    session, entries = session_of(kai)
    assert (session["status"], session["playbook"], session["feature"], session["current_step"]) == (
        "in_progress",
        "flow",
        "f1",
        "plan",
    )
    assert entries == []
    run_id = kai.run_id()
    kai.write("specs/f1/spec.md", "# spec")
    # The gate_always step asks a person even in autonomous mode, on resume too.
    second = kai.cli("resume", run_id)
    assert second.exit_code == 4, second.output
    assert kai.snapshot()["pause"]["path"] == "steps/1/before"
    assert calls(kai) == ["/speckit.plan f1"]
    session, entries = session_of(kai)
    assert session["current_step"] == "tasks" and statuses(entries) == [("plan", "done", "auto")]
    assert kai.cli("approve", run_id, "--as", "Engineer", "--by", "ana", "--comment", "go").exit_code == 0
    third = kai.cli("resume", run_id)
    assert third.exit_code == 0, third.output
    assert calls(kai) == ["/speckit.plan f1", "/speckit.tasks f1"]
    session, entries = session_of(kai)
    assert session["status"] == "completed" and session["completed_at"] and session["current_step"] == ""
    assert statuses(entries) == [("plan", "done", "auto"), ("tasks", "done", "gate"), ("docs", "skipped", "skipped")]
    assert entries[1]["human_response"] == "yes: go"
    assert all("started_at" in e for e in entries) and isinstance(entries[0]["duration_seconds"], int)


def test_skip_at_a_gate_and_abort_cancels(kai):
    kai.setup(
        kai_playbook(
            {"id": "a", "command": "/speckit.plan", "autonomy": "gate_always"},
            {"id": "b", "command": "/speckit.plan", "autonomy": "gate_always"},
        ),
        {},
    )
    assert kai.run("flow", feature="f1").exit_code == 4
    run_id = kai.run_id()
    assert kai.cli("approve", run_id, "--as", "Engineer", "--select", "skip").exit_code == 0
    assert kai.cli("resume", run_id).exit_code == 4
    assert kai.cli("approve", run_id, "--as", "Engineer", "--select", "abort").exit_code == 0
    assert kai.cli("resume", run_id).exit_code == 5
    assert calls(kai) == []
    session, entries = session_of(kai)
    assert session["status"] == "aborted"
    assert statuses(entries) == [("a", "skipped", "gate")] and entries[0]["human_response"] == "skip"


def test_a_failed_postcondition_under_stop_fails_the_session(kai):
    kai.setup(kai_playbook({"id": "plan", "command": "/speckit.plan", "post": ["plan_exists"]}), {})
    result = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 2, result.output
    session, entries = session_of(kai)
    assert session["status"] == "failed"
    assert statuses(entries) == [("plan", "failed", "auto")]
    assert entries[0]["error"].startswith(
        "PostconditionFailed: ensures check 1 does not hold: file-exists: specs/f1/plan.md"
    )


def test_retry_once_runs_a_fresh_agent_again(kai):
    kai.setup(
        kai_playbook({"id": "plan", "command": "/speckit.plan", "post": ["plan_exists"], "policy": "retry_once"}),
        {"/speckit.plan": [{}, {"write": {"specs/f1/plan.md": "# plan"}}]},
    )
    result = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 0, result.output
    assert calls(kai) == ["/speckit.plan f1"] * 2
    assert statuses(session_of(kai)[1]) == [("plan", "done", "auto")]


def test_the_gate_policy_asks_a_person_and_continue_goes_on(kai):
    kai.setup(
        kai_playbook(
            {"id": "plan", "command": "/speckit.plan", "policy": "gate"}, {"id": "next", "command": "/speckit.plan"}
        ),
        {"/speckit.plan": [{"fail": True}, {}]},
    )
    result = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 4, result.output  # a failure is never accepted by autonomous mode
    session, entries = session_of(kai)
    assert session["status"] == "in_progress" and statuses(entries) == [("plan", "failed", "gate")]
    assert entries[0]["error"].startswith("AIAdapterError")
    run_id = kai.run_id()
    assert kai.cli("approve", run_id, "--as", "Engineer", "--comment", "fixed by hand").exit_code == 0
    assert kai.cli("resume", run_id).exit_code == 0
    session, entries = session_of(kai)
    assert session["status"] == "completed"
    assert statuses(entries) == [("plan", "failed", "gate"), ("next", "done", "auto")]
    assert entries[0]["human_response"] == "continue: fixed by hand"


@pytest.mark.parametrize(
    "trigger,write,code",
    [
        ("postcondition_fail", {}, "PostconditionFailed"),
        ("verdict_fail", {".qa/f1/verdict.yaml": "verdict: FAIL\n"}, "VerdictFailed"),
    ],
)
def test_an_escalation_trigger_asks_before_the_error_policy(kai, trigger, write, code):
    kai.setup(
        kai_playbook({"id": "qa", "command": "/qa.run", "post": ["qa_verdict_pass"], "triggers": [trigger]}),
        {"/qa.run": [{"write": write}]},
    )
    result = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 4, result.output  # not failed: the trigger asks instead of `stop`
    assert f"{code}:" in result.output
    session, entries = session_of(kai)
    assert statuses(entries) == [("qa", "failed", "escalated")] and entries[0]["trigger"] == trigger


def test_a_verdict_that_passes_is_not_escalated(kai):
    kai.setup(
        kai_playbook({"id": "qa", "command": "/qa.run", "post": ["qa_verdict_pass"], "triggers": ["verdict_fail"]}),
        {"/qa.run": [{"write": {".qa/f1/verdict.md": "verdict: PASS\n"}}]},
    )
    result = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 0, result.output  # verdict.yaml missing: verdict.md is read (A4.4)
    assert statuses(session_of(kai)[1]) == [("qa", "done", "auto")]


def test_a_parallel_group_runs_its_members_together(kai):
    kai.setup(
        kai_playbook(
            {"id": "agree", "command": "/agreement.check", "post": ["agreement_pass"], "group": "checks"},
            {"id": "qa", "command": "/qa.run", "post": ["qa_verdict_pass"], "group": "checks"},
            {"id": "after", "command": "/speckit.plan"},
        ),
        {
            "/agreement.check": [{"write": {".agreements/f1/check-report.md": "verdict: PASS"}, "sleep": 0.5}],
            "/qa.run": [{"write": {".qa/f1/verdict.yaml": "verdict: PASS"}, "sleep": 0.5}],
        },
    )
    result = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 0, result.output
    assert sorted(calls(kai)[:2]) == ["/agreement.check f1", "/qa.run f1"] and calls(kai)[2] == "/speckit.plan f1"
    assert sorted(statuses(session_of(kai)[1])) == [
        ("after", "done", "auto"),
        ("agree", "done", "auto"),
        ("qa", "done", "auto"),
    ]


def test_a_feature_that_leaves_the_project_is_refused_before_anything_runs(kai):
    kai.setup(kai_playbook({"id": "plan", "command": "/speckit.plan", "post": ["plan_exists"]}), {})
    result = kai.run("flow", feature="../../etc")
    assert result.exit_code == 1, result.output
    assert "InvalidFeature" in result.output or "one path segment" in result.output
    assert calls(kai) == [] and not (kai.root / ".playbooks" / "sessions").exists()


def test_a_step_killed_in_flight_is_recovered_by_its_postconditions(kai, tmp_path):
    from tests.runtime.test_reliability import catalyst, live_snapshots, spawn

    kai.setup(
        kai_playbook(
            {"id": "plan", "command": "/speckit.plan", "post": ["plan_exists"]},
            {"id": "tasks", "command": "/speckit.tasks", "post": ["tasks_exists"]},
        ),
        {
            "/speckit.plan": [{"write": {"specs/f1/plan.md": "# plan"}, "sleep": 60}],
            "/speckit.tasks": [{"write": {"specs/f1/tasks.md": "# tasks"}}],
        },
        log=kai.root / "side",
    )
    proc = spawn(kai.root, "run", "flow", "-i", "feature=f1", "--mode", "autonomous", log=tmp_path / "first")
    deadline = time.monotonic() + 30
    while not (kai.exists("specs/f1/plan.md") and calls(kai)) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the agent is asleep now, its work done
    proc.kill()
    proc.wait(timeout=30)
    session, entries = session_of(kai)
    assert session["status"] == "in_progress" and session["current_step"] == "plan"
    assert statuses(entries) == [("plan", "in_progress", "auto")]
    [snapshot] = live_snapshots(kai.root)
    resumed = catalyst(kai.root, "resume", snapshot.name[4:-5])
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "its ensures held on resume" in resumed.stdout
    assert calls(kai) == ["/speckit.plan f1", "/speckit.tasks f1"]  # plan was not delegated again
    session, entries = session_of(kai)
    assert session["status"] == "completed"
    assert statuses(entries) == [("plan", "done", "auto"), ("tasks", "done", "auto")]


def test_running_the_same_playbook_and_feature_again_continues_the_unfinished_run(kai):
    kai.setup(kai_playbook({"id": "tasks", "command": "/speckit.tasks", "autonomy": "gate_always"}), {})
    assert kai.run("flow", feature="f1").exit_code == 4
    first = kai.run_id()
    again = kai.run("flow", feature="f1")
    assert again.exit_code == 4, again.output
    assert f"note: continuing run {first}, the unfinished run of flow for feature=f1 (oneRunPer)" in again.output
    assert [p.name for p in kai.live_snapshots()] == [f"run-{first}.json"]
    assert len(list((kai.root / ".playbooks" / "sessions").iterdir())) == 1
    other = kai.run("flow", feature="f2")  # another feature: a run of its own
    assert other.exit_code == 4 and len(kai.live_snapshots()) == 2


def test_a_golden_plan_of_a_kai_playbook_holds_and_catches_a_change(pytester, tmp_path):
    from tests.report.test_plan_report import PLUGIN

    pytester.makeini("[pytest]\n")
    root = pytester.path
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    book = root / ".playbooks" / "playbooks" / "flow.yaml"
    book.parent.mkdir(parents=True)
    book.write_text(
        kai_playbook(
            {"id": "plan", "command": "/speckit.plan", "pre": ["spec_exists"], "post": ["plan_exists"]},
            {"id": "tasks", "command": "/speckit.tasks", "autonomy": "gate_always"},
        ),
        encoding="utf-8",
    )
    (root / "specs" / "f1").mkdir(parents=True)
    (root / "specs" / "f1" / "spec.md").write_text("# spec\n", encoding="utf-8")
    golden = root / "golden" / "flow.plan.json"
    golden.parent.mkdir()
    made = pytester.run(
        sys.executable,
        "-m",
        "catalyst_dsl",
        "run",
        "flow",
        "-i",
        "feature=f1",
        "--what-if",
        "--what-if-report",
        str(golden),
    )
    assert made.ret == 0, made.stdout.str() + made.stderr.str()
    plan = json.loads(golden.read_text(encoding="utf-8"))
    assert [s["step"] for s in plan["steps"]] == ["plan", "plan", "tasks", "tasks", "tasks"]
    assert plan["steps"][1]["prompt"] == "/speckit.plan f1\nFeature: f1"
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)
    # The author makes `tasks` automatic: the golden plan no longer holds.
    book.write_text(book.read_text(encoding="utf-8").replace('"gate_always"', '"auto"'), encoding="utf-8")
    changed = pytester.runpytest(*PLUGIN)
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        ["golden/flow.plan.json: the what-if plan of .playbooks/playbooks/flow.yaml has changed"]
    )


def test_cancelling_at_a_failure_question_aborts_the_session(kai):
    kai.setup(
        kai_playbook({"id": "plan", "command": "/speckit.plan", "policy": "gate"}), {"/speckit.plan": [{"fail": True}]}
    )
    assert kai.run("flow", "--mode", "autonomous", feature="f1").exit_code == 4
    result = kai.cli("cancel", kai.run_id(), "--reason", "not worth fixing")
    assert result.exit_code == 0, result.output
    session, entries = session_of(kai)
    assert session["status"] == "aborted" and session["completed_at"]
    assert statuses(entries) == [("plan", "failed", "gate")]


def _git(root: Path, *args: str) -> str:
    import subprocess

    env_args = ["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main"]
    return subprocess.run(["git", *env_args, *args], cwd=root, check=True, capture_output=True, text=True).stdout


def test_worktree_runs_on_a_new_branch_beside_the_project_even_from_a_checked_out_branch(kai):
    kai.setup(
        kai_playbook({"id": "plan", "command": "/speckit.plan", "post": ["plan_exists"]}),
        {"/speckit.plan": [{"write": {"specs/f1/plan.md": "# plan"}}]},
    )
    (kai.root / ".gitignore").write_text(".xe/\n", encoding="utf-8")
    _git(kai.root, "init", "-q")
    _git(kai.root, "add", "-A")
    _git(kai.root, "commit", "-qm", "start")
    result = kai.run("flow", "--worktree", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 0, result.output
    [tree] = [p for p in kai.root.parent.iterdir() if p.name.startswith("project-flow-")]
    assert f"worktree: {tree} (branch catalyst/{tree.name[len('project-') :]})" in result.output
    assert (tree / "specs" / "f1" / "plan.md").read_text() == "# plan"
    assert not (kai.root / "specs").exists()  # the project's own tree is untouched
    assert _git(kai.root, "branch", "--show-current").strip() == "main"
    [session] = list((tree / ".playbooks" / "sessions").iterdir())
    assert "completed" in (session / "session.yaml").read_text()


def test_worktree_refuses_a_tree_with_uncommitted_changes(kai):
    kai.setup(kai_playbook({"id": "plan", "command": "/speckit.plan"}), {})
    _git(kai.root, "init", "-q")
    _git(kai.root, "add", "-A")
    _git(kai.root, "commit", "-qm", "start")
    kai.write("notes.md", "not committed")
    result = kai.run("flow", "--worktree", feature="f1")
    assert result.exit_code == 1, result.output
    assert "has changes that are not committed; nothing was run" in result.output and "commit or stash" in result.output
    assert calls(kai) == [] and [p.name for p in kai.root.parent.iterdir() if p.name.startswith("project-")] == []


def test_session_files_are_never_written_through_a_link_out_of_the_project(kai, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    kai.setup(kai_playbook({"id": "plan", "command": "/speckit.plan"}), {})
    (kai.root / ".playbooks" / "sessions").symlink_to(outside, target_is_directory=True)
    result = kai.run("flow", "--mode", "autonomous", feature="f1")
    assert result.exit_code == 0, result.output  # the run is not failed by its view
    assert (
        "the kai session files of this run cannot be written" in result.output
        and "leads out of the project" in result.output
    )
    assert list(outside.iterdir()) == []


def test_a_step_killed_in_flight_without_postconditions_runs_again(kai, tmp_path):
    # gate_on_breaking puts a check after the step, but only postconditions prove it finished (K-D11).
    from tests.runtime.test_reliability import catalyst, live_snapshots, spawn

    kai.setup(
        kai_playbook({"id": "agree", "command": "/agreement.check", "autonomy": "gate_on_breaking"}),
        {"/agreement.check": [{"sleep": 60}, {}]},
        log=kai.root / "side",
    )
    proc = spawn(kai.root, "run", "flow", "-i", "feature=f1", "--mode", "autonomous", log=tmp_path / "first")
    deadline = time.monotonic() + 30
    while not calls(kai) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.kill()
    proc.wait(timeout=30)
    [snapshot] = live_snapshots(kai.root)
    resumed = catalyst(kai.root, "resume", snapshot.name[4:-5])
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert calls(kai) == ["/agreement.check f1"] * 2


def test_retry_at_a_failure_question_runs_the_step_again_once(kai):
    kai.setup(
        kai_playbook({"id": "plan", "command": "/speckit.plan", "post": ["plan_exists"], "policy": "gate"}),
        {"/speckit.plan": [{}, {}, {"write": {"specs/f1/plan.md": "# plan"}}]},
    )
    assert kai.run("flow", "--mode", "autonomous", feature="f1").exit_code == 4
    run_id = kai.run_id()
    assert [o["key"] for o in kai.snapshot()["pause"]["options"]] == ["continue", "retry", "abort"]
    assert kai.cli("approve", run_id, "--as", "Engineer", "--select", "retry").exit_code == 0
    # The retry is used once: the step fails again, and a person is asked again.
    assert kai.cli("resume", run_id).exit_code == 4
    assert calls(kai) == ["/speckit.plan f1"] * 2
    assert kai.cli("approve", run_id, "--as", "Engineer", "--select", "retry").exit_code == 0
    result = kai.cli("resume", run_id)
    assert result.exit_code == 0, result.output
    assert calls(kai) == ["/speckit.plan f1"] * 3
    session, entries = session_of(kai)
    assert session["status"] == "completed" and statuses(entries) == [("plan", "done", "gate")]
    assert entries[0]["human_response"] == "retry"


def test_abort_at_a_failure_question_cancels_the_run(kai):
    kai.setup(
        kai_playbook(
            {"id": "plan", "command": "/speckit.plan", "post": ["plan_exists"], "triggers": ["postcondition_fail"]},
            {"id": "next", "command": "/speckit.plan"},
        ),
        {},
    )
    assert kai.run("flow", "--mode", "autonomous", feature="f1").exit_code == 4
    run_id = kai.run_id()
    assert (
        kai.cli("approve", run_id, "--as", "Engineer", "--select", "abort", "--comment", "wrong feature").exit_code == 0
    )
    assert kai.cli("resume", run_id).exit_code == 5
    assert calls(kai) == ["/speckit.plan f1"]
    session, entries = session_of(kai)
    assert session["status"] == "aborted"
    assert (
        statuses(entries) == [("plan", "failed", "escalated")]
        and entries[0]["human_response"] == "abort: wrong feature"
    )


def test_every_question_of_a_parallel_group_is_asked_before_any_member_starts(kai):
    kai.setup(
        kai_playbook(
            {"id": "a", "command": "/qa.run", "autonomy": "gate_always", "group": "g"},
            {"id": "b", "command": "/qa.plan", "autonomy": "gate_always", "group": "g"},
        ),
        {},
    )
    assert kai.run("flow", "--mode", "autonomous", feature="f1").exit_code == 4
    run_id = kai.run_id()
    assert kai.snapshot()["pause"]["path"] == "steps/0/branch/0/before"
    assert kai.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert kai.cli("resume", run_id).exit_code == 4
    assert kai.snapshot()["pause"]["path"] == "steps/0/branch/1/before" and calls(kai) == []  # nothing started yet
    assert kai.cli("approve", run_id, "--as", "Engineer", "--select", "skip").exit_code == 0
    assert kai.cli("resume", run_id).exit_code == 0
    assert calls(kai) == ["/qa.run f1"]
    assert sorted(statuses(session_of(kai)[1])) == [("a", "done", "gate"), ("b", "skipped", "gate")]
