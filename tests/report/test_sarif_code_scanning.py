"""`catalyst check --format sarif` as GitHub's code scanning takes it: what its rules ask
of a log beyond the schema (each rule's descriptions, help and link, each result's
fingerprint, no path of the machine), asserted directly, and checked by Microsoft's SARIF
Multitool with its GitHub rules when the Multitool is installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.diagnostics.codes import CODES
from catalyst_dsl.report.sarif import DIAGNOSTICS_PAGE, FINGERPRINT, PROJECT_URL

REPOSITORY = Path(__file__).resolve().parents[2]

BROKEN = """\
name: broken
description: A playbook with mistakes
owner: Engineer
steps:
  - dispaly: "hello"
  - dispaly: "again"
"""


def sarif(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> dict:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "--format", "sarif", *args], catch_exceptions=False)
    return json.loads(result.stdout)


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git work tree whose project is a subdirectory of it."""
    (tmp_path / ".git").mkdir()
    project = tmp_path / "ops"
    (project / "playbooks").mkdir(parents=True)
    (project / "catalyst.toml").write_text("")
    (project / "playbooks" / "broken.yaml").write_text(BROKEN)
    return tmp_path


def github_anchors(markdown: str) -> set[str]:
    """The fragments GitHub gives a page's headings: lower case, punctuation but `-` and
    `_` dropped, spaces made `-`."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_every_rule_has_the_descriptions_help_and_link_github_asks_for(
    repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = sarif(repository / "ops", monkeypatch)
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == PROJECT_URL
    anchors = github_anchors((REPOSITORY / "docs" / "diagnostics.md").read_text(encoding="utf-8"))
    assert [rule["id"] for rule in driver["rules"]] == list(CODES)
    for rule in driver["rules"]:
        assert rule["fullDescription"]["text"].startswith(CODES[rule["id"]].summary)
        assert rule["help"]["text"] and rule["help"]["markdown"]
        page, _, anchor = rule["helpUri"].partition("#")
        assert page == DIAGNOSTICS_PAGE and anchor in anchors, rule["helpUri"]
    unknown_action = driver["rules"][list(CODES).index("C404")]
    # The help shows the example of the reference page: real output of the checker.
    assert "error[C404]: unknown action" in unknown_action["help"]["markdown"]


def test_the_project_url_is_the_one_pyproject_names() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    urls = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert urls["Repository"] == PROJECT_URL
    assert DIAGNOSTICS_PAGE.startswith(urls["Documentation"])


def test_results_carry_fingerprints_that_survive_lines_added_above(
    repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = sarif(repository / "ops", monkeypatch)["runs"][0]["results"]
    fingerprints = [r["partialFingerprints"][FINGERPRINT] for r in results if r["ruleId"] == "C404"]
    # Two findings of one code on different lines: two alerts.
    assert len(fingerprints) == 2 and len(set(fingerprints)) == 2
    playbook = repository / "ops" / "playbooks" / "broken.yaml"
    playbook.write_text(BROKEN.replace("steps:\n", "steps:\n  - display: first\n"))
    moved = sarif(repository / "ops", monkeypatch)["runs"][0]["results"]
    assert [r["partialFingerprints"][FINGERPRINT] for r in moved if r["ruleId"] == "C404"] == fingerprints
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in moved if r["ruleId"] == "C404"] == [
        6,
        7,
    ]


def test_uris_start_at_the_repository_root_and_name_no_directory_of_the_machine(
    repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked from the project's own directory, a subdirectory of the repository (the
    Action's `working-directory`), files are named from the repository's root, as GitHub
    names them."""
    log = sarif(repository / "ops", monkeypatch)
    run = log["runs"][0]
    assert all("uri" not in base for base in run["originalUriBaseIds"].values())
    locations = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert locations == {"ops/playbooks/broken.yaml"}
    text = json.dumps(log)
    assert str(repository) not in text and repository.as_uri() not in text


def test_without_a_repository_uris_start_where_catalyst_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "catalyst.toml").write_text("")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "broken.yaml").write_text(BROKEN)
    run = sarif(tmp_path, monkeypatch)["runs"][0]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == {
        "playbooks/broken.yaml"
    }


def test_a_file_outside_the_root_is_named_from_it_not_by_the_machines_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here").mkdir()
    (tmp_path / "there" / "playbooks").mkdir(parents=True)
    (tmp_path / "there" / "playbooks" / "broken.yaml").write_text(BROKEN)
    log = sarif(tmp_path / "here", monkeypatch, "../there/playbooks/broken.yaml")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"../there/playbooks/broken.yaml"}
    assert str(tmp_path) not in json.dumps(log)


# -- Microsoft's SARIF Multitool ----------------------------------------------------------------


def multitool() -> list[str] | None:
    """The Multitool's program: `$SARIF_MULTITOOL`, or the one `npm install -g
    @microsoft/sarif-multitool` puts on PATH. npm's launcher hands its arguments to a shell,
    which would split `Sarif;Ghas` at the `;`, so the program it launches is run instead."""
    named = os.environ.get("SARIF_MULTITOOL") or shutil.which("sarif-multitool")
    if named is None:
        return None
    launcher = Path(named).resolve()
    if launcher.suffix == ".js":
        node = shutil.which("node")
        if node is None:
            return None
        found = subprocess.run(
            [node, "-p", "require(process.argv[1])", str(launcher.parent / "index.js")],
            capture_output=True,
            text=True,
        )
        if found.returncode != 0:
            return None
        launcher = Path(found.stdout.strip())
    if not os.access(launcher, os.X_OK):
        # npm may skip the package's install script, which makes the program executable.
        pytest.skip(f"the SARIF Multitool at {launcher} is not executable: chmod u+x it")
    return [str(launcher)]


@pytest.mark.slow
def test_the_sarif_multitool_finds_nothing_with_githubs_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = multitool()
    if program is None:
        pytest.skip(
            "the SARIF Multitool is not installed (npm install -g @microsoft/sarif-multitool, "
            "or SARIF_MULTITOOL=path/to/Sarif.Multitool)"
        )
    log = tmp_path / "catalyst.sarif"
    # Every golden case: every code that has an example, with fixes, labels and notes.
    log.write_text(json.dumps(sarif(REPOSITORY, monkeypatch, "--no-cache", "tests/golden/check")))
    report = tmp_path / "validation.sarif"
    done = subprocess.run(
        [*program, "validate", "--rule-kind", "Sarif;Ghas", "--output", str(report), str(log)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and report.is_file(), done.stdout + done.stderr
    findings = [
        f"{r['ruleId']} {r['message'].get('id')} {r['message'].get('arguments')}"
        for run in json.loads(report.read_text(encoding="utf-8"))["runs"]
        for r in run["results"]
    ]
    assert findings == []
