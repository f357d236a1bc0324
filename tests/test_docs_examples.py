"""Every playbook shown in docs/language.md passes `catalyst check --strict`.

A ```yaml block with a top-level `name:` and `steps:` is a whole playbook; a ```markdown
block that opens with front matter is a Markdown playbook. The blocks of one page are
written into one fresh project and checked together, as a reader who copies them would.
Fragments (steps shown without their playbook) are not checked here; the playbooks of
docs/getting-started.md are checked by its own transcripts (test_docs_commands.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "docs" / "language.md"]
FENCE = re.compile(r"^```(yaml|markdown)\n(.*?)^```", re.MULTILINE | re.DOTALL)
NAME = re.compile(r"^name: ([a-z][a-z0-9-]*)$", re.MULTILINE)


def playbooks(page: Path) -> dict[str, str]:
    """The whole playbooks a page shows, by the file name each would have."""
    found = {}
    for number, (kind, text) in enumerate(FENCE.findall(page.read_text(encoding="utf-8"))):
        if kind == "markdown" and text.startswith("---\n"):
            found[f"example-{number}.md"] = text
        elif kind == "yaml" and re.search(r"^steps:", text, re.MULTILINE) and NAME.search(text):
            found[f"{NAME.search(text).group(1)}.yaml"] = text
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_playbook_a_page_shows_checks_clean(page: Path, tmp_path: Path, monkeypatch) -> None:
    shown = playbooks(page)
    assert shown, f"{page.name} shows no whole playbook"
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    folder = tmp_path / "playbooks"
    folder.mkdir()
    for name, text in shown.items():
        (folder / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--strict", "--no-cache", "playbooks"])
    assert result.exit_code == 0, result.output
    assert f"checked {len(shown)} file(s)" in result.output
