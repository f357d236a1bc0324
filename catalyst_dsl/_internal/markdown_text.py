"""Untrusted text made safe to put in Markdown: fenced as it is, as a code span, or as an
author's own prose.

A playbook's descriptions and the files it names reach Markdown that an editor or GitHub
renders around other text (a hover lists a called playbook's inputs after its
description). Left as they are, an unclosed fence, a heading, a table, a link reference
definition or an HTML tag in them would swallow or restyle what follows them.
"""

from __future__ import annotations

import re

from catalyst_dsl._internal.terminal_text import safe_text

#: How much of an author's text `author_markdown` shows, at most; the rest is cut with a mark.
AUTHOR_CHARS = 1000
AUTHOR_LINES = 20
#: What ends a cut text: visible, and not Markdown.
CUT_MARK = " … (cut)"

_BACKTICKS = re.compile(r"`+")
#: At a line's start: what would begin a block (a heading, a quote, a list item, a thematic
#: break or setext underline, a fence of tildes, a link reference definition) in place of text.
_BLOCK_START = re.compile(
    r"#{1,6}(?=\s|$)|>|[-+*](?=\s|$)|[-=*_](?=[-=*_\s]*$)|~~~|\[(?=[^\]]*\]:)|\d{1,9}(?=[.)](?:\s|$))"
)
#: In text, read left to right: a backslash escape (kept as it is), else a run of
#: backticks, an HTML tag or comment, a table's cell border, an image (which the editor
#: would fetch from wherever the author points it).
_TOKENS = re.compile(r"\\[!-/:-@\[-`{-~]|`+|[<|]|!(?=\[)")


def fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`, so the text cannot close it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(text: str, language: str = "") -> str:
    """`text` as a fenced code block, shown exactly as it is."""
    ticks = fence(text)
    return f"{ticks}{language}\n{text}\n{ticks}"


def code_span(text: str, cell: bool = False) -> str:
    """`text` as an inline code span; `cell=True` inside a table, where `|` must be escaped even in code."""
    if not text:
        return ""
    text = safe_text(" ".join(text.splitlines()))  # a bidi control would reorder the text around it
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    if cell:
        text = text.replace("|", "\\|")
    return f"{ticks}{text}{ticks}"


#: A name shown as it is in bold: letters, digits and the marks of ids and paths, none of
#: which Markdown reads inside a word.
_PLAIN_NAME = re.compile(r"(?!_)[\w.@/:-]+(?<!_)")
#: What a renderer would make a link of by itself (GitHub's and most editors' autolinks: a
#: scheme, `www.`, an e-mail address): such a name is shown as code, which links nothing.
_LINKED = re.compile(r"://|(?:^|[^\w])www\.|@[\w-]+\.", re.IGNORECASE)
#: How much of a name `strong_name` shows, at most.
NAME_CHARS = 120


def strong_name(text: str) -> str:
    """A name from a playbook (an id, an input, a model) in bold, as the head of a hover: as
    it is when it is a plain name, else as a code span with its control characters
    escaped and cut at NAME_CHARS, so that no `*`, backtick, `<` or line break in it
    restyles or ends what follows."""
    if _PLAIN_NAME.fullmatch(text) and len(text) <= NAME_CHARS and not _LINKED.search(text):
        return f"**{text}**"
    shown = safe_text(text.replace("\t", " "))
    if len(shown) > NAME_CHARS:
        shown = shown[:NAME_CHARS] + "…"
    return f"**{code_span(shown)}**"


def author_markdown(text: str | None, one_line: bool = False) -> str:
    """An author's description as Markdown that stays inside itself: its inline Markdown
    (`code`, *emphasis*, links) kept, its line breaks and paragraphs kept (`one_line`: all
    on one line, for a list item), and nothing in it that could begin a block, open HTML or
    a table, or end in a code span of what follows. Text past AUTHOR_CHARS or AUTHOR_LINES
    is cut, and ends with CUT_MARK."""
    if not text:
        return ""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept, cut = _cut(lines)
    paragraphs: list[list[str]] = [[]]
    for line in kept:
        line = _line(line)
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    if one_line:
        shown = " ".join(line for paragraph in paragraphs for line in paragraph)
    else:
        # Two spaces end a line where the author ended it: a hard break, whatever the line ends with.
        shown = "\n\n".join("  \n".join(paragraph) for paragraph in paragraphs if paragraph)
    return shown + CUT_MARK if cut and shown else shown


def _cut(lines: list[str]) -> tuple[list[str], bool]:
    kept, size = [], 0
    for line in lines:
        if len(kept) == AUTHOR_LINES or size + len(line) > AUTHOR_CHARS:
            room = AUTHOR_CHARS - size
            if len(kept) < AUTHOR_LINES and room > 0:
                head = line[:room]
                space = head.rfind(" ")
                kept.append(head[:space] if space > room // 2 else head)  # at a word's end when near
            return kept, True
        kept.append(line)
        size += len(line) + 1
    return kept, False


def _line(line: str) -> str:
    """One line of an author's text, its block starts and specials escaped, its code spans kept."""
    line = safe_text(line.replace("\t", " ").strip())
    parts, at = [], 0
    for start, end in _code_spans(line):
        parts += [_text(line[at:start]), line[start:end]]
        at = end
    parts.append(_text(line[at:]))
    shown = "".join(parts)
    block = _BLOCK_START.match(shown)
    if block is not None and not shown.startswith("\\"):
        if block.group()[:1].isdigit():
            shown = block.group() + "\\" + shown[block.end() :]  # `1\.`: the number stays
        else:
            shown = "\\" + shown
    return shown


def _code_spans(line: str) -> list[tuple[int, int]]:
    """Where the line's code spans are: a run of backticks up to the next run as long, as
    CommonMark pairs them (a backslash escapes the first backtick of a run)."""
    runs = [(m.start(), len(m.group())) for m in _TOKENS.finditer(line) if m.group().startswith("`")]
    spans, i = [], 0
    while i < len(runs):
        close = next((j for j in range(i + 1, len(runs)) if runs[j][1] == runs[i][1]), None)
        if close is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[close][0] + runs[close][1]))
        i = close + 1
    return spans


def _text(text: str) -> str:
    """Text outside code spans: its lone backticks, HTML, table borders and images escaped;
    what the author escaped stays escaped."""
    return _TOKENS.sub(lambda m: m.group() if m.group().startswith("\\") else "\\" + "\\".join(m.group()), text)
