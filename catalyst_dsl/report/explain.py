"""`catalyst explain CODE` and `catalyst actions [NAME]`: the reference in the terminal.

Both read what the checker itself uses (the code registry, the action catalog) and the
examples shipped with the package, so an installed catalyst explains itself without the
repository's docs/ folder.
"""

from __future__ import annotations

import json
from importlib import resources

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.diagnostics.codes import CODES

#: Generated from the golden cases with docs/diagnostics.md (`pytest --update-golden`).
EXAMPLES_FILE = "examples.json"


class UnknownName(LookupError):
    """A code or action that does not exist; the message carries a suggestion."""


def shipped_examples() -> dict:
    """The golden examples shipped with the package: code → {case, output}."""
    text = resources.files("catalyst_dsl.diagnostics").joinpath(EXAMPLES_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def explain_code(code: str) -> str:
    from catalyst_dsl.dialects.values import suggest

    wanted = code.strip().upper()
    if wanted.isdigit():
        wanted = f"C{wanted.zfill(3)}"
    entry = CODES.get(wanted) or next((c for c in CODES.values() if c.name == code.strip().lower()), None)
    if entry is None:
        hint = suggest(code.strip().upper(), CODES) or suggest(code.strip().lower(), [c.name for c in CODES.values()])
        raise UnknownName(
            f"there is no diagnostic code '{code}'"
            + (f"; {hint}" if hint else "")
            + " (`catalyst explain --list` lists them)"
        )
    lines = [f"{entry.code} {entry.name} ({entry.severity.value})", "", entry.summary]
    example = shipped_examples().get(entry.code)
    if example is not None:
        lines += [
            "",
            f"Example (the checker's output for tests/golden/{example['case']}):",
            "",
            _indent(example["output"]),
        ]
    return "\n".join(lines) + "\n"


def code_list() -> str:
    return (
        "\n".join(f"{c.code}  {c.severity.value:<7}  {c.name}" for c in sorted(CODES.values(), key=lambda c: c.code))
        + "\n"
    )


def explain_action(catalog: Catalog, name: str | None) -> str:
    from catalyst_dsl.dialects.values import suggest

    specs = list(catalog.specs())
    if name is None:
        width = max(len(s.name) for s in specs)
        return "\n".join(f"{s.name:<{width}}  {s.summary}" for s in specs) + "\n"
    spec = next((s for s in specs if s.name == name), None)
    if spec is None:
        hint = suggest(name, [s.name for s in specs])
        raise UnknownName(
            f"there is no action '{name}'" + (f"; {hint}" if hint else "") + " (`catalyst actions` lists them)"
        )
    lines = [f"{spec.name} ({spec.group})", "", spec.summary, ""]
    if spec.primary:
        lines.append(f"primary key: {spec.primary} (`- {spec.name}: <{spec.primary}>`)")
    lines.append("config:")
    for key, field in spec.config.fields:
        lines.append(f"  {key}{' (required)' if field.required else ''}")
    lines += [f"result: {spec.result.describe()}", f"effect: {spec.effect.value}", f"what-if: {spec.what_if.value}"]
    if spec.shell_like:
        lines.append("writes: what its `writes:` declares")
    elif spec.writes:
        lines.append("writes: the paths in " + ", ".join(w.key for w in spec.writes))
    return "\n".join(lines) + "\n"


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in text.splitlines())
