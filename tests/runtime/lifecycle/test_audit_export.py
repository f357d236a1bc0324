"""`catalyst runs export --full`: the audit view with each step's result and the diff of
each commit the run made, masked like the run's output."""

from __future__ import annotations

import json

from tests.runtime.lifecycle.test_branch_protection import git, repo  # noqa: F401 (the fixture)

SHIP = """
name: ship
description: writes a spec with a token in it on its own branch, and commits it
owner: Engineer
allowedWritePaths: [out/**]
inputs:
  - string: token
    secret: true
    required: true
steps:
  - git-branch: feature/spec
  - name: write
    file-write: out/spec.md
    content: "the spec, key {{token}}\\n"
  - name: commit
    git-commit: add the spec
    files: [out/**]
    push: false
"""


def exported(project, *args: str) -> dict:
    [run_id] = project.listed()
    result = project.cli("runs", "export", run_id, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_full_export_has_results_and_each_commits_diff_masked(repo, monkeypatch):  # noqa: F811
    repo.playbook("ship", SHIP)
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", "k3y-0f-the-run")
    assert repo.run("ship").exit_code == 0
    full = exported(repo, "--full")
    results = {step["name"]: step["result"] for step in full["steps"] if step["name"]}
    assert results["write"] == {"bytesWritten": len("the spec, key k3y-0f-the-run\n"), "path": "out/spec.md"}
    [commit] = full["commits"]
    assert commit["sha"] == results["commit"]["sha"] == git(repo.root, "rev-parse", "feature/spec").strip()
    assert commit["files"] == ["out/spec.md"] and commit["name"] == "commit"
    assert "+++ b/out/spec.md" in commit["diff"] and "+the spec, key ***" in commit["diff"]
    assert "k3y-0f-the-run" not in json.dumps(full)


def test_the_plain_export_keeps_no_results(repo, monkeypatch):  # noqa: F811
    repo.playbook("ship", SHIP)
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", "k3y-0f-the-run")
    assert repo.run("ship").exit_code == 0
    plain = exported(repo)
    assert "commits" not in plain and all("result" not in step for step in plain["steps"])


def test_a_commit_this_checkout_lacks_is_listed_with_why(repo, monkeypatch):  # noqa: F811
    repo.playbook("ship", SHIP)
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", "k3y-0f-the-run")
    assert repo.run("ship").exit_code == 0
    git(repo.root, "switch", "-q", "main")
    git(repo.root, "branch", "-q", "-D", "feature/spec")
    git(repo.root, "reflog", "expire", "--expire=now", "--all")
    git(repo.root, "gc", "-q", "--prune=now")
    [commit] = exported(repo, "--full")["commits"]
    assert commit["diff"] is None and "does not have the commit" in commit["missing"]
