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


@pytest.fixture
def repository(project, tmp_path, monkeypatch):
    """The project as a checked-out pull request: a git repository whose .git/config holds
    the checkout's token, with `tracked.txt` committed."""
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    git(project.root, "init", "-q")
    git(project.root, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    project.write("tracked.txt", "public text\n")
    return project


def commit(project) -> None:
    git(project.root, "add", "-A")
    git(
        project.root,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "-q",
        "-m",
        "pull request",
    )


def reads(project, path: str, name: str = "reads") -> None:
    project.playbook(
        name,
        f"""
        name: {name}
        description: reads a file and shows it
        owner: Engineer
        steps:
          - name: content
            file-read: {json.dumps(path)}
          - display: "read: {{{{ content }}}}"
          - return:
              text: "{{{{ content }}}}"
    """,
    )


def every_plan(project, name: str = "reads") -> str:
    """The plan as text, JSON and Markdown (the pull-request comment's form), joined."""
    shown = []
    for fmt in ("text", "json", "markdown"):
        result = project.run(name, "--what-if", "--format", fmt)
        # 2: a refused read is a failure the plan foresees (docs/plan-format.md, `fails`).
        assert result.exit_code in (0, 2), result.output
        shown.append(result.stdout)
    return "\n".join(shown)


def step(project, name: str = "reads") -> dict:
    plan = json.loads(project.run(name, "--what-if", "--format", "json").stdout)
    return plan["steps"][0]


@pytest.mark.parametrize("path", [".git/config", ".git/../.git/config", "./.git//config", "playbooks/../.git/config"])
def test_a_what_if_never_reads_the_git_directory(repository, path):
    reads(repository, path)
    commit(repository)
    assert TOKEN not in every_plan(repository)
    first = step(repository)
    assert first["change"] == "unknown"
    assert "a .git directory, which a what-if never reads" in first["reason"]


def test_a_committed_link_into_the_git_directory_is_not_followed(repository):
    os.symlink(".git/config", repository.root / "link")
    reads(repository, "link")
    commit(repository)
    assert TOKEN not in every_plan(repository)
    assert "'link' leads into a .git directory, which a what-if never reads" in step(repository)["reason"]


def test_a_write_into_the_git_directory_shows_no_diff_of_it(repository):
    # A playbook may grant itself .git/config: its what-if must still not diff the token out.
    repository.playbook(
        "writes",
        """
        name: writes
        description: rewrites the git config
        owner: Engineer
        allowedWritePaths: [.git/config]
        steps:
          - file-write: .git/config
            content: "[core]\\n"
    """,
    )
    commit(repository)
    assert TOKEN not in every_plan(repository, "writes")


@pytest.mark.parametrize("path", ["../outside.txt", "OUTSIDE", "escape", "passwd"])
def test_a_what_if_never_reads_outside_the_project(repository, path):
    outside = repository.root.parent / "outside.txt"
    outside.write_text(SECRET)
    os.symlink(outside, repository.root / "escape")
    os.symlink("/etc/passwd", repository.root / "passwd")
    reads(repository, str(outside) if path == "OUTSIDE" else path)
    commit(repository)
    shown = every_plan(repository)
    assert SECRET not in shown and "root:" not in shown
    assert step(repository)["change"] in ("unknown", "refused")


def test_the_content_of_an_untracked_file_is_unknown_in_every_plan(repository):
    reads(repository, "secret.env")
    commit(repository)
    repository.write("secret.env", f"TOKEN={SECRET}\n")
    assert SECRET not in every_plan(repository)
    first = step(repository)
    assert first["change"] == "unknown"
    assert "not tracked by git" in first["reason"]


def test_an_untracked_file_written_or_deleted_shows_no_diff_of_its_content(repository):
    repository.playbook(
        "changes",
        """
        name: changes
        description: overwrites and deletes untracked files
        owner: Engineer
        steps:
          - file-write: secret.env
            content: replaced
          - file-delete: other.env
    """,
    )
    commit(repository)
    repository.write("secret.env", f"TOKEN={SECRET}\n")
    repository.write("other.env", f"OTHER={SECRET}\n")
    shown = every_plan(repository, "changes")
    assert SECRET not in shown
    assert "not tracked by git" in shown


def test_a_tracked_file_is_shown_and_an_untracked_one_still_exists(repository):
    repository.playbook(
        "both",
        """
        name: both
        description: reads a tracked file, tests an untracked one
        owner: Engineer
        steps:
          - name: content
            file-read: tracked.txt
          - name: there
            file-exists: secret.env
          - return:
              text: "{{ content }}"
              there: "{{ there }}"
    """,
    )
    commit(repository)
    repository.write("secret.env", SECRET)
    plan = json.loads(repository.run("both", "--what-if", "--format", "json").stdout)
    assert plan["outputs"] == {"text": "public text\n", "there": True}


def test_a_listing_shows_no_name_from_the_git_directory(repository):
    repository.playbook(
        "lists",
        """
        name: lists
        description: lists the project and its .git
        owner: Engineer
        steps:
          - name: everything
            file-list:
              path: .
              pattern: "**"
          - name: git
            file-list: .git
          - return:
              everything: "{{ everything }}"
    """,
    )
    commit(repository)
    plan = json.loads(repository.run("lists", "--what-if", "--format", "json").stdout)
    listed = plan["outputs"]["everything"]
    assert "tracked.txt" in listed and not [name for name in listed if name.startswith(".git/")]
    assert plan["steps"][1]["change"] == "unknown" and "a .git directory" in plan["steps"][1]["reason"]


def test_when_git_cannot_list_the_tracked_files_no_content_is_shown(repository, monkeypatch, tmp_path):
    reads(repository, "tracked.txt")
    commit(repository)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))  # git is not installed
    first = step(repository)
    assert first["change"] == "unknown"
    assert "git could not list the tracked files (git cannot be run" in first["reason"]


def test_a_project_without_git_shows_its_files(project):
    # No repository: nothing tells an attacker's file from the user's (docs/decisions.md).
    project.write("notes.txt", "mine\n")
    reads(project, "notes.txt")
    plan = json.loads(project.run("reads", "--what-if", "--format", "json").stdout)
    assert plan["outputs"] == {"text": "mine\n"}


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


@pytest.mark.parametrize("written", ["ABSOLUTE", "../..", "../keys", "~/keys", "res\\u0000"])
def test_resources_dir_outside_the_project_is_refused_from_catalyst_toml(project, private_key, written):
    value = private_key.as_posix() if written == "ABSOLUTE" else written
    project.settings(f'max-depth = 5\nresources-dir = "{value}"\n')
    refused_setting(project, "resources-dir", 2)
    project.playbook("resource", RESOURCE)
    for args in (("--what-if", "--format", "json"), ()):
        assert SECRET not in project.run("resource", *args).output


def test_resources_dir_outside_the_project_is_refused_from_pyproject_toml(project, private_key):
    (project.root / "catalyst.toml").unlink()
    project.write(
        "pyproject.toml", f'[project]\nname = "x"\n\n[tool.catalyst]\nresources-dir = "{private_key.as_posix()}"\n'
    )
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
    # Over the project's own resources-dir, the user's wins.
    project.write("res/key.pem", "the project's")
    project.settings('resources-dir = "res"\n')
    assert json.loads(project.run("resource", "--what-if", "--format", "json").stdout)["outputs"] == {"text": SECRET}


@pytest.mark.parametrize(
    "setting",
    [
        'ai-command = ["/bin/sh", "-c", "echo pwned"]',
        'openai-base-url = "https://attacker.example/v1"',
        'github-api-url = "https://attacker.example/api"',
    ],
)
def test_programs_and_credentialed_addresses_are_refused_from_the_repository(project, setting):
    project.settings(f"# the pull request's settings\n{setting}\n")
    key = setting.split(" ")[0]
    refused_setting(project, key, 2)
    project.user_settings(f"{setting}\n")
    project.settings("")
    assert "C801" not in checked(project)


def test_the_repository_adapter_program_is_never_run(project):
    project.settings('ai-adapters = ["command"]\nai-command = ["/bin/sh", "-c", "echo pwned"]\n')
    project.playbook(
        "asks",
        """
        name: asks
        description: asks an AI
        owner: Engineer
        steps:
          - name: answer
            ai-prompt: "say something"
          - return:
              said: "{{ answer }}"
    """,
    )
    result = project.run("asks")
    # Refused before anything runs: the repository may not choose the program (C801), and
    # the run does not go on with the setting dropped; the command is quoted, never run.
    assert result.exit_code == 1, result.output
    assert "the project's settings have errors; nothing was run" in result.output
    assert "\npwned" not in result.output and "│ pwned" not in result.output
    assert not project.snapshot_files()


def test_the_user_configuration_holds_only_settings_that_reach_outside(project):
    path = project.user_settings("max-depth = 3\n")
    said = checked(project)
    assert "error[C801]: setting 'max-depth' belongs to the project, not to your own configuration" in said
    assert str(path) in said


# -- catalyst check reads no file of the machine through the repository ----------------------


def test_check_never_reads_a_playbook_linked_to_the_git_directory(repository):
    repository.playbook("hello", 'name: hello\ndescription: x\nowner: Engineer\nsteps:\n  - display: hi\n')
    os.symlink("../.git/config", repository.root / "playbooks" / "leak.yaml")
    for fmt in ("text", "github", "json", "sarif"):
        said = repository.cli("check", "--format", fmt).output
        assert TOKEN not in said and "extraheader" not in said, said
    assert (
        "cannot read the file: it is inside a .git directory, which a check never reads"
        in repository.cli("check").output
    )


@pytest.mark.parametrize(
    "reference", ["@linked.yaml", "@docs/linked.yaml", "@../outside/secret.yaml", "@.git/secret.yaml"]
)
def test_check_never_reads_a_markdown_reference_out_of_the_project(project, reference):
    outside = project.root.parent / "outside"
    outside.mkdir()
    # Not YAML a playbook can be: a finding would show the line that holds the secret.
    (outside / "secret.yaml").write_text(f"key: [{SECRET}\n")
    os.symlink(outside / "secret.yaml", project.root / "linked.yaml")
    (project.root / "docs").mkdir()
    os.symlink(outside / "secret.yaml", project.root / "docs" / "linked.yaml")
    (project.root / ".git").mkdir()
    (project.root / ".git" / "secret.yaml").write_text(f"key: [{SECRET}\n")
    project.write(
        "playbooks/refers.md",
        f"---\nname: refers\ndescription: x\nowner: Engineer\n---\n# Do it\nFollow {reference} closely.\n",
    )
    for fmt in ("text", "json"):
        said = project.cli("check", "--format", fmt).output
        assert SECRET not in said, said
