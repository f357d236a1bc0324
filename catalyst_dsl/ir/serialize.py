"""Canonical, versioned IR JSON through one cattrs converter.

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
import typing

from catalyst_dsl._internal import records


#: The version of the printed IR JSON; 1 had Python's snake_case field names.
JSON_VERSION = 2


def camel(name: str) -> str:
    """`allowed_write_paths` -> `allowedWritePaths`; `finally_` -> `finally`."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.lru_cache(maxsize=None)
def _attributes(cls) -> tuple:
    """A node class's fields as `attrs.Attribute`s, which cattrs' generators read: the IR's
    classes are records (catalyst_dsl._internal.records), not attrs classes."""
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax.expr import nodes as ast

    return records.attributes(cls, localns={**vars(ir), **vars(ast)})


def _overrides(cls, camel_case: bool) -> dict:
    from cattrs.gen import override

    fields = _attributes(cls)
    overrides = {f.name: override(omit=True) for f in fields if not f.eq}
    if camel_case:
        overrides.update({f.name: override(rename=camel(f.name)) for f in fields if f.eq and camel(f.name) != f.name})
    # A field added later that is left out while it holds its default, so the JSON and the
    # fingerprints of every IR that does not use it stay as they were (PolicyAction.message).
    overrides.update(
        {
            f.name: override(omit_if_default=True)
            for f in fields
            if f.eq and f.metadata.get("omit_if_default") and f.name not in overrides
        }
    )
    return overrides


def _omit_positions(converter, cls, tagged: frozenset, camel_case: bool = False):
    from cattrs.gen import make_dict_unstructure_fn_from_attrs

    overrides = _overrides(cls, camel_case)
    plain = make_dict_unstructure_fn_from_attrs(list(_attributes(cls)), cls, converter, **overrides)
    if cls.__name__ not in tagged:
        return plain
    # Union members carry their tag wherever they appear (also in Optional fields).
    return lambda value: {"node": cls.__name__, **plain(value)}


def _structure_without_positions(converter, cls, tagged: frozenset, camel_case: bool = False):
    from cattrs.gen import make_dict_structure_fn_from_attrs

    overrides = _overrides(cls, camel_case)
    plain = make_dict_structure_fn_from_attrs(
        list(_attributes(cls)), cls, converter, _cattrs_forbid_extra_keys=True, **overrides
    )
    if cls.__name__ not in tagged:
        return plain

    def structure(value, _):
        if isinstance(value, dict) and "node" in value:
            if value["node"] != cls.__name__:
                raise TypeError(f"expected node {cls.__name__}, got {value['node']!r}")
            value = {k: v for k, v in value.items() if k != "node"}
        return plain(value, cls)

    return structure


@functools.lru_cache(maxsize=2)
def converter(camel_case: bool = False):
    from cattrs.preconf.json import make_converter
    from cattrs.strategies import configure_tagged_union

    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax.expr import nodes as ast

    conv = make_converter(forbid_extra_keys=True)
    unions = (ast.Expr, ast.Reference, ast.Part, ir.Value)
    tagged = frozenset(member.__name__ for union in unions for member in typing.get_args(union))
    conv.register_unstructure_hook_factory(
        records.is_record, lambda cls: _omit_positions(conv, cls, tagged, camel_case)
    )
    conv.register_structure_hook_factory(
        records.is_record, lambda cls: _structure_without_positions(conv, cls, tagged, camel_case)
    )
    # Strict primitives: a number is never silently turned into a string, nor back.
    for kind in (str, int, float, bool):
        conv.register_structure_hook(kind, _strict(kind))
    # `object` fields (literal values) hold JSON scalars already.
    conv.register_structure_hook_func(lambda cls: cls is object, lambda v, _: v)
    conv.register_unstructure_hook_func(lambda cls: cls is object, lambda v: v)
    tag = lambda cls: cls.__name__  # noqa: E731
    configure_tagged_union(ast.Expr, conv, tag_generator=tag, tag_name="node")
    configure_tagged_union(ast.Reference, conv, tag_generator=tag, tag_name="node")
    configure_tagged_union(ast.Part, conv, tag_generator=tag, tag_name="node")
    configure_tagged_union(ir.Value, conv, tag_generator=tag, tag_name="node")
    conv.register_structure_hook(typing.Union[bool, str, None], lambda v, _: _check(v, (bool, str, type(None))))
    return conv


def _strict(kind):
    def hook(value, _):
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return hook


def _check(value, kinds):
    if not isinstance(value, kinds):
        raise TypeError(f"unexpected {type(value).__name__}")
    return value


def to_dict(playbook) -> dict:
    data = converter(camel_case=True).unstructure(playbook)
    data["irVersion"] = JSON_VERSION
    return data


def to_json(playbook) -> str:
    return json.dumps(to_dict(playbook), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def from_dict(data: dict):
    from catalyst_dsl.ir.nodes import IR_VERSION, Playbook

    if data.get("irVersion") != JSON_VERSION:
        raise ValueError(f"IR JSON version {data.get('irVersion')!r}; this catalyst reads version {JSON_VERSION}")
    return converter(camel_case=True).structure({**data, "irVersion": IR_VERSION}, Playbook)
