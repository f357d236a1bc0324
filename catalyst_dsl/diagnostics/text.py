"""Diagnostics as text: rustc-style, with the source line and a caret under the span.

What `catalyst check` prints, and what a run refused for its playbook's errors shows
(runtime/lifecycle/preflight.py): one form of a finding for the person at the terminal,
kept with the model so that every layer above can show one. The other forms (JSON,
SARIF, GitHub annotations) are in report/.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping, Sequence

from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl._internal.terminal_text import UNSAFE, escape_character, safe_text
from catalyst_dsl.syntax.source import SourceFile

SourceLookup = dict[str, SourceFile]


def display_path(path: str, relative_to: str | None) -> str:
    if relative_to is None:
        return path
    try:
        rel = os.path.relpath(path, relative_to)
    except ValueError:
        return path
    return path if rel.startswith("..") and os.path.isabs(path) else rel


#: SGR colours of each severity's heading: bold red, bold yellow, bold cyan.
_COLOURS = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m", Severity.INFO: "\x1b[1;36m"}
_RESET = "\x1b[0m"


def wants_colour(is_terminal: bool, environ: Mapping[str, str]) -> bool:
    """Colour on a terminal, unless NO_COLOR is set; FORCE_COLOR asks for it anywhere.

    Both follow their conventions (no-color.org, force-color.org): set and not empty.
    NO_COLOR wins when both are set.
    """
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return is_terminal


def render_text(
    diagnostics: Sequence[Diagnostic], sources: SourceLookup, *, relative_to: str | None = None, colour: bool = False
) -> str:
    out: list[str] = []
    for d in diagnostics:
        out.append(_one(d, sources, relative_to, colour))
    return "\n".join(out)


def _one(d: Diagnostic, sources: SourceLookup, relative_to: str | None, colour: bool = False) -> str:
    # Messages, paths and help quote the file (a key, a value, a file name), so they are
    # made safe like the source lines.
    heading = f"{d.severity.value}[{d.code}]"
    if colour:
        heading = f"{_COLOURS[d.severity]}{heading}{_RESET}"
    lines = [f"{heading}: {safe_text(d.message)}"]
    span = d.span
    # One gutter for the whole diagnostic, as wide as its widest line number, so every
    # `|`, `-->` and `=` lines up (rustc's layout); at least 1.
    shown = [
        s.line for s in (span, *(label.span for label in d.labels)) if s is not None and sources.get(s.file) is not None
    ]
    gutter = " " * max([1, *(len(str(line)) for line in shown)])
    if span is not None:
        path = safe_text(display_path(span.file, relative_to))
        lines.append(f"{gutter}--> {path}:{span.line}:{span.col}")
        source = sources.get(span.file)
        if source is not None:
            lines.extend(_snippet(source, span.line, span.col, span.end_line, span.end_col, "^", gutter))
    for label in d.labels:
        lpath = safe_text(display_path(label.span.file, relative_to))
        lines.append(f"{gutter}::: {lpath}:{label.span.line}:{label.span.col}: {safe_text(label.message)}")
        source = sources.get(label.span.file)
        if source is not None:
            lines.extend(
                _snippet(source, label.span.line, label.span.col, label.span.end_line, label.span.end_col, "-", gutter)
            )
    for note in d.notes:
        lines.append(f"{gutter} = note: {safe_text(note)}")
    if d.help:
        lines.append(f"{gutter} = help: {safe_text(d.help)}")
    return "\n".join(lines) + "\n"


def _snippet(source: SourceFile, line: int, col: int, end_line: int, end_col: int, mark: str, gutter: str) -> list[str]:
    text = source.line_text(line)
    last = end_col if end_line == line else len(text) + 1  # end column, exclusive
    if len(text) > 200:  # keep a window around the column on very long lines
        start = max(0, col - 80)
        shown = ("…" if start else "") + text[start : start + 160] + ("…" if start + 160 < len(text) else "")
        shift = start - (1 if start else 0)  # the "…" takes the place of one character
        col, last = col - shift, last - shift
        text = shown
    # Each character as printed, and the printed column where each one starts: an escaped
    # control character is several columns wide, so the carets are placed by these.
    if "\t" not in text and not UNSAFE.search(text):
        pieces, starts = [text], range(len(text) + 1)  # the common case: one column a character
    else:
        pieces = [" " if c == "\t" else escape_character(c) if UNSAFE.match(c) else c for c in text]
        starts = [0]
        for piece in pieces:
            starts.append(starts[-1] + len(piece))
    first = min(max(col, 1), len(text) + 1) - 1  # 0-based index of the first marked character
    stop = min(max(last - 1, first + 1), len(text))  # exclusive index after the last one
    begin = starts[first]
    length = max(1, starts[stop] - begin) if stop > first else 1
    underline = " " * begin + mark + ("~" * (length - 1) if mark == "^" else mark * (length - 1))
    return [f"{gutter} |", f"{str(line).rjust(len(gutter))} | {''.join(pieces)}", f"{gutter} | {underline}"]


def summary_line(diagnostics: Iterable[Diagnostic], files: int) -> str:
    counts = {s: 0 for s in Severity}
    for d in diagnostics:
        counts[d.severity] += 1
    parts = [f"{counts[Severity.ERROR]} error(s)", f"{counts[Severity.WARNING]} warning(s)"]
    if counts[Severity.INFO]:
        parts.append(f"{counts[Severity.INFO]} note(s)")
    return f"checked {files} file(s): " + ", ".join(parts)
