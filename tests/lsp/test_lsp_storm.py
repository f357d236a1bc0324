"""A storm of edits: the server applies each, checks only the newest text, publishes the
diagnostics of the last version (never of an older one after a newer one's), and answers
requests about the newest text meanwhile."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

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

        final = await editor.until(uri, lambda ds: [d.message for d in ds] == ["'edit999' is not defined"], timeout=120)
        assert final[0].range.start.line == 5
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
