"""A first check split across processes, then edits: buffers the shares must see, and the
incremental checks that follow it across the shares."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.helpers.lsp_session import session

COUNT = 610
REQUIRED = "inputs:\n  - string: topic\n    required: true\n"


def _playbook(i: int, inputs: str = "") -> str:
    return (
        f"name: flow-{i}\ndescription: flow {i}\nowner: Engineer\n{inputs}"
        f"steps:\n  - display: step {i}\n  - playbook: flow-{(i + 1) % COUNT}\n"
    )


def _codes(ds) -> list[str]:
    return sorted(str(d.code) for d in ds)


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_buffers_and_edits_across_the_shares(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool) -> None:
    """A buffer of the other share's file that requires an input its caller leaves out is
    seen by the first check; edits after it, on either side, update the callers."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    root = tmp_path / "project"
    folder = root / "playbooks"
    folder.mkdir(parents=True)
    (root / "catalyst.toml").write_text("" if cache else "check-cache = false\n")
    for i in range(COUNT):
        (folder / f"flow-{i}.yaml").write_text(_playbook(i))
    late, early = 600, 3  # their files are in the second share and the first (sorted by name)
    uri = {i: (folder / f"flow-{i}.yaml").as_uri() for i in (late, late - 1, early, early - 1)}

    async def run() -> None:
        async with session(root) as editor:
            editor.open(folder / f"flow-{late}.yaml", _playbook(late, REQUIRED))
            # The cycle through every playbook is found anyway (C809); the buffer adds C805.
            found = await editor.until(uri[late - 1], lambda ds: "C805" in _codes(ds), timeout=120)
            assert "C805" in _codes(found)
            editor.change(uri[late], _playbook(late))
            await editor.until(uri[late - 1], lambda ds: "C805" not in _codes(ds), timeout=60)
            editor.open(folder / f"flow-{early}.yaml")
            editor.change(uri[early], _playbook(early, REQUIRED))
            await editor.until(uri[early - 1], lambda ds: "C805" in _codes(ds), timeout=60)

    asyncio.run(run())


@pytest.mark.slow
@pytest.mark.parametrize("pause", [round(0.4 + 0.05 * i, 2) for i in range(13)])
def test_an_edit_during_the_first_check_is_never_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pause) -> None:
    """The buffer changes while the split first check runs, at moments across it: what
    stays on screen is the check of the newer text. An edit that came in after the first
    check had published and before it took the session's changes was lost: the caller kept
    the finding of the older text (the window is some 50 ms wide on a machine of two
    processors, 0.65 s after the open)."""
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    root = tmp_path / "project"
    folder = root / "playbooks"
    folder.mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    for i in range(COUNT):
        (folder / f"flow-{i}.yaml").write_text(_playbook(i))
    late = 600
    caller = (folder / f"flow-{late - 1}.yaml").as_uri()

    async def run() -> None:
        async with session(root) as editor:
            uri = editor.open(folder / f"flow-{late}.yaml", _playbook(late, REQUIRED))
            await asyncio.sleep(pause)  # the first check under way
            editor.change(uri, _playbook(late))
            await editor.until(caller, lambda ds: "C805" not in _codes(ds), timeout=60)
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                assert "C805" not in _codes(editor.diagnostics.get(caller, [])), "a stale check was published"
                await asyncio.sleep(0.1)

    asyncio.run(run())


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_the_first_edit_after_a_split_check_checks_only_what_it_reaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    """Playbooks that call nothing: after the split first check, an edit of one of them
    checks that file alone. The files the check had compiled, and those of the other
    share loaded after it, counted as changed since the check, and the first edit checked
    the whole library again (seconds in a large one)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    root = tmp_path / "project"
    folder = root / "playbooks"
    folder.mkdir(parents=True)
    (root / "catalyst.toml").write_text("" if cache else "check-cache = false\n")

    def alone(i: int, step: str = "step") -> str:
        return f"name: flow-{i}\ndescription: flow {i}\nowner: Engineer\nsteps:\n  - display: '{step} {i}'\n"

    for i in range(COUNT):
        (folder / f"flow-{i}.yaml").write_text(alone(i))
    uris = [(folder / f"flow-{i}.yaml").as_uri() for i in range(COUNT)]
    edited = uris[600]

    async def run() -> None:
        async with session(root) as editor:
            editor.open(folder / "flow-600.yaml")
            await editor._publication(
                lambda: all(uri in editor.publications for uri in uris),
                lambda: f"the first check published {len(editor.publications)} of {COUNT} files",
                120,
            )
            before = dict(editor.publications)
            editor.change(edited, alone(600, "{{ nowhere }}"))
            await editor.until(edited, lambda ds: "C501" in _codes(ds), timeout=60)
            # Its own findings, then the library check's publication of what it checked.
            await editor._publication(
                lambda: editor.publications[edited] >= before[edited] + 2,
                lambda: "the library check after the edit never published the edited file",
                60,
            )
            await asyncio.sleep(1)  # a whole library's publication would be out by now
            again = sorted(uri for uri in uris if editor.publications[uri] != before[uri])
            assert again == [edited]

    asyncio.run(run())
