"""`catalyst list`: the playbooks of a project with their metadata, as text or JSON."""

from __future__ import annotations

import json
from typing import Mapping, Sequence

from catalyst_dsl.checks.library_view import Edge
from catalyst_dsl.compiler import Compiled
from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.text import display_path


def _entry(compiled: Compiled, errors: int, calls: Sequence[Edge], relative_to: str | None) -> dict:
    pb = compiled.playbook
    entry: dict = {"file": display_path(compiled.path, relative_to), "errors": errors}
    if pb is None:
        return entry
    from catalyst_dsl.dialects import registry

    entry.update(
        name=registry.address(pb, compiled.path),
        description=pb.description,
        owner=pb.owner or None,
        dialect=pb.dialect,
        reviewers={"required": list(pb.reviewers.required), "optional": list(pb.reviewers.optional)},
        inputs=[{"name": i.name, "type": i.type, "required": i.required and i.default is None} for i in pb.inputs],
        outputs=[{"name": o.name, "type": o.type} for o in pb.outputs],
        calls=[
            {
                "target": e.target,
                "line": e.span.line if e.span else None,
                "kind": e.kind,
                "file": display_path(e.callee, relative_to) if e.callee else None,
                "checked": not e.dynamic,
            }
            for e in calls
        ],
    )
    return entry


def _entries(
    compiled: Sequence[Compiled],
    diagnostics: Sequence[Diagnostic],
    calls: Mapping[str, Sequence[Edge]],
    relative_to: str | None,
) -> list[dict]:
    errors: dict[str, int] = {}
    for d in diagnostics:
        if d.severity.value == "error" and d.span is not None:
            errors[d.span.file] = errors.get(d.span.file, 0) + 1
    entries = [_entry(c, errors.get(c.path, 0), calls.get(c.path, ()), relative_to) for c in compiled]
    return sorted(entries, key=lambda e: (e.get("name") or "", e["file"]))


def listing_json(
    compiled: Sequence[Compiled],
    diagnostics: Sequence[Diagnostic],
    calls: Mapping[str, Sequence[Edge]],
    *,
    relative_to: str | None = None,
) -> str:
    return (
        json.dumps(
            {"format": "catalyst-list", "version": 1, "playbooks": _entries(compiled, diagnostics, calls, relative_to)},
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def listing_text(
    compiled: Sequence[Compiled],
    diagnostics: Sequence[Diagnostic],
    calls: Mapping[str, Sequence[Edge]],
    *,
    relative_to: str | None = None,
) -> str:
    """One block per playbook; its calls (the call graph) as `→ target (line N)` lines."""
    lines: list[str] = []
    entries = _entries(compiled, diagnostics, calls, relative_to)
    for e in entries:
        if "name" not in e:
            lines += [
                (
                    f"{e['file']}: does not compile ({e['errors']} error{'s' if e['errors'] != 1 else ''}"
                    "; see catalyst check)"
                ),
                "",
            ]
            continue
        head = f"{e['name']}  ({e['file']})"
        if e["errors"]:
            head += f"  [{e['errors']} error{'s' if e['errors'] != 1 else ''}]"
        lines.append(head)
        if e["description"]:
            lines.append(f"  {e['description']}")
        if e["owner"]:
            lines.append(f"  owner: {e['owner']}")
        reviewers = e["reviewers"]["required"] + [f"{r} (optional)" for r in e["reviewers"]["optional"]]
        if reviewers:
            lines.append(f"  reviewers: {', '.join(reviewers)}")
        if e["inputs"]:
            lines.append(
                "  inputs: " + ", ".join(f"{i['name']}: {i['type']}{'' if i['required'] else '?'}" for i in e["inputs"])
            )
        if e["outputs"]:
            lines.append("  outputs: " + ", ".join(f"{o['name']}: {o['type']}" for o in e["outputs"]))
        for call in e["calls"]:
            where = call["file"] or ("not checked: computed at run time" if not call["checked"] else "NOT FOUND")
            lines.append(f"  → {call['target']} (line {call['line']}): {where}")
        lines.append("")
    lines.append(f"{len(entries)} playbook{'s' if len(entries) != 1 else ''}")
    return "\n".join(lines) + "\n"
