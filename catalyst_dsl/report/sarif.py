"""SARIF 2.1.0 output of `catalyst check`: one run, its rules from the code registry.

Code-scanning services (GitHub's, Azure DevOps', editors' SARIF viewers) read this.
Columns are counted in Unicode code points, as catalyst counts them (`columnKind`);
regions are 1-based with an exclusive end column, which is SARIF's convention too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence
from urllib.parse import quote

from catalyst_dsl import __version__
from catalyst_dsl.diagnostics.codes import CODES
from catalyst_dsl.diagnostics.fixes import replacement
from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.diagnostics.text import SourceLookup, display_path
from catalyst_dsl.syntax.source import Span

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: The base every relative artifact URI is resolved against: where catalyst was run.
ROOT_ID = "SRCROOT"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(diagnostics: Sequence[Diagnostic], sources: SourceLookup, *, relative_to: str) -> str:
    codes = list(CODES)
    index = {code: i for i, code in enumerate(codes)}
    run = {
        "tool": {
            "driver": {
                "name": "catalyst",
                "version": __version__,
                "rules": [_rule(code) for code in codes],
            }
        },
        "originalUriBaseIds": {ROOT_ID: {"uri": Path(relative_to).resolve().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, index[d.code], sources, relative_to) for d in diagnostics],
    }
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rule(code: str) -> dict:
    entry = CODES[code]
    return {
        "id": code,
        "name": entry.name,
        "shortDescription": {"text": entry.summary},
        "defaultConfiguration": {"level": _LEVELS[entry.severity]},
    }


def _result(d: Diagnostic, rule_index: int, sources: SourceLookup, relative_to: str) -> dict:
    text = d.message
    if d.help:
        text += f"\nhelp: {d.help}"
    result: dict = {"ruleId": d.code, "ruleIndex": rule_index, "level": _LEVELS[d.severity], "message": {"text": text}}
    if d.span is not None:
        result["locations"] = [{"physicalLocation": _physical(d.span, relative_to)}]
    if d.labels:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": _physical(label.span, relative_to), "message": {"text": label.message}}
            for i, label in enumerate(d.labels)
        ]
    fix = replacement(d, sources.get(d.span.file)) if d.span is not None else None
    if fix is not None:
        result["fixes"] = [
            {
                "description": {"text": fix.description},
                "artifactChanges": [
                    {
                        "artifactLocation": _artifact(fix.span.file, relative_to),
                        "replacements": [{"deletedRegion": _region(fix.span), "insertedContent": {"text": fix.text}}],
                    }
                ],
            }
        ]
    if d.notes:
        result["properties"] = {"notes": list(d.notes)}
    return result


def _physical(span: Span, relative_to: str) -> dict:
    return {"artifactLocation": _artifact(span.file, relative_to), "region": _region(span)}


def _artifact(path: str, relative_to: str) -> dict:
    shown = display_path(path, relative_to)
    if os.path.isabs(shown):
        return {"uri": Path(shown).as_uri()}
    return {"uri": quote(Path(shown).as_posix()), "uriBaseId": ROOT_ID}


def _region(span: Span) -> dict:
    # A span that ends where it starts (a position, not a range) still covers one column
    # for SARIF viewers, which draw nothing for an empty region.
    end_col = span.end_col if (span.end_line, span.end_col) > (span.line, span.col) else span.col + 1
    return {
        "startLine": span.line,
        "startColumn": span.col,
        "endLine": max(span.end_line, span.line),
        "endColumn": end_col,
    }
