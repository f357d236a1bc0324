"""`catalyst run --what-if`: the plan of docs/plan-format.md, through the real command line.

Each test writes small playbooks into a throwaway project (the `project` fixture of
tests/helpers/fixtures.py, a run_helpers.RunProject) and asks for the plan in-process; the
determinism tests and the lock holder run `python -m catalyst_dsl` in subprocesses, so
that the working directory, the time zone and the hash seed really differ between the
runs compared.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path
from textwrap import dedent
from typing import Any, Iterator

import pytest

from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json, with_hash


REPO = Path(__file__).resolve().parents[3]

#: Every change type docs/plan-format.md lists.
CHANGE_TYPES = {"create", "modify", "delete", "no-op", "read", "unknown", "skipped", "would-pause", "refused"}

#: The keys of every step entry (docs/plan-format.md, "Step entries").
ENTRY_KEYS = {
    "address",
    "path",
    "step",
    "action",
    "change",
    "reason",
    "conditional",
    "config",
    "effects",
    "writes",
    "approval",
    "request",
    "steps",
}


# -- helpers -------------------------------------------------------------------------------------------------


def plan_of(project, name: str, *args: str, **inputs: Any) -> dict[str, Any]:
    """The JSON plan printed by `catalyst run NAME --what-if --format json`."""
    result = project.run(name, "--what-if", "--format", "json", *args, **inputs)
    plan = json.loads(result.stdout)
    # A plan that foresees the run failing exits as that run would (2), and only then.
    foreseen = any("fails" in step for step in walk(plan["steps"]))
    assert result.exit_code == (2 if foreseen else 0), result.output
    return plan


def walk(steps: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for step in steps:
        yield step
        yield from walk(step["steps"])


def by_path(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every step entry of the plan, nested ones included, by its path."""
    found: dict[str, dict[str, Any]] = {}
    for step in walk(plan["steps"]):
        assert step["path"] not in found, f"two entries at {step['path']}"
        found[step["path"]] = step
    return found


def catalyst(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`python -m catalyst_dsl run ARGS` in a subprocess; TZ=UTC and PYTHONHASHSEED=0 unless given."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CATALYST_")}
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    environ.update({"TZ": "UTC", "PYTHONHASHSEED": "0"})
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "run", *args], cwd=cwd, env=environ, capture_output=True, timeout=60
    )


def tree(root: Path) -> dict[str, tuple]:
    """Every directory and file under root (root too): mode, mtime in ns, and a file's bytes."""
    found: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [".", *dirnames, *filenames]:
            path = Path(dirpath) / name
            info = os.lstat(path)
            content = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
            found[path.relative_to(root).as_posix()] = (stat.filemode(info.st_mode), info.st_mtime_ns, content)
    return found


def tree_changes(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    changes = [f"added {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    for p in sorted(before.keys() & after.keys()):
        (mode_a, mtime_a, bytes_a), (mode_b, mtime_b, bytes_b) = before[p], after[p]
        if mode_a != mode_b:
            changes.append(f"mode of {p}: {mode_a} -> {mode_b}")
        if mtime_a != mtime_b:
            changes.append(f"mtime of {p} changed")
        if bytes_a != bytes_b:
            changes.append(f"content of {p} changed")
    return changes


def locations(value: Any, needle: str, where: str = "") -> list[str]:
    """Where in a JSON value a string containing `needle` sits (keys included)."""
    if isinstance(value, str):
        return [where or "."] if needle in value else []
    if isinstance(value, dict):
        hits = [f"{where}/<key {k}>" for k in value if needle in k]
        for key, inner in value.items():
            hits += locations(inner, needle, f"{where}/{key}")
        return hits
    if isinstance(value, list):
        return [hit for i, inner in enumerate(value) for hit in locations(inner, needle, f"{where}/{i}")]
    return []


# -- playbooks ------------------------------------------------------------------------------------------------

CHILD = """
    name: child
    description: a called playbook that writes
    owner: Engineer
    inputs:
      - string: who
        default: nobody
    allowedWritePaths:
      - "out/**"
    steps:
      - file-write: out/from-child.txt
        content: "hello {{who}}\\n"
      - log-info: "child done for {{who}}"
"""

#: A playbook that touches everything a run can touch.
EVERYTHING = """
    name: everything
    description: writes, deletes, runs bash, asks an AI, pauses and calls a child
    owner: Engineer
    reviewers:
      required: [Architect]
    inputs:
      - string: who
        default: ada
    allowedWritePaths:
      - "out/**"
      - "data/**"
      - "ran.txt"
    steps:
      - name: listed
        file-list: data
        pattern: "*.txt"
      - for-each: f
        in: "{{listed}}"
        steps:
          - log-info: "found {{f}}"
      - file-write: out/new.txt
        content: "one\\ntwo\\n"
      - file-write: data/mid.txt
        content: "changed\\n"
      - file-delete: data/alpha.txt
      - json-write: out/meta.json
        value:
          zeta: 1
          alpha: 2
          who: "{{who}}"
      - bash: "touch ran.txt"
        writes: [ran.txt]
      - name: answer
        ai-prompt: "name some files"
      - for-each: thing
        in: "{{answer}}"
        steps:
          - file-write: "out/{{thing}}.txt"
            content: x
      - if: "${{ get('answer') == 'yes' }}"
        then:
          - file-write: out/yes.txt
            content: "yes\\n"
      - checkpoint: "Look at the changes for {{who}}"
      - file-write: data/zeta.txt
        content: "zeta again\\n"
        checkpoint: true
      - name: call
        playbook: child
        inheritPermissions: true
        inputs:
          who: "{{who}}"
      - return:
          files: "{{listed}}"
"""


def everything(project) -> None:
    project.playbook("child", CHILD)
    project.playbook("everything", EVERYTHING)
    # Created out of name order, so that a listing in directory order would show.
    for name in ("zeta", "alpha", "mid", "beta"):
        project.write(f"data/{name}.txt", f"{name}\n")


# =====================================================================================
# determinism
# =====================================================================================

VARIATIONS = {
    "same again": {},
    "another working directory": {"subdir": True},
    "another time zone": {"env": {"TZ": "Pacific/Auckland"}},
    "another hash seed": {"env": {"PYTHONHASHSEED": "12345"}},
}


@pytest.mark.parametrize("variation", list(VARIATIONS))
def test_the_plan_bytes_do_not_depend_on_where_when_or_the_hash_seed(project, variation):
    everything(project)
    baseline = catalyst(project.root, "everything", "--what-if", "--format", "json")
    assert baseline.returncode == 0, baseline.stderr.decode()
    changed = VARIATIONS[variation]
    cwd, name = project.root, "everything"
    if changed.get("subdir"):
        cwd = project.root / "sub" / "deeper"
        cwd.mkdir(parents=True)
        name = os.path.join("..", "..", "playbooks", "everything.yaml")
    other = catalyst(cwd, name, "--what-if", "--format", "json", **changed.get("env", {}))
    assert other.returncode == 0, other.stderr.decode()
    assert other.stdout == baseline.stdout


def test_the_report_file_holds_the_same_bytes_as_the_printed_json(project, tmp_path):
    everything(project)
    printed = catalyst(project.root, "everything", "--what-if", "--format", "json")
    assert printed.returncode == 0, printed.stderr.decode()
    report = tmp_path / "plan.json"
    sub = project.root / "sub"
    sub.mkdir()
    written = catalyst(
        sub,
        os.path.join("..", "playbooks", "everything.yaml"),
        "--what-if",
        "--what-if-report",
        str(report),
        TZ="Pacific/Auckland",
        PYTHONHASHSEED="12345",
    )
    assert written.returncode == 0, written.stderr.decode()
    assert report.read_bytes() == printed.stdout
    # In-process, from the project root, gives the same bytes too.
    assert project.run("everything", "--what-if", "--format", "json").stdout_bytes == printed.stdout


def test_the_plan_is_canonical_and_names_no_machine_specific_thing(project, tmp_path):
    everything(project)
    text = project.run("everything", "--what-if", "--format", "json").stdout
    assert text.endswith("}\n") and "\r" not in text
    plan = json.loads(text)
    assert text == canonical_json(plan)
    # The state directory is named (programs never write it), its scratch space is not.
    for machine in (str(tmp_path), str(project.root), os.path.realpath(project.root), ".xe/runs/tmp", "tmp/what-if"):
        assert machine not in text, machine
    assert plan["playbook"] == {"name": "everything", "file": "playbooks/everything.yaml"}
    # The listing is in name order, whatever order the directory gives.
    assert plan["outputs"] == {"files": ["data/alpha.txt", "data/beta.txt", "data/mid.txt", "data/zeta.txt"]}


# =====================================================================================
# no side effects
# =====================================================================================


def test_a_what_if_changes_nothing_in_the_project(project, tmp_path, tmp_path_factory):
    everything(project)
    before = tree(tmp_path)
    for fmt in ("text", "json", "markdown"):
        result = project.run("everything", "--what-if", "--format", fmt)
        assert result.exit_code == 0, result.output
    report = tmp_path_factory.mktemp("report") / "plan.json"
    result = project.run("everything", "--dry-run", "--what-if-report", str(report))
    assert result.exit_code == 0, result.output
    assert report.is_file()
    after = tree(tmp_path)
    assert tree_changes(before, after) == []
    assert not (project.root / ".xe").exists()
    assert [p for p in tmp_path.rglob("*") if p.suffix == ".lock" or p.name in (".xe", ".guard")] == []


def test_the_plan_shows_what_the_run_would_do_where_it_would_do_it(project):
    everything(project)
    plan = plan_of(project, "everything")
    steps = by_path(plan)
    for entry in steps.values():
        program = entry["action"] in ("bash", "powershell", "test", "script", "command")
        extra = {"confinement"} if program else {"prompt"} if entry["action"] == "ai-prompt" else set()
        assert entry.keys() == ENTRY_KEYS | extra, entry["path"]
    assert steps["steps/6"]["change"] == "unknown" and "bash" in steps["steps/6"]["reason"]
    assert steps["steps/6"]["confinement"]["neverWrites"] == [
        ".git/",
        ".xe/runs/",
        "catalyst.toml",
        ".catalyst/allowed_signers",
    ]
    assert steps["steps/7"]["change"] == "unknown" and "AI" in steps["steps/7"]["reason"]
    assert steps["steps/2"]["change"] == "create"
    assert steps["steps/4"]["change"] == "delete"


# =====================================================================================
# unknown values
# =====================================================================================

UNKNOWNS = """
    name: unknowns
    description: everything computed from an AI answer
    owner: Engineer
    steps:
      - name: answer
        ai-prompt: "pick a name"
      - var: derived
        value: "{{answer}}-suffix"
      - display: "derived is {{derived}}"
      - log-info: "only sometimes"
        condition: "${{ get('derived') != 'none' }}"
      - if: "${{ get('derived') == 'yes' }}"
        then:
          - log-info: "yes branch"
        else:
          - log-info: "no branch"
      - file-write: out/new.txt
        content: "{{derived}}"
      - file-write: out/existing.txt
        content: "{{derived}}"
      - file-write: "out/{{derived}}.txt"
        content: fixed
      - return:
          value: "{{derived}}"
"""


@pytest.fixture
def unknowns(project):
    project.playbook("unknowns", UNKNOWNS)
    project.write("out/existing.txt", "before\n")
    return by_path(plan_of(project, "unknowns")), project


def test_an_ai_answer_is_unknown_and_so_is_a_var_computed_from_it(unknowns):
    steps, project = unknowns
    assert steps["steps/0"]["change"] == "unknown"
    assert steps["steps/1"]["action"] == "var" and steps["steps/1"]["change"] == "no-op"
    display = steps["steps/2"]
    assert display["change"] == "unknown"
    assert "<unknown>" in display["config"]["message"]
    assert "cannot know" in display["reason"]
    assert json.loads(project.run("unknowns", "--what-if", "--format", "json").stdout)["outputs"] == {
        "value": "<unknown>"
    }


def test_a_step_whose_condition_depends_on_an_unknown_is_conditional(unknowns):
    steps, _ = unknowns
    maybe = steps["steps/3"]
    assert maybe["conditional"] is True
    assert maybe["change"] == "no-op"
    assert "cannot know" in maybe["reason"]
    assert steps["steps/2"]["conditional"] is False


def test_an_if_on_an_unknown_shows_both_branches_each_conditional(unknowns):
    steps, _ = unknowns
    branches = [s["path"] for s in steps["steps/4"]["steps"]]
    assert branches == ["steps/4/then/0", "steps/4/else/0"]
    assert steps["steps/4/then/0"]["conditional"] is True
    assert steps["steps/4/else/0"]["conditional"] is True
    assert steps["steps/4/then/0"]["config"] == {"message": "yes branch"}
    assert steps["steps/4/else/0"]["config"] == {"message": "no branch"}


CATCHES = """
name: catches
description: a build whose failure is reported, then raised again for the playbook's catch
owner: Engineer
allowedWritePaths: ["out/**"]
steps:
  - name: risky
    try:
      - name: build
        bash: make build
        writes: []
    catch:
      - code: default
        steps:
          - name: report
            file-write: out/failure.md
            content: "failed: {{ $error.message }}"
          - name: again
            throw:
              code: BuildFailed
              message: "{{ $error.message }}"
    finally:
      - name: tidy
        display: done
  - name: after
    display: built
catch:
  - code: BuildFailed
    steps:
      - name: alert
        file-write: out/alert.md
        content: alert
"""


CLAUSES = """
name: clauses
description: steps in catch clauses and route branches, which a clause added before them leaves where they are
owner: Engineer
inputs:
  - string: kind
    required: true
steps:
  - route:
{branch}      - when: "${{{{ inputs.kind == 'docs' }}}}"
        label: docs
        steps:
          - name: write-docs
            display: docs
      - when: "${{{{ inputs.kind == 'code' }}}}"
        steps:
          - display: code
  - try:
      - name: build
        bash: make build
        writes: []
    catch:
{clause}      - code: BuildFailed
        steps:
          - name: report
            display: failed
catch:
  - code: default
    steps:
      - display: alert
"""


def test_steps_in_catch_clauses_and_route_branches_are_addressed_by_the_clauses_names(project):
    project.playbook("clauses", CLAUSES.format(branch="", clause=""))
    before = {s["path"]: s["address"] for s in walk(plan_of(project, "clauses", kind="docs")["steps"])}
    assert before["steps/0/branches/0/0"] == "route#1/branches/docs/write-docs"
    assert before["steps/1/catch/0/0"] == "try#1/catch/BuildFailed/report"
    assert before["catch/0/0"] == "catch/default/display#1"
    # A branch and a clause added before the others: their steps keep their addresses.
    project.playbook(
        "clauses",
        CLAUSES.format(
            branch="      - when: \"${{ inputs.kind == 'tests' }}\"\n        label: tests\n"
            "        steps:\n          - display: tests\n",
            clause="      - code: Timeout\n        steps:\n          - display: slow\n",
        ),
    )
    after = {s["path"]: s["address"] for s in walk(plan_of(project, "clauses", kind="docs")["steps"])}
    assert after["steps/0/branches/1/0"] == "route#1/branches/docs/write-docs"
    assert after["steps/1/catch/1/0"] == "try#1/catch/BuildFailed/report"
    assert after["steps/1/catch/0/0"] == "try#1/catch/Timeout/display#1"
    assert set(before.values()) < set(after.values())


ODD_CLAUSES = """
name: odd
description: clauses whose names an address must escape, keep or tell apart
owner: Engineer
inputs:
  - string: kind
    required: true
steps:
  - route:
      - when: "${{ inputs.kind == 'a/b' }}"
        steps:
          - display: slash
      - when: "${{ inputs.kind == '%s' }}"
        steps:
          - display: long
      - when: "${{ inputs.kind == '%s' }}"
        steps:
          - display: long too
    otherwise:
      - display: none
  - route:
      - when: true
        label: steps
        steps:
          - display: labelled steps
  - try:
      - name: risky
        bash: make
        writes: []
    catch:
      - code: E1
        steps:
          - display: first
      - code: E1
        steps:
          - display: second
""" % ("x" * 90 + "1", "x" * 90 + "2")


def test_clause_names_in_addresses_are_escaped_kept_and_told_apart(project):
    project.playbook("odd", ODD_CLAUSES)
    shown = {}
    for kind in ("a/b", "x" * 90 + "1", "x" * 90 + "2"):
        shown.update({s["path"]: s["address"] for s in walk(plan_of(project, "odd", kind=kind)["steps"])})
    assert shown["steps/1/branches/0/0"] == "route#2/branches/steps/display#1"  # a label `steps` is kept
    assert shown["steps/2/catch/0/0"] == "try#1/catch/E1/display#1"
    assert shown["steps/2/catch/1/0"] == "try#1/catch/E1~2/display#1"  # a second clause of one code
    slash = shown["steps/0/branches/0/0"]
    assert slash == "route#1/branches/${{ inputs.kind == 'a%2Fb' }}/display#1"
    long_one, long_two = shown["steps/0/branches/1/0"], shown["steps/0/branches/2/0"]
    assert long_one != long_two and max(len(long_one), len(long_two)) < 120


def test_what_a_catch_would_do_is_shown_conditional(project):
    # Whether the build fails is not known to a plan: what each handler would do is shown,
    # in the order a run would do it, as an if's branches on an unknown are.
    project.playbook("catches", CATCHES)
    plan = plan_of(project, "catches")
    shown = [(s["path"], s["address"], s["conditional"], s["change"]) for s in walk(plan["steps"])]
    assert shown == [
        ("steps/0", "risky", False, "no-op"),
        ("steps/0/steps/0", "risky/build", False, "unknown"),
        ("steps/0/catch/0/0", "risky/catch/default/report", True, "create"),
        ("steps/0/catch/0/1", "risky/catch/default/again", True, "unknown"),
        ("steps/0/finally/0", "risky/finally/tidy", False, "no-op"),
        ("steps/1", "after", False, "no-op"),
        ("catch/0/0", "catch/BuildFailed/alert", True, "create"),
    ]
    # A handler that may raise again is not a failure the plan predicts.
    assert not any("fails" in s for s in walk(plan["steps"]))
    text = project.run("catches", "--what-if")
    assert text.exit_code == 0, text.output
    assert "+ report (file-write) [conditional]" in text.output and "+ alert (file-write) [conditional]" in text.output
    assert not (project.root / "out").exists()  # a what-if writes nothing


RETURNS_EARLY = """
name: returns-early
description: a build that returns once it is done
owner: Engineer
allowedWritePaths: ["out/**"]
steps:
  - name: risky
    try:
      - name: build
        bash: make build
        writes: []
      - return: {}
    catch:
      - code: default
        steps:
          - name: report
            file-write: out/failure.md
            content: failed
catch:
  - code: default
    steps:
      - name: alert
        file-write: out/alert.md
        content: alert
"""


RETHROWS = """
name: rethrows
description: a failure the plan foresees, reported and raised again
owner: Engineer
allowedWritePaths: ["out/**"]
steps:
  - name: risky
    try:
      - name: boom
        throw:
          code: First
          message: first
    catch:
      - code: default
        steps:
          - name: report
            file-write: out/failure.md
            content: "failed: {{ $error.message }}"
          - name: again
            throw:
              code: Second
              message: "again: {{ $error.message }}"
"""


def test_a_foreseen_failure_runs_its_catch_as_a_run_would_and_a_rethrow_fails_the_plan(project):
    # The throw certainly fails and the clause certainly takes it: the clause is not
    # conditional, it sees the error, and the error it raises again ends the run.
    project.playbook("rethrows", RETHROWS)
    plan = plan_of(project, "rethrows")
    steps = by_path(plan)
    report, again = steps["steps/0/catch/0/0"], steps["steps/0/catch/0/1"]
    assert (report["conditional"], report["change"]) == (False, "create")
    assert report["effects"][0]["diff"].endswith("+failed: first\n\\ No newline at end of file\n")
    assert again["fails"] == {"code": "Second", "message": "again: first"}
    assert project.run("rethrows", "--what-if").exit_code == 2
    assert not (project.root / "out").exists()


def test_a_foreseen_failure_a_called_playbook_catches_leaves_the_callers_catch_conditional(project):
    project.playbook(
        "handles",
        "name: handles\ndescription: fails and handles it\nowner: Engineer\n"
        "steps:\n  - throw: {code: First, message: first}\n"
        "catch:\n  - code: default\n    steps:\n      - display: handled\n",
    )
    project.playbook(
        "calls",
        RETHROWS.replace("name: rethrows", "name: calls").replace(
            "throw:\n          code: First\n          message: first", "playbook: handles"
        ),
    )
    steps = by_path(plan_of(project, "calls"))
    assert [steps[p]["conditional"] for p in ("steps/0/catch/0/0", "steps/0/catch/0/1")] == [True, True]


def test_a_return_does_not_hide_what_a_catch_would_do(project):
    # The build before the `return` may fail: both handlers are shown, as when no step returns.
    project.playbook("returns-early", RETURNS_EARLY)
    plan = plan_of(project, "returns-early")
    shown = [(s["path"], s["conditional"], s["change"]) for s in walk(plan["steps"])]
    assert shown == [
        ("steps/0", False, "no-op"),
        ("steps/0/steps/0", False, "unknown"),
        ("steps/0/steps/1", False, "no-op"),
        ("steps/0/catch/0/0", True, "create"),
        ("catch/0/0", True, "create"),
    ]


def test_a_known_path_with_unknown_content_shows_the_file_and_why(unknowns):
    steps, _ = unknowns
    new, existing = steps["steps/5"], steps["steps/6"]
    assert new["change"] == "create"
    assert new["effects"] == [
        {"change": "create", "path": "out/new.txt", "reason": "its content depends on a value the plan cannot know"}
    ]
    assert new["config"]["content"] == "<unknown>"
    assert existing["change"] == "modify"
    assert existing["effects"] == [
        {
            "change": "modify",
            "path": "out/existing.txt",
            "reason": "its content depends on a value the plan cannot know",
        }
    ]
    assert new["writes"] == [{"path": "out/new.txt", "allowed": True}]


def test_an_unknown_path_makes_the_write_unknown(unknowns):
    steps, _ = unknowns
    write = steps["steps/7"]
    assert write["change"] == "unknown"
    assert write["config"]["path"] == "<unknown>"
    assert write["effects"] == [] and write["writes"] == []
    assert "cannot know" in write["reason"]


def test_a_for_each_over_an_unknown_list_shows_its_body_once(project):
    everything(project)
    steps = by_path(plan_of(project, "everything"))
    assert [s["path"] for s in steps["steps/8"]["steps"]] == ["steps/8/each/0/0"]
    body = steps["steps/8/each/0/0"]
    assert body["conditional"] is True and body["change"] == "unknown"


# =====================================================================================
# diffs
# =====================================================================================

DIFFS = """
    name: diffs
    description: one of each file change
    owner: Engineer
    steps:
      - file-write: out/new.txt
        content: "one\\ntwo\\n"
      - file-write: out/changed.txt
        content: "first\\nSECOND\\nthird\\n"
      - file-delete: out/gone.txt
      - file-write: out/same.txt
        content: "same\\n"
      - name: fresh
        file-read: out/new.txt
      - display: "fresh: {{fresh}}"
      - name: edited
        file-read: out/changed.txt
      - display: "edited: {{edited}}"
"""


@pytest.fixture
def diffs(project):
    project.playbook("diffs", DIFFS)
    project.write("out/changed.txt", "first\nsecond\nthird\n")
    project.write("out/gone.txt", "bye\n")
    project.write("out/same.txt", "same\n")
    return by_path(plan_of(project, "diffs")), project


def test_a_new_file_is_created_with_a_diff_from_dev_null(diffs):
    steps, project = diffs
    assert steps["steps/0"]["change"] == "create"
    assert steps["steps/0"]["effects"] == [
        {
            "change": "create",
            "path": "out/new.txt",
            "diff": "--- /dev/null\n+++ b/out/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
        }
    ]
    assert not project.exists("out/new.txt")


def test_a_changed_file_is_modified_with_a_unified_diff(diffs):
    steps, project = diffs
    assert steps["steps/1"]["change"] == "modify"
    (effect,) = steps["steps/1"]["effects"]
    assert (effect["change"], effect["path"]) == ("modify", "out/changed.txt")
    assert effect["diff"] == (
        "--- a/out/changed.txt\n+++ b/out/changed.txt\n@@ -1,3 +1,3 @@\n first\n-second\n+SECOND\n third\n"
    )
    assert project.read("out/changed.txt") == "first\nsecond\nthird\n"


def test_a_deleted_file_is_a_delete_with_a_diff_to_dev_null(diffs):
    steps, project = diffs
    assert steps["steps/2"]["change"] == "delete"
    (effect,) = steps["steps/2"]["effects"]
    assert (effect["change"], effect["path"]) == ("delete", "out/gone.txt")
    assert effect["diff"].startswith("--- a/out/gone.txt\n+++ /dev/null\n")
    assert "-bye\n" in effect["diff"]
    assert project.exists("out/gone.txt")


def test_writing_the_same_content_is_a_no_op_without_a_diff(diffs):
    steps, _ = diffs
    assert steps["steps/3"]["change"] == "no-op"
    assert steps["steps/3"]["effects"] == [{"change": "no-op", "path": "out/same.txt"}]


def test_a_later_read_sees_what_the_plan_would_have_written(diffs):
    steps, _ = diffs
    assert steps["steps/4"]["change"] == "read"
    assert steps["steps/5"]["config"] == {"message": "fresh: one\ntwo\n"}
    assert steps["steps/7"]["config"] == {"message": "edited: first\nSECOND\nthird\n"}


# =====================================================================================
# skipped, would-pause, refused
# =====================================================================================

GATES = """
    name: gates
    description: a skip, two pauses and a refusal
    owner: Engineer
    reviewers:
      required: [Architect, Security]
    inputs:
      - number: n
        default: 3
      - string: dest
        default: elsewhere/x.txt
    allowedWritePaths:
      - "out/**"
    steps:
      - log-info: "big n"
        condition: "${{ get('n') > 5 && get('n') < 100 }}"
      - checkpoint: "Approve n={{n}}"
      - file-write: out/a.txt
        content: "a\\n"
        checkpoint: "Check out/a.txt for {{n}}"
      - file-write: "{{dest}}"
        content: nope
"""


def test_a_skipped_step_says_why_with_the_values_of_its_parts(project):
    project.playbook(
        "gates",
        GATES.replace(
            """      - file-write: "{{dest}}"
        content: nope
""",
            "",
        ),
    )
    skipped = by_path(plan_of(project, "gates"))["steps/0"]
    assert skipped["change"] == "skipped"
    assert skipped["reason"].startswith("condition is false: ${{ get('n') > 5 && get('n') < 100 }}")
    assert "get('n') = 3" in skipped["reason"]
    assert skipped["conditional"] is False and skipped["effects"] == []


def test_checkpoints_would_pause_for_the_required_reviewers(project):
    project.playbook(
        "gates",
        GATES.replace(
            """      - file-write: "{{dest}}"
        content: nope
""",
            "",
        ),
    )
    steps = by_path(plan_of(project, "gates"))
    assert steps["steps/1"]["change"] == "would-pause"
    assert steps["steps/1"]["approval"] == {"message": "Approve n=3", "roles": ["Architect", "Security"]}
    flag = steps["steps/2/checkpoint"]
    assert flag["change"] == "would-pause"
    assert flag["approval"] == {"message": "Check out/a.txt for 3", "roles": ["Architect", "Security"]}
    # The plan goes on as if approved.
    assert steps["steps/2"]["change"] == "create"


def test_a_write_outside_the_grants_is_refused_with_the_refusal(project):
    project.playbook("gates", GATES)
    plan = plan_of(project, "gates")
    refused = by_path(plan)["steps/3"]
    assert refused["change"] == "refused"
    assert "elsewhere/x.txt" in refused["reason"] and "out/**" in refused["reason"]
    assert refused["writes"] == [{"path": "elsewhere/x.txt", "allowed": False, "refusal": refused["reason"]}]
    assert plan["summary"]["refused"] == 1
    assert plan["permissions"] == {"allowedWritePaths": ["out/**"]}


def test_a_program_declaring_a_write_outside_the_grants_is_refused_not_unknown(project):
    project.playbook(
        "declared",
        """
        name: declared
        description: a program that says it writes outside the grants
        owner: Engineer
        inputs:
          - string: dest
            default: elsewhere/y.txt
        allowedWritePaths:
          - "out/**"
        steps:
          - bash: "touch {{dest}}"
            writes: ["{{dest}}"]
    """,
    )
    step = plan_of(project, "declared")["steps"][0]
    # A real run fails here with PermissionDenied before starting the program.
    real = project.run("declared")
    assert real.exit_code == 2 and project.snapshot()["error"]["code"] == "PermissionDenied"
    assert not project.exists("elsewhere/y.txt")
    assert step["change"] == "refused", step
    assert [(w["path"], w["allowed"]) for w in step["writes"]] == [("elsewhere/y.txt", False)]


def test_the_text_plan_names_the_refused_path(project):
    project.playbook("gates", GATES)
    result = project.run("gates", "--what-if")
    assert result.exit_code == 2, result.output  # the refused write would end the run
    assert "✗ elsewhere/x.txt: cannot write 'elsewhere/x.txt'" in result.stdout
    assert "1 refused" in result.stdout
    assert "A run would fail at " in result.stdout


# =====================================================================================
# child playbooks
# =====================================================================================


def test_a_called_playbooks_steps_sit_inside_the_call(project):
    project.playbook("child", CHILD)
    project.playbook(
        "parent",
        """
        name: parent
        description: calls the child
        owner: Engineer
        allowedWritePaths:
          - "out/**"
        steps:
          - log-info: before
          - name: call
            playbook: child
            inheritPermissions: true
            inputs:
              who: grace
          - log-info: after
    """,
    )
    plan = plan_of(project, "parent")
    assert [s["path"] for s in plan["steps"]] == ["steps/0", "steps/1/approve-effects", "steps/1", "steps/2"]
    approval = plan["steps"][1]
    assert approval["change"] == "would-pause"
    assert (
        approval["approval"]["message"]
        == "approve before it lets the playbook 'child' write with this playbook's permissions"
    )
    call = plan["steps"][2]
    assert (call["action"], call["step"]) == ("playbook", "call")
    assert [s["path"] for s in call["steps"]] == ["steps/1/call/steps/0", "steps/1/call/steps/1"]
    write, log = call["steps"]
    assert write["change"] == "create"
    assert write["effects"][0]["path"] == "out/from-child.txt"
    assert "+hello grace\n" in write["effects"][0]["diff"]
    assert log["config"] == {"message": "child done for grace"}
    assert not project.exists("out/from-child.txt")


# =====================================================================================
# secrets
# =====================================================================================

SECRET = "s3cr3t-VALUE-9f2a"

SECRETS = """
    name: secrets
    description: uses a secret four ways
    owner: Engineer
    inputs:
      - string: token
        secret: true
    steps:
      - display: "using {{token}}"
      - file-write: out/config.txt
        content: "token={{token}}\\n"
      - log-info: never
        condition: "${{ get('token') == 'not-it' }}"
      - file-write: "out/{{token}}.txt"
        content: "x\\n"
"""


def test_a_secret_input_shows_as_its_placeholder_and_is_masked(project):
    project.playbook("secrets", SECRETS)
    plan = plan_of(project, "secrets", token=SECRET)
    assert plan["inputs"] == {"token": "<secret:token>"}
    # A template holding the secret shows it as its placeholder; text outside templates is masked.
    assert plan["steps"][0]["config"] == {"message": "using <secret:token>"}
    assert plan["steps"][1]["config"]["content"] == "token=<secret:token>\n"


@pytest.mark.parametrize("fmt", ["json", "text", "markdown"])
def test_a_secret_input_never_appears_in_the_plan(project, fmt):
    project.playbook("secrets", SECRETS)
    result = project.run("secrets", "--what-if", "--format", fmt, token=SECRET)
    assert result.exit_code == 0, result.output
    where = (
        locations(json.loads(result.stdout), SECRET)
        if fmt == "json"
        else [line for line in result.stdout.splitlines() if SECRET in line]
    )
    assert SECRET not in result.output, f"the secret appears in the {fmt} plan at {where}"


def test_a_secret_input_never_appears_in_the_report_file(project, tmp_path):
    project.playbook("secrets", SECRETS)
    report = tmp_path / "plan.json"
    result = project.run("secrets", "--what-if", "--what-if-report", str(report), token=SECRET)
    assert result.exit_code == 0, result.output
    text = report.read_text(encoding="utf-8")
    assert SECRET not in text, f"the secret appears in the report at {locations(json.loads(text), SECRET)}"


# =====================================================================================
# conflicts with live runs
# =====================================================================================

HOLDER = """
import sys, time
from pathlib import Path
from textwrap import dedent
from catalyst_dsl.runtime.state.locks import LockManager
LockManager(Path(sys.argv[1])).acquire("other-run-id", ["path:out/**"])
print("ready", flush=True)
time.sleep(60)
"""


def test_a_lock_held_by_a_live_run_is_listed_and_the_plan_takes_none(project):
    project.playbook(
        "writer",
        """
        name: writer
        description: writes under out
        owner: Engineer
        steps:
          - file-write: out/a.txt
            content: "a\\n"
    """,
    )
    locks = project.root / ".xe" / "runs" / "locks"
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(locks)], stdout=subprocess.PIPE, text=True, env=environ
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        before = tree(project.root / ".xe")
        plan = plan_of(project, "writer")
        text = project.run("writer", "--what-if").stdout
        after = tree(project.root / ".xe")
    finally:
        holder.kill()
        holder.wait()
    assert plan["conflicts"] == [{"resource": "path:out/**", "run": "other-run-id"}]
    assert plan["locks"] == ["path:out/a.txt"]
    assert "conflict: path:out/** is held by live run other-run-id" in text
    assert tree_changes(before, after) == []
    from catalyst_dsl.runtime.state.locks import LockManager

    assert [h.run_id for h in LockManager(locks).held()] == ["other-run-id"]


# =====================================================================================
# --expect-plan
# =====================================================================================

WRITES = """
    name: writes
    description: writes a greeting
    owner: Engineer
    inputs:
      - string: who
        default: ada
    steps:
      - file-write: out/greeting.txt
        content: "{{greeting}} {{who}}\\n"
"""


def approve(project, tmp_path, greeting: str = "hello", **inputs: Any) -> Path:
    project.playbook("writes", WRITES.replace("{{greeting}}", greeting))
    approved = tmp_path / "approved.plan.json"
    result = project.run("writes", "--what-if", "--what-if-report", str(approved), **inputs)
    assert result.exit_code == 0, result.output
    assert not project.exists("out/greeting.txt")
    return approved


def test_an_equal_plan_runs(project, tmp_path):
    approved = approve(project, tmp_path)
    result = project.run("writes", "--expect-plan", str(approved))
    assert result.exit_code == 0, result.output
    assert project.read("out/greeting.txt") == "hello ada\n"
    assert project.snapshot()["status"] == "completed"


def test_a_changed_playbook_does_not_run_and_shows_the_difference(project, tmp_path):
    approved = approve(project, tmp_path)
    project.playbook("writes", WRITES.replace("{{greeting}}", "goodbye"))
    result = project.run("writes", "--expect-plan", str(approved))
    assert result.exit_code == 1
    assert "~ file-write#1 (file-write) changed:\n" in result.stderr
    assert '    config.content, line 1: "hello ada" -> "goodbye ada"\n' in result.stderr
    assert "Plan: 0 to add, 1 to change, 0 to remove." in result.stderr
    assert "nothing was run" in result.stderr
    assert not project.exists("out/greeting.txt")
    assert project.snapshot_files() == []


def test_a_what_if_with_an_approved_plan_shows_the_plan_then_how_it_differs(project, tmp_path):
    approved = approve(project, tmp_path)
    same = project.run("writes", "--what-if", "--expect-plan", str(approved))
    assert same.exit_code == 0, same.output
    project.playbook("writes", WRITES.replace("{{greeting}}", "goodbye"))
    result = project.run("writes", "--what-if", "--expect-plan", str(approved))
    assert result.exit_code == 1
    assert "+ out/greeting.txt" in result.stdout  # the plan, as without --expect-plan
    assert '    config.content, line 1: "hello ada" -> "goodbye ada"\n' in result.stderr
    assert f"the plan differs from the approved plan {approved}" in result.stderr
    assert "nothing was run" not in result.stderr and not project.exists("out/greeting.txt")


def test_other_inputs_make_another_plan_and_nothing_runs(project, tmp_path):
    approved = approve(project, tmp_path, who="ada")
    result = project.run("writes", "--expect-plan", str(approved), who="bob")
    assert result.exit_code == 1
    assert '~ inputs.who: "ada" -> "bob"\n' in result.stderr
    assert not project.exists("out/greeting.txt")
    assert project.snapshot_files() == []


# =====================================================================================
# hash and summary
# =====================================================================================


def test_the_plan_hash_is_the_hash_of_the_plan_without_it(project):
    everything(project)
    plan = plan_of(project, "everything")
    body = {k: v for k, v in plan.items() if k != "planHash"}
    assert plan["planHash"] == with_hash(body)["planHash"]
    assert plan["planHash"] == hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def test_the_summary_counts_every_entry_nested_ones_too(project):
    everything(project)
    plan = plan_of(project, "everything")
    counted = Counter(step["change"] for step in walk(plan["steps"]))
    assert set(counted) <= CHANGE_TYPES
    assert plan["summary"] == {change: counted.get(change, 0) for change in CHANGE_TYPES}
    # The plan has nested entries and every kind it should, so the count means something.
    assert any(step["steps"] for step in plan["steps"])
    for change in ("create", "modify", "delete", "no-op", "read", "unknown", "would-pause"):
        assert plan["summary"][change] > 0, change


def test_an_approved_plan_that_is_no_plan_is_named(project, tmp_path):
    approve(project, tmp_path)
    stale = tmp_path / "old.plan.json"
    stale.write_text(json.dumps({"format": "catalyst-plan", "version": 1}), encoding="utf-8")
    other = tmp_path / "other.plan.json"
    other.write_text("[1, 2]", encoding="utf-8")
    result = project.run("writes", "--expect-plan", str(stale))
    assert result.exit_code == 1 and "old.plan.json is in plan format 1" in result.stderr
    result = project.run("writes", "--expect-plan", str(other))
    assert result.exit_code == 1 and "other.plan.json is not a what-if plan" in result.stderr
    assert not project.exists("out/greeting.txt")


def test_plan_files_that_cannot_be_written_or_read_are_errors_not_tracebacks(project, tmp_path):
    project.playbook(
        "tiny",
        """
        name: tiny
        description: one step
        owner: Engineer
        steps:
          - log-info: hi
    """,
    )
    unwritable = project.cli(
        "run", "tiny", "--what-if", "--what-if-report", str(tmp_path / "missing-dir" / "plan.json")
    )
    assert unwritable.exit_code == 2 and "there is no folder" in unwritable.output
    binary = tmp_path / "plan.bin"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    unreadable = project.cli("run", "tiny", "--expect-plan", str(binary))
    assert unreadable.exit_code == 1 and "cannot read the approved plan" in unreadable.output


def test_a_what_if_the_check_refuses_never_imports_the_run_time(tmp_path):
    """The preflight check runs before the session is imported (runtime/lifecycle/preflight.py):
    a refused what-if prints the check's errors and costs no more than the check."""
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "bad.yaml").write_text("name: bad\nsteps:\n  - no-such-action: x\n", encoding="utf-8")
    probe = (
        "import sys\nfrom catalyst_dsl.cli.main import main\nsys.argv = ['catalyst', 'run', 'bad.yaml', '--what-if']\n"
        "try:\n    main()\nexcept SystemExit as end:\n    print('exit', end.code)\n"
        "print('session' if 'catalyst_dsl.runtime.lifecycle.session' in sys.modules else 'no session')\n"
    )
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.stdout.splitlines() == ["exit 1", "no session"]
    assert "unknown action 'no-such-action'" in done.stderr


#: Modules a what-if of built-in actions has no use for: each costs milliseconds to import,
#: and a what-if is meant to be quick (issue 16). attrs: the run-time's classes are records;
#: the others are imported where a program is started, a coverage report or an HTTP
#: response read, an AI command streamed, a fraction printed, a lock taken, a user
#: recorded, a step names an action that is not built in (the plugin scan), a secret
#: is marked, YAML front matter written or an AI adapter chosen.
#: Of the run-time's own: the snapshot store, its codec and integrity checks and the
#: snapshot's records (a what-if saves no snapshot, and asks the store about a lock's
#: holder only when one is in the way), the readers and writers of records as JSON (the
#: cache reads its entries its own way), the locks (none was ever taken here), the modules
#: of actions the playbook does not use (git, GitHub, HTTP with the network, test); and
#: what approving (the approvers, shlex), killing a process group (signal), a diff
#: (difflib, heapq), shell completion or a random name (secrets, base64) need; the
#: `script` action (only a script step needs it) and the program runner with its list of
#: live programs (a what-if starts none); shell completion's own module (a TAB), the
#: durable writes of files (a what-if writes none), the expression parser (the cached
#: check's templates come parsed), the machine's helpers (a what-if records no user);
#: the reference checks (their call sites are read from the cache), the temporary folder's
#: module (asked only where a program is confined) and shutil (for `which`, asked only
#: where a step needs a program), with the compression modules they load.
NOT_IMPORTED_BY_A_WHAT_IF = (
    "attr",
    "attrs",
    "cattrs",
    "subprocess",
    "ctypes",
    "xml",
    "http",
    "queue",
    "decimal",
    "socket",
    "getpass",
    "importlib.metadata",
    "yaml",
    "catalyst_dsl.runtime.adapters.attempts",
    "catalyst_dsl.runtime.adapters.builtin",
    "catalyst_dsl.runtime.adapters.command",
    "catalyst_dsl.runtime.adapters.openai_compatible",
    "catalyst_dsl.runtime.state.store",
    "catalyst_dsl.runtime.state.snapshot_codec",
    "catalyst_dsl._internal.serialization",
    "catalyst_dsl.runtime.state.integrity",
    "catalyst_dsl.runtime.state.snapshot",
    "glob",
    "catalyst_dsl.runtime.state.locks",
    "catalyst_dsl.runtime.actions.git",
    "catalyst_dsl.runtime.actions.github",
    "catalyst_dsl.runtime.actions.http",
    "catalyst_dsl.runtime.effects.network",
    "catalyst_dsl.runtime.actions.testing",
    "catalyst_dsl.runtime.approvals.approvers",
    "shlex",
    "signal",
    "difflib",
    "heapq",
    "click.shell_completion",
    "secrets",
    "base64",
    "catalyst_dsl.runtime.actions.script",
    "catalyst_dsl.runtime.effects.process",
    "catalyst_dsl.cli.completion",
    "catalyst_dsl.runtime.state.durable",
    "catalyst_dsl.syntax.expr.parser",
    "catalyst_dsl.syntax.expr.lalr",
    "catalyst_dsl.runtime.machine",
    "catalyst_dsl.checks.references.checker",
    "tempfile",
    "random",
    "shutil",
    "bz2",
    "lzma",
)


def test_a_what_if_imports_only_what_it_uses(tmp_path):
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "tiny.yaml").write_text(
        dedent("""\
        name: tiny
        description: d
        owner: Engineer
        inputs:
          - string: who
            default: world
        steps:
          - log-info: "hello ${{ inputs.who }}"
          - bash: echo hi
            writes: [out.txt]
    """),
        encoding="utf-8",
    )
    probe = (
        "import sys\nfrom catalyst_dsl.cli.main import main\nsys.argv = ['catalyst', 'run', 'tiny.yaml', '--what-if']\n"
        "try:\n    main()\nexcept SystemExit as end:\n    print('exit', end.code)\n"
        "print('session' if 'catalyst_dsl.runtime.lifecycle.session' in sys.modules else 'no session')\n"
        f"unwanted = {NOT_IMPORTED_BY_A_WHAT_IF!r}\n"
        "print('imported', sorted({m for m in sys.modules if m in unwanted or m.split('.')[0] in unwanted}))\n"
    )
    root = Path(__file__).resolve().parents[3]
    # Without `site` (-S), on this process's path: a start-up hook of the machine's Python
    # (a `.pth` file) may import any module, and would hide what catalyst imports.
    path = os.pathsep.join([str(root), *(p for p in sys.path if p and os.path.isdir(p))])
    env = {**os.environ, "PYTHONPATH": path, "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    # A check first, as before a run: the what-if's own check is then replayed from the
    # cache, and compiles (and imports PyYAML for) nothing.
    checked = subprocess.run(
        [sys.executable, "-S", "-m", "catalyst_dsl", "check", "tiny.yaml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    # The run-time ran (the session was imported) without them.
    assert done.stdout.splitlines()[-3:] == ["exit 0", "session", "imported []"], done.stdout + done.stderr


_HELLO = """
    name: hello
    description: says hello
    owner: me
    steps:
      - display: hello
"""


@pytest.mark.parametrize("breakage", ["state parent is a file", "locks is a symlink loop"])
def test_a_what_if_still_reports_a_state_directory_it_cannot_use(project, breakage):
    """A what-if skips the lock check only where no locks folder exists; a state
    directory that cannot hold one (a file in its way, a link loop) is reported as a run
    reports it, not planned over."""
    project.playbook("hello", _HELLO)
    if breakage == "state parent is a file":
        (project.root / ".xe").write_text("not a directory", encoding="utf-8")
    else:
        project.state_dir.mkdir(parents=True)
        os.symlink("locks", project.state_dir / "locks")  # a link to itself
    result = project.run("hello", "--what-if")
    if breakage == "state parent is a file":
        assert result.exit_code == 3, result.output
        assert "the run state cannot be read or written" in result.output
    else:  # a link in the state directory is refused before anything is read
        assert result.exit_code == 1, result.output
        assert ".xe/runs/locks is a link that may lead out of the project" in result.output


TOP_RETHROWS = """
name: top-rethrows
description: a failure the plan foresees, taken by the playbook's catch and raised again
owner: Engineer
allowedWritePaths: ["out/**"]
steps:
  - name: boom
    throw:
      code: First
      message: first
catch:
  - code: First
    steps:
      - name: alert
        file-write: out/alert.md
        content: "{{ $error.message }}"
      - name: again
        throw:
          code: Second
          message: "again: {{ $error.message }}"
"""


def test_a_foreseen_failure_runs_the_playbooks_catch_as_a_run_would(project):
    # As for a try's clause: not conditional, with the error, and a failure in the clause
    # is not taken by the playbook's catch again: the run fails there.
    project.playbook("top-rethrows", TOP_RETHROWS)
    steps = by_path(plan_of(project, "top-rethrows"))
    alert, again = steps["catch/0/0"], steps["catch/0/1"]
    assert (alert["conditional"], alert["change"]) == (False, "create")
    assert alert["effects"][0]["diff"].endswith("+first\n\\ No newline at end of file\n")
    assert again["fails"] == {"code": "Second", "message": "again: first"}
    shown = project.run("top-rethrows", "--what-if")
    assert shown.exit_code == 2 and "A run would fail at again: Second." in shown.output
    assert not (project.root / "out").exists()
    ran = project.run("top-rethrows", "--mode", "autonomous")
    assert ran.exit_code != 0 and "Second" in ran.output


def test_a_try_without_catch_leaves_the_playbooks_catch_to_take_a_later_failure(project):
    # A try with only a finally takes nothing: the throw after it is the playbook's catch's.
    project.playbook(
        "tidy-then-fail",
        TOP_RETHROWS.replace("name: top-rethrows", "name: tidy-then-fail").replace(
            "steps:\n  - name: boom",
            "steps:\n  - try:\n      - display: work\n    finally:\n      - display: tidy\n  - name: boom",
            1,
        ),
    )
    steps = by_path(plan_of(project, "tidy-then-fail"))
    assert "fails" not in steps["steps/1"]
    assert (steps["catch/0/0"]["conditional"], steps["catch/0/0"]["change"]) == (False, "create")
    assert steps["catch/0/1"]["fails"] == {"code": "Second", "message": "again: first"}


def test_a_callers_own_catch_takes_a_failure_its_callee_does_not(project):
    project.playbook(
        "boom",
        "name: boom\ndescription: fails\nowner: Engineer\nsteps:\n  - throw: {code: Boom, message: boom}\n",
    )
    project.playbook(
        "caller",
        "name: caller\ndescription: calls boom\nowner: Engineer\nsteps:\n  - playbook: boom\n"
        "catch:\n  - code: default\n    steps:\n      - name: handled\n        display: handled\n",
    )
    plan = plan_of(project, "caller")
    assert not any("fails" in step for step in walk(plan["steps"]))
    assert by_path(plan)["catch/0/0"]["conditional"] is False  # the failure is certain, and so is its handling
    assert project.run("caller", "--what-if").exit_code == 0
