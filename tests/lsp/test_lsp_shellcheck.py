"""ShellCheck's findings in the editor: reported by the language server's background check
of the library, at their place in the playbook, and gone once the script is fixed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from catalyst_dsl.project import shellcheck as runner
from tests.helpers.lsp_session import session

pytestmark = pytest.mark.skipif(runner.version_of(runner.find_program()) is None, reason="ShellCheck is not installed")

DEPLOY = """name: deploy
description: Deploys
owner: Engineer
steps:
  - bash: if [ "$1" = 1 ] then echo; fi
    writes: []
"""


async def _session(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "playbooks" / "deploy.yaml")
        found = await editor.until(uri, lambda ds: any(d.code == "C641" for d in ds))
        [warning] = [d for d in found if d.code == "C641"]
        assert warning.message.startswith("SC1010: ")
        assert (warning.range.start.line, warning.range.start.character) == (4, 26)
        editor.change(uri, DEPLOY.replace("] then", "]; then"))
        await editor.until(uri, lambda ds: not any(d.code == "C641" for d in ds))


def test_shellcheck_findings_reach_the_editor(tmp_path: Path) -> None:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    asyncio.run(_session(tmp_path))
