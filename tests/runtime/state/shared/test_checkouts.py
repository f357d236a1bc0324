"""The shared store across checkouts and against a real server's faults: a run started in
one checkout is approved from another and resumed in a third; a checkout of another commit
is refused; a server restarted between saves, two processes saving one run, and a process
whose claim was taken over."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from types import SimpleNamespace

import psycopg
import pytest

from tests.helpers import run_helpers
from tests.helpers.run_helpers import GATE

from catalyst_dsl.runtime.errors import RunAbort
from catalyst_dsl.runtime.state.choice import open_store


def git(cwd, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture
def checkouts(project, shared_store, tmp_path, monkeypatch):
    """Checkouts A, B and C of one repository at one commit; A is the current directory."""
    project.playbook("gate", GATE)
    git(project.root, "init", "-q")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "gate")
    for name in ("b", "c"):
        git(tmp_path, "clone", "-q", str(project.root), name)
    return project, tmp_path / "b", tmp_path / "c"


def in_checkout(path, monkeypatch) -> run_helpers.RunProject:
    """The project at `path` as the current directory (its files are the clone's)."""
    settings = (path / "catalyst.toml").read_text()
    checkout = run_helpers.RunProject(path, monkeypatch)
    checkout.settings(settings)
    return checkout


def test_started_in_a_approved_from_b_resumed_in_c(checkouts, monkeypatch):
    a, b, c = checkouts
    assert a.run("gate").exit_code == 4
    [run_id] = a.listed()
    approved = in_checkout(b, monkeypatch).cli("approve", run_id, "--as", "Engineer")
    assert approved.exit_code == 0, approved.output
    resumed = in_checkout(c, monkeypatch).cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    monkeypatch.chdir(a.root)
    assert a.listed()[run_id]["status"] == "completed"


def test_a_checkout_of_another_commit_is_refused_naming_both(checkouts, monkeypatch):
    a, b, _ = checkouts
    assert a.run("gate").exit_code == 4
    [run_id] = a.listed()
    started = git(a.root, "rev-parse", "HEAD")
    (b / "notes.txt").write_text("a later commit\n")
    git(b, "add", "-A")
    git(b, "commit", "-qm", "later")
    later = git(b, "rev-parse", "HEAD")
    other = in_checkout(b, monkeypatch)
    for command in (("approve", run_id, "--as", "Engineer"), ("resume", run_id)):
        refused = other.cli(*command)
        assert refused.exit_code == 3, refused.output
        assert started[:12] in refused.output and later[:12] in refused.output
    assert other.listed()[run_id]["status"] == "paused"


def _store(project):
    return open_store(SimpleNamespace(root=project.root, config=SimpleNamespace(state_url=None)), project.state_dir)


def _running(project) -> tuple[object, object]:
    """A store and a run of `gate` that is running again, saved whole."""
    project.playbook("gate", GATE)
    assert project.run("gate").exit_code == 4
    [run_id] = project.listed()
    store = _store(project)
    state = store.load(run_id)
    state.status, state.pause = "running", None
    store.save(state)
    return store, state


def test_a_server_restarted_between_saves_loses_nothing(project, shared_store, postgres_server):
    store, state = _running(project)
    state.in_flight = "steps/1"
    store.save(state)
    postgres_server.restart()
    state.in_flight = "steps/2"
    store.save(state)  # on a new connection
    again = _store(project).load(state.run_id)
    assert again.in_flight == "steps/2"


def test_two_processes_saving_one_run_the_later_save_wins_whole(project, shared_store):
    first, state = _running(project)
    second = _store(project)
    theirs = second.load(state.run_id)
    state.in_flight = "steps/1"
    first.save(state)
    theirs.in_flight = "steps/2"
    second.save(theirs)  # their head moved: a snapshot over it, chained after it
    state.in_flight = "steps/3"
    first.save(state)
    again = _store(project).load(state.run_id)
    assert again.in_flight == "steps/3"


def test_a_process_whose_claim_was_taken_over_never_saves_again(project, shared_store):
    store, state = _running(project)
    with psycopg.connect(shared_store, autocommit=True) as connection:
        connection.execute(
            "UPDATE catalyst_runs SET fence = fence + 1 WHERE repository = %s AND run_id = %s",
            (os.environ["CATALYST_REPOSITORY"], state.run_id),
        )
    state.in_flight = "steps/1"
    with pytest.raises(RunAbort) as refused:
        store.save(state)
    assert "taken over" in refused.value.message
    assert _store(project).load(state.run_id).in_flight is None


def test_a_server_that_cannot_be_reached_is_named_without_its_password(project, monkeypatch):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("CATALYST_STATE_URL", f"postgresql://ann:hunter2@127.0.0.1:{port}/runs")
    result = project.cli("runs", "list")
    assert result.exit_code == 3, result.output
    assert "cannot reach the state database postgresql://ann:***@127.0.0.1" in result.output
    assert "hunter2" not in result.output


def test_a_url_that_is_not_postgresql_is_refused(project, monkeypatch):
    monkeypatch.setenv("CATALYST_STATE_URL", "mysql://db/runs")
    result = project.cli("runs", "list")
    assert result.exit_code == 1, result.output
    assert "PostgreSQL only" in result.output


def test_a_repository_may_not_choose_where_runs_are_kept(project):
    project.playbook("gate", GATE)
    project.settings('state-url = "postgresql://attacker.example/runs"\n')
    result = project.cli("check")
    assert "state-url" in result.output and "your own configuration" in result.output


def test_the_users_own_configuration_may(project, postgres_server, monkeypatch):
    repository = f"tests/user-configured-{os.getpid()}"
    monkeypatch.setenv("CATALYST_REPOSITORY", repository)
    project.user_settings(f'state-url = "{postgres_server.url}"\n')
    project.playbook("gate", GATE)
    assert project.run("gate").exit_code == 4
    assert not project.live_snapshots()  # nothing in the state directory's files
    with psycopg.connect(postgres_server.url) as connection:
        [(status,)] = connection.execute(
            "SELECT status FROM catalyst_runs WHERE repository = %s", (repository,)
        ).fetchall()
    assert status == "paused"


CARRY = """
name: carry
description: A file written before the review, read after it.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - name: draft
    file-write: out/spec.md
    content: drafted
  - checkpoint: review
    message: Read out/spec.md
  - name: spec
    file-read: out/spec.md
  - file-write: out/read.log
    content: "{{ spec }}"
"""


@pytest.fixture
def carried(checkouts, monkeypatch):
    """Run `carry` paused in checkout A, approved: its id, and checkout C (which has no out/)."""
    a, b, c = checkouts
    a.playbook("carry", CARRY)
    git(a.root, "add", "-A")
    git(a.root, "commit", "-qm", "carry")
    for clone in (b, c):
        git(clone, "pull", "-q")
    started = a.run("carry")
    assert started.exit_code == 4, started.output
    assert (a.root / "out" / "spec.md").exists(), started.output
    [run_id] = [r for r, run in a.listed().items() if run["playbook"] == "carry"]
    assert a.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert not (c / "out").exists()
    return run_id, c


def test_the_files_a_run_wrote_travel_with_it_to_the_checkout_that_resumes_it(carried, monkeypatch):
    run_id, c = carried
    resumed = in_checkout(c, monkeypatch).cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert "put back 1 file(s) the run wrote before it paused: out/spec.md" in resumed.output
    assert (c / "out" / "spec.md").read_text() == "drafted"
    assert (c / "out" / "read.log").read_text() == "drafted"


def _manifest(url: str, run_id: str) -> tuple[str, str]:
    with psycopg.connect(url) as connection:
        [(manifest, mac)] = connection.execute(
            "SELECT manifest, mac FROM catalyst_carried WHERE repository = %s AND run_id = %s",
            (os.environ["CATALYST_REPOSITORY"], run_id),
        ).fetchall()
    return manifest, mac


def _set_manifest(url: str, run_id: str, manifest: str, mac: str) -> None:
    with psycopg.connect(url) as connection:
        connection.execute(
            "UPDATE catalyst_carried SET manifest = %s, mac = %s WHERE repository = %s AND run_id = %s",
            (manifest, mac, os.environ["CATALYST_REPOSITORY"], run_id),
        )


def test_a_list_of_carried_files_edited_in_the_database_is_refused(carried, shared_store, monkeypatch):
    run_id, c = carried
    manifest, mac = _manifest(shared_store, run_id)
    _set_manifest(shared_store, run_id, manifest.replace("out/spec.md", "out/other.md"), mac)
    refused = in_checkout(c, monkeypatch).cli("resume", run_id)
    assert refused.exit_code == 3, refused.output
    assert "was not written by catalyst with this run key" in refused.output
    assert not (c / "out").exists()


def test_carried_files_never_reach_past_the_runs_grants(carried, shared_store, monkeypatch):
    # Even a list sealed with the run key (as whoever holds the key could make) writes only
    # where the run may: the playbook is outside its grants, `..` outside the project.
    from catalyst_dsl.runtime.state.shared.carried import manifest_mac
    from catalyst_dsl.runtime.state.integrity.run_key import RunKey

    run_id, c = carried
    manifest, _ = _manifest(shared_store, run_id)
    [[_, sha]] = json.loads(manifest)
    with psycopg.connect(shared_store) as connection:
        [(secret,)] = connection.execute(
            "SELECT secret FROM catalyst_run_keys WHERE repository = %s", (os.environ["CATALYST_REPOSITORY"],)
        ).fetchall()
    key = RunKey(secret.encode(), "test", True)
    hostile = json.dumps([["../outside.md", sha], ["playbooks/gate.yaml", sha]], separators=(",", ":"))
    _set_manifest(shared_store, run_id, hostile, manifest_mac(key, run_id, hostile))
    before = (c / "playbooks" / "gate.yaml").read_text()
    result = in_checkout(c, monkeypatch).cli("resume", run_id)
    assert result.exit_code == 3, result.output
    assert "cannot be put back here: cannot write 'playbooks/gate.yaml'" in result.output
    assert (c / "playbooks" / "gate.yaml").read_text() == before
    assert not (c.parent / "outside.md").exists()


OVERWRITE = """
name: overwrite
description: Writes where carry writes.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - file-write: out/spec.md
    content: mine
"""


def test_a_run_paused_in_one_checkout_keeps_its_locks_against_runs_in_another(checkouts, monkeypatch):
    a, b, _ = checkouts
    a.playbook("carry", CARRY)
    started = a.run("carry")
    assert started.exit_code == 4, started.output
    [run_id] = [r for r, run in a.listed().items() if run["playbook"] == "carry"]
    other = in_checkout(b, monkeypatch)
    other.playbook("overwrite", OVERWRITE)
    refused = other.run("overwrite")
    assert refused.exit_code == 2 and f"another run holds path:out/spec.md: run {run_id}" in refused.output, (
        refused.output
    )
    assert not (b / "out").exists()
    assert [run["playbook"] for run in other.listed().values()] == ["carry"], "the refused run was left behind"
    monkeypatch.chdir(a.root)
    assert a.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert a.cli("resume", run_id).exit_code == 0
    monkeypatch.chdir(b)
    assert other.run("overwrite").exit_code == 0  # the run ended: its locks went with it
    assert (b / "out" / "spec.md").read_text() == "mine"


def test_the_locks_of_a_run_whose_lease_ran_out_are_stale(project, shared_store):
    from catalyst_dsl.runtime.errors import LockConflict

    store, state = _running(project)
    locks = store.locks
    locks.acquire(state.run_id, ["path:out/**"])
    with pytest.raises(LockConflict):
        locks.acquire("another-run", ["path:out/a.md"])
    assert [holder.run_id for holder in locks.conflicts("another-run", ["path:out/a.md"])] == [state.run_id]
    with psycopg.connect(shared_store, autocommit=True) as connection:
        connection.execute(
            "UPDATE catalyst_runs SET lease_until = now() - interval '1 second' WHERE repository = %s AND run_id = %s",
            (os.environ["CATALYST_REPOSITORY"], state.run_id),
        )
    assert locks.conflicts("another-run", ["path:out/a.md"]) == []
    locks.acquire("another-run", ["path:out/a.md"])
    assert [holder.run_id for holder in locks.held()] == ["another-run"]
    locks.release("another-run")
    assert locks.held() == []


RESTARTED = """
name: restarted
description: A step, a program the server restarts under, a step.
owner: Engineer
allowedWritePaths: [out/**]
steps:
  - name: one
    bash: mkdir -p out && echo one >> out/log
    writes: [out/**]
  - name: wait
    bash: touch out/waiting && sleep 4 && echo waited >> out/log
    writes: [out/**]
  - name: three
    bash: echo three >> out/log
    writes: [out/**]
"""


@pytest.mark.slow
def test_a_server_restarted_mid_run_loses_no_completed_step_and_runs_none_twice(project, shared_store, postgres_server):
    import sys
    import time
    from pathlib import Path

    project.playbook("restarted", RESTARTED)
    root = Path(__file__).resolve().parents[4]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    running = subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "run", "restarted", "--mode", "autonomous"],
        cwd=project.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (project.root / "out" / "waiting").exists():
        assert running.poll() is None and time.monotonic() < deadline, running.communicate()[0]
        time.sleep(0.05)
    postgres_server.restart()
    output = running.communicate(timeout=120)[0]
    # The save after the program lands on a new connection; were the server still starting,
    # the run would stop saying so, and go on with `resume` once it is back.
    if running.returncode == 3:
        assert "the state database" in output, output
        [run] = json.loads(project.cli("runs", "list", "--json").output)["runs"]
        resumed = project.cli("resume", run["runId"])
        assert resumed.exit_code == 0, resumed.output
        # `wait` ended but its save did not land: it was still the step in flight, and ran again.
        expected = (["one", "waited", "three"], ["one", "waited", "waited", "three"])
    else:
        assert running.returncode == 0, output
        expected = (["one", "waited", "three"],)
    log = (project.root / "out" / "log").read_text().splitlines()
    assert log in expected, log
    [run] = json.loads(project.cli("runs", "list", "--json").output)["runs"]
    assert run["status"] == "completed"


def test_started_in_a_approved_from_b_and_taken_by_a_worker_in_c_with_as_files(checkouts, monkeypatch):
    a, b, c = checkouts
    a.playbook("carry", CARRY)
    git(a.root, "add", "-A")
    git(a.root, "commit", "-qm", "carry")
    for clone in (b, c):
        git(clone, "pull", "-q")
    assert a.run("carry").exit_code == 4
    [run_id] = [r for r, run in a.listed().items() if run["playbook"] == "carry"]
    approved = in_checkout(b, monkeypatch).cli("approve", run_id, "--as", "Engineer")
    assert approved.exit_code == 0, approved.output
    worked = in_checkout(c, monkeypatch).cli("worker", "--once")
    assert worked.exit_code == 0, worked.output
    assert f"took run {run_id}" in worked.output and "put back 1 file(s)" in worked.output
    assert (c / "out" / "spec.md").read_text() == "drafted"
    assert (c / "out" / "read.log").read_text() == "drafted"
    assert in_checkout(c, monkeypatch).listed()[run_id]["status"] == "completed"
