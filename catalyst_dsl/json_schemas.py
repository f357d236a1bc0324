"""JSON Schema checks of values a run produced (the `json-schema` step check).

The values come from anywhere (an AI's answer, a program's output), so a schema's
`pattern` and `patternProperties` are matched with RE2, in time linear in the text, as every
other pattern of a playbook is; `format` is not asserted. A schema with a `$ref` that does
not resolve inside itself is refused rather than fetched.

It sits at the package's top, beside neither the front end nor the run-time: the run-time
checks values with it, and lowering checks a schema written out in a playbook (C611, C612).
"""

from __future__ import annotations

import functools
from typing import Any

#: At most this many problems are kept for a message.
SHOWN_PROBLEMS = 10


class SchemaUnusable(ValueError):
    """The schema itself is not a JSON Schema this check can use."""


@functools.lru_cache(maxsize=1)
def _validator_class():
    from jsonschema import validators
    from jsonschema.exceptions import ValidationError

    from catalyst_dsl.syntax.regex import PatternError, compile_pattern

    def pattern(validator, patrn, instance, schema):
        if not validator.is_type(instance, "string"):
            return
        try:
            found = compile_pattern(patrn).search(instance) is not None
        except PatternError as error:
            raise SchemaUnusable(f"the pattern {patrn!r} cannot be used: {error.message}") from None
        if not found:
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator, patterns, instance, schema):
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            try:
                compiled = compile_pattern(patrn)
            except PatternError as error:
                raise SchemaUnusable(f"the pattern {patrn!r} cannot be used: {error.message}") from None
            for key, value in instance.items():
                if compiled.search(key) is not None:
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    base = validators.Draft202012Validator
    return validators.extend(base, {"pattern": pattern, "patternProperties": pattern_properties})


def check_schema(schema: Any) -> None:
    """Raise SchemaUnusable when `schema` is not a usable JSON Schema (2020-12)."""
    import jsonschema

    from catalyst_dsl.syntax.regex import PatternError, compile_pattern

    if not isinstance(schema, (dict, bool)):
        raise SchemaUnusable(f"a JSON Schema is an object, not {type(schema).__name__}")
    try:
        _validator_class().check_schema(schema)
    except jsonschema.SchemaError as error:
        raise SchemaUnusable(f"{error.message[:300]} (at {error.json_path})") from None
    for text in _patterns(schema):
        try:
            compile_pattern(text)
        except PatternError as error:
            raise SchemaUnusable(f"the pattern {text!r} cannot be used: {error.message}") from None


def problems(schema: Any, value: Any) -> list[tuple[str, str]]:
    """(JSON path, message) of each way `value` does not match `schema`, first in document
    order; empty when it matches."""
    from referencing.exceptions import Unresolvable

    check_schema(schema)
    try:
        errors = list(_validator_class()(schema).iter_errors(value))
    except Unresolvable as error:
        raise SchemaUnusable(f"it refers to what it does not hold: {error}") from None
    errors.sort(
        key=lambda e: ([(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.absolute_path], e.message)
    )
    return [(e.json_path, e.message[:300]) for e in errors[:SHOWN_PROBLEMS]]


def _patterns(schema: Any):
    """The regular expressions written in a schema (`pattern`, `patternProperties` keys)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                yield node["pattern"]
            if isinstance(node.get("patternProperties"), dict):
                yield from (k for k in node["patternProperties"] if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
