"""cleo cantbooks run end to end: real programs, and a stand-in agent
behind the `command` AI adapter that records who it was asked to be and answers JSON.

Each test writes `.cleo/playbooks/<name>.cantbook` and drives `catalyst` in-process
(run_helpers.RunProject); the SIGKILL test runs it as a separate process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catalyst_dsl.runtime.engine import attempts as interpreter
from tests.helpers.corpus import SHARED_CORPUS

REPO = Path(__file__).resolve().parents[2]

#: The stand-in agent: answers with the JSON the project's answers.json gives for its agent
#: (or skill), the n-th item of a list on its n-th call, and logs each call to $TMPDIR/agent.log.
AGENT = r'''
import json, os, sys
options = json.loads(os.environ.get("CATALYST_AI_OPTIONS") or "{}")
who = os.environ.get("CATALYST_AI_AGENT") or os.environ.get("CATALYST_AI_SKILL")
prompt = sys.stdin.read()
tmp = os.environ["TMPDIR"]
calls = ([l for l in open(os.path.join(tmp, "agent.log")).read().splitlines()]
         if os.path.exists(os.path.join(tmp, "agent.log")) else [])
mine = sum(1 for l in calls if json.loads(l)["who"] == who)
with open(os.path.join(tmp, "agent.log"), "a") as log:
    log.write(json.dumps({"who": who, "agent": os.environ.get("CATALYST_AI_AGENT"),
                          "skill": os.environ.get("CATALYST_AI_SKILL"),
                          "readPaths": os.environ.get("CATALYST_AI_READ_PATHS"),
                          "skills": os.environ.get("CATALYST_AI_SKILLS"),
                          "tools": os.environ.get("CATALYST_AI_TOOLS"), "context": options.get("context"),
                          "prompt": prompt}) + "\n")
answer = json.load(open("answers.json"))[who]
if isinstance(answer, list):
    answer = answer[min(mine, len(answer) - 1)]
if answer == "fail":
    sys.exit(1)
print(json.dumps(answer))
'''


@pytest.fixture
def cleo(project, monkeypatch):
    monkeypatch.setattr(interpreter, "RETRY_BASE_SECONDS", 0.0)  # retries without waiting
    project.write("agent.py", AGENT)
    (project.root / "out").mkdir()  # programs may write beneath the project's folders, never its root
    project.user_settings(f"ai-command = {json.dumps([sys.executable, str(project.root / 'agent.py')])}\n")
    return project


def book(project, name: str, text: str) -> None:
    project.write(f".cleo/playbooks/{name}.cantbook", text)


def answers(project, **by_agent) -> None:
    project.write("answers.json", json.dumps(by_agent))


def agent_calls(project) -> list[dict]:
    path = project.temp / "agent.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def py(code: str) -> str:
    """A deterministic node's command and args running `code` with this Python."""
    return f"    command: {sys.executable}\n    args: [-c, {json.dumps(code)}]\n"


# -- order, argv, context, identity ------------------------------------------------------------------


def test_nodes_run_in_dependency_order_with_argv_and_share_the_context(cleo):
    book(
        cleo,
        "order",
        f"""version: "1.0"
name: order
inputs:
  - name: word
    default: "$(touch pwned); echo"
nodes:
  - id: report
    type: agentic
    agent: writer
    context_files: [docs/spec.md]
    allowed_skills: [summarise]
    allowed_tools: [read]
    inputs:
      said: "{{{{ first_stdout }}}}"
      word: "{{{{ inputs.word }}}}"
    depends: [first]
  - id: first
    type: deterministic
{py("import sys; print('first', sys.argv[1])")[:-2]}, "{{{{ inputs.word }}}}"]
""",
    )
    answers(cleo, writer={"summary": "done"})
    run = cleo.run("order", "--mode", "autonomous")
    assert run.exit_code == 0, run.output
    assert run.output.index("✓ first") < run.output.index("✓ report")
    assert not cleo.exists("pwned")  # the argument reached the program as one word, no shell
    [call] = agent_calls(cleo)
    assert (call["agent"], call["readPaths"], call["skills"], call["tools"]) == (
        "writer",
        "docs/spec.md",
        "summarise",
        "read",
    )
    assert call["context"]["said"] == "first $(touch pwned); echo\n"  # first's output, merged into the context
    assert call["context"]["bindings"]["first_exitCode"] == 0
    assert call["context"]["word"] == "$(touch pwned); echo"
    assert call["context"]["inputs"] == {"word": "$(touch pwned); echo"}  # cleo's context starts with the inputs


TRIAGE = """version: "1.0"
name: triage
inputs:
  - name: taskId
    required: true
nodes:
  - id: classify
    type: agentic
    skill: classifier
    inputs:
      task: "{{ inputs.taskId }}"
  - id: research
    type: agentic
    skill: researcher
  - id: plan
    type: agentic
    skill: planner
    requires:
      fields: [complexity]
edges:
  - from: classify
    to: research
    when: { field: complexity, notEquals: low }
  - from: classify
    to: plan
    when: { field: complexity, equals: low }
  - from: research
    to: plan
"""


@pytest.mark.parametrize(
    "complexity, route", [("low", ["classifier", "planner"]), ("high", ["classifier", "researcher", "planner"])]
)
def test_guarded_routing_goes_both_ways(cleo, complexity, route):
    book(cleo, "triage", TRIAGE)
    answers(cleo, classifier={"complexity": complexity}, researcher={"notes": "n"}, planner={"plan": "p"})
    run = cleo.run("triage", "--mode", "autonomous", taskId="T1")
    assert run.exit_code == 0, run.output
    assert [c["who"] for c in agent_calls(cleo)] == route
    assert agent_calls(cleo)[0]["context"]["task"] == "T1"


def test_no_guard_holding_is_routing_failed(cleo):
    book(
        cleo,
        "route",
        """version: "1.0"
name: route
nodes:
  - id: a
    type: agentic
    skill: s
  - id: b
    type: agentic
    skill: s
  - id: c
    type: agentic
    skill: s
edges:
  - from: a
    to: b
    when: { field: go, in: [yes] }
  - from: a
    to: c
    when: { field: go, in: [no] }
""",
    )
    answers(cleo, s={"go": "maybe"})
    run = cleo.run("route", "--mode", "autonomous")
    assert run.exit_code == 2 and "RoutingFailed" in run.output
    # The failing route is named by the node whose out-edges it is, never `route@4`.
    assert "✗ a (route)" in run.output and "route@" not in run.output
    [failure] = cleo.snapshot()["failures"]
    assert (failure["step"], failure["label"]) == ("route@4", "a")  # the id stays the address
    shown = cleo.cli("runs", "show", cleo.run_id()).output
    assert "failure   a: RoutingFailed" in shown and "route@" not in shown


OVERLAPPING = """version: "1.0"
name: overlap
nodes:
  - id: a
    type: agentic
    skill: s
  - id: b
    type: agentic
    skill: t
  - id: c
    type: agentic
    skill: t
edges:
  - from: a
    to: b
    when: { field: go, exists: true }
  - from: a
    to: c
    when: { field: go, equals: "yes" }
"""


def test_several_guards_holding_stop_the_run_naming_the_node_and_the_guards(cleo):
    book(cleo, "overlap", OVERLAPPING)
    answers(cleo, s={"go": "yes"}, t={"done": True})
    run = cleo.run("overlap", "--mode", "autonomous")
    assert run.exit_code == 2, run.output
    assert "RouteAmbiguous" in run.output
    assert "the edges out of 'a': 2 branches hold" in run.output
    assert "to 'b' when go exists" in run.output and "to 'c' when go equals \"yes\"" in run.output
    assert [c["who"] for c in agent_calls(cleo)] == ["s"]  # neither branch ran


def test_an_agent_answer_that_is_not_an_object_fails_the_node(cleo):
    book(
        cleo,
        "prose",
        (
            'version: "1.0"\nname: prose\nnodes:\n'
            '  - id: a\n    type: agentic\n    skill: s\n    on_failure:\n      max_iterations: 1\n'
        ),
    )
    answers(cleo, s="just words")
    run = cleo.run("prose", "--mode", "autonomous")
    assert run.exit_code == 2 and "InvalidBindings" in run.output


# -- contracts under each handler ------------------------------------------------------------------------

CONTRACT = """version: "1.0"
name: contract
nodes:
  - id: produce
    type: agentic
    skill: producer
  - id: consume
    type: deterministic
{consume}    requires:
      fields: [wanted]
    depends: [produce]
  - id: after
    type: deterministic
{after}    depends: [consume]
{handlers}"""


@pytest.mark.parametrize(
    "action, exit_code, consumed, after",
    [
        (None, 2, False, False),  # no handler: a broken contract stops the run (cleo would go on)
        ("abort", 2, False, False),
        ("hitl_escalate", 4, False, False),  # a person decides whether to go on
        ("inject_hint", 0, True, True),  # recorded and shown, the node runs all the same (as in cleo)
    ],
)
def test_a_broken_contract_goes_through_its_handler(cleo, action, exit_code, consumed, after):
    handlers = (
        f"error_handlers:\n  - on: contract_violation\n    action: {action}\n    message: no wanted key\n"
        if action
        else ""
    )
    book(
        cleo,
        "contract",
        CONTRACT.format(consume=py("open('out/consumed', 'w')"), after=py("open('out/after', 'w')"), handlers=handlers),
    )
    answers(cleo, producer={"other": 1})
    run = cleo.run("contract", "--mode", "autonomous")
    assert run.exit_code == exit_code, run.output
    assert "ContractViolation" in run.output
    assert cleo.exists("out/consumed") is consumed and cleo.exists("out/after") is after
    if action is not None:
        assert "no wanted key" in run.output  # the handler's message is shown (cleo never shows it)
    [violation] = json.loads(cleo.cli("runs", "export", cleo.run_id(), "--format", "cleo").output)[
        "contract_violations"
    ]
    assert violation["nodeId"] == "consume"
    assert len(agent_calls(cleo)) == 1  # a contract is not retried like a failed attempt


def test_ensures_and_edge_contracts_hold_or_stop_the_run(cleo):
    text = """version: "1.0"
name: ensure
nodes:
  - id: publish
    type: agentic
    agent: releaser
    ensures:
      outputFiles: [published]
    on_failure:
      max_iterations: 1
  - id: tell
    type: agentic
    agent: teller
edges:
  - from: publish
    to: tell
    contract:
      requires: [published]
      ensures: [told]
error_handlers:
  - on: contract_violation
    action: abort
"""
    book(cleo, "ensure", text)
    answers(cleo, releaser={"published": True}, teller={"told": True})
    assert cleo.run("ensure", "--mode", "autonomous").exit_code == 0
    answers(cleo, releaser={"published": True}, teller={"said": True})
    run = cleo.run("ensure", "--mode", "autonomous")
    assert run.exit_code == 2 and "✗ tell" in run.output and "ContractViolation" in run.output


JOIN_TEXT = """version: "1.0"
name: join
nodes:
  - id: triage
    type: agentic
    agent: triager
  - id: fix
    type: agentic
    agent: fixer
  - id: document
    type: agentic
    agent: writer
  - id: report
    type: agentic
    agent: reporter
edges:
  - from: triage
    to: fix
    when: {field: kind, equals: bug}
  - from: triage
    to: document
    when: {field: kind, notEquals: bug}
  - from: fix
    to: report
    contract:
      ensures: [patched]
  - from: document
    to: report
error_handlers:
  - on: contract_violation
    action: abort
"""


def test_an_edge_ensures_into_a_node_with_several_ways_in_holds_only_after_that_edge(cleo):
    book(cleo, "join", JOIN_TEXT)
    answers(cleo, triager={"kind": "bug"}, fixer={"patched": True}, reporter={})
    assert cleo.run("join", "--mode", "autonomous").exit_code == 0
    answers(cleo, triager={"kind": "bug"}, fixer={"looked": True}, reporter={})
    broken = cleo.run("join", "--mode", "autonomous")
    assert broken.exit_code == 2 and "✗ report" in broken.output and "ContractViolation" in broken.output
    # By the other way in, the fix's contract is not asked of the report.
    answers(cleo, triager={"kind": "docs"}, writer={"written": True}, reporter={})
    assert cleo.run("join", "--mode", "autonomous").exit_code == 0


# -- caps and loop-backs ---------------------------------------------------------------------------------


def test_a_cap_of_3_gives_an_agent_exactly_3_attempts_then_the_cap_handler(cleo):
    book(
        cleo,
        "capped",
        """version: "1.0"
name: capped
nodes:
  - id: flaky
    type: agentic
    skill: flaky
    on_failure:
      max_iterations: 3
  - id: never
    type: agentic
    skill: never
    depends: [flaky]
error_handlers:
  - on: iteration_cap_exceeded
    action: hitl_escalate
""",
    )
    answers(cleo, flaky="fail", never={})
    run = cleo.run("capped", "--mode", "autonomous")
    assert run.exit_code == 4, run.output  # the handler asks a person, even under --mode autonomous
    assert [c["who"] for c in agent_calls(cleo)] == ["flaky"] * 3


LOOP = """version: "1.0"
name: loop
nodes:
  - id: implement
    type: agentic
    skill: implementer
  - id: validate
    type: agentic
    skill: validator
    on_failure:
      max_iterations: 3
      inject_into: implement
  - id: ship
    type: agentic
    skill: shipper
edges:
  - from: implement
    to: validate
  - from: validate
    to: ship
"""


def test_an_inject_into_loop_runs_the_block_again_and_ends(cleo):
    book(cleo, "loop", LOOP)
    answers(cleo, implementer={"code": 1}, validator=["fail", "fail", {"passed": True}], shipper={})
    run = cleo.run("loop", "--mode", "autonomous")
    assert run.exit_code == 0, run.output
    calls = agent_calls(cleo)
    assert [c["who"] for c in calls] == ["implementer", "validator"] * 3 + ["shipper"]
    # the node the loop goes back to hears why: nothing the first time, then the validator's failure
    assert calls[0]["context"]["__lastError"] is None
    assert (
        calls[2]["context"]["__lastFailedNode"] == "validate"
        and calls[2]["context"]["__lastError"]["code"] == "AIAdapterError"
    )


def test_an_inject_into_loop_that_keeps_failing_stops_at_the_cap(cleo):
    book(cleo, "loop", LOOP)
    answers(cleo, implementer={"code": 1}, validator="fail", shipper={})
    run = cleo.run("loop", "--mode", "autonomous")
    assert run.exit_code == 2, run.output
    assert "IterationCapExceeded" in run.output
    assert [c["who"] for c in agent_calls(cleo)] == [
        "implementer",
        "validator",
    ] * 3  # cleo's own loop never ends (C-D7)


# -- approval gates ----------------------------------------------------------------------------------------

GATED = f"""version: "1.0"
name: gated
inputs:
  - name: version
    required: true
nodes:
  - id: build
    type: deterministic
{py("open('out/built', 'a').write('x')")}  - id: review
    type: approval
    prompt: "Publish {{{{ inputs.version }}}}?"
    depends: [build]
  - id: publish
    type: deterministic
{py("import sys; open('out/published', 'w').write(sys.argv[1])")[:-2]}, \
"{{{{ __lastApproval.approver }}}} {{{{ __lastApproval.reason }}}}"]
    depends: [review]
"""


def test_a_conservative_gate_pauses_under_autonomous_mode_and_records_who_approved(cleo):
    book(cleo, "gated", GATED)
    paused = cleo.run("gated", "--mode", "autonomous", version="2.0")
    assert paused.exit_code == 4, paused.output
    assert "Publish 2.0?" in paused.output and not cleo.exists("out/published")
    run_id = cleo.run_id()
    approved = cleo.cli("approve", run_id, "--as", "Engineer", "--by", "ana", "--comment", "ship it")
    assert approved.exit_code == 0, approved.output
    resumed = cleo.cli("resume", run_id)  # in the mode it was started with
    assert resumed.exit_code == 0, resumed.output
    assert cleo.read("out/published") == "ana ship it"  # __lastApproval in the context
    assert cleo.read("out/built") == "x"  # not run again
    [approval] = [
        a for a in cleo.snapshot()["approvals"] if a["via"] != "autonomous"
    ]  # the programs' effects: autonomous
    assert (approval["by"], approval["role"], approval["comment"]) == ("ana", "Engineer", "ship it") and approval["at"]


def test_a_rejection_fails_the_run_and_is_recorded(cleo):
    book(cleo, "gated", GATED)
    assert cleo.run("gated", "--mode", "autonomous", version="2.0").exit_code == 4
    run_id = cleo.run_id()
    assert (
        cleo.cli(
            "approve", run_id, "--as", "Engineer", "--by", "bo", "--select", "reject", "--comment", "not now"
        ).exit_code
        == 0
    )
    resumed = cleo.cli("resume", run_id)
    assert resumed.exit_code == 2, resumed.output
    assert "ApprovalRejected" in resumed.output and not cleo.exists("out/published")
    snapshot = cleo.snapshot()
    assert snapshot["status"] == "failed"
    [rejection] = [a for a in snapshot["approvals"] if a["via"] != "autonomous"]
    assert (rejection["by"], rejection["role"], rejection["selected"], rejection["comment"]) == (
        "bo",
        "Engineer",
        "reject",
        "not now",
    )


def test_a_permissive_gate_passes_by_itself_when_the_rules_approve_every_program_after_it(cleo):
    text = """version: "1.0"
name: qa
nodes:
  - id: gate
    type: approval
    policy: permissive
    prompt: "Run the QA tools?"
  - id: qa
    type: deterministic
    command: cleo
    args: [verify]
    depends: [gate]
"""
    book(cleo, "qa", text)
    run = cleo.run("qa", "--mode", "autonomous")
    assert "passed by its approval rules" in run.output and "safe-cleo-read" in run.output
    assert "CommandNotFound: the program `cleo` is not installed" in run.output  # named, never a traceback
    assert "fix: install `cleo`" in run.output
    book(cleo, "qa", text.replace("args: [verify]", "args: [push]").replace("command: cleo", "command: git"))
    assert cleo.run("qa", "--mode", "autonomous").exit_code == 4


def test_a_changed_cantbook_is_refused_on_resume_naming_the_node(cleo):
    book(cleo, "gated", GATED)
    assert cleo.run("gated", "--mode", "autonomous", version="2.0").exit_code == 4
    run_id = cleo.run_id()
    book(cleo, "gated", GATED.replace("write('x')", "write('y')"))
    assert cleo.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = cleo.cli("resume", run_id)
    assert resumed.exit_code == 3, resumed.output
    assert "build" in resumed.output and "changed" in resumed.output


# -- tokens -------------------------------------------------------------------------------------------------


def test_an_approval_token_approves_once_and_replayed_forged_or_foreign_tokens_are_refused(cleo):
    book(cleo, "gated", GATED)
    assert cleo.run("gated", "--mode", "autonomous", version="1").exit_code == 4
    other = cleo.run_id()
    foreign = cleo.cli("runs", "token", other, "--as", "Engineer", "--by", "ana").output.strip().splitlines()[-1]
    assert cleo.cli("cancel", other, "--reason", "superseded").exit_code == 0
    assert cleo.run("gated", "--mode", "autonomous", version="2").exit_code == 4
    run_id = sorted(p.name[4:-5] for p in cleo.live_snapshots())[-1]
    assert run_id != other
    refused = cleo.cli("approve", run_id, "--token", foreign)
    assert refused.exit_code != 0 and f"is for run {other}, not {run_id}" in refused.output, refused.output
    token = cleo.cli("runs", "token", run_id, "--as", "Engineer", "--by", "ana").output.strip().splitlines()[-1]
    forged = token[:-4] + ("0000" if not token.endswith("0000") else "1111")
    refused = cleo.cli("approve", run_id, "--token", forged)
    assert refused.exit_code != 0 and "signature does not match" in refused.output, refused.output
    assert cleo.cli("approve", run_id, "--token", token).exit_code == 0
    replayed = cleo.cli("approve", run_id, "--token", token)
    assert replayed.exit_code != 0 and "used" in replayed.output, replayed.output
    assert cleo.cli("resume", run_id).exit_code == 0 and cleo.read("out/published").startswith("ana")


# -- a crash between nodes -------------------------------------------------------------------------------


def test_sigkill_during_a_node_then_resume_runs_what_was_left(tmp_path):
    project = tmp_path / "p"
    (project / ".cleo" / "playbooks").mkdir(parents=True)
    (project / "out").mkdir()
    (project / "catalyst.toml").write_text("")
    (project / ".cleo" / "playbooks" / "crash.cantbook").write_text(f"""version: "1.0"
name: crash
nodes:
  - id: one
    type: deterministic
{py("open('out/one', 'a').write('x')")}  - id: two
    type: deterministic
{
        py(
            "import os, time; first = not os.path.exists('out/two'); "
            "open('out/two', 'a').write('x'); time.sleep(60 if first else 0)"
        )
    }    depends: [one]
  - id: three
    type: deterministic
{py("open('out/three', 'a').write('x')")}    depends: [two]
""")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CATALYST_")}, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "run", "crash", "--mode", "autonomous"],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        # Its mark written, not only its file made: a kill between the two would leave a
        # file the program's second run takes for its first.
        while not ((project / "out" / "two").exists() and (project / "out" / "two").read_text() == "x"):
            assert time.monotonic() < deadline and proc.poll() is None, "node two never started"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # catalyst and the program it runs, no chance to save
        proc.wait(timeout=30)
    run_id = next((project / ".xe" / "runs").glob("run-*.json")).name[4:-5]
    resumed = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "resume", run_id],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (project / "out" / "one").read_text() == "x"  # completed before the kill: not run again
    assert (project / "out" / "two").read_text() == "xx"  # in flight: run again
    assert (project / "out" / "three").read_text() == "x"


# -- export in cleo's shape ----------------------------------------------------------------------------------


def test_runs_export_format_cleo_writes_the_run_and_approval_rows(cleo):
    book(cleo, "gated", GATED)
    assert cleo.run("gated", "--mode", "autonomous", version="2.0").exit_code == 4
    run_id = cleo.run_id()
    paused = json.loads(cleo.cli("runs", "export", run_id, "--format", "cleo").output)
    [row] = paused["playbook_runs"]
    assert (row["status"], row["current_node"], row["iteration_counts"]) == ("paused", "review", {"build": 1})
    assert row["bindings"]["inputs"] == {"version": "2.0"} and row["bindings"]["build_exitCode"] == 0
    [pending] = paused["playbook_approvals"]
    assert (pending["node_id"], pending["status"], pending["auto_passed"], pending["reason"]) == (
        "review",
        "pending",
        0,
        "Publish 2.0? (its policy asks for a person)",
    )
    assert cleo.cli("approve", run_id, "--as", "Engineer", "--by", "ana", "--comment", "go").exit_code == 0
    assert cleo.cli("resume", run_id).exit_code == 0
    done = json.loads(cleo.cli("runs", "export", run_id, "--format", "cleo").output)
    [row] = done["playbook_runs"]
    assert row["status"] == "completed" and row["current_node"] is None and row["completed_at"]
    assert (
        row["playbook_hash"] == hashlib.sha256((cleo.root / ".cleo/playbooks/gated.cantbook").read_bytes()).hexdigest()
    )
    assert row["bindings"]["__lastApproval"]["approver"] == "ana"
    [approved] = done["playbook_approvals"]  # the programs' own effect approvals are not cleo's
    assert (approved["node_id"], approved["status"], approved["approver"], approved["reason"]) == (
        "review",
        "approved",
        "ana",
        "go",
    )
    assert (
        approved == json.loads(cleo.cli("runs", "export", run_id, "--format", "cleo").output)["playbook_approvals"][0]
    )  # stable ids


def test_runs_export_format_cleo_records_rejections_and_contract_violations_and_refuses_native_runs(cleo):
    book(cleo, "contract", CONTRACT.format(consume=py("pass"), after=py("pass"), handlers=""))
    answers(cleo, producer={"other": 1})
    assert cleo.run("contract", "--mode", "autonomous").exit_code == 2
    exported = json.loads(cleo.cli("runs", "export", cleo.run_id(), "--format", "cleo").output)
    assert (exported["playbook_runs"][0]["status"], exported["playbook_runs"][0]["error_context"]) == (
        "failed",
        "'consume' requires `wanted` in the context, and it is not there",
    )
    [violation] = exported["contract_violations"]
    assert (violation["nodeId"], violation["field"], violation["key"], violation["playbookName"]) == (
        "consume",
        "requires",
        "wanted",
        "contract",
    )
    cleo.playbook("native", "name: native\ndescription: d\nowner: Engineer\nsteps:\n  - log-info: hi\n")
    assert cleo.run("native").exit_code == 0
    native = sorted(p.name[4:-5] for p in cleo.snapshot_files() if "native" in p.name)[-1]
    refused = cleo.cli("runs", "export", native, "--format", "cleo")
    assert refused.exit_code == 1 and "not a cleo cantbook" in refused.output


def _exported_run(cleo) -> dict:
    return json.loads(cleo.cli("runs", "export", cleo.run_id(), "--format", "cleo").output)["playbook_runs"][0]


def test_export_counts_the_attempts_of_a_node_that_never_succeeded(cleo):
    book(
        cleo,
        "capped",
        """version: "1.0"
name: capped
nodes:
  - id: flaky
    type: agentic
    skill: flaky
    on_failure:
      max_iterations: 2
""",
    )
    answers(cleo, flaky="fail")
    assert cleo.run("capped", "--mode", "autonomous").exit_code == 2
    assert _exported_run(cleo)["iteration_counts"] == {"flaky": 2}


def test_export_counts_every_attempt_of_an_inject_into_loop(cleo):
    book(cleo, "loop", LOOP)
    answers(cleo, implementer={"code": 1}, validator=["fail", "fail", {"passed": True}], shipper={})
    assert cleo.run("loop", "--mode", "autonomous").exit_code == 0
    assert _exported_run(cleo)["iteration_counts"] == {"implement": 3, "validate": 3, "ship": 1}


def test_export_counts_nodes_only_not_the_steps_that_check_their_contracts(cleo):
    handlers = "error_handlers:\n  - on: contract_violation\n    action: inject_hint\n"
    book(cleo, "contract", CONTRACT.format(consume=py("pass"), after=py("pass"), handlers=handlers))
    answers(cleo, producer={"wanted": 1})  # the check of consume's requires runs, and passes
    assert cleo.run("contract", "--mode", "autonomous").exit_code == 0
    assert _exported_run(cleo)["iteration_counts"] == {"produce": 1, "consume": 1, "after": 1}


def test_a_rejection_is_told_with_the_reviewers_note_in_the_run_and_the_export(cleo):
    book(cleo, "gated", GATED)
    assert cleo.run("gated", "--mode", "autonomous", version="2.0").exit_code == 4
    run_id = cleo.run_id()
    answered = cleo.cli(
        "approve", run_id, "--as", "Engineer", "--by", "bo", "--select", "reject", "--comment", "not now"
    )
    assert answered.output.startswith(f"answered reject at review of run {run_id} as Engineer")
    resumed = cleo.cli("resume", run_id)
    said = "the approval node 'review' was rejected by bo: not now"
    assert f"ApprovalRejected: {said}" in resumed.output and "${{" not in resumed.output
    assert _exported_run(cleo)["error_context"] == said


# -- what-if and golden plans ------------------------------------------------------------------------------


def test_a_what_if_of_a_cantbook_lists_its_checks_and_pause_and_replans_the_same(cleo):
    from catalyst_dsl.runtime.lifecycle import golden as golden_plans
    from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json, with_hash

    book(cleo, "triage", TRIAGE)
    (cleo.root / "golden").mkdir()
    shown = cleo.run("triage", "--what-if", "--what-if-report", "golden/triage.plan.json", taskId="T1")
    assert shown.exit_code == 0, shown.output
    # the agent is never asked, so the context after it is unknown, not missing
    assert 'requires: ${{ Object.keys(bindings).includes("complexity") }} (unknown now)' in shown.output
    assert not agent_calls(cleo)
    golden = json.loads(cleo.read("golden/triage.plan.json"))
    assert canonical_json(with_hash(golden_plans.replan(cleo.root, golden))) == cleo.read("golden/triage.plan.json")
    book(cleo, "gated", GATED)
    gated = cleo.run("gated", "--what-if", version="1")
    assert "⏸ review (checkpoint)" in gated.output and "Publish 1?" in gated.output


def test_a_custom_gate_passes_by_the_projects_approval_rules(cleo):
    book(
        cleo,
        "custom",
        f"""version: "1.0"
name: custom
nodes:
  - id: gate
    type: approval
    policy: custom
    prompt: "Run the linter?"
  - id: lint
    type: deterministic
{py("pass")}    depends: [gate]
""",
    )
    assert cleo.run("custom", "--mode", "autonomous").exit_code == 4  # no project rules: a person decides
    assert cleo.cli("cancel", cleo.run_id(), "--reason", "rules coming").exit_code == 0
    cleo.settings(
        cleo.read("catalyst.toml")
        + f"""
[[approval-rules]]
action = "auto-approve"
reason = "our-python"
pattern = '^{re.escape(sys.executable)} -c pass$'
"""
    )
    run = cleo.run("custom", "--mode", "autonomous")
    assert run.exit_code == 0, run.output
    assert "passed by its approval rules" in run.output and "(our-python)" in run.output


def test_inject_hint_runs_the_node_with_the_hint_in_its_context(cleo):
    book(
        cleo,
        "hinted",
        """version: "1.0"
name: hinted
nodes:
  - id: produce
    type: agentic
    skill: producer
  - id: consume
    type: agentic
    skill: consumer
    requires:
      fields: [wanted]
    depends: [produce]
error_handlers:
  - on: contract_violation
    action: inject_hint
    message: nothing wanted; make do
""",
    )
    answers(cleo, producer={"other": 1}, consumer={"done": True})
    run = cleo.run("hinted", "--mode", "autonomous")
    assert run.exit_code == 0, run.output
    assert "'consume' runs although its requires do not hold: nothing wanted; make do" in run.output
    context = agent_calls(cleo)[1]["context"]["bindings"]
    assert context["__hint"] == "nothing wanted; make do" and context["__lastFailedNode"] == "consume"
    assert context["__lastError"]["code"] == "ContractViolation" and "wanted" in context["__contractViolation"]


def test_only_the_looping_nodes_failure_loops_back(cleo):
    book(cleo, "loop", LOOP)
    answers(cleo, implementer="fail", validator={"passed": True}, shipper={})
    run = cleo.run("loop", "--mode", "autonomous")
    assert run.exit_code == 2, run.output
    # implement's own three attempts, then the run fails: it is not a reason to loop back
    assert [c["who"] for c in agent_calls(cleo)] == ["implementer"] * 3


def test_routing_reads_the_last_approval(cleo):
    book(
        cleo,
        "routed",
        f"""version: "1.0"
name: routed
nodes:
  - id: gate
    type: approval
    prompt: "Go?"
  - id: approved
    type: deterministic
{py("open('out/approved', 'w')")}  - id: never
    type: deterministic
{py("open('out/never', 'w')")}edges:
  - from: gate
    to: approved
    when: {{ field: __lastApproval, exists: true }}
  - from: gate
    to: never
    when: {{ field: __lastApproval, exists: false }}
""",
    )
    assert cleo.run("routed", "--mode", "autonomous").exit_code == 4
    run_id = cleo.run_id()
    assert cleo.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = cleo.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert cleo.exists("out/approved") and not cleo.exists("out/never")


CORPUS = SHARED_CORPUS / "cleo"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the repository")
def test_the_corpus_cantbooks_run(cleo):
    book(cleo, "conditional-branch", (CORPUS / "conditional-branch.cantbook").read_text())
    answers(
        cleo, **{"ct-research-agent": [{"needsResearch": True}, {"notes": "n"}], "ct-task-executor": {"shipped": True}}
    )
    run = cleo.run("conditional-branch", "--mode", "autonomous", taskId="T1")
    assert run.exit_code == 0, run.output
    assert [c["context"].get("bindings", {}).get("needsResearch") for c in agent_calls(cleo)] == [None, True, True]
    assert "✓ deep-research" in run.output and "skip-research" not in run.output
    (cleo.temp / "agent.log").unlink()
    book(cleo, "release", (CORPUS / "release.cantbook").read_text())
    answers(cleo, **{"release-lead": [{"versionBumped": True}, {"changelogUpdated": True}, {"published": True}]})
    paused = cleo.run("release", "--mode", "autonomous", targetVersion="2026.4.92")
    assert paused.exit_code == 4, paused.output
    assert "Approve release of 2026.4.92 to latest?" in paused.output
    run_id = sorted(p.name[4:-5] for p in cleo.live_snapshots())[-1]
    assert cleo.cli("approve", run_id, "--as", "Engineer", "--comment", "ship").exit_code == 0
    done = cleo.cli("resume", run_id)
    assert done.exit_code == 0, done.output
    assert [c["agent"] for c in agent_calls(cleo)] == ["release-lead"] * 3


@pytest.mark.parametrize(
    "tree, exit_code",
    [
        ([{"title": "Write the spec", "acceptance": ["reviewed"], "depends": []}], 0),
        ([{"title": "Write the spec", "acceptance": ["  "]}], 2),  # no acceptance criterion that says something
        ([], 2),
    ],
)
def test_ensures_schema_task_tree_checks_the_shape_cleo_registers(cleo, tree, exit_code):
    book(
        cleo,
        "plan",
        """version: "1.0"
name: plan
nodes:
  - id: plan
    type: agentic
    skill: planner
    ensures:
      schema: task_tree
""",
    )
    answers(cleo, planner={"task_tree": tree})
    run = cleo.run("plan", "--mode", "autonomous")
    assert run.exit_code == exit_code, run.output
    if exit_code:
        assert "ContractViolation: ensures check 1 does not hold: json-schema:" in run.output


def test_a_node_id_with_a_newline_names_its_steps_on_one_line(cleo):
    node = '"a\\e[31m\\nerror: forged"'  # C965 warns: the id cannot be referenced, the book runs
    book(
        cleo,
        "route",
        f"""version: "1.0"
name: route
nodes:
  - id: {node}
    type: agentic
    skill: s
  - id: b
    type: agentic
    skill: s
edges:
  - from: {node}
    to: b
    when: {{ field: go, in: [yes] }}
""",
    )
    answers(cleo, s={"go": "maybe"})
    run = cleo.run("route", "--mode", "autonomous")
    assert run.exit_code == 2 and "RoutingFailed" in run.output, run.output
    assert "✗ a\\x1b[31m\\x0aerror: forged (route)" in run.output
    assert not any(line.startswith("error: forged") for line in run.output.splitlines()), run.output
