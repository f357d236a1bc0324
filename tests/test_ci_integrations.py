"""The pre-commit hook (with the real pre-commit's try-repo) and the composite GitHub
Action's check step (its script, run by bash as GitHub runs it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.helpers.action_steps import run_bash_step

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

GOOD = 'name: hello\ndescription: x\nowner: Engineer\nsteps:\n  - display: "hi"\n'
BAD = 'name: broken\ndescription: x\nowner: Engineer\nsteps:\n  - dispaly: "hi"\n'
SLOW = 'name: slow\ndescription: x\nowner: Engineer\nsteps:\n  - display: "hi"\n    timeout: 600000\n'


def project(tmp_path: Path, **playbooks: str) -> Path:
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    for name, text in playbooks.items():
        (root / "playbooks" / name).write_text(text)
    return root


# -- the GitHub Action -------------------------------------------------------------------


def _check_step() -> dict:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    [step] = [s for s in action["runs"]["steps"] if s.get("name") == "Check playbooks"]
    return step


def run_check_step(root: Path, **inputs: str) -> subprocess.CompletedProcess:
    """The step's script as GitHub runs a bash step (`bash -eo pipefail`), its inputs in
    the environment exactly as its `env:` maps them, catalyst from this checkout."""
    step = _check_step()
    defaults = {"paths": "", "strict": "false", "sarif": ""}
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR")}
    for name, value in step["env"].items():
        assert value.startswith("${{ inputs.") and value.endswith(" }}")
        env[name] = {**defaults, **inputs}[value[len("${{ inputs.") : -3]]
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    script = root.parent / "step.sh"
    script.write_text(step["run"])
    return run_bash_step(script, root, env)


def test_action_inputs_never_enter_the_script_text() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert all("${{" not in step["run"] for step in action["runs"]["steps"])
    assert set(action["inputs"]) == {
        "paths",
        "strict",
        "sarif",
        "working-directory",
        "what-if-comments",
        "golden-dir",
        "fail-on-stale-golden",
        "github-token",
    }


def test_action_annotates_and_fails_on_errors(tmp_path: Path) -> None:
    root = project(tmp_path, **{"broken.yaml": BAD, "hello.yaml": GOOD})
    done = run_check_step(root, sarif="out.sarif")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=playbooks/broken.yaml,line=5,col=5,")
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(json.loads((root / "out.sarif").read_text()))


def test_action_names_files_from_the_repository_root(tmp_path: Path) -> None:
    """With `working-directory` (the project is a folder of the repository), annotations and
    SARIF name files as GitHub does: from the repository's root."""
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    root = project(repository, **{"broken.yaml": BAD})
    done = run_check_step(root, sarif="out.sarif")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=project/playbooks/broken.yaml,line=5,col=5,")
    log = json.loads((root / "out.sarif").read_text())
    [result] = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "project/playbooks/broken.yaml"


def test_action_bad_paths_is_an_annotated_error_and_writes_no_sarif(tmp_path: Path) -> None:
    root = project(tmp_path, **{"hello.yaml": GOOD})
    done = run_check_step(root, paths="playbooks/nope.yaml", sarif="out.sarif")
    assert done.returncode == 2
    [line] = done.stdout.splitlines()
    assert line.startswith("::error title=catalyst check::Error: ") and "'playbooks/nope.yaml' does not exist" in line
    assert not (root / "out.sarif").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run_check_step(root, paths=str(empty))
    assert done.returncode == 2 and done.stdout.startswith("::error title=catalyst check::Error: no playbooks")


def test_action_paths_and_strict(tmp_path: Path) -> None:
    root = project(tmp_path, **{"broken.yaml": BAD, "slow.yaml": SLOW})
    only_slow = run_check_step(root, paths="playbooks/slow.yaml")
    assert only_slow.returncode == 0 and "::warning file=playbooks/slow.yaml,line=6," in only_slow.stdout
    assert run_check_step(root, paths="playbooks/slow.yaml", strict="true").returncode == 1


def test_action_paths_are_never_read_as_options(tmp_path: Path) -> None:
    root = project(tmp_path, **{"hello.yaml": GOOD})
    (root / "-q.yaml").write_text(BAD)
    done = run_check_step(root, paths="-q.yaml --output-file=x", sarif="out.sarif")
    assert done.returncode == 2 and "'--output-file=x' does not exist" in done.stdout
    assert not (root / "x").exists()
    done = run_check_step(root, paths="-q.yaml", sarif="out.sarif")
    assert done.returncode == 1 and "::error file=-q.yaml,line=5,col=5," in done.stdout, done.stdout
    [result] = [r for r in json.loads((root / "out.sarif").read_text())["runs"][0]["results"] if r["ruleId"] == "C404"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "-q.yaml"


# -- pre-commit --------------------------------------------------------------------------


def test_hook_definition_matches_playbook_directories_only() -> None:
    import re

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "catalyst-check" and hook["entry"] == "catalyst check"
    files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])
    assert files.search("playbooks/deploy.yaml") and files.search("sub/.xe/playbooks/x.md")
    assert not files.search(".github/workflows/ci.yml") and not files.search("docs/guide.md")
    # kai's playbooks (not its template) and cleo's cantbooks, wherever they are.
    assert files.search(".playbooks/playbooks/triage.yaml") and not exclude.search(".playbooks/playbooks/triage.yaml")
    assert exclude.search(".playbooks/playbooks/playbook.tpl.yaml")
    assert files.search(".cleo/playbooks/release.cantbook") and files.search("flows/release.cantbook")
    assert not files.search("flows/release.cantbook.bak")


@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    """The real pre-commit installs catalyst from this repository into its own
    environment (from PyPI's packages) and runs the hook on a project's commit."""
    pre_commit = shutil.which("pre-commit", path=str(BIN)) or shutil.which("pre-commit")
    if pre_commit is None:
        pytest.fail("pre-commit is not installed: pip install -e '.[test]'")
    root = project(tmp_path, **{"hello.yaml": GOOD, "broken.yaml": BAD})
    (root / "notes.yml").write_text("just: some yaml\n")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    env.pop("GITHUB_ACTIONS", None)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=root, check=True, env=env)

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run(
            [pre_commit, "try-repo", str(ROOT), "catalyst-check", "--all-files"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    failed = try_repo()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "error[C404]: unknown action 'dispaly'" in failed.stdout
    assert "notes.yml" not in failed.stdout
    (root / "playbooks" / "broken.yaml").write_text(BAD.replace("dispaly", "display"))
    subprocess.run(["git", "add", "."], cwd=root, check=True, env=env)
    passed = try_repo()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "catalyst check" in passed.stdout and "Passed" in passed.stdout


GREET = """\
name: greet
description: Greets someone
owner: Engineer
inputs:
  - name: person
    type: string
    required: true
steps:
  - display: "hello {{ inputs.person }}"
"""
CALLER = """\
name: welcome
description: Welcomes the world
owner: Engineer
steps:
  - playbook: greet
    inputs:
      person: world
"""
CANTBOOK = """\
version: "1.0"
name: release
description: Build and test
nodes:
  - id: build
    type: agentic
    skill: ct-builder
  - id: test
    type: agentic
    skill: ct-tester
    depends: [biuld]
"""


@pytest.mark.slow
def test_pre_commit_fails_a_commit_that_breaks_a_caller(tmp_path: Path) -> None:
    """A commit that renames an input of one playbook fails where another, unchanged, still
    passes the old one; a `.cantbook` in the commit is checked too."""
    pre_commit = shutil.which("pre-commit", path=str(BIN)) or shutil.which("pre-commit")
    if pre_commit is None:
        pytest.fail("pre-commit is not installed: pip install -e '.[test]'")
    root = project(tmp_path, **{"greet.yaml": GREET, "welcome.yaml": CALLER})
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    env.pop("GITHUB_ACTIONS", None)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)

    git("init", "-q", ".")
    git("add", ".")
    git("commit", "-q", "-m", "two playbooks")
    (root / "playbooks" / "greet.yaml").write_text(GREET.replace("person", "who"))
    git("add", "playbooks/greet.yaml")

    def try_repo() -> subprocess.CompletedProcess:
        # Without --all-files: the staged files only, as a commit's hook sees them.
        return subprocess.run(
            [pre_commit, "try-repo", str(ROOT), "catalyst-check"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    broken = try_repo()
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "error[C806]: 'greet' has no input 'person'" in broken.stdout
    assert "--> playbooks/welcome.yaml:7:7" in broken.stdout
    git("commit", "-q", "--no-verify", "-m", "rename")

    (root / "flows").mkdir()
    (root / "flows" / "release.cantbook").write_text(CANTBOOK)
    git("add", "flows/release.cantbook")
    cantbook = try_repo()
    assert cantbook.returncode == 1, cantbook.stdout + cantbook.stderr
    assert "'test' depends on 'biuld', which names no node" in cantbook.stdout
    git("commit", "-q", "--no-verify", "-m", "cantbook")

    # The caller mended; then a commit that only deletes the playbook it calls (pre-commit
    # names no deleted file), and one that renames it: both fail at the caller.
    (root / "playbooks" / "welcome.yaml").write_text(CALLER.replace("person", "who"))
    git("commit", "-q", "--no-verify", "-am", "mended")
    git("rm", "-q", "playbooks/greet.yaml")
    for staged in ("deleted", "renamed"):
        if staged == "renamed":
            git("reset", "-q", "--hard")
            git("mv", "playbooks/greet.yaml", "playbooks/hi.yaml")
            (root / "playbooks" / "hi.yaml").write_text(GREET.replace("person", "who").replace("greet", "hi"))
            git("add", "-A")
        broken = try_repo()
        assert broken.returncode == 1, broken.stdout + broken.stderr
        assert "error[C804]: no playbook named 'greet'" in broken.stdout, staged
        assert "--> playbooks/welcome.yaml:5:15" in broken.stdout, staged
