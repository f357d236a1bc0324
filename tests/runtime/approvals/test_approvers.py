"""Approvals bound to people: the approvers table, SSH-signed approvals, the ledger of spent
approvals, terminal approvals and masked comments."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from catalyst_dsl.ir.roles import Approvers
from catalyst_dsl.runtime.approvals.approvers import ApprovalRefused, SpentLedger, approval_text
from catalyst_dsl.runtime.lifecycle.context import RunOptions
from catalyst_dsl.runtime.lifecycle.session import Session
from tests.helpers.run_helpers import PROPOSE, REVIEWED, approval_by_hand

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")


APPROVERS = """
    roles = ["Engineer", "Architect", "Intern"]
    [approvers]
    "ana@example.com" = ["Architect"]
    "bob@example.com" = ["Intern"]
"""


def paused(project, settings: str = APPROVERS) -> str:
    project.settings(settings)
    project.playbook("reviewed", REVIEWED)
    started = project.run("reviewed")
    assert started.exit_code == 4, started.output
    return project.run_id()


def approvals(project, run_id: str) -> list[dict]:
    return project.snapshot(run_id)["approvals"]


# --- the table and the signed text --------------------------------------------------------


def test_approvers_hold_their_roles_only():
    table = Approvers({"Ana@Example.com": ["Architect"], "bob": ["Intern", "Tech Lead"]})
    assert table.holds("ana@example.com", "architect")
    assert not table.holds("ana@example.com", "Intern")
    assert table.holds("bob", " tech lead ")
    assert not table.holds("mallory", "Architect")
    assert table.holders("Architect") == ["ana@example.com"]
    assert Approvers({}).holds("anyone", "Architect")  # not configured: roles unverified


def test_the_signed_text_names_everything_an_approval_binds_to():
    text = approval_text(
        run_id="r1",
        path="steps/0",
        role="Tech Lead",
        approver="ana@example.com",
        decision="approve",
        state_hash="ab" * 32,
        nonce="n1",
    )
    assert text == (
        "catalyst approval v1\nrun: r1\nstep: steps/0\nrole: Tech Lead\napprover: ana@example.com\n"
        f"decision: approve\nstate: {'ab' * 32}\nnonce: n1\n"
    )


@pytest.mark.parametrize("approver", ["ana\nrole: Architect", "", " ana", "ana\x00"])
def test_the_signed_text_refuses_values_that_could_forge_a_line(approver):
    with pytest.raises(ApprovalRefused):
        approval_text(
            run_id="r1",
            path="steps/0",
            role="Architect",
            approver=approver,
            decision="approve",
            state_hash="h",
            nonce="n",
        )


def test_the_ledger_only_grows_and_remembers_across_instances(tmp_path):
    ledger = SpentLedger(tmp_path)
    ledger.spend("n1", "run-a")
    SpentLedger(tmp_path).spend("n2", "run-b")
    assert SpentLedger(tmp_path).spent() == {"n1", "n2"}
    assert (tmp_path / "spent-approvals").read_text() == "n1 run-a\nn2 run-b\n"
    assert os.stat(tmp_path / "spent-approvals").st_mode & 0o077 == 0
    with pytest.raises(ValueError):
        ledger.spend("two words", "run-a")


# --- approvals bound to approvers ------------------------------------------------------------


def test_an_approval_as_a_role_the_approver_does_not_hold_is_refused(project):
    run_id = paused(project)
    for who in ("bob@example.com", "mallory@example.com"):
        refused = project.cli("approve", run_id, "--as", "Architect", "--by", who)
        assert refused.exit_code == 1, refused.output
        assert "is refused" in refused.output and "ana@example.com" in refused.output  # who may, as the fix
    assert approvals(project, run_id) == []
    approved = project.cli("approve", run_id, "--as", "Architect", "--by", "ana@example.com")
    assert approved.exit_code == 0, approved.output
    assert [(a["by"], a["role"], a["released"]) for a in approvals(project, run_id)] == [
        ("ana@example.com", "Architect", True)
    ]
    assert project.cli("resume", run_id).exit_code == 0


def test_the_approver_is_the_os_user_when_by_is_not_given(project, monkeypatch):
    run_id = paused(project)
    monkeypatch.setenv("LOGNAME", "ana@example.com")
    monkeypatch.setenv("USER", "ana@example.com")
    approved = project.cli("approve", run_id, "--as", "Architect")
    assert approved.exit_code == 0, approved.output
    assert approvals(project, run_id)[0]["by"] == "ana@example.com"


def test_without_approvers_any_role_is_taken_at_its_word(project):
    run_id = paused(project, settings="")
    approved = project.cli("approve", run_id, "--as", "Architect", "--by", "mallory")
    assert approved.exit_code == 0 and approvals(project, run_id)[0]["released"] is True


@pytest.mark.parametrize(
    "option, value",
    [
        ("--by", "mallory\n  approved by ana (Architect) via cli"),
        ("--by", "mallory\x1b[2K"),
        ("--as", "Architect\nrole: Owner"),
        ("--by", " "),
    ],
)
def test_a_name_or_role_that_could_forge_a_line_of_the_audit_trail_is_refused(project, option, value):
    run_id = paused(project, settings="")
    given = {"--as": "Architect", "--by": "mallory", option: value}
    approved = project.cli("approve", run_id, "--as", given["--as"], "--by", given["--by"])
    assert approved.exit_code == 1 and "one line of text" in approved.output, approved.output
    token = project.cli("runs", "token", run_id, "--as", given["--as"], "--by", given["--by"])
    assert token.exit_code == 1 and "one line of text" in token.output, token.output
    assert approvals(project, run_id) == []


def test_a_token_is_issued_only_to_an_approver_holding_the_role(project):
    run_id = paused(project)
    refused = project.cli("runs", "token", run_id, "--as", "Architect", "--by", "bob@example.com")
    assert refused.exit_code == 1 and "bob@example.com does not hold the role Architect" in refused.output
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--by", "ana@example.com").output.strip()
    # The settings change before the token is redeemed: it no longer speaks for a holder of the role.
    project.settings(APPROVERS.replace('"ana@example.com" = ["Architect"]', '"ana@example.com" = ["Intern"]'))
    late = project.cli("approve", run_id, "--token", token)
    assert late.exit_code == 1 and "does not hold the role Architect" in late.output
    assert approvals(project, run_id) == []


def test_a_used_token_stays_used_after_the_snapshot_is_rolled_back(project):
    run_id = paused(project)
    snapshot = project.state_dir / f"run-{run_id}.json"
    before = snapshot.read_bytes()
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--by", "ana@example.com").output.strip()
    assert project.cli("approve", run_id, "--token", token).exit_code == 0
    snapshot.write_bytes(before)  # the snapshot from before the token was used
    assert approvals(project, run_id) == []
    # The seal's save ledger sees the rollback first; even once someone accepts the
    # rolled-back snapshot, the spent-approvals ledger still knows the token was used.
    refused = project.cli("approve", run_id, "--token", token)
    assert refused.exit_code == 3 and "cannot be trusted" in refused.output, refused.output
    trusted = project.cli("resume", run_id, "--trust-edited-state")
    assert trusted.exit_code == 4, trusted.output
    replayed = project.cli("approve", run_id, "--token", token)
    assert replayed.exit_code == 1 and "already used" in replayed.output
    assert approvals(project, run_id) == []
    assert (project.state_dir / "spent-approvals").read_text().count(run_id) == 1
    # The token key comes from the run key of the user's config directory: no key file sits
    # in the state directory, which a step's program could read.
    assert not (project.state_dir / "approval.key").exists()


def test_an_approval_comment_holding_a_secret_is_masked(project):
    project.settings('secrets-file = "secrets.env"\n' + APPROVERS)
    os.chmod(project.write("secrets.env", "api-token = hunter2-very-secret\n"), 0o600)
    project.playbook(
        "reviewed",
        REVIEWED.replace("steps:", "inputs:\n      - string: api-token\n        secret: true\n    steps:", 1),
    )
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    approved = project.cli(
        "approve",
        run_id,
        "--as",
        "Architect",
        "--by",
        "ana@example.com",
        "--comment",
        "the key hunter2-very-secret looks fine",
    )
    assert approved.exit_code == 0, approved.output
    assert "hunter2-very-secret" not in (project.state_dir / f"run-{run_id}.json").read_text()
    assert "hunter2-very-secret" not in project.cli("runs", "export", run_id).output
    assert approvals(project, run_id)[0]["comment"].startswith("the key ")


# --- terminal approvals ---------------------------------------------------------------------


def _terminal_run(project, monkeypatch, settings: str, user: str) -> tuple[int, list, str]:
    import io

    from catalyst_dsl.runtime.lifecycle import run_hooks

    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.diagnostics.model import DiagnosticSink

    project.settings(settings)
    project.write(
        ".catalyst/allowed_signers",
        "ana@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM0uwrqTlGCK4h80z/x3uJyaJNPyLVBqX6cMKjKYSHcB\n",
    )
    project.playbook("reviewed", REVIEWED)
    monkeypatch.setenv("LOGNAME", user)
    monkeypatch.setenv("USER", user)
    asked = []
    monkeypatch.setattr(run_hooks, "_typed_line", lambda prompt: asked.append(prompt) or "")
    session = Session(load_project(project.root, DiagnosticSink()), RunOptions(interactive=True, out=io.StringIO()))
    code = session.start(str(project.root / "playbooks" / "reviewed.yaml"), {})
    return code, asked, session.options.out.getvalue()


def test_enter_releases_a_role_restricted_checkpoint_for_a_holder_of_the_role(project, monkeypatch):
    code, asked, _ = _terminal_run(project, monkeypatch, APPROVERS, "ana@example.com")
    assert code == 0 and len(asked) == 1
    approval = project.snapshot()["approvals"][0]
    assert (approval["via"], approval["by"], approval["role"]) == ("terminal", "ana@example.com", "Architect")


def test_enter_is_not_offered_to_someone_without_the_role(project, monkeypatch):
    code, asked, out = _terminal_run(project, monkeypatch, APPROVERS, "bob@example.com")
    assert code == 4 and asked == []
    assert "bob@example.com holds none of the roles" in out
    assert project.snapshot()["approvals"] == []


def test_enter_never_releases_a_role_restricted_checkpoint_when_approvals_must_be_signed(project, monkeypatch):
    code, asked, out = _terminal_run(project, monkeypatch, "signed-approvals = true\n" + APPROVERS, "ana@example.com")
    assert code == 4 and asked == [] and "signed approvals are on" in out


# --- SSH-signed approvals ---------------------------------------------------------------------

SIGNED = "signed-approvals = true\n" + APPROVERS


@pytest.fixture
def keys(tmp_path):
    """SSH keys in a directory outside the project: ana (allowed, Architect), bob (allowed,
    Intern only) and eve (not in the allowed-signers file)."""
    home = tmp_path / "keys"
    home.mkdir()
    made = {}
    for name in ("ana", "bob", "eve"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(home / name)], check=True)
        made[name] = home / name
    return made


def allowed_signers(project, keys) -> None:
    lines = [
        f"{who}@example.com {(keys[who].with_suffix('.pub')).read_text().split(' ', 2)[0]} "
        f"{(keys[who].with_suffix('.pub')).read_text().split(' ', 2)[1]}"
        for who in ("ana", "bob")
    ]
    project.write(".catalyst/allowed_signers", "\n".join(lines) + "\n")


def signed_pause(project, keys) -> str:
    allowed_signers(project, keys)
    return paused(project, SIGNED)


def sign_file(project, key, text: str, name: str = "approval.txt"):
    message = project.write(name, text)
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(key), "-n", "catalyst-approval", str(message)],
        check=True,
        capture_output=True,
    )
    return str(message) + ".sig"


@needs_ssh_keygen
def test_a_signed_approval_from_an_allowed_signer_holding_the_role_releases(project, keys):
    run_id = signed_pause(project, keys)
    unsigned = project.cli("approve", run_id, "--as", "Architect", "--by", "ana@example.com")
    assert unsigned.exit_code == 1 and "not signed" in unsigned.output
    approved = project.cli(
        "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--sign-with", str(keys["ana"])
    )
    assert approved.exit_code == 0, approved.output
    approval = approvals(project, run_id)[0]
    assert approval["released"] and "BEGIN SSH SIGNATURE" in approval["signature"]
    assert f"run: {run_id}\n" in approval["signedText"] and "approver: ana@example.com\n" in approval["signedText"]
    # The audit trail carries what anyone can verify again with ssh-keygen alone.
    exported = json.loads(project.cli("runs", "export", run_id).output)["approvals"][0]
    assert exported["signature"] == approval["signature"]
    sig = project.write("check.sig", approval["signature"])
    check = subprocess.run(
        [
            "ssh-keygen",
            "-Y",
            "verify",
            "-f",
            str(project.root / ".catalyst/allowed_signers"),
            "-I",
            "ana@example.com",
            "-n",
            "catalyst-approval",
            "-s",
            str(sig),
        ],
        input=approval["signedText"],
        text=True,
        capture_output=True,
    )
    assert check.returncode == 0, check.stderr
    assert "signed" in project.cli("runs", "show", run_id).output
    assert project.cli("resume", run_id).exit_code == 0


@needs_ssh_keygen
def test_an_allowed_signer_without_the_role_is_refused(project, keys):
    run_id = signed_pause(project, keys)
    refused = project.cli(
        "approve", run_id, "--as", "Architect", "--by", "bob@example.com", "--sign-with", str(keys["bob"])
    )
    assert refused.exit_code == 1 and "does not hold the role Architect" in refused.output
    assert approvals(project, run_id) == []


@needs_ssh_keygen
def test_a_key_not_in_the_allowed_signers_file_is_refused(project, keys):
    run_id = signed_pause(project, keys)
    # eve signs in ana's name with her own key; and bob signs in ana's name with his.
    for key in ("eve", "bob"):
        refused = project.cli(
            "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--sign-with", str(keys[key])
        )
        assert refused.exit_code == 1 and "not valid for ana@example.com" in refused.output, refused.output
    assert approvals(project, run_id) == []


@needs_ssh_keygen
def test_a_detached_signature_of_the_printed_text_is_accepted(project, keys):
    run_id = signed_pause(project, keys)
    text = project.cli("runs", "approval-text", run_id, "--as", "Architect", "--by", "ana@example.com")
    assert text.exit_code == 0 and text.output.startswith("catalyst approval v1\n")
    signature = sign_file(project, keys["ana"], text.output)
    approved = project.cli("approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--signature", signature)
    assert approved.exit_code == 0, approved.output
    assert approvals(project, run_id)[0]["signedText"] == text.output


@needs_ssh_keygen
def test_a_signature_over_another_run_step_role_or_state_is_refused(project, keys):
    run_id = signed_pause(project, keys)
    text = project.cli("runs", "approval-text", run_id, "--as", "Architect", "--by", "ana@example.com").output
    changed = {
        "another run": text.replace(f"run: {run_id}\n", "run: 20260101-000000-reviewed-001\n"),
        "another step": text.replace("step: ", "step: steps/9/"),
        "another state": text.replace("state: ", "state: 00"),
        "another role": text.replace("role: Architect", "role: Intern"),
    }
    for why, other in changed.items():
        signature = sign_file(project, keys["ana"], other, name=f"{why.replace(' ', '-')}.txt")
        refused = project.cli(
            "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--signature", signature
        )
        assert refused.exit_code == 1 and "signature is not valid" in refused.output, why
    assert approvals(project, run_id) == []


@needs_ssh_keygen
def test_a_replayed_signature_is_refused(project, keys):
    run_id = signed_pause(project, keys)
    snapshot = project.state_dir / f"run-{run_id}.json"
    before = snapshot.read_bytes()
    signature = sign_file(
        project,
        keys["ana"],
        project.cli("runs", "approval-text", run_id, "--as", "Architect", "--by", "ana@example.com").output,
    )
    assert (
        project.cli(
            "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--signature", signature
        ).exit_code
        == 0
    )
    snapshot.write_bytes(before)  # rolled back to before the approval
    refused = project.cli("approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--signature", signature)
    assert refused.exit_code == 3 and "cannot be trusted" in refused.output, refused.output
    assert project.cli("resume", run_id, "--trust-edited-state").exit_code == 4
    replayed = project.cli("approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--signature", signature)
    assert replayed.exit_code == 1 and "already used" in replayed.output
    assert approvals(project, run_id) == []


@needs_ssh_keygen
def test_a_signature_for_an_earlier_pause_does_not_release_a_later_one(project, keys):
    project.settings(SIGNED)
    allowed_signers(project, keys)
    project.playbook(
        "reviewed",
        REVIEWED.replace(
            '      - name: after\n        log-info: "after the review"',
            '      - name: again\n        checkpoint: "Look again"',
        ),
    )
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    signature = sign_file(
        project,
        keys["ana"],
        project.cli("runs", "approval-text", run_id, "--as", "Architect", "--by", "ana@example.com").output,
    )
    assert (
        project.cli(
            "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--signature", signature
        ).exit_code
        == 0
    )
    assert project.cli("resume", run_id).exit_code == 4  # paused at the second checkpoint
    replayed = project.cli("approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--signature", signature)
    assert replayed.exit_code == 1 and "signature is not valid" in replayed.output


@needs_ssh_keygen
def test_redeeming_a_token_needs_its_approvers_signature(project, keys):
    run_id = signed_pause(project, keys)
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--by", "ana@example.com").output.strip()
    unsigned = project.cli("approve", run_id, "--token", token)
    assert unsigned.exit_code == 1 and "not signed" in unsigned.output
    forged = project.cli("approve", run_id, "--token", token, "--sign-with", str(keys["bob"]))
    assert forged.exit_code == 1 and "not valid for ana@example.com" in forged.output
    text = project.cli("runs", "approval-text", run_id, "--token", token).output
    assert "approver: ana@example.com\n" in text and "decision: approve\n" in text
    approved = project.cli("approve", run_id, "--token", token, "--sign-with", str(keys["ana"]))
    assert approved.exit_code == 0, approved.output
    approval = approvals(project, run_id)[0]
    assert approval["released"] and approval["signedText"] == text and approval["via"] == "token"


@needs_ssh_keygen
def test_a_missing_allowed_signers_file_refuses_with_the_fix(project, keys):
    run_id = signed_pause(project, keys)
    (project.root / ".catalyst" / "allowed_signers").unlink()
    refused = project.cli(
        "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--sign-with", str(keys["ana"])
    )
    assert refused.exit_code == 1 and "allowed-signers file" in refused.output and "does not exist" in refused.output
    assert "Traceback" not in refused.output


def test_signed_approvals_leave_an_open_checkpoint_to_anyone(project):
    project.settings(SIGNED)
    project.playbook(
        "open",
        REVIEWED.replace("name: reviewed", "name: open").replace("reviewers:\n      required: [Architect]\n    ", ""),
    )
    started = project.run("open")
    assert started.exit_code == 4, started.output
    approved = project.cli("approve", project.run_id(), "--as", "Intern", "--by", "bob@example.com")
    assert approved.exit_code == 0 and approvals(project, project.run_id())[0]["released"]


def test_settings_of_approvers_are_type_checked(project):
    project.settings('[approvers]\n"ana" = "Architect"\n')
    project.playbook("reviewed", REVIEWED)
    result = project.cli("check", "playbooks/reviewed.yaml")
    assert "C801" in result.output and "expected a list of role names for 'ana'" in result.output
    project.settings('signed-approvals = "yes"\n')
    assert "expected a boolean" in project.cli("check", "playbooks/reviewed.yaml").output


def test_preflight_refuses_a_run_whose_checkpoints_no_one_could_release(project):
    project.settings('roles = ["Engineer", "Architect"]\n[approvers]\n"ana@example.com" = ["Engineer"]\n')
    project.playbook("reviewed", REVIEWED)
    refused = project.run("reviewed")
    assert refused.exit_code == 1 and "C827" in refused.output and "nothing was run" in refused.output
    assert project.live_snapshots() == []
    project.settings('roles = ["Engineer"]\n')
    refused = project.run("reviewed")
    assert (
        refused.exit_code == 1
        and "C826" in refused.output
        and "'Architect' is not one of the project's roles" in refused.output
    )


def test_preflight_refuses_signed_approvals_without_a_key_for_the_role(project):
    project.settings(SIGNED)
    project.playbook("reviewed", REVIEWED)
    refused = project.run("reviewed")
    assert refused.exit_code == 1 and "C828" in refused.output and "cannot be read" in refused.output


def test_autonomous_mode_does_not_release_what_needs_a_signature(project):
    project.settings(SIGNED)
    project.write(
        ".catalyst/allowed_signers",
        "ana@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM0uwrqTlGCK4h80z/x3uJyaJNPyLVBqX6cMKjKYSHcB\n",
    )
    project.playbook("reviewed", REVIEWED)
    result = project.run("reviewed", "--mode", "autonomous")
    assert result.exit_code == 4, result.output
    assert (
        "catalyst does not release by itself a checkpoint that needs a role" in result.output
        and project.snapshot()["approvals"] == []
    )
    project.settings(APPROVERS)  # without signed approvals autonomous mode approves by itself, as before
    assert project.run("reviewed", "--mode", "autonomous").exit_code == 0


@needs_ssh_keygen
def test_an_approval_added_to_the_snapshot_by_hand_is_refused_on_resume(project, keys):
    run_id = signed_pause(project, keys)
    snapshot = project.state_dir / f"run-{run_id}.json"
    data = json.loads(snapshot.read_text())
    data["approvals"].append(approval_by_hand("steps/0", "ana@example.com", data["updatedAt"]))
    snapshot.write_text(json.dumps(data))
    # The snapshot's seal sees the edit first; accepting the edited snapshot
    # (--trust-edited-state) still does not accept an approval nobody signed.
    sealed = project.cli("resume", run_id)
    assert sealed.exit_code == 3 and "added by hand" in sealed.output, sealed.output
    refused = project.cli("resume", run_id, "--trust-edited-state")
    assert refused.exit_code == 3 and "not validly signed" in refused.output, refused.output
    assert project.snapshot(run_id)["status"] == "paused"
    # A genuine signature copied into the forged approval, but for another approver's name, fails too.
    data = json.loads(snapshot.read_text())
    data["approvals"] = []
    snapshot.write_text(json.dumps(data))
    assert project.cli("resume", run_id, "--trust-edited-state").exit_code == 4
    approved = project.cli(
        "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--sign-with", str(keys["ana"])
    )
    assert approved.exit_code == 0, approved.output
    data = json.loads(snapshot.read_text())
    genuine = data["approvals"][-1]
    data["approvals"] = [dict(genuine, by="bob@example.com", role="Architect")]
    snapshot.write_text(json.dumps(data))
    refused = project.cli("resume", run_id, "--trust-edited-state")
    assert refused.exit_code == 3 and "not validly signed" in refused.output
    data["approvals"] = [genuine]
    snapshot.write_text(json.dumps(data))
    assert project.cli("resume", run_id, "--trust-edited-state").exit_code == 0


def test_with_signed_approvals_a_webhook_review_is_recorded_and_releases_nothing(project, fake, monkeypatch):
    from tests.helpers import fake_github
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project

    project.settings(
        'signed-approvals = true\n\n[github-reviewers]\nalice = "Architect"\n\n[approvers]\n"alice" = ["Architect"]\n'
    )
    project.user_settings(f'github-api-url = "{fake.url}"\n')
    project.write(
        ".catalyst/allowed_signers",
        "alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM0uwrqTlGCK4h80z/x3uJyaJNPyLVBqX6cMKjKYSHcB\n",
    )
    monkeypatch.setenv("CATALYST_SECRET_GITHUB_TOKEN", fake_github.TOKEN)
    project.playbook("propose", PROPOSE)
    started = project.run("propose")
    assert started.exit_code == 4, started.output
    session = Session(load_project(project.root, DiagnosticSink()), RunOptions())
    said = session.review_received("https://github.com/acme/widgets/pull/1", "alice", "approve", "ship it")
    assert said == [{"run": project.run_id(), "step": "steps/0/review", "decision": "approve", "released": False}]
    assert project.cli("resume", project.run_id()).exit_code == 4


def test_a_token_redeemed_by_racing_processes_counts_once(project):
    import threading

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.runtime.errors import RunAbort

    run_id = paused(project)
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--by", "ana@example.com").output.strip()
    outcomes: list[str] = []
    start = threading.Barrier(6)

    def redeem() -> None:
        session = Session(load_project(project.root, DiagnosticSink()), RunOptions())
        start.wait()
        try:
            session.approve_with_token(run_id, token, None)
            outcomes.append("approved")
        except RunAbort as refused:
            outcomes.append(refused.message)

    threads = [threading.Thread(target=redeem) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # pytest.fail, not an assertion's message: pytest cuts a long one, and a refusal's text
    # (a snapshot's path, its save numbers) is what tells a race from a rule.
    if outcomes.count("approved") != 1 or not all("already used" in o for o in outcomes if o != "approved"):
        pytest.fail("the racing redeemers were told:\n" + "\n".join(outcomes))
    assert len(approvals(project, run_id)) == 1
    assert (project.state_dir / "spent-approvals").read_text().count(run_id) == 1


TWO_CHECKPOINTS = """
    name: reviewed
    description: pauses twice for an architect
    owner: Engineer
    reviewers:
      required: [Architect]
    steps:
      - name: review
        checkpoint: "Look at it"
      - name: again
        checkpoint: "Look at it again"
      - name: after
        log-info: "after the reviews"
"""


@needs_ssh_keygen
def test_an_unsigned_approval_planted_for_a_later_checkpoint_does_not_release_it(project, keys):
    allowed_signers(project, keys)
    project.settings(SIGNED)
    project.playbook("reviewed", TWO_CHECKPOINTS)
    assert project.run("reviewed").exit_code == 4
    run_id = project.run_id()
    snapshot = project.state_dir / f"run-{run_id}.json"
    data = json.loads(snapshot.read_text())
    assert data["pause"]["path"] == "steps/0"
    # An approval of the second checkpoint, written by hand before the run reaches it.
    data["approvals"].append(approval_by_hand("steps/1", "ana@example.com", data["updatedAt"]))
    snapshot.write_text(json.dumps(data))
    assert project.cli("resume", run_id, "--trust-edited-state").exit_code == 4  # still paused at steps/0
    approved = project.cli(
        "approve", run_id, "--as", "Architect", "--by", "ana@example.com", "--sign-with", str(keys["ana"])
    )
    assert approved.exit_code == 0, approved.output
    resumed = project.cli("resume", run_id)
    # The first checkpoint goes by its signature; the second is not released by the planted approval.
    assert resumed.exit_code in (3, 4) and "after the reviews" not in resumed.output, resumed.output
    assert project.snapshot(run_id)["status"] == "paused"


SETTINGS_WRITER = """
    name: reviewed
    description: writes a file a value names, then pauses for an architect
    owner: Engineer
    reviewers:
      required: [Architect]
    inputs:
      - string: target
      - string: notes
    steps:
      - name: save-notes
        file-write: "{{ target }}"
        content: "{{ notes }}"
      - name: review
        checkpoint: "Look at it"
"""


@pytest.mark.parametrize("target", ["catalyst.toml", ".catalyst/allowed_signers"])
def test_a_step_never_rewrites_who_may_approve_unless_a_grant_names_the_file(project, target):
    # Without allowedWritePaths a step may write anywhere in the project, but not the
    # settings or the allowed-signers file: a value written there would choose approvers.
    project.settings(SIGNED)
    project.write(
        ".catalyst/allowed_signers",
        "ana@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM0uwrqTlGCK4h80z/x3uJyaJNPyLVBqX6cMKjKYSHcB\n",
    )
    project.playbook("reviewed", SETTINGS_WRITER)
    before = project.read(target)
    forged = 'roles = ["Engineer", "Architect"]\n[approvers]\n"mallory" = ["Architect"]\n'
    result = project.run("reviewed", target=target, notes=forged)
    assert result.exit_code == 2 and "decides who may approve" in result.output, result.output
    assert project.read(target) == before
    # A grant naming the file in plain text allows it, as the author's decision.
    granted = SETTINGS_WRITER.replace("steps:", f"allowedWritePaths: [{target}]\n    steps:", 1).replace(
        '"{{ target }}"', target
    )
    project.playbook("reviewed", granted)
    project.settings(SIGNED.replace("signed-approvals = true\n", ""))
    allowed = project.run("reviewed", target=target, notes=before)
    assert allowed.exit_code == 4, allowed.output
