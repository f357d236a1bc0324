"""Run lifecycle settings and outside approvals: tokens, retention, secret files, adapter precedence."""

from __future__ import annotations

import os
from tests.helpers.run_helpers import REVIEWED


def paused(project) -> str:
    project.playbook("reviewed", REVIEWED)
    assert project.run("reviewed").exit_code == 4
    return project.run_id()


def test_an_approval_token_releases_the_checkpoint_once(project):
    run_id = paused(project)
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--by", "alice").output.strip()
    assert token.startswith("cat1.")
    approved = project.cli("approve", run_id, "--token", token, "--comment", "fine")
    assert approved.exit_code == 0, approved.output
    approval = project.snapshot()["approvals"][-1]
    assert (approval["via"], approval["by"], approval["role"], approval["released"]) == (
        "token",
        "alice",
        "Architect",
        True,
    )
    again = project.cli("approve", run_id, "--token", token)
    assert again.exit_code == 1 and "already used" in again.output
    assert project.cli("resume", run_id).exit_code == 0


def test_a_token_for_another_state_is_refused(project):
    run_id = paused(project)
    token = project.cli("runs", "token", run_id, "--as", "Architect").output.strip()
    tampered = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    refused = project.cli("approve", run_id, "--token", tampered)
    assert refused.exit_code == 1 and "refused" in refused.output
    assert not project.snapshot()["approvals"]


def test_a_token_from_a_role_that_may_not_release_is_recorded_only(project):
    run_id = paused(project)
    token = project.cli("runs", "token", run_id, "--as", "Intern").output.strip()
    project.cli("approve", run_id, "--token", token)
    assert project.snapshot()["approvals"][-1]["released"] is False
    assert project.cli("resume", run_id).exit_code == 4


def test_request_changes_fails_the_checkpoint_through_its_policy(project):
    run_id = paused(project)
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--decision", "request-changes").output.strip()
    project.cli("approve", run_id, "--token", token, "--comment", "rename the module")
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 2
    snapshot = project.snapshot(run_id)
    assert snapshot["error"]["code"] == "ChangesRequested" and "rename the module" in snapshot["error"]["message"]


def test_a_comment_token_is_recorded_and_releases_nothing(project):
    run_id = paused(project)
    token = project.cli("runs", "token", run_id, "--as", "Architect", "--decision", "comment").output.strip()
    project.cli("approve", run_id, "--token", token, "--comment", "just a note")
    approval = project.snapshot()["approvals"][-1]
    assert (approval["decision"], approval["released"]) == ("comment", False)
    assert project.cli("resume", run_id).exit_code == 4


def test_approve_needs_a_role_or_a_token(project):
    run_id = paused(project)
    result = project.cli("approve", run_id)
    assert result.exit_code == 2 and "--as ROLE" in result.output


def test_retention_settings_are_the_prune_defaults(project):
    project.settings("retention-runs = 1\n")
    project.playbook(
        "quick",
        """
        name: quick
        description: one step
        owner: Engineer
        steps:
          - log-info: hi
    """,
    )
    for _ in range(3):
        assert project.run("quick").exit_code == 0
    pruned = project.cli("runs", "prune")
    assert pruned.exit_code == 0 and "removed 2 archived runs" in pruned.output
    assert len(project.archived_snapshots()) == 1


SECRET = """
    name: secretive
    description: uses a token
    owner: Engineer
    inputs:
      - string: api-token
        secret: true
        required: true
    steps:
      - log-info: "token length ${{ get('api-token').length }}"
"""


def test_secrets_come_from_the_secrets_file(project):
    project.settings('secrets-file = "secrets.env"\n')
    secrets = project.write("secrets.env", "api-token = from-the-file-123\n")
    os.chmod(secrets, 0o600)
    project.playbook("secretive", SECRET)
    result = project.run("secretive")
    assert result.exit_code == 0, result.output
    assert "token length 17" in result.output


def test_a_shared_secrets_file_is_refused_with_the_fix(project):
    project.settings('secrets-file = "secrets.env"\n')
    secrets = project.write("secrets.env", "api-token=x1234\n")
    os.chmod(secrets, 0o644)
    project.playbook("secretive", SECRET)
    result = project.run("secretive")
    assert result.exit_code == 1
    assert "chmod 600" in result.output and "Traceback" not in result.output


def test_an_unknown_adapter_in_the_precedence_is_an_error_not_the_mock(project):
    project.settings('ai-adapters = ["no-such-adapter"]\n')
    project.playbook(
        "asks",
        """
        name: asks
        description: one prompt
        owner: Engineer
        steps:
          - name: answer
            ai-prompt: "Say hi"
          - log-info: "{{answer}}"
    """,
    )
    result = project.run("asks")
    assert result.exit_code == 1, result.output
    assert (
        "none of the AI adapters of the ai-adapters setting is installed: no-such-adapter; nothing was run"
        in result.output
    )
    assert "mock answer" not in result.output and not project.snapshot_files()


def test_approving_or_cancelling_a_run_that_does_not_exist_creates_nothing(project):
    for args in (["approve", "no-such-run", "--as", "Architect"], ["cancel", "no-such-run", "--reason", "x"]):
        result = project.cli(*args)
        assert result.exit_code != 0 and "no-such-run" in result.output, result.output
    assert not (project.root / ".xe").exists()


def test_a_setting_check_refuses_stops_the_run_and_its_what_if(project):
    """A setting of the wrong type is not taken at its default behind the person's back:
    `require-confinement = "true"` (a string) would leave programs unconfined."""
    project.settings('require-confinement = "true"\n')
    project.playbook("secretive", SECRET)
    for extra in ((), ("--what-if",)):
        result = project.run("secretive", *extra, api_token="x")
        assert result.exit_code == 1, result.output
        assert "the project's settings have errors; nothing was run" in result.output
        assert "C801" in result.output and "setting 'require-confinement': expected a boolean" in result.output
    assert not project.snapshot_files()
