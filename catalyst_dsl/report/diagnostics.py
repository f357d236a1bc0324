"""Diagnostic renderers for programs: the JSON of `catalyst check --format json` (the text
form, which a refused run shows too, is diagnostics/text.py)."""

from __future__ import annotations

from typing import Sequence

from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.diagnostics.text import display_path

#: The JSON of `catalyst check --format json` (docs/diagnostics.md). Version 2 spells
#: every key in camelCase, like the language (version 1 had `end_line`, `end_col`).
FORMAT = "catalyst-diagnostics"
VERSION = 2


def to_json_obj(d: Diagnostic, relative_to: str | None = None) -> dict:
    from catalyst_dsl.diagnostics.codes import CODES  # here: a check with nothing to report never loads the table

    def span_obj(span):
        if span is None:
            return None
        obj = span.to_json()
        obj["file"] = display_path(span.file, relative_to)
        return obj

    return {
        "code": d.code,
        "name": CODES[d.code].name,
        "severity": d.severity.value,
        "message": d.message,
        "span": span_obj(d.span),
        "labels": [{"span": span_obj(label.span), "message": label.message} for label in d.labels],
        "notes": list(d.notes),
        "help": d.help,
    }


def render_json(
    diagnostics: Sequence[Diagnostic],
    files: Sequence[str],
    *,
    relative_to: str | None = None,
    counted: Sequence[Diagnostic] | None = None,
) -> str:
    """`counted` (default: `diagnostics`) are what the summary counts: all findings, when
    `--quiet` prints only those that fail."""
    import json  # here: text output, the default, does without it

    counted = diagnostics if counted is None else counted
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "files": [display_path(f, relative_to) for f in files],
        "diagnostics": [to_json_obj(d, relative_to) for d in diagnostics],
        "summary": {s.value: sum(1 for d in counted if d.severity is s) for s in Severity},
    }
    return json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
