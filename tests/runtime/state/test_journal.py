"""The run journal: one record appended per save, the snapshot written whole at pauses and
ends, and every way of tampering with it or cutting it refused with the record named;
crashes at any instant leave a run that loads; saves from parallel branches never make a
run look edited."""

from __future__ import annotations

import json
import threading

import pytest

from catalyst_dsl.runtime.errors import EXIT_STATE, RunAbort
from catalyst_dsl.runtime.state.journal import writer as writer_module
from catalyst_dsl.runtime.state.snapshot_codec import converter
from catalyst_dsl.runtime.state.store import Approval, Pause, StateStore, StepRecord
from tests.runtime.state.test_state import STARTED, make_state


def step(path: str) -> StepRecord:
    return StepRecord(
        path=path, name=None, action="var", status="completed", attempts=1, started_at=STARTED, duration=0.001
    )


def running(tmp_path, saves: int = 3) -> tuple[StateStore, object]:
    """A run saved `saves` times after its start, one new journal entry each time."""
    store = StateStore(tmp_path / "runs")
    state = store.create(make_state(steps=1))
    for i in range(saves):
        state.steps.append(step(f"steps/{i + 1}"))
        store.save(state)
    return store, state


def loaded(store: StateStore, run_id: str):
    """The run as a new process reads it (a resume)."""
    return StateStore(store.state_dir).load(run_id)


def refusal(store: StateStore, run_id: str) -> str:
    with pytest.raises(RunAbort) as refused:
        loaded(store, run_id)
    assert refused.value.exit_code == EXIT_STATE
    return " ".join((refused.value.message, *refused.value.details))


def lines(store: StateStore, run_id: str) -> list[bytes]:
    return store.journal_of(run_id).read_bytes().splitlines(keepends=True)


# -- a save is one record ------------------------------------------------------------------------


def test_a_save_appends_one_record_and_leaves_the_snapshot_alone(tmp_path):
    store = StateStore(tmp_path / "runs")
    state = store.create(make_state(steps=1))
    snapshot = store.path_of(state.run_id).read_bytes()
    for i in range(5):
        state.steps.append(step(f"steps/{i + 1}"))
        store.save(state)
    assert store.path_of(state.run_id).read_bytes() == snapshot
    assert len(lines(store, state.run_id)) == 5
    assert loaded(store, state.run_id) == state


def test_a_pause_and_an_end_write_the_whole_snapshot_and_start_the_journal_afresh(tmp_path):
    store, state = running(tmp_path)
    state.status, state.pause = "paused", Pause(path="steps/9", message="ok?", roles=[], options=[], since=STARTED)
    store.save(state)
    assert not store.journal_of(state.run_id).exists()
    assert json.loads(store.path_of(state.run_id).read_text())["status"] == "paused"
    assert loaded(store, state.run_id) == state
    state.status, state.pause, state.ended_at = "completed", None, STARTED
    archived = store.archive(state)
    assert not store.journal_of(state.run_id).exists() and not store.path_of(state.run_id).exists()
    assert [p.name for p in archived.parent.iterdir()] == [archived.name]
    assert loaded(store, state.run_id) == state


def test_the_journal_is_compacted_once_past_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_module, "COMPACT_AT", 2048)
    store, state = running(tmp_path, saves=60)
    journal = store.journal_of(state.run_id)
    assert journal.stat().st_size <= max(2048, store.path_of(state.run_id).stat().st_size) + 1024
    assert len(json.loads(store.path_of(state.run_id).read_text())["steps"]) > 1
    assert loaded(store, state.run_id) == state


def test_every_kind_of_change_comes_back_from_the_journal(tmp_path):
    store, state = running(tmp_path, saves=2)
    state.in_flight = "steps/7"
    state.permissions.setdefault("calls", {})["child"] = {"inherited": True}  # changed in place
    state.approvals.append(
        Approval(path="steps/2", role="lead", by="ana", at=STARTED, comment=None, via="cli", released=True)
    )
    store.save(state)
    # A step run again in the same run: its entry is replaced, and moves to the end.
    state.steps[:] = [r for r in state.steps if r.path != "steps/1"]
    state.steps.append(step("steps/1"))
    state.approvals[0].delivered = True
    store.changed(state, state.approvals[0])
    store.save(state)
    again = loaded(store, state.run_id)
    assert again == state
    assert [r.path for r in again.steps][-1] == "steps/1" and again.approvals[0].delivered


# -- attacks on the journal ------------------------------------------------------------------------


def test_a_record_cut_short_by_a_crash_is_ignored_and_the_run_goes_on(tmp_path):
    store, state = running(tmp_path)
    journal = store.journal_of(state.run_id)
    whole = journal.read_bytes()
    # A crash in the middle of an append: part of a record, never synced, never anchored.
    journal.write_bytes(whole + b'{"seq": 5, "prev": "0123')
    assert loaded(store, state.run_id) == state
    resumer = StateStore(store.state_dir)  # a resume, in a process of its own
    mine = resumer.load(state.run_id)
    mine.steps.append(step("steps/9"))
    resumer.save(mine)  # the torn record is cut off before the next one is appended
    assert journal.read_bytes().startswith(whole) and journal.read_bytes().count(b"\n") == whole.count(b"\n") + 1
    assert [r.path for r in loaded(store, state.run_id).steps][-1] == "steps/9"


def test_a_journal_cut_at_a_record_boundary_is_refused(tmp_path):
    store, state = running(tmp_path)
    journal = store.journal_of(state.run_id)
    journal.write_bytes(b"".join(lines(store, state.run_id)[:-1]))
    assert "cut short: it is save 3 of the run, and save 4 was made since" in refusal(store, state.run_id)


def test_a_journal_cut_in_the_middle_of_a_saved_record_is_refused(tmp_path):
    store, state = running(tmp_path)
    journal = store.journal_of(state.run_id)
    whole = journal.read_bytes()
    journal.write_bytes(whole[: len(whole) - 40])
    assert "save 4 was made since" in refusal(store, state.run_id)


def test_swapped_records_are_refused_naming_them(tmp_path):
    store, state = running(tmp_path)
    first, second, third = lines(store, state.run_id)
    store.journal_of(state.run_id).write_bytes(first + third + second)
    said = refusal(store, state.run_id)
    assert "save 4 in its journal" in said and "(line 2) does not follow save 2" in said, said


def test_an_edited_record_is_refused_naming_it_and_trusting_it_seals_it_anew(tmp_path):
    store, state = running(tmp_path)
    first, second, third = lines(store, state.run_id)
    store.journal_of(state.run_id).write_bytes(first + second.replace(b'"var"', b'"bash"') + third)
    said = refusal(store, state.run_id)
    assert "save 3 in its journal" in said and "(line 2) was edited" in said and "steps/2" in said, said
    trusting = StateStore(store.state_dir)
    accepted, changes = trusting.load_trusting(state.run_id)
    assert accepted.steps[2].action == "bash" and accepted.trusted_edits[-1].changes == changes
    trusting.save(accepted)
    assert not trusting.journal_of(state.run_id).exists()  # sealed anew, whole
    assert loaded(store, state.run_id).steps[2].action == "bash"


def test_a_record_from_another_run_sealed_with_the_same_key_is_refused(tmp_path):
    store, state = running(tmp_path)
    other = store.create(make_state(name="other", steps=1))
    for i in range(3):
        other.steps.append(step(f"steps/{i + 1}"))
        store.save(other)
    mine, theirs = lines(store, state.run_id), lines(store, other.run_id)
    store.journal_of(state.run_id).write_bytes(mine[0] + theirs[1] + mine[2])
    said = refusal(store, state.run_id)
    assert "save 3 in its journal" in said and "(line 2)" in said, said


def test_a_record_that_is_not_one_in_the_middle_is_damage_naming_its_line(tmp_path):
    store, state = running(tmp_path)
    first, second, third = lines(store, state.run_id)
    store.journal_of(state.run_id).write_bytes(first + b"not a record\n" + third)
    with pytest.raises(RunAbort) as damaged:
        loaded(store, state.run_id)
    assert "has a damaged journal: line 2 of" in damaged.value.message and "is not JSON" in damaged.value.message


def test_an_older_snapshot_and_journal_put_back_together_are_refused(tmp_path):
    store, state = running(tmp_path)
    snapshot, journal = store.path_of(state.run_id), store.journal_of(state.run_id)
    older = snapshot.read_bytes(), journal.read_bytes()
    for i in range(2):
        state.steps.append(step(f"steps/{i + 10}"))
        store.save(state)
    state.status, state.pause = "paused", Pause(path="steps/9", message="ok?", roles=[], options=[], since=STARTED)
    store.save(state)  # a full snapshot, the journal gone
    snapshot.write_bytes(older[0])
    journal.write_bytes(older[1])
    # The chain is whole: only the anchor, outside the state directory, knows better.
    assert "older copy put back, or cut short: it is save 4 of the run, and save 7 was made since" in refusal(
        store, state.run_id
    )


def test_a_snapshot_put_back_under_a_newer_journal_is_refused(tmp_path):
    store, state = running(tmp_path, saves=1)
    snapshot = store.path_of(state.run_id)
    first = snapshot.read_bytes()
    state.status = "paused"
    state.pause = Pause(path="steps/9", message="ok?", roles=[], options=[], since=STARTED)
    store.save(state)
    state.approvals.append(
        Approval(path="steps/9", role=None, by="a", at=STARTED, comment=None, via="cli", released=True)
    )
    state.status, state.pause = "running", None
    store.save(state)
    state.steps.append(step("steps/5"))
    store.save(state)  # a record after the resumed run's snapshot
    snapshot.write_bytes(first)
    assert "older copy put back" in refusal(store, state.run_id)


# -- crashes in a compaction ---------------------------------------------------------------------


def test_a_crash_between_the_new_snapshot_and_the_journal_removed_leaves_a_run_that_loads(tmp_path, monkeypatch):
    store, state = running(tmp_path)
    journal = store.journal_of(state.run_id)
    stale = journal.read_bytes()
    state.status, state.pause = "paused", Pause(path="steps/9", message="ok?", roles=[], options=[], since=STARTED)
    store.save(state)
    journal.write_bytes(stale)  # the journal, as it was had the crash come before its removal
    assert loaded(store, state.run_id) == state


# -- another process, parallel branches ---------------------------------------------------------------


def test_a_save_after_another_process_saved_the_run_replaces_theirs_whole(tmp_path):
    store, state = running(tmp_path)
    other = StateStore(store.state_dir)
    theirs = other.load(state.run_id)
    theirs.steps.append(step("steps/20"))
    other.save(theirs)  # `approve` from another terminal, say
    state.steps.append(step("steps/21"))
    store.save(state)  # the run's own save comes last and wins, as a whole
    again = loaded(store, state.run_id)
    assert again == state and "steps/20" not in [r.path for r in again.steps]


def test_saves_from_parallel_branches_never_make_the_run_look_edited(tmp_path):
    # Each branch saves from a thread of its own. Read at any instant by another process, as
    # a resume after a kill at that instant would, the run must load: never an older copy,
    # never an edit.
    store = StateStore(tmp_path / "runs")
    state = store.create(make_state(steps=0))
    lock = threading.Lock()
    done = threading.Event()
    seen: list[str] = []

    def branch(name: str) -> None:
        for i in range(40):
            state.in_flight = f"steps/0/parallel/{name}/{i}"
            store.save(state)
            with lock:
                state.steps.append(step(f"steps/0/parallel/{name}/{i}"))
            store.save(state)

    def resume_now() -> None:
        while not done.is_set():
            try:
                StateStore(store.state_dir).load(state.run_id)
            except RunAbort as refused:
                seen.append(refused.message)

    watcher = threading.Thread(target=resume_now)
    watcher.start()
    branches = [threading.Thread(target=branch, args=(name,)) for name in "abcd"]
    for each in branches:
        each.start()
    for each in branches:
        each.join()
    done.set()
    watcher.join()
    assert not seen, seen[:3]
    assert sorted(r.path for r in loaded(store, state.run_id).steps) == sorted(r.path for r in state.steps)
    assert len(state.steps) == 160


# -- what runs really do --------------------------------------------------------------------------


@pytest.fixture
def fold_checked(monkeypatch):
    """Every save of a run, read back by another store, is the state the run holds: a change
    made in place that the journal would miss (journal/delta.py) shows here."""
    real = StateStore.save
    checked = []

    def save(self, state, **options):
        real(self, state, **options)
        again, problems = StateStore(self.state_dir).inspect(str(self.path_of(state.run_id)))
        assert not problems, problems
        assert converter().unstructure(again) == converter().unstructure(state), f"after save {len(checked)}"
        checked.append(state.run_id)

    monkeypatch.setattr(StateStore, "save", save)
    return checked


def test_request_changes_recorded_in_the_journal(project, fold_checked):
    project.playbook(
        "p",
        """
        name: p
        description: a step held back by a review, its policy going on past it
        owner: Engineer
        reviewers:
          required: [Architect]
        steps:
          - name: build
            bash: "echo built"
            writes: []
            checkpoint: "look at the build"
            errorPolicy:
              default: {action: Continue}
          - log-info: after
          - log-info: later
        """,
    )
    assert project.run("p").exit_code == 4
    run_id = project.run_id()
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--decision", "request-changes").output.strip()
    assert project.cli("approve", run_id, "--token", token).exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.snapshot(run_id)["approvals"][-1]["delivered"] is True
    assert len(fold_checked) > 5


def test_retried_blocks_and_handlers_fold_back_as_they_ran(project, fold_checked):
    # (Parallel branches change the state while another branch's save is read back here:
    # they have their own test above.)
    project.playbook(
        "p",
        """
        name: p
        description: steps run again, and a failure handled
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: block
            retry-block:
              - name: note
                bash: "echo x >> out/log.txt"
                writes: [out/log.txt]
              - name: enough
                bash: "true"
                writes: []
                ensures:
                  - file-contains: {path: out/log.txt, regex: "(.*\\\\n){3}"}
            maxAttempts: 3
            retryOn: [PostconditionFailed]
          - name: loop
            for-each: item
            in: [a, b]
            steps:
              - bash: "echo {{item}} >> out/items.txt"
                writes: [out/items.txt]
              - bash: "echo {{item}} | grep -q a || test -e out/again || { touch out/again; exit 1; }"
                writes: [out/again]
            errorPolicy:
              default:
                action: Stop
                retryCount: 1
          - var: a
            value: 1
          - try:
              - bash: "exit 3"
                writes: []
            catch:
              - code: default
                steps:
                  - log-info: handled
        """,
    )
    result = project.run("p", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/log.txt") == "x\nx\nx\n"
    assert project.read("out/items.txt") == "a\nb\na\nb\n"  # the loop ran again: its steps' entries replaced
    assert len(fold_checked) > 10
