"""Diagnostic renderers: rustc-style text with the source line and a caret, and JSON."""

from __future__ import annotations

import json
import os
from typing import Iterable, Sequence

from catalyst_dsl.diagnostics.codes import CODES
from catalyst_dsl.diagnostics.model import Diagnostic, Severity
from catalyst_dsl.syntax.source import SourceFile

SourceLookup = dict[str, SourceFile]


def _display_path(path: str, relative_to: str | None) -> str:
    if relative_to is None:
        return path
    try:
        rel = os.path.relpath(path, relative_to)
    except ValueError:
        return path
    return path if rel.startswith("..") and os.path.isabs(path) else rel


def render_text(diagnostics: Sequence[Diagnostic], sources: SourceLookup, *, relative_to: str | None = None) -> str:
    out: list[str] = []
    for d in diagnostics:
        out.append(_one(d, sources, relative_to))
    return "\n".join(out)


def _one(d: Diagnostic, sources: SourceLookup, relative_to: str | None) -> str:
    lines = [f"{d.severity.value}[{d.code}]: {d.message}"]
    span = d.span
    if span is not None:
        path = _display_path(span.file, relative_to)
        lines.append(f"  --> {path}:{span.line}:{span.col}")
        source = sources.get(span.file)
        if source is not None:
            lines.extend(_snippet(source, span.line, span.col, span.end_line, span.end_col, "^"))
    for label in d.labels:
        lpath = _display_path(label.span.file, relative_to)
        lines.append(f"  ::: {lpath}:{label.span.line}:{label.span.col}: {label.message}")
        source = sources.get(label.span.file)
        if source is not None:
            lines.extend(_snippet(source, label.span.line, label.span.col, label.span.end_line, label.span.end_col, "-"))
    for note in d.notes:
        lines.append(f"   = note: {note}")
    if d.help:
        lines.append(f"   = help: {d.help}")
    return "\n".join(lines) + "\n"


def _snippet(source: SourceFile, line: int, col: int, end_line: int, end_col: int, mark: str) -> list[str]:
    text = source.line_text(line)
    if len(text) > 200:  # keep a window around the column on very long lines
        start = max(0, col - 80)
        shown = ("…" if start else "") + text[start : start + 160] + ("…" if start + 160 < len(text) else "")
        col = col - start + (1 if start else 0)
        text = shown
    width = len(str(line))
    gutter = " " * width
    expanded = text.replace("\t", " ")
    last = end_col if end_line == line else len(expanded) + 1
    length = max(1, min(last, len(expanded) + 1) - col)
    underline = " " * (col - 1) + mark + ("~" * (length - 1) if mark == "^" else mark * (length - 1))
    return [f"{gutter} |", f"{line} | {expanded}", f"{gutter} | {underline}"]


def summary_line(diagnostics: Iterable[Diagnostic], files: int) -> str:
    counts = {s: 0 for s in Severity}
    for d in diagnostics:
        counts[d.severity] += 1
    parts = [f"{counts[Severity.ERROR]} error(s)", f"{counts[Severity.WARNING]} warning(s)"]
    if counts[Severity.INFO]:
        parts.append(f"{counts[Severity.INFO]} note(s)")
    return f"checked {files} file(s): " + ", ".join(parts)


def to_json_obj(d: Diagnostic, relative_to: str | None = None) -> dict:
    def span_obj(span):
        if span is None:
            return None
        obj = span.to_json()
        obj["file"] = _display_path(span.file, relative_to)
        return obj

    return {
        "code": d.code,
        "name": CODES[d.code].name,
        "severity": d.severity.value,
        "message": d.message,
        "span": span_obj(d.span),
        "labels": [{"span": span_obj(l.span), "message": l.message} for l in d.labels],
        "notes": list(d.notes),
        "help": d.help,
    }


def render_json(diagnostics: Sequence[Diagnostic], files: Sequence[str], *, relative_to: str | None = None) -> str:
    payload = {
        "version": 1,
        "files": [_display_path(f, relative_to) for f in files],
        "diagnostics": [to_json_obj(d, relative_to) for d in diagnostics],
        "summary": {s.value: sum(1 for d in diagnostics if d.severity is s) for s in Severity},
    }
    return json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
