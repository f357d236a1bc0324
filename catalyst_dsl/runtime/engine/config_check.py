"""A step's config as rendered at run time, checked against its action's declaration.

The checker types config statically; a value computed at run time (`${{ }}`, a whole
`{{ }}`) is only known now. Before an action sees its config, every declared key must
hold a value of its type, so an action never meets `undefined` where a path belongs.
"""

from __future__ import annotations

from typing import Any

from catalyst_dsl.actions.catalog import ActionSpec
from catalyst_dsl.ir import types as t
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.jsvalues import UNDEFINED, UNKNOWN, a_kind, to_text


def check_config(spec: ActionSpec, config: dict[str, Any]) -> None:
    """Raise InvalidConfig naming every key whose value does not fit; a number or a boolean
    where text belongs is written as its text first (in `config`), as a template would."""
    problems = []
    for key, value in list(config.items()):
        field = spec.config.field(key)
        if field is None:
            continue  # open configs (plugins, `return`) take any key
        if value is None and not field.required:
            continue
        value = config[key] = _as_text_where_text_belongs(value, field.type)
        wrong = _mismatch(value, field.type)
        if wrong:
            problems.append(f"`{key}` {wrong}")
    for key, field in spec.config.fields:
        if field.required and (config.get(key) is None or config.get(key) is UNDEFINED):
            problems.append(f"`{key}` is required but has no value")
    if problems:
        raise StepError(
            "InvalidConfig",
            f"{spec.name}: " + "; ".join(dict.fromkeys(problems)),
            guidance="the value is computed when the step runs; check the expression that builds it",
        )


def _as_text_where_text_belongs(value: Any, expected: t.Type) -> Any:
    """A number or boolean given where text is expected, as its text (`42`, `true`), the way
    YAML and the original templates write them; lists and objects are left for _mismatch,
    since no one text is obviously meant for them."""
    if type(value) is str:
        return value  # most values: nothing to write as text
    if isinstance(expected, t.StringT) and isinstance(value, (bool, int, float)):
        return to_text(value)
    if isinstance(expected, t.ArrayT) and isinstance(value, list):
        return [_as_text_where_text_belongs(item, expected.item) for item in value]
    return value


def _mismatch(value: Any, expected: t.Type) -> str | None:
    """Why `value` does not fit `expected`, or None when it does."""
    if type(value) is str and type(expected) is t.StringT:
        return None  # the most common pair, decided before the general questions
    if value is UNKNOWN:
        return None  # a what-if value; the step that meets it is simulated, not run
    if value is UNDEFINED:
        return "is undefined"
    if isinstance(expected, (t.AnyT, t.StepsT, t.InputsT)):
        return None
    if isinstance(expected, t.UnionT):
        reasons = [_mismatch(value, option) for option in expected.options]
        return None if any(r is None for r in reasons) else f"should be {expected.describe()}, got {a_kind(value)}"
    if isinstance(expected, (t.StringT, t.EnumT)):
        if isinstance(value, str):
            return None
        if isinstance(value, (dict, list)):
            return f"should be text, got {a_kind(value)}: convert it explicitly, e.g. with JSON.stringify() or join()"
        return f"should be text, got {a_kind(value)}"
    if isinstance(expected, t.NumberT):
        return (
            None
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else f"should be a number, got {a_kind(value)}"
        )
    if isinstance(expected, t.BooleanT):
        return None if isinstance(value, bool) else f"should be true or false, got {a_kind(value)}"
    if isinstance(expected, t.DurationT):
        return (
            None
            if isinstance(value, (int, float, str)) and not isinstance(value, bool)
            else f"should be a duration, got {a_kind(value)}"
        )
    if isinstance(expected, t.NullT):
        return None if value is None else f"should be null, got {a_kind(value)}"
    if isinstance(expected, t.ArrayT):
        if not isinstance(value, list):
            return f"should be a list, got {a_kind(value)}"
        for item in value:
            inner = _mismatch(item, expected.item)
            if inner:
                return f"has an item that {inner}"
        return None
    if isinstance(expected, t.ObjectT):
        if not isinstance(value, dict):
            return f"should be an object, got {a_kind(value)}"
        for key, item in value.items():
            member = expected.member(str(key))
            inner = _mismatch(item, member) if member is not None else None
            if inner:
                return f"has `{key}` that {inner}"
        return None
    return None
