"""The save that names a step in flight: it must survive a power cut only where the step's
`ensures:` may prove it done on resume; before any other step a power cut may take the
snapshot back to the save before, which runs that step again all the same, so that save
has no ledger line of its own (the snapshot is then one save ahead of the ledger, which
is accepted) and its rename is not synced."""

from __future__ import annotations

import json

from catalyst_dsl.runtime.state.store import StateStore

# Run by each step: the step its run's snapshot names in flight, and how many saves the
# snapshot on disk is ahead of the ledger.
LOOK = """
import glob, json
[path] = glob.glob(".xe/runs/run-*.json")
snapshot = json.load(open(path))
lines = [line.split() for line in open(".xe/runs/snapshot-ledger") if line.startswith(snapshot["runId"] + " ")]
print(snapshot["inFlight"], snapshot["seal"]["seq"] - int(lines[-1][1]))
"""


def test_only_a_step_its_ensures_may_recover_is_named_in_flight_by_a_save_a_power_cut_keeps(project):
    project.write("look.py", LOOK)
    project.playbook(
        "flight",
        """
        name: flight
        description: A program step without ensures, then one with.
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: plain
            bash: python3 look.py
            writes: []
          - name: checked
            bash: mkdir -p out && touch out/done && python3 look.py
            writes: [out/**]
            ensures:
              - file-exists: out/done
    """,
    )
    result = project.run("flight", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "steps/0 1" in result.output  # the snapshot one save ahead of the ledger
    assert "steps/1 0" in result.output  # a ledger line, after the directory was synced


def test_a_run_stopped_after_such_a_save_resumes_from_it(project):
    # As a resume after `kill -9` finds it: the snapshot names the step in flight, one save
    # ahead of the ledger; it is accepted, and its next save is numbered past it.
    project.playbook(
        "two",
        """
        name: two
        description: Two programs.
        owner: Engineer
        steps:
          - bash: "echo one"
            writes: []
          - bash: "echo two"
            writes: []
    """,
    )
    assert project.run("two", "--mode", "autonomous").exit_code == 0
    [archived] = project.archived_snapshots()
    run_id = project.run_id()
    store = StateStore(project.state_dir)
    state = store.load(run_id)
    state.status, state.ended_at, state.in_flight = "running", None, "steps/1"
    saves = json.loads(archived.read_text())["seal"]["seq"]
    live = project.state_dir / f"run-{run_id}.json"
    archived.rename(live)
    store.save(state, survives_power_cut=False)
    assert json.loads(live.read_text())["seal"]["seq"] == saves + 1
    assert StateStore(project.state_dir).load(run_id).in_flight == "steps/1"
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(project.snapshot_files()[-1].read_text())["seal"]["seq"] > saves + 1
