"""Completion over stdio: an action's config keys and enum values, `@` paths in Markdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.helpers.lsp_session import session

HEAD = """name: listing
description: Lists
owner: Engineer
steps:
"""

GUIDE = """# Guide

Read the spec first.
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text('[aliases]\n"vendor/shared/" = "playbooks/shared/"\n', encoding="utf-8")
    (tmp_path / "playbooks" / "shared").mkdir(parents=True)
    (tmp_path / "playbooks" / "listing.yaml").write_text(HEAD + "  - display: hi\n", encoding="utf-8")
    (tmp_path / "playbooks" / "shared" / "review.yaml").write_text(
        (
            "name: review\ndescription: Reviews\nowner: Engineer\n"
            "inputs:\n  - string: reviewer\n  - number: depth\nsteps:\n  - display: ok\n"
        ),
        encoding="utf-8",
    )
    (tmp_path / "playbooks" / "guide.md").write_text(GUIDE, encoding="utf-8")
    return tmp_path


async def _session(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "playbooks" / "listing.yaml")
        last = HEAD.count("\n")

        # Config keys of the step's action, beside its action key (less the primary
        # property it fills and the keys already written) or under it.
        editor.change(uri, HEAD + "  - file-list: .\n    pattern: '*.md'\n    ")
        assert await editor.complete(uri, last + 2, 4) == ["relativeTo"]
        editor.change(uri, HEAD + "  - file-list:\n      path: .\n      rel")
        assert await editor.complete(uri, last + 2, 9) == ["relativeTo"]
        # A step with a name but no action yet: action names, not keys.
        editor.change(uri, HEAD + "  - name: listed\n    file-l")
        assert "file-list" in await editor.complete(uri, last + 1, 10)

        # Under a call's `inputs:`, the inputs the called playbook declares, less those passed.
        editor.change(uri, HEAD + "  - playbook: shared/review.yaml\n    inputs:\n      depth: 2\n      ")
        assert await editor.complete(uri, last + 3, 6) == ["reviewer"]

        # Enum values after the key, and booleans.
        editor.change(uri, HEAD + "  - file-list: .\n    relativeTo: ")
        assert await editor.complete(uri, last + 1, 16) == ["root", "cwd", "absolute"]
        editor.change(uri, HEAD + "  - file-list: .\n    relativeTo: 'r")
        assert await editor.complete(uri, last + 1, 18) == ["root"]
        editor.change(uri, HEAD + "  - git-commit: done\n    push: ")
        assert await editor.complete(uri, last + 1, 10) == ["true", "false"]

        # `@` paths in Markdown: the library's playbooks from the root, and through an alias.
        guide = editor.open(project / "playbooks" / "guide.md")
        editor.change(guide, GUIDE + "Then run @")
        assert await editor.complete(guide, 3, 10) == [
            "playbooks/guide.md",
            "playbooks/listing.yaml",
            "playbooks/shared/review.yaml",
            "vendor/shared/review.yaml",
        ]
        editor.change(guide, GUIDE + "Then run @vendor/")
        assert await editor.complete(guide, 3, 17) == ["vendor/shared/review.yaml"]
        # An e-mail address is not a reference.
        editor.change(guide, GUIDE + "Mail ana@exa")
        assert await editor.complete(guide, 3, 12) == []


def test_completion_of_keys_values_and_markdown_paths(tmp_path: Path) -> None:
    asyncio.run(_session(_project(tmp_path)))
