"""The session's first library check: each file's own findings as soon as it is compiled,
then the library's."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import session


def _playbook(name: str, steps: str, inputs: str = "") -> str:
    return f"name: {name}\ndescription: {name}\nowner: Engineer\n{inputs}steps:\n{steps}"


def test_own_findings_come_first_then_the_library_s(tmp_path: Path) -> None:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    folder = tmp_path / "playbooks"
    folder.mkdir()
    (folder / "publish.yaml").write_text(
        _playbook("publish", "  - display: '{{ version }}'\n", "inputs:\n  - string: version\n    required: true\n")
    )
    # Its own finding (an unknown name, C501) and the library's (the call lacks a required input).
    (folder / "broken.yaml").write_text(_playbook("broken", "  - display: '{{ missing }}'\n  - playbook: publish\n"))
    (folder / "clean.yaml").write_text(_playbook("clean", "  - display: fine\n"))
    broken, clean = (folder / "broken.yaml").as_uri(), (folder / "clean.yaml").as_uri()

    async def run() -> None:
        async with session(tmp_path) as editor:
            editor.open(folder / "publish.yaml")
            await editor.until(broken, lambda ds: len(ds) == 2)
            await editor.until(clean, lambda ds: len(ds) == 0)
            first, last = editor.published_codes[broken][0], editor.published_codes[broken][-1]
            assert first == ["C501"], "the file's own finding, before the library's rules ran"
            assert "C501" in last and len(last) == 2, last
            # A file without findings is published once, by the library check.
            assert editor.publications[clean] == 1

    asyncio.run(run())


def test_a_large_library_s_first_check_finds_what_catalyst_check_finds(tmp_path: Path) -> None:
    """610 playbooks: on a machine of two processors or more, the first check is split
    across processes (`project.shards`); what the editor is shown is what `catalyst check`
    prints, mistakes that span the shares included (a cycle through the whole library, a
    name used at both ends)."""
    import json
    import subprocess
    import sys

    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    folder = tmp_path / "playbooks"
    folder.mkdir()
    count = 610
    for i in range(count):
        steps = f"  - display: step {i}\n  - playbook: flow-{(i + 1) % count}\n"
        if i % 50 == 7:
            steps += "    inputs:\n      nowhere: x\n"
        if i % 97 == 3:
            steps += "  - display: '{{ missing }}'\n"
        (folder / f"flow-{i}.yaml").write_text(_playbook(f"flow-{i}", steps))
    (folder / "twin.yaml").write_text(_playbook("flow-0", "  - display: twin\n"))
    printed = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "check", "--no-cache", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    expected = {
        ((tmp_path / d["span"]["file"]).resolve().as_uri(), d["code"], d["span"]["line"])
        for d in json.loads(printed.stdout)["diagnostics"]
    }
    assert {"C802", "C809", "C806", "C501"} <= {code for _, code, _ in expected}

    async def run() -> set:
        async with session(tmp_path) as editor:

            def shown() -> set:
                return {(uri, d.code, d.range.start.line + 1) for uri, ds in editor.diagnostics.items() for d in ds}

            editor.open(folder / "twin.yaml")
            with contextlib.suppress(AssertionError):  # a difference is shown below
                await editor._publication(lambda: shown() == expected, lambda: "", 120)
            return shown()

    assert asyncio.run(run()) == expected


def test_a_named_pipe_among_the_playbooks_never_holds_the_first_check(tmp_path: Path) -> None:
    import os

    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    folder = tmp_path / "playbooks"
    folder.mkdir()
    (folder / "broken.yaml").write_text(_playbook("broken", "  - display: '{{ missing }}'\n"))
    (folder / "open.yaml").write_text(_playbook("open", "  - display: fine\n"))
    os.mkfifo(folder / "trap.yaml")  # no writer ever comes: opening it would block the check
    broken, trap = (folder / "broken.yaml").as_uri(), (folder / "trap.yaml").as_uri()

    async def run() -> None:
        async with session(tmp_path) as editor:
            editor.open(folder / "open.yaml")
            await editor.until(broken, lambda ds: [d.code for d in ds] == ["C501"], timeout=20)
            [found] = await editor.until(trap, lambda ds: len(ds) == 1, timeout=20)
            assert found.code == "C001" and "not a regular file" in found.message
            # A request about the pipe, which no editor has open, is answered without opening
            # it (reading it would hold the server, and every request after it, forever).
            where = lsp.Position(line=0, character=0)
            asked = editor.client.text_document_hover_async(
                lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=trap), position=where)
            )
            assert await asyncio.wait_for(asked, 20) is None
            completed = await asyncio.wait_for(editor.complete((folder / "open.yaml").as_uri(), 5, 4), 20)
            assert isinstance(completed, list)

    asyncio.run(run())
