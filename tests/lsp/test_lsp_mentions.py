"""Go to definition and hover on a Markdown playbook's `@` paths, over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import session, where

PUBLISH = """name: publish
description: Publishes the release notes
owner: Engineer
inputs:
  - string: version
    required: true
    description: the version to publish
steps:
  - display: "{{ version }}"
"""

STANDARD = "# Review standard\n\n```sh\nmake\n```\n" + "".join(f"- rule {n}\n" for n in range(1, 20))

GUIDE = """---
owner: Engineer
---
# Guide

Review against @docs/standards/review.md first.
Then follow @shared/publish.yaml to publish, or @playbooks/gone.md.
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text('[aliases]\n"shared/" = "playbooks/"\n', encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "docs" / "standards").mkdir(parents=True)
    (tmp_path / "playbooks" / "publish.yaml").write_text(PUBLISH, encoding="utf-8")
    (tmp_path / "playbooks" / "guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "docs" / "standards" / "review.md").write_text(STANDARD, encoding="utf-8")
    return tmp_path


def _at(uri: str, line: int, character: int) -> dict:
    return {
        "text_document": lsp.TextDocumentIdentifier(uri=uri),
        "position": lsp.Position(line=line, character=character),
    }


async def _session(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "playbooks" / "guide.md")
        client = editor.client

        # Through the alias, to the called playbook: its name, description and inputs.
        found = await client.text_document_definition_async(lsp.DefinitionParams(**_at(uri, 6, 16)))
        assert where(found) == ("publish.yaml", 0, 0, 0)
        shown = await client.text_document_hover_async(lsp.HoverParams(**_at(uri, 6, 16)))
        assert shown.contents.value == (
            "playbook **publish** (`playbooks/publish.yaml`)\n\n"
            "Publishes the release notes\n\n"
            "inputs:\n"
            "- `version`: `string` (required) — the version to publish"
        )

        # A document the prompt hands over: opened, and its first lines shown (fenced so
        # that its own fence cannot end the hover's).
        found = await client.text_document_definition_async(lsp.DefinitionParams(**_at(uri, 5, 20)))
        assert where(found) == ("review.md", 0, 0, 0)
        shown = await client.text_document_hover_async(lsp.HoverParams(**_at(uri, 5, 20)))
        lines = STANDARD.splitlines()[:12]
        assert shown.contents.value == (
            "document `docs/standards/review.md`, first lines:\n\n````markdown\n" + "\n".join(lines) + "\n````"
        )

        # A path that leads nowhere: no definition, and the hover says so.
        assert await client.text_document_definition_async(lsp.DefinitionParams(**_at(uri, 6, 55))) is None
        shown = await client.text_document_hover_async(lsp.HoverParams(**_at(uri, 6, 55)))
        assert shown.contents.value.startswith("`@playbooks/gone.md`: no such file in the project")

        # Beside the references: plain text has no hover from them.
        assert await client.text_document_hover_async(lsp.HoverParams(**_at(uri, 5, 2))) is None


def test_definition_and_hover_of_markdown_at_paths(tmp_path: Path) -> None:
    asyncio.run(_session(_project(tmp_path)))
