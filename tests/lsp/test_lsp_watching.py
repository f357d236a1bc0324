"""Files renamed, deleted or created outside the editor: over stdio, with an editor that
watches them for the server and with one that cannot (the server then looks itself)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import session

RELEASE = """name: release
description: Releases
owner: Engineer
steps:
  - playbook: publish
"""
PUBLISH = """name: publish
description: Publishes
owner: Engineer
steps:
  - display: published
"""

WATCHING = lsp.ClientCapabilities(
    workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
    )
)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "archive").mkdir()
    (tmp_path / "playbooks" / "release.yaml").write_text(RELEASE, encoding="utf-8")
    (tmp_path / "playbooks" / "publish.yaml").write_text(PUBLISH, encoding="utf-8")
    return tmp_path


def _codes(diagnostics: list[lsp.Diagnostic]) -> list[str]:
    return [d.code for d in diagnostics]


async def _renamed_with_the_editor_watching(project: Path) -> None:
    async with session(project, WATCHING) as editor:
        caller = editor.open(project / "playbooks" / "release.yaml")
        callee = project / "playbooks" / "publish.yaml"
        await editor.until(callee.as_uri(), lambda ds: len(ds) == 0)  # the library's first check
        [registration] = editor.registrations
        globs = [w["globPattern"] for w in registration.register_options["watchers"]]  # as sent
        assert {"**/*.{yaml,yml,md,cantbook}", "**/.playbooks/**", "**/catalyst.toml"} <= set(globs)

        # `git mv playbooks/publish.yaml archive/`: the editor reports the old file deleted
        # and the new one created (outside what the server asked to hear of, here).
        moved = project / "archive" / "publish.yaml"
        callee.rename(moved)
        editor.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[
                    lsp.FileEvent(uri=callee.as_uri(), type=lsp.FileChangeType.Deleted),
                    lsp.FileEvent(uri=moved.as_uri(), type=lsp.FileChangeType.Created),
                ]
            )
        )
        await editor.until(caller, lambda ds: _codes(ds) == ["C804"])

        # Moved back: the call is found again.
        moved.rename(callee)
        editor.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[lsp.FileEvent(uri=callee.as_uri(), type=lsp.FileChangeType.Created)]
            )
        )
        await editor.until(caller, lambda ds: len(ds) == 0)


def test_a_callee_renamed_on_disk_is_reported_in_its_open_caller(tmp_path: Path) -> None:
    asyncio.run(_renamed_with_the_editor_watching(_project(tmp_path)))


async def _renamed_without_the_editor_watching(project: Path) -> None:
    async with session(project) as editor:  # no dynamic registration: Neovim on Linux
        caller = editor.open(project / "playbooks" / "release.yaml")
        callee = project / "playbooks" / "publish.yaml"
        await editor.until(callee.as_uri(), lambda ds: len(ds) == 0)
        assert editor.registrations == []

        # Nothing is sent: the server sees the rename itself.
        callee.rename(project / "archive" / "publish.yaml")
        await editor.until(caller, lambda ds: _codes(ds) == ["C804"])
        (project / "archive" / "publish.yaml").rename(callee)
        await editor.until(caller, lambda ds: len(ds) == 0)
        # A new playbook of the same name: both are reported (C802), the one not open too.
        twin = project / "playbooks" / "twin.yaml"
        twin.write_text(PUBLISH, encoding="utf-8")
        await editor.until(twin.as_uri(), lambda ds: "C802" in _codes(ds) or "C803" in _codes(ds))


def test_a_callee_renamed_on_disk_is_seen_when_the_editor_cannot_watch(tmp_path: Path) -> None:
    asyncio.run(_renamed_without_the_editor_watching(_project(tmp_path)))
