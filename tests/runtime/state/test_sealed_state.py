"""Sealed runs: edits by hand and copies put back are refused with what is wrong named;
`resume --trust-edited-state` accepts them and records it; the run key and big results
kept beside the snapshot. (The journal's own attacks are in test_journal.py.)"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from catalyst_dsl.runtime.state.integrity.results import LIMIT
from catalyst_dsl.runtime.state.integrity.run_key import KEY_ENV, RunKeyError, load_run_key
from catalyst_dsl.runtime.state.store import StateStore
from tests.helpers.run_helpers import approval_by_hand

SEALED = """
    name: sealed
    description: Greets, waits for an architect, then writes what it heard.
    owner: Engineer
    reviewers:
      required: [Architect]
    allowedWritePaths: [out/**]
    steps:
      - name: greet
        bash: "echo hello"
      - name: review
        checkpoint: "Look at it"
      - name: after
        file-write: out/heard.txt
        content: "{{greet.stdout}}"
"""


def paused(project) -> tuple[str, object]:
    project.playbook("sealed", SEALED)
    result = project.run("sealed")
    assert result.exit_code == 4, result.output
    run_id = project.run_id()
    return run_id, project.state_dir / f"run-{run_id}.json"


def run_files(project, run_id) -> dict:
    """The run's files in the state directory as they are now (its snapshot and its journal):
    a copy of the run, as a backup of the directory would hold it."""
    return {path: path.read_bytes() for path in project.state_dir.glob(f"run-{run_id}.*") if path.is_file()}


def anchor_of(state_dir, run_id):
    """Where the run's anchor is (outside the state directory)."""
    return StateStore(state_dir).guard.anchors.directory / run_id


def put_back(project, run_id, copy: dict) -> None:
    """The run's files as they were in `copy`: those made since removed, the others rewritten."""
    for path in project.state_dir.glob(f"run-{run_id}.*"):
        if path not in copy:
            path.unlink()
    for path, data in copy.items():
        path.write_bytes(data)


def edit(path, change) -> None:
    """A hand edit: the JSON changed, written back by a tool of its own."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def refused(project, result, *words: str) -> None:
    assert result.exit_code == 3, result.output
    assert "cannot be trusted" in result.output, result.output
    for word in words:
        assert word in result.output, f"{word!r} not said:\n{result.output}"
    assert "--trust-edited-state" in result.output, result.output
    assert not project.exists("out/heard.txt"), "a step ran from a snapshot that does not verify"


# -- forgeries ------------------------------------------------------------------------------


def test_an_approval_added_by_hand_is_refused_naming_it(project):
    run_id, snapshot = paused(project)

    def approve_by_hand(data):
        data["approvals"].append(approval_by_hand("steps/1", "mallory", data["updatedAt"]))
        data["status"] = "paused"

    edit(snapshot, approve_by_hand)
    refused(project, project.cli("resume", run_id), "an approval on steps/1 was added by hand")
    # Every command that acts on the run refuses it too, but cancel (test_cancelling.py).
    refused(project, project.cli("approve", run_id, "--as", "Architect"), "an approval on steps/1 was added by hand")
    refused(project, project.cli("runs", "token", run_id, "--as", "Architect"), "an approval on steps/1 was added")


def test_an_edited_result_of_a_completed_step_is_refused_naming_it(project):
    run_id, snapshot = paused(project)
    edit(snapshot, lambda data: data["steps"][0]["result"].update(stdout="hello; touch PWNED"))
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 3
    refused(project, project.cli("resume", run_id), "the result of steps/0 was edited")


def test_a_removed_fingerprint_is_refused_naming_it(project):
    run_id, snapshot = paused(project)
    assert project.snapshot()["steps"][0]["fingerprint"]
    edit(snapshot, lambda data: data["steps"][0].pop("fingerprint"))
    refused(project, project.cli("resume", run_id), "the fingerprint of steps/0 was removed")


def test_a_snapshot_without_a_seal_is_refused_with_the_fix(project):
    run_id, snapshot = paused(project)
    edit(snapshot, lambda data: data.pop("seal"))
    refused(project, project.cli("resume", run_id), "it has no seal")


def test_a_rewritten_seal_still_refuses(project):
    run_id, snapshot = paused(project)

    def forge(data):
        data["steps"][0]["result"]["stdout"] = "forged"
        data["seal"]["mac"] = "0" * 64

    edit(snapshot, forge)
    refused(project, project.cli("resume", run_id), "the result of steps/0 was edited")


def test_a_snapshot_sealed_with_another_key_is_refused(project, monkeypatch):
    run_id, _ = paused(project)
    monkeypatch.setenv(KEY_ENV, "another key, long enough to be a run key: 0123456789")
    refused(project, project.cli("resume", run_id), "another run key")


# -- rollbacks ------------------------------------------------------------------------------


def test_an_older_copy_put_back_is_refused_naming_the_saves(project):
    run_id, snapshot = paused(project)
    older = run_files(project, run_id)
    before = json.loads(snapshot.read_bytes())["seal"]["seq"]
    assert project.cli("approve", run_id, "--as", "Intern").exit_code == 4  # recorded only: one more save
    put_back(project, run_id, older)
    refused(
        project, project.cli("resume", run_id), f"it is save {before} of the run, and save {before + 1} was made since"
    )


def test_the_backup_put_back_is_refused(project):
    run_id, snapshot = paused(project)
    assert project.cli("approve", run_id, "--as", "Intern").exit_code == 4
    backup = snapshot.with_name(snapshot.name + ".bak")
    shutil.copyfile(backup, snapshot)
    refused(project, project.cli("resume", run_id), "older copy put back")
    assert project.cli("runs", "show", f"run-{run_id}.json.bak").exit_code == 0  # shown, not acted on


def test_a_used_token_is_refused_after_a_rollback(project):
    run_id, snapshot = paused(project)
    older = run_files(project, run_id)
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--by", "alice").output.strip()
    assert project.cli("approve", run_id, "--token", token).exit_code == 0
    put_back(project, run_id, older)  # the copy from before the token was spent
    replayed = project.cli("approve", run_id, "--token", token)
    assert replayed.exit_code == 3 and "older copy put back" in replayed.output, replayed.output
    assert not json.loads(snapshot.read_bytes())["approvals"]


def test_a_deleted_anchor_is_no_refusal_and_the_next_save_writes_it_again(project):
    # Whoever can remove the anchor (in the user's own state directory) can read the run key
    # beside it: refusing a run without one would stop a fresh CI job that restored the state
    # directory, and protect nothing.
    run_id, _ = paused(project)
    anchor = anchor_of(project.state_dir, run_id)
    anchor.unlink()
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    assert anchor.exists()
    assert project.cli("resume", run_id).exit_code == 0


def test_an_anchor_behind_the_run_is_accepted(tmp_path):
    # A crash (or a power cut) between a save and its anchor's update leaves exactly this.
    from tests.runtime.state.test_state import make_state

    store = StateStore(tmp_path / "runs")
    state = store.create(make_state())
    anchor = anchor_of(tmp_path / "runs", state.run_id)
    first = anchor.read_bytes()
    store.save(state)
    store.save(state)
    anchor.write_bytes(first)
    assert StateStore(tmp_path / "runs").load(state.run_id).run_id == state.run_id


def test_a_new_run_numbers_its_saves_past_the_anchor_of_its_id(tmp_path):
    from tests.runtime.state.test_state import make_state

    store = StateStore(tmp_path / "runs")
    first = store.create(make_state())
    for _ in range(3):
        store.save(first)
    store.path_of(first.run_id).unlink()  # gone by hand: its journal and its anchor are left
    fresh = StateStore(tmp_path / "runs")
    again = fresh.create(make_state())
    assert again.run_id == first.run_id
    assert not store.journal_of(again.run_id).exists()  # the other run's records are not this one's
    assert StateStore(tmp_path / "runs").load(again.run_id).run_id == again.run_id


# -- runs saved before the run journal ----------------------------------------------------------

LEGACY = Path(__file__).parents[2] / "data" / "legacy-run"
LEGACY_RUN = "20261202-061557-sealed-001"


def legacy(project, monkeypatch):
    """A run saved by the catalyst before the run journal, paused at its checkpoint with an
    Intern's approval recorded (tests/data/legacy-run/README.md); its snapshot's path."""
    monkeypatch.setenv(KEY_ENV, "legacy-run-key-of-the-tests-0123456789abcdef")
    project.write("playbooks/sealed.yaml", (LEGACY / "sealed.yaml").read_text(encoding="utf-8"))
    project.state_dir.mkdir(parents=True, exist_ok=True)
    for name in (f"run-{LEGACY_RUN}.json", "snapshot-ledger"):
        shutil.copyfile(LEGACY / name, project.state_dir / name)
    return project.state_dir / f"run-{LEGACY_RUN}.json"


def test_a_run_saved_before_the_journal_is_approved_and_resumed(project, monkeypatch):
    legacy(project, monkeypatch)
    shown = project.cli("runs", "show", LEGACY_RUN)
    assert shown.exit_code == 0 and "does not verify" not in shown.output, shown.output
    assert project.cli("approve", LEGACY_RUN, "--as", "Architect").exit_code == 0
    resumed = project.cli("resume", LEGACY_RUN)
    assert resumed.exit_code == 0, resumed.output
    assert project.read("out/heard.txt").strip() == "hello"
    assert [a["role"] for a in project.snapshot(LEGACY_RUN)["approvals"]] == ["Intern", "Architect"]


def test_an_older_copy_of_a_run_saved_before_the_journal_is_refused_by_its_ledger(project, monkeypatch):
    snapshot = legacy(project, monkeypatch)
    shutil.copyfile(LEGACY / "older" / snapshot.name, snapshot)
    refused(project, project.cli("resume", LEGACY_RUN), "it is save 6 of the run, and save 7 was made since")


def test_a_run_saved_before_the_journal_without_its_ledger_is_refused(project, monkeypatch):
    legacy(project, monkeypatch)
    (project.state_dir / "snapshot-ledger").unlink()
    refused(project, project.cli("resume", LEGACY_RUN), "has no record of this run")


@pytest.mark.parametrize("number", ["\u00b2", "\u0661", "9" * 5000])
def test_a_ledger_line_with_a_number_python_cannot_read_is_ignored(project, monkeypatch, number):
    # Superscript and Arabic-Indic digits pass str.isdigit() but not int(); so does no
    # number longer than Python's bound on digits.
    legacy(project, monkeypatch)
    with open(project.state_dir / "snapshot-ledger", "a", encoding="utf-8") as ledger:
        ledger.write(f"{LEGACY_RUN} {number} 0123456789abcdef\n")
    assert project.cli("approve", LEGACY_RUN, "--as", "Architect").exit_code == 0
    assert project.cli("resume", LEGACY_RUN).exit_code == 0


# -- trusting an edit -------------------------------------------------------------------------


def test_trust_edited_state_accepts_records_and_seals_anew(project):
    run_id, snapshot = paused(project)
    edit(snapshot, lambda data: data["steps"][0]["result"].update(stdout="repaired"))
    show = project.cli("runs", "show", run_id)
    assert (
        show.exit_code == 0 and "warning: the snapshot does not verify: the result of steps/0 was edited" in show.output
    ), show.output
    exported = json.loads(project.cli("runs", "export", run_id).output)
    assert exported["unverified"] == ["the result of steps/0 was edited"]

    trusted = project.cli("resume", run_id, "--trust-edited-state")
    assert trusted.exit_code == 4, trusted.output  # still waits for the architect
    assert "trusted although it does not verify: the result of steps/0 was edited" in trusted.output
    edits = project.snapshot()["trustedEdits"]
    assert (
        len(edits) == 1
        and edits[0]["changes"] == ["the result of steps/0 was edited"]
        and edits[0]["by"]
        and edits[0]["at"]
    )

    # Sealed anew: the other commands accept it, and the record stays in the audit trail.
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0
    assert project.read("out/heard.txt").strip() == "repaired"
    exported = json.loads(project.cli("runs", "export", run_id).output)
    assert exported["unverified"] == [] and exported["trustedEdits"][0]["changes"] == [
        "the result of steps/0 was edited"
    ]
    assert "trusted" in project.cli("runs", "show", run_id).output


def test_trust_edited_state_accepts_a_rollback_and_numbers_past_it(project):
    run_id, snapshot = paused(project)
    older = run_files(project, run_id)
    assert project.cli("approve", run_id, "--as", "Intern").exit_code == 4
    put_back(project, run_id, older)
    assert project.cli("resume", run_id, "--trust-edited-state").exit_code == 4
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0


def test_a_save_number_too_long_to_write_is_an_edited_seal_not_a_crash(project):
    run_id, snapshot = paused(project)
    # The longest integer Python reads from JSON: one more save could not be written as text.
    edit(snapshot, lambda data: data["seal"].update(seq=int("9" * 4300)))
    refused(project, project.cli("resume", run_id), "its seal was edited")
    trusted = project.cli("resume", run_id, "--trust-edited-state")
    assert trusted.exit_code == 4, trusted.output
    assert project.cli("approve", run_id, "--as", "Architect").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0


# -- the run key --------------------------------------------------------------------------------


def test_the_run_key_file_is_made_private_once(tmp_path):
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    key = load_run_key(tmp_path / "state", environ)
    path = tmp_path / "config" / "catalyst" / "run-key"
    assert key.source == str(path) and key.outside_state
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_run_key(tmp_path / "state", environ).secret == key.secret
    assert not (tmp_path / "state").exists()


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_run_key_others_may_read_is_refused(tmp_path):
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    load_run_key(tmp_path / "state", environ)
    path = tmp_path / "config" / "catalyst" / "run-key"
    path.chmod(0o644)
    with pytest.raises(RunKeyError) as error:
        load_run_key(tmp_path / "state", environ)
    assert "group or others" in error.value.message and "chmod 600" in error.value.fix


def test_a_short_environment_key_is_refused(tmp_path):
    with pytest.raises(RunKeyError) as error:
        load_run_key(tmp_path, {KEY_ENV: "short"})
    assert "at least 32" in error.value.message


def test_an_unwritable_config_directory_falls_back_to_the_state_directory_and_says_so(project, monkeypatch):
    blocker = project.write("not-a-directory", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    project.playbook("sealed", SEALED)
    result = project.run("sealed")
    assert result.exit_code == 4, result.output
    assert "a key in the state directory" in result.output and KEY_ENV in result.output
    assert stat.S_IMODE((project.state_dir / "run-key").stat().st_mode) == 0o600


# -- big results --------------------------------------------------------------------------------


BIG = """
    name: big
    description: Prints a lot, waits, then writes what it printed.
    owner: Engineer
    allowedWritePaths: [out/**]
    steps:
      - name: loud
        bash: "head -c 600000 /dev/zero | tr '\\\\0' a"
      - checkpoint: "Look at it"
      - file-write: out/heard.txt
        content: "{{loud.stdout}}"
"""


def test_a_big_result_is_kept_beside_the_snapshot_and_seen_on_resume(project):
    project.playbook("big", BIG)
    assert project.run("big").exit_code == 4
    run_id = project.run_id()
    snapshot = project.state_dir / f"run-{run_id}.json"
    assert snapshot.stat().st_size < 16 * 1024
    entry = project.snapshot()["steps"][0]
    assert entry["result"] is None and len(entry["resultBlob"]) == 64
    blob = project.state_dir / "results" / run_id / f"{entry['resultBlob']}.json"
    assert blob.stat().st_size > LIMIT and stat.S_IMODE(blob.stat().st_mode) == 0o600
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert project.cli("resume", run_id).exit_code == 0
    assert project.read("out/heard.txt").strip() == "a" * 600000
    assert project.state_dir.joinpath("history").is_dir()
    assert project.cli("runs", "prune", "--keep-last", "0").exit_code == 0
    assert not (project.state_dir / "results" / run_id).exists()


@pytest.mark.parametrize("damage", ["edited", "missing"])
def test_an_edited_or_missing_big_result_is_refused_naming_the_step(project, damage):
    project.playbook("big", BIG)
    assert project.run("big").exit_code == 4
    run_id = project.run_id()
    entry = project.snapshot()["steps"][0]
    blob = project.state_dir / "results" / run_id / f"{entry['resultBlob']}.json"
    if damage == "missing":
        blob.unlink()
    else:
        blob.write_text(json.dumps({"stdout": "touch PWNED", "stderr": "", "exitCode": 0}), encoding="utf-8")
    result = project.cli("resume", run_id)
    assert (
        result.exit_code == 3
        and "the result of steps/0, kept in" in result.output
        and f"is {damage}" in result.output.replace("was edited", "is edited")
    ), result.output


def test_approving_keeps_the_reference_to_a_big_result(project):
    project.playbook("big", BIG)
    assert project.run("big").exit_code == 4
    run_id = project.run_id()
    blob = project.snapshot()["steps"][0]["resultBlob"]
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    assert project.snapshot()["steps"][0]["resultBlob"] == blob and project.snapshot()["steps"][0]["result"] is None


def test_a_failed_run_from_history_is_trusted_and_resumed(project):
    project.playbook(
        "flaky",
        """
        name: flaky
        description: Fails until out/ok exists.
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: first
            bash: "echo first"
          - name: check
            bash: "test -f out/ok"
    """,
    )
    assert project.run("flaky").exit_code == 2
    run_id = project.run_id()
    archived = project.archived_snapshots()[0]
    edit(archived, lambda data: data["steps"][0]["result"].update(stdout="changed"))
    refused(project, project.cli("resume", run_id), "the result of steps/0 was edited")
    project.write("out/ok", "")
    assert project.cli("resume", run_id, "--trust-edited-state").exit_code == 0
    assert project.snapshot()["trustedEdits"][0]["changes"] == ["the result of steps/0 was edited"]


def test_programs_never_see_the_run_key_or_catalysts_secret_variables(project, monkeypatch):
    monkeypatch.setenv("CATALYST_RUN_KEY", "k" * 40)
    monkeypatch.setenv("CATALYST_SECRET_API_TOKEN", "hunter2-from-env")
    monkeypatch.setenv("ORDINARY_SETTING", "kept")
    project.playbook(
        "env-dump",
        """
        name: env-dump
        description: a program prints its environment
        owner: Engineer
        steps:
          - bash: env > "$TMPDIR/seen.env"
            writes: []
        """,
    )
    result = project.run("env-dump", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    seen = (project.temp / "seen.env").read_text() if (project.temp / "seen.env").exists() else ""
    assert "ORDINARY_SETTING=kept" in seen
    assert "CATALYST_RUN_KEY" not in seen and "hunter2-from-env" not in seen
