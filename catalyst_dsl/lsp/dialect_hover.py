"""Hover in kai playbooks: what a condition checks, as the predicate it lowers to.

The predicate is kai's own (`kai.condition_check`), so the hover shows the file path or
command a run really tests, never a description kept beside it.
"""

from __future__ import annotations

from catalyst_dsl.dialects import kai
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.lsp.knowledge import word_at
from catalyst_dsl.syntax.source import SourceFile


def kai_hover(source: SourceFile, offset: int) -> str | None:
    found = word_at(source, offset)
    if found is None or found[0] not in kai.CONDITIONS:
        return None
    check = kai.condition_check(found[0], None)
    return f"**{found[0]}** (kai condition) holds when:\n\n" + "\n".join(_lines(check, 0)) if check is not None else None


def _lines(check: ir.Check, depth: int) -> list[str]:
    indent = "  " * depth + "- "
    if check.kind in ("all", "any", "not"):
        head = {"all": "all of", "any": "any of", "not": "not"}[check.kind]
        return [indent + head] + [line for c in check.checks for line in _lines(c, depth + 1)]
    path, regex = _text(check.args.get("path")), _text(check.args.get("regex"))
    if check.kind == "file-exists":
        return [f"{indent}the file `{path}` exists"]
    if check.kind == "file-contains":
        return [f"{indent}the file `{path}` matches `{regex}`"]
    if check.kind == "command-output":
        argv = check.args.get("argv")
        words = " ".join(_text(v) for v in argv.items) if isinstance(argv, ir.ListV) else ""
        return [f"{indent}`{words}` prints text matching `{_text(check.args.get('match'))}`"]
    return [f"{indent}{check.kind}"]


def _text(value) -> str:
    if isinstance(value, ir.Tmpl):
        return value.text
    if isinstance(value, ir.Lit):
        return str(value.value)
    return ""
