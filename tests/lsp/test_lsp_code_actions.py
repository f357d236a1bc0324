"""Code actions over stdio: `writes:` for a shell-like step without it (C817), an inline
suppression for any finding, each applied and checked again by the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp

from tests.helpers.lsp_session import session

BUILD = """name: build
description: Builds
owner: Engineer
steps:
  - name: compile
    bash: |
      make all

  - display: "{{ compile.stdout }}"
"""

NOTES = """# Notes

Read @playbooks/missing.md first.

```bash
echo @playbooks/gone.md
```
"""


def _apply(text: str, edit: lsp.WorkspaceEdit, uri: str) -> str:
    """The text after a code action's edits (insertions and replacements on one line each)."""
    lines = text.split("\n")
    for change in sorted(edit.changes[uri], key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = change.range.start, change.range.end
        assert start.line == end.line or (start == end)
        while len(lines) <= start.line:
            lines.append("")
        line = lines[start.line]
        lines[start.line] = line[: start.character] + change.new_text + line[end.character :]
    return "\n".join(lines)


async def _actions(editor, uri: str, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    return await editor.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic]),
        )
    )


async def _session(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "playbooks" / "build.yaml")
        found = await editor.until(uri, lambda ds: any(d.code == "C817" for d in ds))
        unchecked = next(d for d in found if d.code == "C817")
        actions = await _actions(editor, uri, unchecked)
        assert [a.title for a in actions] == [
            "Add `writes: []` (the step writes nothing; list the paths it writes instead)",
            "Suppress C817 on this line",
        ]

        # `writes: []` goes beside the action key, after the block scalar and before the blank line.
        added = _apply(BUILD, actions[0].edit, uri)
        assert added == BUILD.replace("      make all\n", "      make all\n    writes: []\n")
        editor.change(uri, added)
        await editor.until(uri, lambda ds: not any(d.code == "C817" for d in ds))

        # The suppression instead: at the end of the finding's line; the finding goes, and no
        # unused-suppression finding comes (the library check agrees).
        silenced = _apply(BUILD, actions[1].edit, uri)
        assert silenced.splitlines()[5] == "    bash: |  # catalyst: ignore[C817]"
        editor.change(uri, silenced)
        await editor.until(uri, lambda ds: not any(d.code in ("C817", "C040") for d in ds))
        await asyncio.sleep(1)  # past the library check's pause: still silenced
        assert not any(d.code in ("C817", "C040") for d in editor.diagnostics[uri])

        # A second code on a line with a suppression joins its list.
        again = await _actions(
            editor, uri, lsp.Diagnostic(range=unchecked.range, message="x", code="C402", source="catalyst")
        )
        assert _apply(silenced, again[0].edit, uri).splitlines()[5] == "    bash: |  # catalyst: ignore[C817, C402]"

        # A finding on a line of a block scalar: a comment there would change the script,
        # so the suppression is for the whole file.
        inside = lsp.Diagnostic(
            range=lsp.Range(start=lsp.Position(line=6, character=6), end=lsp.Position(line=6, character=10)),
            message="a finding inside the script",
            code="C817",
            source="catalyst",
        )
        [whole] = await _actions(editor, uri, inside)
        assert _apply(BUILD, whole.edit, uri) == "# catalyst: ignore-file[C817]\n" + BUILD

        # Markdown: the HTML comment form; inside a code block, where a comment would be
        # data, for the whole file.
        notes = editor.open(project / "playbooks" / "notes.md")
        [prose] = [
            d for d in await editor.until(notes, lambda ds: any(d.code == "C804" for d in ds)) if d.code == "C804"
        ]
        code = lsp.Diagnostic(
            range=lsp.Range(start=lsp.Position(line=5, character=5), end=lsp.Position(line=5, character=10)),
            message="a finding inside the code block",
            code="C804",
            source="catalyst",
        )
        [inline] = [a for a in await _actions(editor, notes, prose) if a.title.startswith("Suppress")]
        assert (
            _apply(NOTES, inline.edit, notes).splitlines()[2]
            == "Read @playbooks/missing.md first. <!-- catalyst: ignore[C804] -->"
        )
        [whole] = [a for a in await _actions(editor, notes, code) if a.title.startswith("Suppress")]
        assert whole.title == "Suppress C804 in this file (line 6 is text a comment would change)"
        fixed = _apply(NOTES, whole.edit, notes)
        assert fixed.startswith("<!-- catalyst: ignore-file[C804] -->\n# Notes")
        editor.change(notes, fixed)
        await editor.until(notes, lambda ds: not any(d.code == "C804" for d in ds))


def test_code_actions_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "build.yaml").write_text(BUILD, encoding="utf-8")
    (tmp_path / "playbooks" / "notes.md").write_text(NOTES, encoding="utf-8")
    asyncio.run(_session(tmp_path))
