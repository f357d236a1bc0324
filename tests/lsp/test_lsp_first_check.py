"""The session's first library check: each file's own findings as soon as it is compiled,
then the library's."""

from __future__ import annotations

import asyncio
from pathlib import Path

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

    asyncio.run(run())
