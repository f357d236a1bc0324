"""The session docs/editors.md shows ("An example session"), played over stdio: its files
written, the hover and the finding after a rename on disk compared with what the page says."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import ROOT, session

PAGE = ROOT / "docs" / "editors.md"
#: "`path`:" (or "`path`, ...:") and the block that follows it: a file of the project.
FILE = re.compile(r"^`([\w./-]+)`(?:, [^\n]*)?:\n\n```(?:toml|yaml|markdown)\n(.*?)^```", re.MULTILINE | re.DOTALL)
BLOCK = re.compile(r"^```(text|json)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SHOWN_ROOT = "file:///home/me/project"


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## An example session")
    return text[start : text.index("\n## ", start + 1)]


async def _play(project: Path, section: str) -> None:
    files = dict(FILE.findall(section))
    for name, body in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(body, encoding="utf-8")
    shown = dict(BLOCK.findall(section))
    guide = project / "playbooks" / "guide.md"
    async with session(project) as editor:
        uri = editor.open(guide)
        await editor.until((project / "playbooks" / "publish.yaml").as_uri(), lambda ds: len(ds) == 0)
        line, text = next((n, t) for n, t in enumerate(files["playbooks/guide.md"].splitlines()) if "@" in t)
        at = lsp.TextDocumentPositionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=text.index("@") + 3),
        )
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(**vars_of(at)))
        assert hover.contents.value + "\n" == shown["text"]
        found = await editor.client.text_document_definition_async(lsp.DefinitionParams(**vars_of(at)))
        assert found.uri == (project / "playbooks" / "publish.yaml").as_uri()

        (project / "archive").mkdir()
        (project / "playbooks" / "publish.yaml").rename(project / "archive" / "publish.yaml")
        [diagnostic] = await editor.until(uri, lambda ds: len(ds) > 0)
        sent = json.dumps(editor.client.protocol._converter.unstructure(diagnostic))
        assert json.loads(sent.replace(project.as_uri(), SHOWN_ROOT)) == json.loads(shown["json"])


def vars_of(params: lsp.TextDocumentPositionParams) -> dict:
    return {"text_document": params.text_document, "position": params.position}


def test_the_example_session_of_the_editors_page(tmp_path: Path) -> None:
    asyncio.run(_play(tmp_path, _section()))
