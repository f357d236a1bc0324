"""Driving a run (catalyst_dsl/runtime/lifecycle/driving.py): its locks taken before it begins."""

from __future__ import annotations

import json

HOLDER = """
    name: holder
    description: writes out/ and pauses there, keeping its lock
    owner: Engineer
    allowedWritePaths: [out/**]
    steps:
      - file-write: out/spec.md
        content: first
      - checkpoint: Look at it
"""

OVERWRITE = """
    name: overwrite
    description: writes where holder writes
    owner: Engineer
    allowedWritePaths: [out/**]
    steps:
      - file-write: out/spec.md
        content: second
"""


def test_a_run_refused_by_a_lock_leaves_no_run_behind(project):
    project.playbook("holder", HOLDER)
    project.playbook("overwrite", OVERWRITE)
    assert project.run("holder").exit_code == 4
    holder = project.run_id()

    refused = project.run("overwrite")
    assert refused.exit_code == 2, refused.output
    assert f"another run holds path:out/spec.md: run {holder}; nothing was run" in refused.output
    assert "running overwrite" not in refused.output  # a run that never began is not announced
    assert project.read("out/spec.md") == "first"

    listed = json.loads(project.cli("runs", "list", "--json").output)["runs"]
    assert [(r["runId"], r["status"]) for r in listed] == [(holder, "paused")]
    assert [p.name for p in project.snapshot_files()] == [f"run-{holder}.json"]
    assert not [p for p in project.state_dir.iterdir() if "overwrite" in p.name]
