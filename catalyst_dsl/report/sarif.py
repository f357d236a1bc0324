"""SARIF 2.1.0 output of `catalyst check`: one run, its rules from the code registry.

Code-scanning services (GitHub's, Azure DevOps', editors' SARIF viewers) read this.
Columns are counted in Unicode code points, as catalyst counts them (`columnKind`);
regions are 1-based with an exclusive end column, which is SARIF's convention too.

GitHub's code scanning asks more of a log than the schema does (the SARIF Multitool's
`Ghas` rules): every rule has a `fullDescription` and a `help`, each result a
`partialFingerprints`, by which an alert is followed from one push to the next. The log
names no directory of the machine it was made on: artifact URIs are relative to the
repository root (`SRCROOT`), which the service that reads the log knows.
"""

from __future__ import annotations

import hashlib
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
from catalyst_dsl.report.explain import shipped_examples
from catalyst_dsl.report.reference import code_anchor
from catalyst_dsl.syntax.source import SourceFile, Span

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: The base every relative artifact URI is resolved against: the repository's root.
ROOT_ID = "SRCROOT"
#: The project's home; `[project.urls]` in pyproject.toml says the same (a test holds them together).
PROJECT_URL = "https://github.com/catalyst-dsl/catalyst"
#: Where each rule's `helpUri` points, at the code's heading.
DIAGNOSTICS_PAGE = f"{PROJECT_URL}/blob/main/docs/diagnostics.md"
#: The key of the fingerprint each result carries; the version changes with its recipe.
FINGERPRINT = "catalystFinding/v1"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(diagnostics: Sequence[Diagnostic], sources: SourceLookup, *, relative_to: str) -> str:
    """The log of `diagnostics`; `relative_to` is the repository root artifact URIs start from."""
    codes = list(CODES)
    index = {code: i for i, code in enumerate(codes)}
    examples = shipped_examples()
    fingerprints = _Fingerprints(sources, relative_to)
    run = {
        "tool": {
            "driver": {
                "name": "catalyst",
                "version": __version__,
                "informationUri": PROJECT_URL,
                "rules": [_rule(code, examples.get(code)) for code in codes],
            }
        },
        # Where SRCROOT is on this machine is left out: the log is uploaded, and a reader
        # resolves the URIs against its own checkout.
        "originalUriBaseIds": {ROOT_ID: {"description": {"text": "The root of the repository checked."}}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, index[d.code], sources, relative_to, fingerprints) for d in diagnostics],
    }
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rule(code: str, example: dict | None) -> dict:
    entry = CODES[code]
    link = f"{DIAGNOSTICS_PAGE}#{code_anchor(code)}"
    article = "An" if entry.severity.value[0] in "aeiou" else "A"
    full = f"{entry.summary} {article} {entry.severity.value} by default; `catalyst explain {code}` shows an example."
    text, markdown = [entry.summary], [entry.summary]
    if example is not None:
        # The example of docs/diagnostics.md, which is real checker output (a golden case).
        text += ["", "Example:", example["output"]]
        markdown += ["", "Example:", "", "```text", example["output"], "```"]
    markdown += ["", f"[{code} in the diagnostics reference]({link})"]
    return {
        "id": code,
        "name": entry.name,
        "shortDescription": {"text": entry.summary},
        "fullDescription": {"text": full},
        "help": {"text": "\n".join(text), "markdown": "\n".join(markdown)},
        "helpUri": link,
        "defaultConfiguration": {"level": _LEVELS[entry.severity]},
    }


class _Fingerprints:
    """A result's `partialFingerprints`: what stays the same while a finding does, when lines
    are added above it or the file is moved along with others: its code, its file, the text
    of the line it starts on (without the indentation) and how many findings of the same
    code on a line of the same text come before it in that file."""

    def __init__(self, sources: SourceLookup, relative_to: str) -> None:
        self.sources = sources
        self.relative_to = relative_to
        self.seen: dict[tuple[str, str, str], int] = {}

    def of(self, d: Diagnostic) -> dict:
        if d.span is None:
            shown, line = "", ""
        else:
            shown = Path(display_path(d.span.file, self.relative_to)).as_posix()
            line = _line_text(self.sources.get(d.span.file), d.span.line)
        key = (d.code, shown, line)
        occurrence = self.seen[key] = self.seen.get(key, 0) + 1
        digest = hashlib.sha256("\0".join([*key, str(occurrence)]).encode("utf-8", "surrogatepass")).hexdigest()
        return {FINGERPRINT: digest[:32]}


def _line_text(source: SourceFile | None, line: int) -> str:
    return "" if source is None else source.line_text(line).strip()


def _result(
    d: Diagnostic, rule_index: int, sources: SourceLookup, relative_to: str, fingerprints: _Fingerprints
) -> dict:
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
    result["partialFingerprints"] = fingerprints.of(d)
    if d.notes:
        result["properties"] = {"notes": list(d.notes)}
    return result


def _physical(span: Span, relative_to: str) -> dict:
    return {"artifactLocation": _artifact(span.file, relative_to), "region": _region(span)}


def _artifact(path: str, relative_to: str) -> dict:
    shown = display_path(path, relative_to)
    if os.path.isabs(shown):
        # A file outside the root (`check ../other/x.yaml`): named from the root with `..`,
        # never by the machine's absolute path, which a shared log should not carry.
        try:
            shown = os.path.relpath(shown, relative_to)
        except ValueError:  # another drive (Windows): no relative path leads there
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
