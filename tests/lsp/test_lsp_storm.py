"""A storm of edits: the server applies each, checks only the newest text, publishes the
diagnostics of the last version (never of an older one after a newer one's), and answers
requests about the newest text meanwhile."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from catalyst_dsl.lsp.latest import NewestText
from tests.helpers.lsp_session import session

BASE = "name: stormy\ndescription: Edited fast\nowner: Engineer\nsteps:\n  - display: hi\n"


def _text(i: int, last: bool = False) -> str:
    return BASE + f"  - display: '{{{{ edit{i} }}}}'\n" + ("  - file-list: .\n" if last else "")


async def _storm(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "playbooks" / "stormy book.yaml", BASE)  # a URI with %20
        await editor.until(uri, lambda ds: len(ds) == 0)
        for i in range(1000):
            editor.change(uri, _text(i, last=i == 999))
        # At once, before any diagnostics: requests see the newest text (the step on line 6
        # is there in the last version only).
        at = {"text_document": lsp.TextDocumentIdentifier(uri=uri), "position": lsp.Position(line=6, character=8)}
        hovered = await editor.client.text_document_hover_async(lsp.HoverParams(**at))
        assert hovered is not None and "**file-list**" in hovered.contents.value
        assert "file-list" in await editor.complete(uri, 6, 10)

        # The file's own finding; the library check's publication adds C803 (the file is
        # not named as its playbook), and may come at any moment after it.
        final = await editor.until(uri, lambda ds: "'edit999' is not defined" in [d.message for d in ds], timeout=120)
        assert {d.code for d in final} <= {"C501", "C803"}, final
        assert [d.range.start.line for d in final if d.code == "C501"] == [5]
        versions = editor.published_versions[uri]
        assert versions[-1] == 1001  # the version of the last edit, with its diagnostics
        assert None not in versions and versions == sorted(versions)  # never an older version after a newer one


def test_a_storm_of_edits_publishes_the_last_version(tmp_path: Path) -> None:
    (tmp_path / "catalyst.toml").write_text("")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "stormy book.yaml").write_text(BASE)
    asyncio.run(_storm(tmp_path))


def test_only_the_newest_text_waiting_is_checked() -> None:
    # The worker is held inside the check of version 1 while versions 2 to 5 of one
    # document and version 1 of another come in: only 5 and the other are checked next.
    checked: list[tuple[str, int | None, str]] = []
    inside, release, done = threading.Event(), threading.Event(), threading.Event()

    def check(uri: str, version: int | None, text: str) -> None:
        checked.append((uri, version, text))
        if version == 1 and uri == "a":
            inside.set()
            release.wait(30)
        if len(checked) == 3:
            done.set()

    edits = NewestText(check)
    edits.put("a", 1, "one")
    assert inside.wait(30)
    for version in range(2, 6):
        edits.put("a", version, f"text {version}")
    edits.put("b", 1, "other")
    edits.put("c", 1, "closed before its check")
    edits.drop("c")
    release.set()
    assert done.wait(30)
    assert checked == [("a", 1, "one"), ("a", 5, "text 5"), ("b", 1, "other")]


def test_a_failing_check_does_not_stop_the_next() -> None:
    checked, done = [], threading.Event()

    def check(uri: str, version: int | None, text: str) -> None:
        if text == "bug":
            raise RuntimeError("a bug in a check")
        checked.append(text)
        done.set()

    edits = NewestText(check)
    edits.put("a", 1, "bug")
    edits.put("b", 1, "fine")
    assert done.wait(30)
    assert checked == ["fine"]


async def _opened_and_closed_at_once(project: Path) -> None:
    async with session(project) as editor:
        trace = lsp.SetTraceParams(value=lsp.TraceValue.Off)
        for i in range(4):
            uri = editor.open(project / "playbooks" / f"brief{i}.yaml", BASE)
            # Messages around the closing one, as from a busy editor: the worker, woken by
            # the opening, lets them be read first, and the closing is read meanwhile.
            for _ in range(200):
                editor.client.set_trace(trace)
            editor.client.text_document_did_close(
                lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )
            for _ in range(200):
                editor.client.set_trace(trace)
        later = editor.open(project / "playbooks" / "later.yaml", _text(1))
        found = await editor.until(later, lambda ds: len(ds) == 1, timeout=60)
        assert found[0].message == "'edit1' is not defined"
    assert "Traceback" not in editor.log, editor.log


def test_a_document_opened_and_closed_at_once_stops_no_later_diagnostics(tmp_path: Path) -> None:
    # The closing message came in while the worker let messages be read before checking:
    # the text it was about to check was gone, and the worker died on an empty queue.
    (tmp_path / "catalyst.toml").write_text("")
    (tmp_path / "playbooks").mkdir()
    asyncio.run(_opened_and_closed_at_once(tmp_path))


def test_a_worker_that_dies_is_replaced_and_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    checked, done = [], threading.Event()

    def check(uri: str, version: int | None, text: str) -> None:
        checked.append(text)
        done.set()

    failures = iter([RuntimeError("a bug outside any check")])

    def busy() -> bool:
        for failure in failures:  # the first call only
            raise failure
        return False

    edits = NewestText(check)
    edits.busy = busy
    with caplog.at_level(logging.ERROR, logger="catalyst.lsp"):
        edits.put("a", 1, "waiting when the worker died")
        assert done.wait(30)
    assert checked == ["waiting when the worker died"]
    died = [r for r in caplog.records if "checking thread stopped" in r.getMessage()]
    assert len(died) == 1 and died[0].exc_info is not None


def test_a_text_closed_while_the_worker_lets_messages_be_read_stops_no_later_check() -> None:
    # The race of the test over stdio above, made certain: the closing message is read
    # while the worker waits for the messages still coming in.
    checked, done = [], threading.Event()

    def check(uri: str, version: int | None, text: str) -> None:
        checked.append(text)
        done.set()

    edits = NewestText(check)
    closing = iter([True])
    read = threading.Event()

    def busy() -> bool:
        for _ in closing:  # the first time: the closing message is being read
            edits.drop("a")
            return True
        read.set()  # called holding the lock: put() below waits until the worker lets go of it
        return False

    edits.busy = busy
    edits.put("a", 1, "closed at once")
    assert read.wait(30)
    edits.put("b", 1, "opened later")
    assert done.wait(30)
    assert checked == ["opened later"]
