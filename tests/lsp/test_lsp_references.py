"""Find references over stdio: names in a playbook, calls and inputs across the library."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp

from tests.helpers.lsp_session import session, where

RELEASE = """name: release
description: Releases
owner: Engineer
inputs:
  - string: version
steps:
  - function: announce
    inputs:
      - string: what
    steps:
      - display: "released {{ what }}"
  - name: notes
    http-get: https://example.com/{{ version }}
  - display: "${{ inputs.version + notes.body }}"
  - announce:
      what: "{{ notes.status }}"
  - playbook: publish
    inputs:
      version: "{{ version }}"
"""

PUBLISH = """name: publish
description: Publishes
owner: Engineer
inputs:
  - string: version
steps:
  - display: "publishing {{ version }}"
"""

NIGHTLY = """name: nightly
description: Nightly build
owner: Engineer
steps:
  - playbook: publish
    inputs:
      version: nightly
"""

GUIDE = """# Guide

Follow @playbooks/publish.yaml to publish.
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    folder = tmp_path / "playbooks"
    folder.mkdir()
    for name, text in (
        ("release.yaml", RELEASE),
        ("publish.yaml", PUBLISH),
        ("nightly.yaml", NIGHTLY),
        ("guide.md", GUIDE),
    ):
        (folder / name).write_text(text, encoding="utf-8")
    return tmp_path


async def _references(editor, uri: str, line: int, character: int, declaration: bool = True) -> list[tuple]:
    found = await editor.client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character),
            context=lsp.ReferenceContext(include_declaration=declaration),
        )
    )
    return sorted(where(location) for location in found or [])


async def _session(project: Path) -> None:
    async with session(project) as editor:
        release = editor.open(project / "playbooks" / "release.yaml")
        publish = editor.open(project / "playbooks" / "publish.yaml")

        # An input: its declaration, its uses as `{{ version }}` and `inputs.version`.
        assert await _references(editor, release, 4, 13) == [
            ("release.yaml", 4, 12, 19),
            ("release.yaml", 12, 37, 44),
            ("release.yaml", 13, 25, 32),
            ("release.yaml", 18, 19, 26),
        ]
        # From a use, without the declaration.
        assert await _references(editor, release, 12, 40, declaration=False) == [
            ("release.yaml", 12, 37, 44),
            ("release.yaml", 13, 25, 32),
            ("release.yaml", 18, 19, 26),
        ]
        # A step name, read in an expression and in a template.
        assert await _references(editor, release, 11, 12) == [
            ("release.yaml", 11, 10, 15),
            ("release.yaml", 13, 35, 40),
            ("release.yaml", 15, 16, 21),
        ]
        # A function: its definition and the step that calls it; its parameter inside it.
        assert await _references(editor, release, 14, 5) == [("release.yaml", 6, 14, 22), ("release.yaml", 14, 4, 12)]
        assert await _references(editor, release, 8, 17) == [("release.yaml", 8, 16, 20), ("release.yaml", 10, 30, 34)]

        # A called playbook: every call in the library, from a call or from its own name,
        # including the Markdown `@` reference of a file that is not open.
        calls = [
            ("guide.md", 2, 7, 30),
            ("nightly.yaml", 4, 14, 21),
            ("publish.yaml", 0, 6, 13),
            ("release.yaml", 16, 14, 21),
        ]
        assert await _references(editor, release, 16, 16) == calls
        assert await _references(editor, publish, 0, 8) == calls
        # An input of a called playbook: its uses and the keys its callers pass it by.
        assert await _references(editor, publish, 4, 13) == [
            ("nightly.yaml", 6, 6, 13),
            ("publish.yaml", 4, 12, 19),
            ("publish.yaml", 6, 28, 35),
            ("release.yaml", 18, 6, 13),
        ]
        # Nothing under the cursor: nothing found.
        assert await _references(editor, release, 1, 0) == []


def test_find_references_over_stdio(tmp_path: Path) -> None:
    asyncio.run(_session(_project(tmp_path)))
