"""A bash script as ShellCheck reads it, and ShellCheck's findings placed back in the template.

ShellCheck must see the script bash runs, not the template the author wrote: a run gives
each `{{ }}` to bash by reference, as an environment variable quoted for where it stands
(`bash/render.py`), so the script ShellCheck reads is that rendering. Its findings come
back as lines and columns of the rendering; `ScriptView.template_range` turns them into
offsets of the template's text, which the template's scalar map places in the file.
Findings about the text that replaced a placeholder are about our rendering, not the
author's script, and are dropped.

Plain text in, plain data out: running ShellCheck is the project's business
(`project/shellcheck.py`).
"""

from __future__ import annotations

import bisect

from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.shell import RAW_UNKNOWN, bash_analysis, raw_argument
from catalyst_dsl.syntax.shell.bash.findings import REFERENCE
from catalyst_dsl.syntax.shell.slots import Context

#: ShellCheck's levels, most severe first; a level reports itself and those before it.
LEVELS = ("error", "warning", "info", "style")
#: What a run writes after a reference, by where it stands (`bash/render.py`).
_CLOSING = {Context.WORD: '"', Context.SINGLE: "\"'", Context.ANSI_C: "\"$'"}


@record
class ScriptView:
    """The script ShellCheck reads, and where each run of the author's text stands in it:
    `runs` holds (offset in `text`, offset in the template, length), in order."""

    text: str
    runs: tuple[tuple[int, int, int], ...]

    def template_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The template's offsets of `text[start:end]`; None when it starts in text that
        stands for a placeholder."""
        first = self._template_offset(start)
        if first is None:
            return None
        last = self._template_offset(max(start, end - 1))
        return first, max(first, last if last is not None else first) + (end > start)

    def _template_offset(self, at: int) -> int | None:
        i = bisect.bisect_right(self.runs, (at, float("inf"), 0)) - 1
        if i < 0:
            return None
        begin, template, length = self.runs[i]
        if at >= begin + length:
            # at a line's end (a missing `fi` is reported past the last character)
            if at == len(self.text) and begin + length == at:
                return template + length
            return None
        return template + (at - begin)


@record
class ShellFinding:
    """One ShellCheck comment on a script, in the template's offsets."""

    level: str
    code: int
    message: str
    start: int
    end: int


@record
class ShellCheckOutput:
    """What a run of ShellCheck over a check's scripts gave: its version (None when it is
    not installed), why it gave no comments on some script (empty when it gave them on
    all), and its comments on each script, in the order asked (None for a script it gave
    none on; empty when it did not run)."""

    version: str | None
    problem: str
    comments: tuple[tuple[dict, ...] | None, ...]


def script_view(text: str, parts: tuple[ast.Part, ...] | None, given: frozenset = frozenset()) -> ScriptView | None:
    """What ShellCheck reads of a bash script: the template `text` (with its `parts`, or
    None for a script without placeholders) as a run renders it; None when a run would
    refuse the script, the script with a bare reference for each value."""
    if not parts:
        return ScriptView(text, ((0, 0, len(text)),))
    analysis = bash_analysis(text, parts, given=given)
    rendered = analysis.script
    if rendered is None:
        # A run refuses it (C822 says why): ShellCheck reads it with a bare reference for
        # each value, which still shows where a script that does not parse goes wrong.
        rendered, analysis = _bare(parts), None
    runs: list[tuple[int, int, int]] = []
    cursor = 0
    holes = iter(enumerate(analysis.slots if analysis is not None else [None] * len(parts)))
    for part in parts:
        if not isinstance(part, ast.TextPart):
            # What stands for the value, and the quotes written after it (`render.py`):
            # passed over, so that the author's next text is not looked for inside them.
            if raw_argument(part) is not None:
                stand_in, after = RAW_UNKNOWN, ""
            else:
                index, slot = next(holes)
                stand_in, after = "${" + REFERENCE.format(index) + "}", _CLOSING.get(getattr(slot, "context", None), "")
            found = rendered.find(stand_in, cursor)
            if found >= 0:
                cursor = found + len(stand_in) + len(after)
            continue
        if not part.text:
            continue
        found = rendered.find(part.text, cursor)
        if found >= 0:
            runs.append((found, part.start, len(part.text)))
            cursor = found + len(part.text)
            continue
        # The run rewrote this text (a quoted here-document's escapes): its runs matched
        # one by one, within the stretch the rewriting can have grown it to.
        import difflib  # rare: only a text the run rewrote

        window = rendered[cursor : cursor + 2 * len(part.text) + 16]
        matcher = difflib.SequenceMatcher(None, window, part.text, autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            if size:
                runs.append((cursor + a, part.start + b, size))
        cursor = runs[-1][0] + runs[-1][2] if runs else cursor
    return ScriptView(rendered, tuple(runs))


def _bare(parts: tuple[ast.Part, ...]) -> str:
    pieces, holes = [], 0
    for part in parts:
        if isinstance(part, ast.TextPart):
            pieces.append(part.text)
        elif raw_argument(part) is not None:
            pieces.append(RAW_UNKNOWN)
        else:
            pieces.append("${" + REFERENCE.format(holes) + "}")
            holes += 1
    return "".join(pieces)


def read_comments(output: str) -> dict[str, list[dict]]:
    """ShellCheck's `json1` output as its comments by file name; ValueError when it is not that."""
    import json

    data = json.loads(output)
    if not isinstance(data, dict) or not isinstance(data.get("comments"), list):
        raise ValueError("not ShellCheck's json1 output")
    by_file: dict[str, list[dict]] = {}
    for comment in data["comments"]:
        if isinstance(comment, dict) and isinstance(comment.get("file"), str):
            by_file.setdefault(comment["file"], []).append(comment)
    return by_file


def findings_in(view: ScriptView, comments: list[dict]) -> list[ShellFinding]:
    """ShellCheck's comments on `view.text` (lines and columns from 1, a tab one column)
    as findings in the template, those about a placeholder's stand-in left out."""
    starts = [0]
    for i, ch in enumerate(view.text):
        if ch == "\n":
            starts.append(i + 1)
    found: list[ShellFinding] = []
    for comment in comments:
        try:
            level, code, message = comment["level"], int(comment["code"]), str(comment["message"])
            start = _offset(view.text, starts, int(comment["line"]), int(comment["column"]))
            end = _offset(view.text, starts, int(comment["endLine"]), int(comment["endColumn"]))
        except (KeyError, TypeError, ValueError):
            continue  # a comment of another shape: nothing to place
        if level not in LEVELS:
            continue
        where = view.template_range(start, max(end, start + 1 if start < len(view.text) else start))
        if where is not None:
            found.append(ShellFinding(level, code, message, *where))
    return found


def _offset(text: str, starts: list[int], line: int, column: int) -> int:
    if line < 1:
        return 0
    if line > len(starts):
        return len(text)
    line_end = starts[line] - 1 if line < len(starts) else len(text)
    return min(starts[line - 1] + max(column, 1) - 1, line_end)
