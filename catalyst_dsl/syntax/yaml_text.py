"""Where a YAML text holds data: its quoted values, and the stretches of its scalars that
run past a line's end.

A `#` inside a quoted value, a plain value of several lines or a block scalar (`run: |`)
is text, not a comment; so is a line of a block scalar that starts with `#`. The editor's
and `--fix`'s insertions (lsp/edits.py) are placed only where the text is not data, and
suppression comments (diagnostics/suppressions.py) are not read inside a quoted or plain
value (a block scalar's lines that read as one are: a script's comment line silences
what is found on the next, as documented). Telling these apart takes YAML's own scanner
(libyaml's, as the loader's), not a look at the line.
"""

from __future__ import annotations

import bisect
import functools

from catalyst_dsl.syntax.front_matter import front_matter_end


class DataSpans:
    """The offsets of a text where a scalar's data goes on across a line's end."""

    def __init__(self, spans: list[tuple[int, int, bool]] | None) -> None:
        #: False: the text does not scan as YAML, and no place in it is known to be a comment's.
        self.scanned = spans is not None
        self._starts = [start for start, _end, _block in spans or ()]
        self._ends = [end for _start, end, _block in spans or ()]
        self._blocks = [block for _start, _end, block in spans or ()]

    def inside(self, offset: int, blocks: bool = True) -> bool:
        """Whether the character at `offset` (or, at a line's end, the line break) is known
        to be a scalar's data (never, in a text that does not scan: see `scanned`);
        `blocks=False`: a quoted or plain value's, not a block scalar's."""
        at = bisect.bisect_right(self._starts, offset) - 1  # the last span starting at or before `offset`
        return at >= 0 and offset < self._ends[at] and (blocks or not self._blocks[at])


def data_spans(text: str, markdown: bool = False) -> DataSpans:
    """The data spans of a YAML text, or of a Markdown file's front matter (the rest of a
    Markdown file is not YAML: none there)."""
    return _spans(text, markdown)


@functools.lru_cache(maxsize=8)  # a file's findings ask about the same text in turn
def _spans(text: str, markdown: bool) -> DataSpans:
    import yaml

    scanner = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, as the loader's, when PyYAML has it
    start, end = 0, len(text)
    if markdown:
        close = front_matter_end(text)
        if close is None:
            return DataSpans([])
        start, end = 4, close
    spans: list[tuple[int, int]] = []
    try:
        for token in yaml.scan(text[start:end], Loader=scanner):
            if not isinstance(token, yaml.ScalarToken):
                continue
            if token.start_mark.line == token.end_mark.line and token.style not in ("'", '"'):
                continue  # a plain value on one line holds no ` #`: that would start a comment
            first, last = token.start_mark.index + start, token.end_mark.index + start
            if token.style in ("|", ">"):
                # From its header line's break: a comment after `run: |` is YAML's, the
                # lines under it are text.
                first = text.find("\n", first, last)
                if first < 0:
                    continue
                spans.append((first + 1, last, True))
            else:
                spans.append((first + 1, last, False))  # its first character is a quote or its text
    except yaml.YAMLError:
        return DataSpans(None)
    return DataSpans(spans)
