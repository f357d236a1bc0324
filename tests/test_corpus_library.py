"""The corpus as one library: calls resolve, the call graph is stable, findings are real.

The corpus is copied into a temporary project with the settings its README asks for: the
Markdown playbooks refer to each other as `@node_modules/@xerilium/catalyst/playbooks/…`,
an alias of `playbooks/`.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.config import load_project
from catalyst_dsl.project.library import Library
from tests.helpers.corpus import SHARED_CORPUS

CORPUS = SHARED_CORPUS / "catalyst"
GOLDEN = Path(__file__).parent / "golden" / "corpus" / "catalyst-list.expected"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")

SETTINGS = """\
playbook-dirs = ["playbooks", "cli-commands", "fixtures"]

[aliases]
"node_modules/@xerilium/catalyst/playbooks/" = "playbooks/"
"""

# Library findings (file, code) -> how many; anything else is a false alarm.
EXPECTED_LIBRARY = {
    # The README: init calls install-ai-providers, which writes (its gitignore edit), read-only.
    ("cli-commands/init.yaml", "C815"): 1,
    # kitchen-sink writes a playbook to temp:// and runs it: not checkable before the run.
    ("cli-commands/kitchen-sink.yaml", "C808"): 1,
    ("playbooks/install-ai-providers.yaml", "C814"): 1,
    # Shell and script steps that declare no `writes:` (notes).
    ("cli-commands/init.yaml", "C817"): 1,
    ("cli-commands/kitchen-sink.yaml", "C817"): 19,
    ("playbooks/install-ai-providers.yaml", "C817"): 5,
    # Its powershell steps, on a machine without pwsh (the test's PATH has node only).
    ("cli-commands/kitchen-sink.yaml", "C819"): 1,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "project"
    shutil.copytree(CORPUS, root)
    (root / "catalyst.toml").write_text(SETTINGS, encoding="utf-8")
    return root


def run(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str):
    monkeypatch.chdir(project)
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_library_findings(project: Path, monkeypatch: pytest.MonkeyPatch, node_but_no_pwsh: Path) -> None:
    result = run(project, monkeypatch, "check", "--format", "json")
    found = Counter(
        (d["span"]["file"], d["code"]) for d in json.loads(result.output)["diagnostics"] if d["code"] >= "C8"
    )
    assert dict(found) == EXPECTED_LIBRARY


def test_every_markdown_reference_resolves(project: Path) -> None:
    library = Library(load_project(project, DiagnosticSink()))
    edges = [e for path in library.files if path.endswith(".md") for e in library.edges(path)]
    assert len(edges) > 50
    unresolved = [f"{Path(e.caller).name}:{e.span.line} {e.target}" for e in edges if e.callee is None]
    assert unresolved == []


def test_call_graph_golden(project: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool) -> None:
    actual = run(project, monkeypatch, "list").output
    if update_golden:
        GOLDEN.write_text(actual, encoding="utf-8", newline="\n")
    assert GOLDEN.exists(), "run pytest --update-golden to write the corpus call graph"
    assert actual == GOLDEN.read_text(encoding="utf-8")


def test_list_json_has_metadata_and_calls(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = json.loads(run(project, monkeypatch, "list", "--json").output)["playbooks"]
    create = next(p for p in listed if p["name"] == "create-feature")
    assert create["owner"] == "Product Manager"
    assert create["reviewers"] == {"required": ["Architect"], "optional": ["Engineer"]}
    assert "playbooks/actions/feature-spec.md" in {c["file"] for c in create["calls"]}


def test_shellcheck_finds_one_real_fragility(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ShellCheck's errors and warnings (the default) on the corpus's bash scripts: one, a
    `$(...)` split into words on purpose, which breaks on a file name with a space. Its
    info and style advice, off by default, would flag most scripts."""
    result = run(project, monkeypatch, "check", "--format", "json")
    found = [
        (d["span"]["file"], d["span"]["line"], d["code"], d["message"].split(":", 1)[0])
        for d in json.loads(result.output)["diagnostics"]
        if d["code"].startswith("C64")
    ]
    assert found == [("playbooks/install-ai-providers.yaml", 153, "C641", "SC2046")]
