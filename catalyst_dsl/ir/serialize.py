"""Canonical, versioned IR JSON: two formats of catalyst_dsl._internal.serialization.

Fields declared `eq=False` (spans, offsets, checking aids) are left out: the JSON, like
IR equality, is about meaning, not position. Unions are tagged with `node`.

The JSON `catalyst compile` prints spells field names in camelCase like the language
(`allowedWritePaths`, `errorPolicy`, `finally`), and carries `irVersion` JSON_VERSION.
Fingerprints of steps and playbooks (runtime/engine/paths.py), which run snapshots and approval
tokens record, hash the internal form (`converter()`, Python's names, `ir_version` 1),
so a run paused before the JSON changed still resumes.
"""

from __future__ import annotations

import functools
import json

from catalyst_dsl._internal.serialization import Format, camel

__all__ = ["JSON_VERSION", "camel", "converter", "from_dict", "to_dict", "to_json"]

#: The version of the printed IR JSON; 1 had Python's snake_case field names.
JSON_VERSION = 2


@functools.lru_cache(maxsize=2)
def converter(camel_case: bool = False) -> Format:
    """The IR's format: camelCase keys for the printed JSON, Python's names for fingerprints."""
    import typing

    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax.expr import nodes as ast

    unions = (ast.Expr, ast.Reference, ast.Part, ir.Value)
    return Format(
        camel_case=camel_case,
        tag="node",
        # Union members carry their tag wherever they appear (in Optional fields too).
        tagged=(member for union in unions for member in typing.get_args(union)),
    )


def to_dict(playbook) -> dict:
    data = converter(camel_case=True).unstructure(playbook)
    data["irVersion"] = JSON_VERSION
    return data


def to_json(playbook) -> str:
    return json.dumps(to_dict(playbook), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def from_dict(data: dict):
    """The playbook `data` holds; ValueError when it is another version, serialization.Invalid
    naming each problem when it is not an IR."""
    from catalyst_dsl.ir.nodes import IR_VERSION, Playbook

    if data.get("irVersion") != JSON_VERSION:
        raise ValueError(f"IR JSON version {data.get('irVersion')!r}; this catalyst reads version {JSON_VERSION}")
    return converter(camel_case=True).structure({**data, "irVersion": IR_VERSION}, Playbook)
