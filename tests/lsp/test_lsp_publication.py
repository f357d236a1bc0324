"""Publication guards of the language server: the findings of a document's text are
sent only while that text is the document's newest, so an editor never sees an older
version's findings after a newer one's (a library check or a slow check finishing late
is dropped), nor findings of an open document's old text after it was closed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from lsprotocol import types as lsp

from catalyst_dsl.lsp.server import CatalystServer

URI = "file:///project/playbooks/book.yaml"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> tuple[CatalystServer, dict, list]:
    made = CatalystServer()
    documents: dict[str, SimpleNamespace] = {}
    sent: list[lsp.PublishDiagnosticsParams] = []
    monkeypatch.setattr(made, "open_document", lambda uri: documents.get(uri))
    monkeypatch.setattr(made, "text_document_publish_diagnostics", sent.append)
    return made, documents, sent


def test_an_older_version_is_never_published_after_a_newer_one(server) -> None:
    made, documents, sent = server
    documents[URI] = SimpleNamespace(version=7)
    assert made.publish(URI, [], 7)
    for older in (6, 1, None):  # a slow check of an older text, the library's of the file on disk
        assert not made.publish(URI, [], older)
    assert [p.version for p in sent] == [7]


def test_a_newer_version_than_the_editors_is_not_published_either(server) -> None:
    made, documents, sent = server
    documents[URI] = SimpleNamespace(version=3)
    assert not made.publish(URI, [], 4)
    assert sent == []


def test_a_closed_documents_text_is_not_published_but_its_file_is(server) -> None:
    made, _, sent = server
    assert not made.publish(URI, [], 2)  # the text of a document closed since
    assert made.publish(URI, [], None)  # the library check's findings for the file on disk
    assert [p.version for p in sent] == [None]
