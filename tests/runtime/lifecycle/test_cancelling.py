"""Cancelling a run (catalyst_dsl/runtime/lifecycle/cancelling.py), one whose snapshot
does not verify included: it is ended, running nothing, and never goes on."""

from __future__ import annotations

import json

from tests.helpers.run_helpers import approval_by_hand

HOLDER = """
    name: holder
    description: pauses for an architect, holding out/
    owner: Engineer
    reviewers:
      required: [Architect]
    allowedWritePaths: [out/**]
    steps:
      - name: review
        checkpoint: "Look at it"
      - name: after
        file-write: out/done.txt
        content: done
"""

AFTER = """
    name: after
    description: writes where holder writes
    owner: Engineer
    allowedWritePaths: [out/**]
    steps:
      - file-write: out/after.txt
        content: after
"""


def forged(project) -> str:
    """A paused run whose snapshot was approved by hand: it no longer verifies."""
    project.playbook("holder", HOLDER)
    assert project.run("holder").exit_code == 4
    run_id = project.run_id()
    snapshot = project.state_dir / f"run-{run_id}.json"
    data = json.loads(snapshot.read_text(encoding="utf-8"))
    data["approvals"].append(approval_by_hand("steps/0", "mallory", data["updatedAt"]))
    snapshot.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return run_id


def test_a_run_that_does_not_verify_can_be_cancelled_and_says_so(project):
    run_id = forged(project)
    refused = project.cli("resume", run_id)
    assert refused.exit_code == 3 and f"`catalyst cancel {run_id} --reason …` ends it" in refused.output

    cancelled = project.cli("cancel", run_id, "--reason", "edited by hand", "--by", "alice")
    assert cancelled.exit_code == 0, cancelled.output
    assert f"cancelled run {run_id}, whose snapshot did not verify (an approval on steps/0 was added" in (
        cancelled.output
    )
    assert not project.exists("out/done.txt"), "a cancel ran a step"
    snapshot = project.snapshot(run_id)
    assert snapshot["status"] == "cancelled" and snapshot["trustedEdits"] == []
    assert snapshot["cancel"]["by"] == "alice"
    assert snapshot["cancel"]["unverified"] == ["an approval on steps/0 was added by hand"]
    shown = project.cli("runs", "show", run_id)
    assert shown.exit_code == 0 and "cancelled unverified: an approval on steps/0 was added by hand" in shown.output
    exported = json.loads(project.cli("runs", "export", run_id).output)
    assert exported["cancel"]["unverified"] == ["an approval on steps/0 was added by hand"]
    # Its locks went with it: a run writing where it wrote goes on.
    project.playbook("after", AFTER)
    assert project.run("after").exit_code == 0


def test_a_run_cancelled_unverified_is_never_approved_nor_resumed(project):
    run_id = forged(project)
    assert project.cli("cancel", run_id, "--reason", "edited").exit_code == 0
    for command in (
        ("approve", run_id, "--as", "Architect"),
        ("resume", run_id),
        ("resume", run_id, "--trust-edited-state"),
    ):
        result = project.cli(*command)
        assert result.exit_code != 0 and "cancelled" in result.output, (command, result.output)
    assert not project.exists("out/done.txt"), "the cancelled run went on"


def test_a_verified_cancel_records_nothing_unverified(project):
    project.playbook("holder", HOLDER)
    assert project.run("holder").exit_code == 4
    run_id = project.run_id()
    assert project.cli("cancel", run_id, "--reason", "not now").output.strip() == f"cancelled run {run_id}"
    assert "unverified" not in project.snapshot(run_id)["cancel"]
