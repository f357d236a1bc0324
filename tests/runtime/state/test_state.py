"""The run snapshot store: round trips, atomic saves, friendly unique ids, damaged files,
history, retention and the audit view."""

import json
import os
import stat
import subprocess
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest

import catalyst_dsl
from catalyst_dsl.runtime.errors import EXIT_INVALID, EXIT_STATE, RunAbort
from catalyst_dsl.runtime.state.store import (
    Approval,
    Cancel,
    Failure,
    Pause,
    PlaybookRef,
    StateStore,
    StepRecord,
    ensure_resumable,
    new_run_state,
)

STARTED = "2026-11-21T14:30:12.000Z"
REPO = Path(catalyst_dsl.__file__).resolve().parents[1]


def make_state(name="create-feature", started_at=STARTED, steps=3):
    state = new_run_state(
        PlaybookRef(name=name, file="playbooks/create-feature.yaml", fingerprint="f00d"),
        inputs={"feature": "login", "token": "<secret:token>"},
        secret_inputs=["token"],
        permissions={"allowedWritePaths": ["src/**"]},
        locks=["path:src/**"],
        started_at=started_at,
    )
    for i in range(steps):
        state.steps.append(
            StepRecord(
                path=f"steps/{i}",
                name=f"s{i}",
                action="bash",
                status="completed",
                attempts=1,
                started_at=started_at,
                duration=0.5,
                result={"stdout": f"out {i}", "exitCode": 0},
            )
        )
    return state


@pytest.fixture
def store(tmp_path):
    return StateStore(tmp_path / ".xe" / "runs")


def local_prefix(started_at=STARTED):
    moment = datetime.fromisoformat(started_at.replace("Z", "+00:00")).astimezone()
    return f"{moment:%Y%m%d-%H%M%S}"


def abort_of(store, run):
    with pytest.raises(RunAbort) as caught:
        store.load(run)
    assert caught.value.exit_code == EXIT_STATE
    assert caught.value.help
    return caught.value


# -- round trip and ids ----------------------------------------------------------------


def test_round_trip_keeps_every_field(store):
    state = make_state()
    state.status = "paused"
    state.in_flight = None
    state.pause = Pause(
        path="steps/3", message="review the spec", roles=["lead"], options=[{"key": "a"}], since=STARTED
    )
    state.approvals.append(
        Approval(
            path="steps/1", role="lead", by="ana", at=STARTED, comment=None, via="cli", released=True, selected="a"
        )
    )
    state.failures.append(
        Failure(code="CommandFailed", message="exit 1", step="s2", attempt=1, duration=0.25, at=STARTED)
    )
    state.outputs = {"pr": 12}
    state.cancel = Cancel(by="bo", reason="later", at=STARTED)
    store.create(state)
    assert store.load(state.run_id) == state
    assert store.load(str(store.path_of(state.run_id))) == state


def test_a_failure_recorded_before_failures_kept_their_label_still_loads():
    from catalyst_dsl.runtime.state.snapshot_codec import encode, structured

    state = make_state()
    state.failures.append(
        Failure(
            code="NotA", message="no", step="check", attempt=1, duration=0.1, at=STARTED, label="check [iteration 2]"
        )
    )
    data = json.loads(encode(state))
    assert data["failures"][0]["label"] == "check [iteration 2]"
    del data["failures"][0]["label"]  # as a snapshot written before it was kept
    [old] = structured(data, Path("run.json")).failures
    assert (old.step, old.label) == ("check", None)


def test_snapshot_uses_camel_case_keys(store):
    state = store.create(make_state())
    data = json.loads(store.path_of(state.run_id).read_text())
    assert data["format"] == "catalyst-run" and data["version"] == 1
    assert {"runId", "secretInputs", "startedAt", "updatedAt", "endedAt", "inFlight"} <= data.keys()
    assert "startedAt" in data["steps"][0]


def test_run_id_is_friendly(store):
    state = store.create(make_state(name="Create Feature!"))
    assert state.run_id == f"{local_prefix()}-create-feature-001"
    assert store.create(make_state(name="Create Feature!")).run_id.endswith("-002")


def test_run_id_skips_indices_used_in_history(store):
    first = store.create(make_state())
    first.status, first.ended_at = "completed", STARTED
    store.archive(first)
    assert store.create(make_state()).run_id.endswith("-002")


def test_run_ids_unique_across_threads(store):
    ids, errors = [], []

    def start():
        try:
            ids.append(store.create(make_state()).run_id)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(ids)) == 20
    assert sorted(int(i[-3:]) for i in ids) == list(range(1, 21))


CREATE_ONE = """
import sys, time
from pathlib import Path
from catalyst_dsl.runtime.state.store import StateStore, PlaybookRef, new_run_state
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
state = new_run_state(PlaybookRef(name="race", file="race.yaml", fingerprint="x"), started_at=sys.argv[3])
print(StateStore(Path(sys.argv[1])).create(state).run_id)
"""


def test_run_ids_unique_across_processes(tmp_path):
    state_dir, go = tmp_path / "runs", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CREATE_ONE, str(state_dir), str(go), STARTED],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(20)
    ]
    go.touch()  # all start together, in the same second
    ids = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(ids)) == 20
    assert all(i.startswith(f"{local_prefix()}-race-") for i in ids)


# -- saving ---------------------------------------------------------------------------------


def a_step(path="steps/9"):
    return StepRecord(
        path=path, name=None, action="bash", status="completed", attempts=1, started_at=STARTED, duration=1.0
    )


def test_a_failed_save_leaves_every_save_before_it(store, monkeypatch):
    from catalyst_dsl.runtime.state.journal import files

    state = store.create(make_state())
    state.steps.append(a_step("steps/3"))
    store.save(state)
    state.steps.append(a_step("steps/4"))
    real = files.append

    def half_then_fail(fd, data, sync=True):
        real(fd, data[: len(data) // 2])  # a record cut short, as a crash or a full disk leaves it
        raise OSError("disk on fire")

    monkeypatch.setattr(files, "append", half_then_fail)
    with pytest.raises(RunAbort) as stopped:
        store.save(state)
    assert stopped.value.exit_code == EXIT_STATE and "disk on fire" in stopped.value.message
    assert f"run-{state.run_id}.journal" in stopped.value.message
    monkeypatch.setattr(files, "append", real)
    assert [r.path for r in StateStore(store.state_dir).load(state.run_id).steps][-1] == "steps/3"
    store.save(state)  # the same run goes on: the record cut short is cut off first
    assert [r.path for r in StateStore(store.state_dir).load(state.run_id).steps][-2:] == ["steps/3", "steps/4"]


def test_a_full_snapshot_is_atomic_when_replace_fails(store, monkeypatch):
    state = store.create(make_state())
    path = store.path_of(state.run_id)
    before = path.read_bytes()
    state.steps.append(a_step())
    state.status, state.pause = "paused", Pause(path="steps/3", message="ok?", roles=[], options=[], since=STARTED)

    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(RunAbort) as stopped:
        store.save(state)  # a pause writes the whole snapshot
    assert stopped.value.exit_code == EXIT_STATE and "disk on fire" in stopped.value.message
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert len(store.load(state.run_id).steps) == 3


def test_run_files_are_private(store):
    state = store.create(make_state())
    store.save(state)
    assert stat.S_IMODE(store.journal_of(state.run_id).stat().st_mode) == 0o600
    state.status, state.pause = "paused", Pause(path="steps/3", message="ok?", roles=[], options=[], since=STARTED)
    store.save(state)
    for path in (store.path_of(state.run_id), store.path_of(state.run_id).with_name(f"run-{state.run_id}.json.bak")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    anchor = store.guard.anchors.directory / state.run_id
    assert stat.S_IMODE(anchor.stat().st_mode) == 0o600
    assert stat.S_IMODE(anchor.parent.stat().st_mode) == 0o700


def test_backup_is_the_snapshot_before_the_last_full_one(store):
    state = store.create(make_state())
    store.save(state)
    state.status, state.pause = "paused", Pause(path="steps/3", message="ok?", roles=[], options=[], since=STARTED)
    store.save(state)
    backup = store.path_of(state.run_id).with_name(f"run-{state.run_id}.json.bak")
    assert json.loads(backup.read_text())["status"] == "running"


def test_save_updates_updated_at(store):
    state = store.create(make_state())
    state.updated_at = "2000-01-01T00:00:00.000Z"
    store.save(state)
    assert store.load(state.run_id).updated_at > "2026"


# -- damaged files ---------------------------------------------------------------------------


def damage(store, edit):
    """A saved run whose file is then edited by `edit(text) -> text`."""
    state = store.create(make_state())
    path = store.path_of(state.run_id)
    path.write_text(edit(path.read_text()))
    return state, path


def edit_json(change):
    def edit(text):
        data = json.loads(text)
        change(data)
        return json.dumps(data)

    return edit


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda text: text[: len(text) // 2], "truncated"),
        (lambda text: "", "is empty"),
        (lambda text: "this is not json", "not valid JSON"),
        (lambda text: "[1, 2]", "not an object"),
        (edit_json(lambda d: d.update(version=2)), "$.version"),
        (edit_json(lambda d: d.update(format="other")), "$.format"),
        (edit_json(lambda d: d["steps"][1].update(attempts="3")), "$.steps[1].attempts"),
        (edit_json(lambda d: d["steps"][0].update(startedAt=12)), "$.steps[0].startedAt"),
        (edit_json(lambda d: d["owner"].update(pid=True)), "$.owner.pid"),
        (edit_json(lambda d: d.update(surprise=1)), "at $: unknown key 'surprise'"),
        (edit_json(lambda d: d["steps"][2].update(extra=1)), "at $.steps[2]"),
        (edit_json(lambda d: d.pop("steps")), "at $.steps: required key missing"),
        (edit_json(lambda d: d.update(steps="")), "at $.steps: expected an array, got a string"),
        (edit_json(lambda d: d.update(status="done")), "at $.status"),
        (edit_json(lambda d: d.update(inputs=[])), "at $.inputs"),
        (edit_json(lambda d: d.update(startedAt="yesterday")), "at $.startedAt"),
        (edit_json(lambda d: d["steps"].append(d["steps"][0])), "twice"),
        (
            edit_json(lambda d: d["steps"].append({**d["steps"][0], "startedAt": "2026-11-21T15:00:00.000Z"})),
            "at $.steps[3].path",
        ),
        (edit_json(lambda d: d.update(status="completed", endedAt=None)), "at $.endedAt"),
        (edit_json(lambda d: d.update(status="paused")), "at $.pause"),
        (edit_json(lambda d: d.update(runId="20260101-000000-other-001")), "at $.runId"),
    ],
)
def test_damaged_snapshot_is_a_state_error(store, edit, expected):
    state, path = damage(store, edit)
    error = abort_of(store, state.run_id)
    text = " ".join((error.message, *error.details))
    assert path.name in error.message
    assert expected in text
    assert path.exists()  # kept for inspection
    assert "catalyst run" in error.help


def test_help_points_to_the_last_good_copy(store):
    state = store.create(make_state())
    state.status, state.pause = "paused", Pause(path="steps/3", message="ok?", roles=[], options=[], since=STARTED)
    store.save(state)  # a full snapshot: the created one is kept as the backup
    path = store.path_of(state.run_id)
    path.write_text(path.read_text()[:50])
    error = abort_of(store, state.run_id)
    assert "truncated" in error.message
    assert f"run-{state.run_id}.json.bak" in error.help


def test_a_missing_run_is_a_mistake_of_the_command_not_a_damaged_snapshot(store):
    with pytest.raises(RunAbort) as caught:
        store.load("20260101-000000-nothing-001")
    assert caught.value.exit_code == EXIT_INVALID
    assert "no run" in caught.value.message and caught.value.help


def test_newer_version_says_upgrade(store):
    state, _ = damage(store, edit_json(lambda d: d.update(version=7)))
    assert "newer catalyst" in abort_of(store, state.run_id).help


# -- resuming ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["completed", "cancelled"])
def test_finished_runs_are_not_resumable(status):
    state = make_state()
    state.status = status
    with pytest.raises(RunAbort) as caught:
        ensure_resumable(state)
    assert caught.value.exit_code == EXIT_INVALID
    assert "catalyst run create-feature" in caught.value.help


def test_crashed_run_is_resumable():
    state = make_state()
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    state.owner.pid = int(done.stdout)  # a process that has exited
    ensure_resumable(state)


def test_run_of_a_live_process_is_not_resumable():
    state = make_state()
    with subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE) as other:
        state.owner.pid = other.pid
        with pytest.raises(RunAbort) as caught:
            ensure_resumable(state)
        other.stdin.close()
    assert "still running" in caught.value.message


# -- history, listing, retention, audit ----------------------------------------------------------


def finish(store, state, status="completed"):
    state.status, state.ended_at, state.in_flight = status, state.started_at, None
    return store.archive(state)


def test_archive_moves_to_dated_history(store):
    state = store.create(make_state())
    store.save(state)
    archived = finish(store, state)
    day = local_prefix()[:8]
    assert archived == store.state_dir / "history" / day[:4] / day[4:6] / day[6:] / f"run-{state.run_id}.json"
    assert (store.state_dir / "history" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not store.path_of(state.run_id).exists()
    assert not store.path_of(state.run_id).with_name(f"run-{state.run_id}.json.bak").exists()
    assert store.load(state.run_id).status == "completed"


def test_archive_refuses_unfinished_runs(store):
    with pytest.raises(ValueError):
        store.archive(store.create(make_state()))


def test_list_shows_corrupt_files(store):
    old = store.create(make_state(started_at="2026-11-20T10:00:00.000Z"))
    finish(store, old)
    live = store.create(make_state())
    broken = store.create(make_state())
    store.path_of(broken.run_id).write_text("{")
    runs = store.list()
    assert [r.run_id for r in runs] == [broken.run_id, live.run_id, old.run_id]
    assert [r.status for r in runs] == ["corrupt", "running", "completed"]
    assert runs[0].problem and "truncated" in runs[0].problem
    assert [r.archived for r in runs] == [False, False, True]
    assert [r.run_id for r in store.list(include_history=False)] == [broken.run_id, live.run_id]


def test_prune_keeps_live_runs(store):
    now = datetime(2026, 12, 31, tzinfo=timezone.utc)
    old = [store.create(make_state(started_at=f"2026-10-0{d}T12:00:00.000Z")) for d in range(1, 5)]
    archived = [finish(store, s) for s in old]
    running = store.create(make_state(started_at="2026-01-01T12:00:00.000Z"))
    paused = store.create(make_state(started_at="2026-01-02T12:00:00.000Z"))
    paused.status, paused.pause = "paused", Pause(path="steps/1", message="?", roles=[], options=[], since=STARTED)
    store.save(paused)

    assert store.prune(keep_days=None, keep_last=1, dry_run=True, now=now) == archived[:3][::-1]
    assert all(p.exists() for p in archived)
    assert store.prune(keep_days=None, keep_last=None, now=now) == []
    assert store.prune(keep_days=89, keep_last=None, now=now) == [
        archived[1],
        archived[0],
    ]  # started 89.5 and 90.5 days before
    assert store.prune(keep_days=0, keep_last=0, now=now) == [archived[3], archived[2]]
    assert not (store.state_dir / "history" / "2026").exists()  # empty day, month and year folders go too
    assert store.load(running.run_id).status == "running"
    assert store.load(paused.run_id).status == "paused"


def test_export_is_the_audit_view(store):
    state = make_state()
    state.approvals.append(
        Approval(path="steps/1", role="lead", by="ana", at=STARTED, comment="fine", via="cli", released=True)
    )
    store.create(state)
    audit = store.export(state.run_id)
    assert audit["runId"] == state.run_id
    assert audit["approvals"][0]["by"] == "ana"
    assert audit["steps"][0] == {
        "path": "steps/0",
        "name": "s0",
        "action": "bash",
        "status": "completed",
        "attempts": 1,
        "startedAt": STARTED,
        "duration": 0.5,
        "reason": None,
        "fingerprint": None,
        "resultBlob": None,
        "prompt": None,
        "label": None,
    }
    assert "inputs" not in audit
    json.dumps(audit)
