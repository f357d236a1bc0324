"""What a run does is the same whichever store keeps it: the state directory's files, or
the shared store in a real PostgreSQL server. Each test runs on both; what is tampered
with differs (a file, a row), what catalyst says about it does not."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import psycopg
import pytest

from tests.helpers.run_helpers import GATE


class Files:
    """Tampering with a run kept in the state directory."""

    def __init__(self, project) -> None:
        self.project = project

    def journal_lines(self, run_id: str) -> list[bytes]:
        return (self.project.state_dir / f"run-{run_id}.journal").read_bytes().splitlines(keepends=True)

    def set_journal_lines(self, run_id: str, lines: list[bytes]) -> None:
        (self.project.state_dir / f"run-{run_id}.journal").write_bytes(b"".join(lines))


class Rows:
    """Tampering with a run kept in PostgreSQL."""

    def __init__(self, url: str, repository: str) -> None:
        self.url, self.repository = url, repository

    def journal_lines(self, run_id: str) -> list[bytes]:
        with psycopg.connect(self.url) as connection:
            rows = connection.execute(
                "SELECT line FROM catalyst_journal WHERE repository = %s AND run_id = %s ORDER BY seq",
                (self.repository, run_id),
            ).fetchall()
        return [bytes(row[0]) for row in rows]

    def set_journal_lines(self, run_id: str, lines: list[bytes]) -> None:
        with psycopg.connect(self.url) as connection:
            seqs = [
                row[0]
                for row in connection.execute(
                    "SELECT seq FROM catalyst_journal WHERE repository = %s AND run_id = %s ORDER BY seq",
                    (self.repository, run_id),
                )
            ]
            connection.execute(
                "DELETE FROM catalyst_journal WHERE repository = %s AND run_id = %s", (self.repository, run_id)
            )
            for seq, line in zip(seqs, lines):
                connection.execute(
                    "INSERT INTO catalyst_journal (repository, run_id, seq, line) VALUES (%s, %s, %s, %s)",
                    (self.repository, run_id, seq, line),
                )


@pytest.fixture(params=["files", "postgres"])
def store(request, project, monkeypatch):
    """Which store keeps the runs of `project`, and how to tamper with what it keeps."""
    if request.param == "files":
        return Files(project)
    url = request.getfixturevalue("shared_store")
    return Rows(url, os.environ["CATALYST_REPOSITORY"])


def test_a_run_pauses_is_approved_and_resumes_to_its_end(project, store):
    project.playbook("gate", GATE)
    started = project.run("gate")
    assert started.exit_code == 4, started.output
    [(run_id, run)] = project.listed().items()
    assert run["status"] == "paused"
    approved = project.cli("approve", run_id, "--as", "Engineer")
    assert approved.exit_code == 0, approved.output
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.listed()[run_id]["status"] == "completed"
    shown = project.cli("runs", "show", run_id)
    assert shown.output.count("completed var") == 2 and "completed checkpoint" in shown.output


def test_a_paused_run_is_cancelled(project, store):
    project.playbook("gate", GATE)
    assert project.run("gate").exit_code == 4
    [run_id] = project.listed()
    cancelled = project.cli("cancel", run_id, "--reason", "not needed")
    assert cancelled.exit_code == 0, cancelled.output
    assert project.listed()[run_id]["status"] == "cancelled"


def test_with_the_global_run_lock_a_paused_run_keeps_every_other_run_out(project, store):
    project.settings("global-run-lock = true\n")
    project.playbook("gate", GATE)
    project.playbook("three", THREE)
    assert project.run("gate").exit_code == 4
    [holder] = project.listed()
    refused = project.run("three")
    assert refused.exit_code == 2, refused.output
    assert f"another run holds global:run: run {holder}; nothing was run" in refused.output
    assert list(project.listed()) == [holder]
    assert project.cli("cancel", holder, "--reason", "done with it").exit_code == 0
    assert project.run("three").exit_code == 0


def test_without_it_runs_that_write_nothing_in_common_overlap(project, store):
    project.playbook("gate", GATE)
    project.playbook("three", THREE)
    assert project.run("gate").exit_code == 4
    assert project.run("three").exit_code == 0


THREE = """
name: three
description: Three values.
owner: Engineer
steps:
  - var: a
    value: 1
  - var: b
    value: 2
  - var: c
    value: 3
"""


def running_with_records(project) -> str:
    """A run that is running again, with three saves since its last snapshot, each one a
    journal record (as a run killed mid-way leaves it); its id."""
    from catalyst_dsl.runtime.state.choice import open_store

    project.playbook("three", THREE)
    assert project.run("three").exit_code == 0
    [run_id] = project.listed()
    settings = SimpleNamespace(root=project.root, config=SimpleNamespace(state_url=None))
    store = open_store(settings, project.state_dir)
    state = store.load(run_id)
    store.reopen(state)
    state.status, state.ended_at = "running", None
    store.save(state)  # a status change: a snapshot
    for path in ("steps/0", "steps/1", "steps/2"):
        state.in_flight = path
        store.save(state)  # a record each
    return run_id


def test_a_run_read_back_is_its_snapshot_and_records(project, store):
    run_id = running_with_records(project)
    assert len(store.journal_lines(run_id)) == 3
    exported = project.cli("runs", "export", run_id)
    assert exported.exit_code == 0, exported.output
    audit = json.loads(exported.output)
    assert audit["unverified"] == [] and audit["status"] == "running"


def test_an_edited_journal_record_is_refused_naming_the_save(project, store):
    run_id = running_with_records(project)
    lines = store.journal_lines(run_id)
    edited = lines[1].replace(b"steps/1", b"steps/9", 1)
    assert edited != lines[1]
    store.set_journal_lines(run_id, [lines[0], edited, lines[2]])
    refused = project.cli("resume", run_id)
    assert refused.exit_code == 3, refused.output
    assert "cannot be trusted" in refused.output and "was edited" in refused.output


def test_a_journal_cut_short_is_refused_as_an_older_copy(project, store):
    run_id = running_with_records(project)
    lines = store.journal_lines(run_id)
    store.set_journal_lines(run_id, lines[:-1])
    refused = project.cli("resume", run_id)
    assert refused.exit_code == 3, refused.output
    assert "older copy put back, or cut short" in refused.output


def test_records_reordered_are_refused(project, store):
    run_id = running_with_records(project)
    lines = store.journal_lines(run_id)
    store.set_journal_lines(run_id, [lines[0], lines[2], lines[1]])
    refused = project.cli("resume", run_id)
    assert refused.exit_code == 3, refused.output
    assert "cannot be trusted" in refused.output


def test_prune_removes_the_older_finished_runs_and_never_a_paused_one(project, store):
    project.playbook("three", THREE)
    project.playbook("gate", GATE)
    assert project.run("gate").exit_code == 4
    for _ in range(3):
        assert project.run("three").exit_code == 0
    before = project.listed()
    assert len(before) == 4
    pruned = project.cli("runs", "prune", "--keep-last", "1")
    assert pruned.exit_code == 0, pruned.output
    after = project.listed()
    assert sorted(run["status"] for run in after.values()) == ["completed", "paused"]
    newest = max(r for r, run in before.items() if run["playbook"] == "three")
    assert newest in after
