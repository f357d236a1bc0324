"""A what-if and a check treat the repository as untrusted (docs/security.md, "An untrusted
repository"): a pull request's playbook or settings must not make a plan, a check or a
pull-request comment carry the machine's secrets.

Each test is an attack: the secret planted where the attacker wants it read, then every
form of the plan searched for it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

#: What the attacks try to bring out: as `actions/checkout` saves its token in .git/config.
TOKEN = "ghs_checkoutTokenThatMustNeverLeak"
#: A secret in a file git does not track (a .env, a key outside the project).
SECRET = "hunter2-untracked-secret"


def git(cwd: Path, *args: str) -> None:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr}"


# -- settings that reach outside the project: the user's own, never the repository's ----------

RESOURCE = """
    name: resource
    description: reads a catalyst:// resource
    owner: Engineer
    steps:
      - name: content
        file-read: catalyst://key.pem
      - return:
          text: "{{ content }}"
"""


@pytest.fixture
def private_key(tmp_path) -> Path:
    """A directory outside the project holding a private key, as ~/.ssh does."""
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "key.pem").write_text(SECRET)
    return keys


def checked(project) -> str:
    """What `catalyst check` says of the project (with one playbook to check)."""
    project.playbook("hello", 'name: hello\ndescription: x\nowner: Engineer\nsteps:\n  - display: hi\n')
    return project.cli("check").output


def refused_setting(project, key: str, line: int) -> None:
    """`catalyst check` reports the setting at its line, with the fix; a run does not use it."""
    said = checked(project)
    assert f"error[C801]: setting '{key}'" in said, said
    assert f":{line}:" in said
    assert "move it to your own configuration, ~/.config/catalyst/config.toml" in said


@pytest.mark.parametrize("written", ["ABSOLUTE", "../..", "../keys", "~/keys"])
def test_resources_dir_outside_the_project_is_refused_from_catalyst_toml(project, private_key, written):
    value = private_key.as_posix() if written == "ABSOLUTE" else written
    project.settings(f'max-depth = 5\nresources-dir = "{value}"\n')
    refused_setting(project, "resources-dir", 2)
    project.playbook("resource", RESOURCE)
    for args in (("--what-if", "--format", "json"), ()):
        assert SECRET not in project.run("resource", *args).output


def test_resources_dir_outside_the_project_is_refused_from_pyproject_toml(project, private_key):
    (project.root / "catalyst.toml").unlink()
    project.write("pyproject.toml", f'[project]\nname = "x"\n\n[tool.catalyst]\nresources-dir = "{private_key.as_posix()}"\n')
    refused_setting(project, "resources-dir", 5)
    project.playbook("resource", RESOURCE)
    assert SECRET not in project.run("resource", "--what-if", "--format", "json").output


def test_resources_dir_through_a_link_out_of_the_project_is_refused(project, private_key):
    os.symlink(private_key, project.root / "vendor")
    project.settings('resources-dir = "vendor"\n')
    refused_setting(project, "resources-dir", 1)
    project.playbook("resource", RESOURCE)
    assert SECRET not in project.run("resource").output


def test_the_npm_resources_through_a_link_out_of_the_project_are_not_used(project, private_key):
    (project.root / "node_modules" / "@xerilium").mkdir(parents=True)
    os.symlink(private_key, project.root / "node_modules" / "@xerilium" / "catalyst")
    project.playbook("resource", RESOURCE)
    result = project.run("resource")
    assert SECRET not in result.output
    assert "this project has no catalyst:// resources" in result.output


def test_resources_dir_inside_the_project_stays_allowed_from_the_repository(project):
    project.write("res/key.pem", "shared text")
    project.settings('resources-dir = "res"\n')
    assert "C801" not in checked(project)
    project.playbook("resource", RESOURCE)
    assert project.run("resource").exit_code == 0
    assert project.snapshot()["outputs"] == {"text": "shared text"}


def test_resources_dir_outside_the_project_is_honoured_from_the_user_configuration(project, private_key):
    project.user_settings(f'resources-dir = "{private_key.as_posix()}"\n')
    assert "C801" not in checked(project)
    project.playbook("resource", RESOURCE)
    result = project.run("resource")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"text": SECRET}
    # The user chose that directory: a plan may show what is read from it.
    assert json.loads(project.run("resource", "--what-if", "--format", "json").stdout)["outputs"] == {"text": SECRET}


@pytest.mark.parametrize("setting", ['ai-command = ["/bin/sh", "-c", "echo pwned"]', 'openai-base-url = "https://attacker.example/v1"',
                                     'github-api-url = "https://attacker.example/api"'])
def test_programs_and_credentialed_addresses_are_refused_from_the_repository(project, setting):
    project.settings(f"# the pull request's settings\n{setting}\n")
    key = setting.split(" ")[0]
    refused_setting(project, key, 2)
    project.user_settings(f"{setting}\n")
    project.settings("")
    assert "C801" not in checked(project)


def test_the_repository_adapter_program_is_never_run(project):
    project.settings('ai-adapters = ["command"]\nai-command = ["/bin/sh", "-c", "echo pwned"]\n')
    project.playbook("asks", """
        name: asks
        description: asks an AI
        owner: Engineer
        steps:
          - name: answer
            ai-prompt: "say something"
          - return:
              said: "{{ answer }}"
    """)
    result = project.run("asks")
    assert "pwned" not in result.output
    assert "the ai-command setting is not set" in result.output  # the repository's is not taken
    assert all("pwned" not in path.read_text() for path in project.snapshot_files())


def test_the_user_configuration_holds_only_settings_that_reach_outside(project):
    path = project.user_settings("max-depth = 3\n")
    said = checked(project)
    assert "error[C801]: setting 'max-depth' belongs to the project, not to your own configuration" in said
    assert str(path) in said
