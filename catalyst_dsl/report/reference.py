"""Reference pages generated from the single sources they describe.

docs/actions.md comes from the action catalog; docs/diagnostics.md from the code registry
and the golden cases, whose expected output is real checker output. tests/test_docs.py
fails when a page is stale; `pytest --update-golden` rewrites it, like a golden file.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS, Catalog
from catalyst_dsl.diagnostics.codes import CODES

_GROUP_TITLES = {
    "C0": "The file and its YAML",
    "C1": "Templates and expressions",
    "C2": "The playbook's structure",
    "C3": "Values and declarations",
    "C4": "Steps and actions",
    "C5": "References and types",
    "C6": "Outputs and artifacts",
    "C7": "Markdown playbooks",
    "C8": "The playbook library: calls, cycles and permissions",
    "C04": "Suppression comments",
    "C9": "Foreign dialects (kai, cleo)",
}

#: A rendered diagnostic starts with its severity and code in brackets.
HEADER = re.compile(r"^(error|warning|info)\[(C\d{3})\]", re.MULTILINE)


def actions_page(catalog: Catalog) -> str:
    lines = [
        "# Built-in actions",
        "",
        "Generated from `catalyst_dsl/actions/builtin.py` (the catalog) by `pytest --update-golden`;",
        "do not edit by hand. Required keys are marked *. *Writes* names the config key whose value",
        "is a path the step writes (checked against `allowedWritePaths`).",
        "",
        "| action | group | primary | config keys | result | effect | what-if | writes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for spec in catalog.specs():
        keys = ", ".join(f"`{name}`{'*' if field.required else ''}" for name, field in spec.config.fields)
        primary = f"`{spec.primary}`" if spec.primary else ""
        if spec.shell_like:
            writes = "its `writes:`"
        else:
            writes = ", ".join(f"`{w.key}`" for w in spec.writes)
        lines.append(
            f"| `{spec.name}` | {spec.group} | {primary} | {keys} | {spec.result.describe()} "
            f"| {spec.effect.value} | {spec.what_if.value} | {writes} |"
        )
    lines += ["", "## Summaries", ""]
    lines += [f"- `{spec.name}`: {spec.summary}" for spec in catalog.specs()]
    lines += ["", "## Keys of every step", "", "Next to the action key; they are not config.", ""]
    lines += [f"- `{key}`: {STEP_KEYS.get(key, '')}".rstrip() for key in RESERVED_STEP_KEYS]
    return "\n".join(lines) + "\n"


#: What each reserved step key does, for the actions page (details: docs/running.md).
STEP_KEYS = {
    "name": "the step's name (kebab-case); later steps read its result by it.",
    "condition": "run the step only when this holds; otherwise it is journaled skipped.",
    "errorPolicy": (
        "what a failure does: Stop, Continue, SilentlyContinue, Ignore, Inquire, Suspend, with `retryCount`."
    ),
    "timeout": "seconds, or `500ms`, `30s`, `5m`, `1h`.",
    "checkpoint": "`true` or a message: pause after the step. `before`: pause before it, answered `yes` (run it), "
    "`skip` (journal it skipped) or `abort` (end the run `cancelled`). Long form `{when: before|after, "
    "message, options, policy}`; `policy: human` is never passed by `--mode autonomous`, "
    "`policy: {rules: [{action, reason, pattern}], commands}` passes by itself when every command it "
    "guards is auto-approved.",
    "writes": "the paths a shell-like step's program may write (glob patterns).",
    "isolated": "accepted and kept in the IR; the interpreter does nothing with it yet.",
    "requires": "checks that must hold before the action runs (files, a program's output, JSON Schema, "
    "`${{ }}` expressions; `all`/`any`/`not`), else `PreconditionFailed` (docs/checks.md).",
    "ensures": "checks that must hold after it, its result readable by the step's name, else "
    "`PostconditionFailed` (docs/checks.md).",
    "bindings": "values merged into the playbook's `bindings` object once the step completes, read later as "
    "`{{ bindings.x }}` (docs/running.md).",
    "approved": "`true` on an AI step: the playbook's author pre-approved its effects, so it does not pause for "
    "them in manual mode; recorded as an approval `via: playbook` and shown by `--what-if`.",
    "cache": "`true` (a day) or a duration: a later run reuses the step's result for the same action, values and AI "
    "adapter instead of running it again; AI steps without tools that change things, `http-get` and `github-repo` "
    "only (C831; docs/running.md, \"Reusing results\").",
}


def golden_examples(golden_dirs: list[Path]) -> dict[str, tuple[str, str]]:
    """The first rendered diagnostic of each code in the golden cases: code → (case, text).

    Cases named after a code (`C202-…`) are preferred for that code, so each example shows
    the code in the case written for it.
    """
    found: dict[str, tuple[str, str]] = {}
    expected = [p for d in golden_dirs for p in sorted(d.glob("*.expected"), key=lambda p: p.name)]
    for owner_first in (True, False):
        for path in expected:
            text = path.read_text(encoding="utf-8")
            starts = [m.start() for m in HEADER.finditer(text)] + [len(text)]
            for begin, end in zip(starts, starts[1:]):
                block = text[begin:end].rstrip("\n")
                code = HEADER.match(block).group(2)  # type: ignore[union-attr]
                if code in found or path.name.startswith(code) != owner_first:
                    continue
                case = path.name[: -len(".expected")]
                found[code] = (f"{path.parent.name}/{case}", block)
    return found


def code_heading(code: str) -> str:
    """A code's heading in docs/diagnostics.md, which links into the page are made from."""
    entry = CODES[code]
    return f"{code} `{entry.name}` ({entry.severity.value})"


def code_anchor(code: str) -> str:
    """The fragment that links to a code's heading, as GitHub (and most Markdown viewers)
    make it: lower case, punctuation but `-` and `_` dropped, spaces made `-`."""
    text = re.sub(r"[^\w\- ]", "", code_heading(code).lower())
    return text.replace(" ", "-")


def diagnostics_page(golden_dirs: list[Path]) -> str:
    examples = golden_examples(golden_dirs)
    lines = [
        "# Diagnostic codes",
        "",
        "Every code `catalyst check` reports. Codes are stable: a code never changes meaning.",
        "Generated from the code registry (`catalyst_dsl/diagnostics/codes.py`) and the golden",
        "cases in `tests/golden/` by `pytest --update-golden`; do not edit by hand. Each example",
        "is real checker output for the golden case named under it (a file in `check/`, or a",
        "whole project in `library/`, checked by `catalyst check` run in it).",
        "",
        "`catalyst check --format json|sarif|github` gives the same findings as JSON, SARIF 2.1.0",
        "or GitHub annotations; a `# catalyst: ignore[CODE]` comment silences one finding, and the",
        "`select`, `ignore` and `severity` settings choose what is reported and how severe it is",
        "(docs/checking.md). Exit status: 0 when no error was found (no warning either, with",
        "`--strict`), 1 when one was, 2 on a usage mistake.",
    ]
    group = None
    for code in sorted(CODES):
        entry = CODES[code]
        # A group is a code's first two characters (C0xx), or three where a range of ten
        # has a title of its own (C04x).
        prefix = code[:3] if code[:3] in _GROUP_TITLES else code[:2]
        if prefix != group:
            group = prefix
            lines += ["", f"## {prefix}{'x' * (4 - len(prefix))}: {_GROUP_TITLES.get(group, 'Other')}"]
        lines += ["", f"### {code_heading(code)}", "", entry.summary, ""]
        example = examples.get(code)
        if entry.retired:
            lines.append("No longer reported; the code keeps its meaning and is never reused.")
            continue
        if example is None:
            lines.append("No example yet.")
            continue
        case, block = example
        lines += [f"Example (`tests/golden/{case}`):", "", "```text", block, "```"]
    return "\n".join(lines) + "\n"


def examples_json(golden_dirs: list[Path]) -> str:
    """The golden examples as the package ships them for `catalyst explain` (an installed
    catalyst has no tests/ and no docs/): code → {case, output}."""
    import json

    examples = golden_examples(golden_dirs)
    data = {code: {"case": case, "output": block} for code, (case, block) in sorted(examples.items())}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
