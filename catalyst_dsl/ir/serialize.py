"""Canonical, versioned IR JSON through one cattrs converter.

Fields declared `eq=False` (spans, offsets, checking aids) are left out: the JSON, like
IR equality, is about meaning, not position. Unions are tagged with `node`.
"""

from __future__ import annotations

import functools
import json
import typing

import attrs


def _omit_positions(converter, cls, tagged: frozenset):
    from cattrs.gen import make_dict_unstructure_fn, override

    overrides = {f.name: override(omit=True) for f in attrs.fields(cls) if not f.eq}
    plain = make_dict_unstructure_fn(cls, converter, **overrides)
    if cls.__name__ not in tagged:
        return plain
    # Union members carry their tag wherever they appear (also in Optional fields).
    return lambda value: {"node": cls.__name__, **plain(value)}


def _structure_without_positions(converter, cls, tagged: frozenset):
    from cattrs.gen import make_dict_structure_fn, override

    overrides = {f.name: override(omit=True) for f in attrs.fields(cls) if not f.eq}
    plain = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True, **overrides)
    if cls.__name__ not in tagged:
        return plain

    def structure(value, _):
        if isinstance(value, dict) and "node" in value:
            if value["node"] != cls.__name__:
                raise TypeError(f"expected node {cls.__name__}, got {value['node']!r}")
            value = {k: v for k, v in value.items() if k != "node"}
        return plain(value, cls)

    return structure


@functools.lru_cache(maxsize=1)
def converter():
    from cattrs.preconf.json import make_converter
    from cattrs.strategies import configure_tagged_union

    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax import expr_ast as ast

    for module in (ir, ast):
        for value in vars(module).values():
            if isinstance(value, type) and attrs.has(value):
                attrs.resolve_types(value, globalns=vars(module), localns={**vars(ir), **vars(ast)})
    conv = make_converter(forbid_extra_keys=True)
    unions = (ast.Expr, ast.Reference, ast.Part, ir.Value)
    tagged = frozenset(member.__name__ for union in unions for member in typing.get_args(union))
    conv.register_unstructure_hook_factory(attrs.has, lambda cls: _omit_positions(conv, cls, tagged))
    conv.register_structure_hook_factory(attrs.has, lambda cls: _structure_without_positions(conv, cls, tagged))
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
    return converter().unstructure(playbook)


def to_json(playbook) -> str:
    return json.dumps(to_dict(playbook), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def from_dict(data: dict):
    from catalyst_dsl.ir.nodes import Playbook

    return converter().structure(data, Playbook)
