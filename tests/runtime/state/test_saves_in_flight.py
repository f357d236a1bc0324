"""The save that names a step in flight: it must survive a power cut only where the step's
`ensures:` may prove it done on resume. Before any other step a power cut may take the run
back to the save before, which runs that step again all the same, so that save's journal
record is appended without its own fdatasync and the run's anchor does not move to it (an
anchor behind the journal is accepted; one ahead of what a power cut leaves would not be)."""

from __future__ import annotations

from catalyst_dsl.runtime.state.store import StateStore
from catalyst_dsl.runtime.state.journal import files

FLIGHT = """
name: flight
description: A program step without ensures, then one with.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - name: plain
    bash: "true"
    writes: []
  - name: checked
    bash: mkdir -p out && touch out/done
    writes: [out/**]
    ensures:
      - file-exists: out/done
"""


def test_only_a_step_its_ensures_may_recover_is_named_in_flight_by_a_save_a_power_cut_keeps(project, monkeypatch):
    saves: list[tuple[str | None, bool]] = []
    real_save = StateStore.save

    def save(self, state, *, survives_power_cut=True):
        saves.append((state.in_flight, survives_power_cut))
        real_save(self, state, survives_power_cut=survives_power_cut)

    monkeypatch.setattr(StateStore, "save", save)
    project.playbook("flight", FLIGHT)
    result = project.run("flight", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    named = [lasting for in_flight, lasting in saves if in_flight is not None]
    # steps/0 has no ensures: its in-flight save need not last; steps/1's must.
    assert [in_flight for in_flight, _ in saves if in_flight is not None] == ["steps/0", "steps/1"]
    assert named == [False, True]


def test_such_a_save_is_appended_unsynced_and_leaves_the_anchor_behind(project, monkeypatch):
    project.playbook("flight", FLIGHT)
    syncs: list[bool] = []
    real_append = files.append

    def append(fd, data, sync=True):
        syncs.append(sync)
        real_append(fd, data, sync=sync)

    monkeypatch.setattr(files, "append", append)
    assert project.run("flight", "--mode", "autonomous").exit_code == 0
    [archived] = project.archived_snapshots()
    run_id = project.run_id()
    store = StateStore(project.state_dir)
    live = project.state_dir / f"run-{run_id}.json"
    archived.rename(live)
    state = store.load(run_id)
    state.status, state.ended_at = "running", None
    store.save(state)  # a status change: a whole snapshot, anchored
    anchored = store.guard.anchors.read(run_id).seq
    syncs.clear()
    state.in_flight = "steps/1"
    store.save(state, survives_power_cut=False)
    assert syncs == [False]
    assert store.guard.anchors.read(run_id).seq == anchored  # not moved to an unsynced save
    again, problems = StateStore(project.state_dir).inspect(run_id)
    assert not problems and again.in_flight == "steps/1"
    state.in_flight = None
    store.save(state)
    assert syncs == [False, True]
    assert store.guard.anchors.read(run_id).seq == anchored + 2
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
