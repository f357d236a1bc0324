"""The edits behind the editor's code actions that are not did-you-means (those come from
diagnostics/fixes.py, shared with SARIF): an inline suppression for any finding, and the
`writes:` a shell-like step lacks (C817).

Each is worked out from the file's text as the editor has it, as an insertion: a position
(0-based line, code-point column) and the text to put there.
"""

from __future__ import annotations

import bisect
import functools
import re

from catalyst_dsl._internal.records import record

from catalyst_dsl.diagnostics.ids import UNKNOWN_SUPPRESSION_CODE, UNUSED_SUPPRESSION
from catalyst_dsl.diagnostics.suppressions import MARKDOWN_COMMENT, YAML_COMMENT
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.lsp.knowledge import walk
from catalyst_dsl.syntax.front_matter import front_matter_end
from catalyst_dsl.syntax.yaml_text import data_spans
from catalyst_dsl.syntax.source import SourceFile

#: Findings about suppression comments themselves, which no comment silences.
_UNSILENCEABLE = frozenset({UNUSED_SUPPRESSION, UNKNOWN_SUPPRESSION_CODE})
_FENCE = re.compile(r"^\s*(```|~~~)")


@record
class Insertion:
    title: str
    line: int  # 0-based
    column: int  # 0-based, in code points
    text: str


def suppression(source: SourceFile, code: str, line: int) -> Insertion | None:
    """The comment that silences `code` on `line` (1-based): at the end of that line, or, where
    a comment there would be data (inside a YAML block scalar or a Markdown code block), for
    the whole file at its top."""
    if code in _UNSILENCEABLE or not code:
        return None
    # Markdown's front matter is YAML: its comments are YAML's.
    markdown = source.path.endswith(".md") and not _in_front_matter(source, line)
    text = source.line_text(line)
    start = source.offset(line, 1)
    data = None if markdown else data_spans(source.text, source.path.endswith(".md"))
    # The comment the reader takes for one (diagnostics/suppressions), never text like it in a value.
    pattern = MARKDOWN_COMMENT if markdown else YAML_COMMENT
    existing = next(
        (
            m
            for m in pattern.finditer(text)
            if m.group(1) == "ignore" and (data is None or not data.inside(start + m.start()))
        ),
        None,
    )
    if existing is not None:  # one comment per line: add the code to it
        codes = [c.strip() for c in existing.group(2).split(",") if c.strip()]
        if code in codes:
            return None
        return Insertion(f"Suppress {code} on this line", line - 1, existing.end(2), f", {code}" if codes else code)
    if markdown:
        inside = _in_code_block(source, line) or _fences_front_matter(source, line)
    else:  # a comment at the line's end would be data: in a quoted value, a block scalar, a value of lines
        inside = not data.scanned or data.inside(start + len(text))
    if not inside:
        comment = f" <!-- catalyst: ignore[{code}] -->" if markdown else f"  # catalyst: ignore[{code}]"
        return Insertion(f"Suppress {code} on this line", line - 1, len(text), comment)
    # A file-wide comment goes after a Markdown file's front matter, as an HTML comment.
    markdown = source.path.endswith(".md")
    comment = f"<!-- catalyst: ignore-file[{code}] -->\n" if markdown else f"# catalyst: ignore-file[{code}]\n"
    return Insertion(
        f"Suppress {code} in this file (line {line} is text a comment would change)", _top(source, markdown), 0, comment
    )


def missing_writes(source: SourceFile, playbook: ir.Playbook, line: int, column: int) -> Insertion | None:
    """`writes: []` for the shell-like step whose action key is at (line, column), 1-based: a
    key beside the action key, after the step's last line."""
    if source.path.endswith(".md") and not _in_front_matter(source, line):
        return None  # a step of a Markdown body has no YAML keys to insert beside
    step = _steps_by_action_key(playbook).get((line, column))
    if step is None or step.writes_declared:
        return None
    if source.line_text(line)[: column - 1].rstrip().endswith(("{", ",")):
        return None  # a flow mapping (`- {bash: make}`): no line of its own to add
    last = _last_line_of_mapping(source, line, column - 1)
    title = "Add `writes: []` (the step writes nothing; list the paths it writes instead)"
    key = " " * (column - 1) + "writes: []"
    if last >= source.line_count - 1 and not source.text.endswith("\n"):  # the step ends the file, without a newline
        return Insertion(title, last - 1, len(source.line_text(last)), "\n" + key)
    return Insertion(title, last, 0, key + "\n")


#: The last playbooks' steps by where their action key is: a file's findings ask in turn,
#: and walking every step for each had made `--fix` of thousands of steps quadratic. Kept
#: with the playbook itself, whose id is then never another's.
_BY_ACTION_KEY: dict[int, tuple[ir.Playbook, dict[tuple[int, int], ir.Step]]] = {}


def _steps_by_action_key(playbook: ir.Playbook) -> dict[tuple[int, int], ir.Step]:
    kept = _BY_ACTION_KEY.get(id(playbook))
    if kept is not None and kept[0] is playbook:
        return kept[1]
    index: dict[tuple[int, int], ir.Step] = {}
    for step in walk(playbook.steps):
        if step.action_span is not None:
            index.setdefault((step.action_span.line, step.action_span.col), step)
    if len(_BY_ACTION_KEY) >= 8:
        _BY_ACTION_KEY.clear()
    _BY_ACTION_KEY[id(playbook)] = (playbook, index)
    return index


def _last_line_of_mapping(source: SourceFile, line: int, indent: int) -> int:
    """The last line (1-based) of the mapping whose keys start at `indent` and one of whose
    keys is on `line`: where a line less indented comes, it has ended (blank lines and
    comments in between are not its own)."""
    last = line
    total = source.line_count
    data = data_spans(source.text, source.path.endswith(".md"))
    for below in range(line + 1, total + 1):
        text = source.line_text(below)
        stripped = text.lstrip()
        if not stripped or (stripped.startswith("#") and not data.inside(source.offset(below, 1))):
            continue  # (a line of a block scalar that starts with `#` is the scalar's: a script's comment)
        if len(text) - len(stripped) < indent:
            break
        last = below
    return last


def _in_code_block(source: SourceFile, line: int) -> bool:
    """Whether `line` of a Markdown file is inside a fenced code block (or is its fence)."""
    fences = _fence_lines(source.text)
    before = bisect.bisect_left(fences, line)  # fences above it
    return before % 2 == 1 or (before < len(fences) and fences[before] == line)


@functools.lru_cache(maxsize=8)  # a file's findings ask in turn: the file is read once, not once a finding
def _fence_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.split("\n"), 1) if _FENCE.match(line)]


def _fences_front_matter(source: SourceFile, line: int) -> bool:
    """Whether `line` of a Markdown file opens or closes its front matter: a comment there
    would end the `---` line, and the front matter with it."""
    end = front_matter_end(source.text)
    return end is not None and line in (1, source.position(end)[0])


def _in_front_matter(source: SourceFile, line: int) -> bool:
    """Whether `line` (1-based) is YAML of a Markdown file's front matter."""
    end = front_matter_end(source.text)
    return end is not None and 1 < line < source.position(end)[0]


def _top(source: SourceFile, markdown: bool) -> int:
    """The 0-based line a file-wide comment goes on: the first, or after Markdown front matter."""
    end = front_matter_end(source.text) if markdown else None
    return 0 if end is None else source.position(end)[0]
