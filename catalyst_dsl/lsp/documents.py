"""The editor's open documents, kept as the Language Server Protocol counts their lines.

pygls applies an incremental change at a line and column of its document's `lines`, which
it makes with `str.splitlines`: that also breaks a line at U+2028, U+2029, U+0085 and a
few control characters, where LSP (and every editor) breaks only at `\\r\\n`, `\\n` and
`\\r`. A change sent after such a character on its line landed on the wrong line, and the
server's text was no longer the editor's. The documents here count as LSP does.
"""

from __future__ import annotations

import re
from typing import Sequence

from pygls.workspace import TextDocument, Workspace

#: A line with its break, or the last line without one.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+\Z")


class Document(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return tuple(_LINE.findall(self.source))


def count_lines_as_lsp(workspace: Workspace) -> None:
    """Make `workspace` keep the documents opened from now on as `Document`s."""

    def create(doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None):
        return Document(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            # pygls keeps its sync kind private; the codec is the workspace's (UTF-16 unless negotiated).
            sync_kind=workspace._sync_kind,
            position_codec=workspace.position_codec,
        )

    workspace._create_text_document = create
