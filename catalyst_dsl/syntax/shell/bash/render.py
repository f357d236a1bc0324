"""The script that runs: each reference written for where it stands (in double quotes of
its own, out of single quotes), and a quoted here-document that holds one unquoted
with its own text escaped.
"""

from __future__ import annotations

import re

from catalyst_dsl.syntax.shell.bash.findings import Finding
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.slots import Context


class Rendering(ScriptProbe):
    """The probe rewritten so that each reference reads as data where it stands."""

    def _render(self, root, slots: tuple[Finding, ...]) -> str:
        edits: list[tuple[int, int, bytes]] = []
        rewritten = set()
        for (hole, start, end), slot in zip(self.holes, slots):
            ref = self.probe[start:end]
            if slot.context is Context.WORD:
                edits.append((start, end, b'"' + ref + b'"'))
            elif slot.context is Context.SINGLE:
                edits.append((start, end, b"'\"" + ref + b"\"'"))
            elif slot.context is Context.ANSI_C:
                edits.append((start, end, b"'\"" + ref + b"\"$'"))
            elif slot.context is Context.HEREDOC_QUOTED:
                body = root.descendant_for_byte_range(start, end)
                if body.start_byte not in rewritten:
                    rewritten.add(body.start_byte)
                    edits.extend(self._unquote_heredoc(body))
        text = self.probe
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        return text.decode("utf-8", "surrogatepass")

    def _unquote_heredoc(self, body) -> list[tuple[int, int, bytes]]:
        """A quoted here-document cannot hold a reference: it becomes an unquoted one whose
        own text is escaped, so it reads as before and the reference expands."""
        start = next(c for c in body.parent.children if c.type == "heredoc_start")
        edits = [(start.start_byte, start.end_byte, self._text(start).strip("'\"\\").encode())]
        holes = sorted((s, e) for _, s, e in self.holes if body.start_byte <= s and e <= body.end_byte)
        at = body.start_byte
        for s, e in [*holes, (body.end_byte, body.end_byte)]:
            literal = self.probe[at:s]
            escaped = re.sub(rb"([\\$`])", rb"\\\1", literal)
            if escaped != literal:
                edits.append((at, s, escaped))
            at = e
        return edits
