"""Authors' descriptions in hovers, over stdio: whatever Markdown they hold (an unclosed
fence, a heading, a table, a link reference definition, HTML), the hover shows it as
text and what follows it (a called playbook's inputs) as the server wrote it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import session

#: A description that, pasted as it is, fences off everything after it.
HOSTILE = "Uses `make`\n```\n# Inputs\n[inputs]: https://example.com\n<details>\n| a |\n|---|"
#: The same as the hover shows it.
SHOWN = (
    "Uses `make`  \n\\`\\`\\`  \n\\# Inputs  \n\\[inputs]: https://example.com  \n\\<details>  \n\\| a \\|  \n\\|---\\|"
)


def _block(text: str, indent: str) -> str:
    return "|-\n" + "".join(f"{indent}{line}\n" for line in text.split("\n"))


#: An input's description: on one line in the list of inputs, as written in the input's own hover.
VERSION = "the version\n# to publish <b>"

PUBLISH = f"""name: publish
description: {_block(HOSTILE, "  ")}owner: Engineer
inputs:
  - string: version
    required: true
    description: {_block(VERSION, "      ")}  - string: notes
steps:
  - display: "{{{{ version }}}} {{{{ notes }}}}"
"""

GUIDE = """---
owner: Engineer
---
# Guide

Follow @playbooks/publish.yaml now.
"""

CANTBOOK = f"""version: "1.0"
name: fix-loop
inputs:
  - name: ticket
    required: true
    description: {_block(HOSTILE, "      ")}nodes:
  - id: implement
    type: agentic
    description: {_block(HOSTILE, "      ")}    skill: ct-task-executor
    inputs:
      task: "Fix {{{{ ticket }}}}"
  - id: validate
    type: deterministic
    command: make
    depends: [implement]
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "publish.yaml").write_text(PUBLISH, encoding="utf-8")
    (tmp_path / "playbooks" / "guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "fix.cantbook").write_text(CANTBOOK, encoding="utf-8")
    return tmp_path


def _at(text: str, needle: str, into: int = 1) -> tuple[int, int]:
    offset = text.index(needle) + into
    return text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset) - 1


async def _hovers(project: Path) -> None:
    async with session(project) as editor:

        async def hover(uri: str, text: str, needle: str, into: int = 1) -> str:
            line, character = _at(text, needle, into)
            found = await editor.client.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=uri),
                    position=lsp.Position(line=line, character=character),
                )
            )
            return found.contents.value

        # The called playbook: its description as text, then its inputs, each on its line.
        guide = editor.open(project / "playbooks" / "guide.md")
        assert await hover(guide, GUIDE, "@playbooks") == (
            "playbook **publish** (`playbooks/publish.yaml`)\n\n"
            f"{SHOWN}\n\n"
            "inputs:\n"
            "- `version`: `string` (required) — the version \\# to publish \\<b>\n"
            "- `notes`: `string`"
        )

        # An input where the playbook uses it.
        publish = editor.open(project / "playbooks" / "publish.yaml")
        assert await hover(publish, PUBLISH, "{{ version", 4) == (
            "input **version**: `string` (required)\n\nthe version  \n\\# to publish \\<b>"
        )

        # A cleo input and node.
        book = editor.open(project / "fix.cantbook")
        assert await hover(book, CANTBOOK, "{{ ticket", 3) == f"**ticket** (cleo input, required)\n\n{SHOWN}"
        assert await hover(book, CANTBOOK, "depends: [implement", 11) == (
            f"**implement** (cleo agentic node, line 15)\n\n{SHOWN}"
        )


def test_descriptions_in_hovers_stay_text(tmp_path: Path) -> None:
    asyncio.run(_hovers(_project(tmp_path)))
