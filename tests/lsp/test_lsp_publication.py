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


def test_requests_about_a_text_already_compiled_do_not_compile_it_again(server, monkeypatch, tmp_path) -> None:
    # A large document takes long to compile: a hover after the edit's check reuses its
    # compilation instead of compiling the same text once more for every request.
    import catalyst_dsl.compiler as compiler

    made, documents, _ = server
    book = tmp_path / "playbooks" / "book.yaml"
    book.parent.mkdir()
    text = "name: book\ndescription: d\nowner: Engineer\nsteps:\n  - var: x\n    value: 1\n"
    book.write_text(text)
    uri = book.as_uri()
    documents[uri] = SimpleNamespace(version=1, source=text)
    monkeypatch.setattr(made, "path_of", lambda u: str(book) if u == uri else None)
    compiled: list[str] = []
    real = compiler.compile_bytes
    monkeypatch.setattr(compiler, "compile_bytes", lambda *a, **k: compiled.append(a[1]) or real(*a, **k))
    first = made.compile_open(uri)
    again = made.compile_open(uri)
    assert len(compiled) == 1 and again[1] is first[1]
    documents[uri] = SimpleNamespace(version=2, source=text + "  - var: y\n    value: 2\n")
    made.compile_open(uri)
    assert len(compiled) == 2  # a new text is compiled
