"""The language server, driven over stdio by a real LSP client (pygls's), as an editor would."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from tests.helpers.lsp_session import ROOT, Editor

BROKEN = """name: release
description: Releases
owner: Engineer
inputs:
  - string: version
steps:
  - name: notes
    http-gett: https://example.com/{{ version }}
  - playbook: publish
    inherit-permissions: true
"""

FIXED = BROKEN.replace("http-gett", "http-get").replace("    inherit-permissions: true\n", "")

PUBLISH = """name: publish
description: Publishes
owner: Engineer
steps:
  - display: published
"""


async def _session(project: Path) -> None:
    client = LanguageClient("test-editor", "1")
    editor = Editor(client)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    await client.start_io(sys.executable, "-m", "catalyst_dsl", "lsp", env=env)
    await client.initialize_async(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            root_uri=project.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=project.as_uri(), name="project")],
        )
    )
    client.initialized(lsp.InitializedParams())
    uri = (project / "playbooks" / "release.yaml").as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=BROKEN)
        )
    )

    # The broken file: the typo in an action and the misspelt key, each at its range.
    found = await editor.until(uri, lambda ds: {"C404", "C202"} <= {d.code for d in ds})
    typo = next(d for d in found if d.code == "C404")
    assert typo.range == lsp.Range(start=lsp.Position(line=7, character=4), end=lsp.Position(line=7, character=13))
    assert typo.severity == lsp.DiagnosticSeverity.Error and "did you mean 'http-get'?" in " ".join(
        i.message for i in typo.related_information
    )

    # The quick fix of the did-you-mean.
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=typo.range,
            context=lsp.CodeActionContext(diagnostics=[typo]),
        )
    )
    assert [a.title for a in actions] == ["Replace with 'http-get'", "Suppress C404 on this line"]

    # Fixed: no findings left.
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=FIXED)],
        )
    )
    await editor.until(uri, lambda ds: len(ds) == 0)

    # Completion of an action name where a step's key goes.
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=FIXED + "  - file-wr")],
        )
    )
    line = FIXED.count("\n")
    completed = await client.text_document_completion_async(
        lsp.CompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=11)
        )
    )
    assert "file-write" in [item.label for item in completed.items]

    # Completion of names inside {{ }}, typed from the checker's scope.
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=4),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=FIXED + "  - display: \"{{ notes.")],
        )
    )
    members = await client.text_document_completion_async(
        lsp.CompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=26)
        )
    )
    assert {"status", "body"} <= {item.label for item in members.items}

    # Hover an action; jump to the called playbook.
    hovered = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=7, character=6))
    )
    assert "**http-get**" in hovered.contents.value
    target = await client.text_document_definition_async(
        lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=8, character=16)
        )
    )
    assert target.uri == (project / "playbooks" / "publish.yaml").as_uri()

    # The outline: the steps.
    outline = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert [s.name for s in outline][:2] == ["notes", "playbook@9"]

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


@pytest.mark.slow
def test_an_editor_session_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "release.yaml").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "playbooks" / "publish.yaml").write_text(PUBLISH, encoding="utf-8")
    asyncio.run(_session(tmp_path))
