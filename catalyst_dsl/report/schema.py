"""The JSON Schema (2020-12) of YAML playbooks, generated from the action catalog.

For yaml-language-server's `# yaml-language-server: $schema=…` comment and for schema
stores. It is made from what the checker itself uses (the catalog's actions and their
config, the top-level and reserved step keys), never written by hand, and shipped in the
package as `catalyst_dsl/schema/playbook.schema.json` (`catalyst schema` prints it).

What a schema can say is less than what `catalyst check` says, and it must never reject
a playbook the checker accepts:
- every typed value also accepts a string, since `{{ }}` and `${{ }}` may stand anywhere;
- a step is exactly one built-in action with its config keys and the reserved step keys,
  so an unknown action or key is rejected; but a playbook whose top-level steps define a
  `function` may call it by name, and a schema cannot match a call to a definition by
  name: in such a playbook a step with another key is accepted (the checker tells a
  function call from a typo);
- required config keys, types inside templates, scopes, calls and permissions are the
  checker's alone.
"""

from __future__ import annotations

import json
from typing import Any

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.ir import types as t

SCHEMA_VERSION = 1


def playbook_schema(catalog: Catalog) -> dict[str, Any]:
    from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS
    from catalyst_dsl.dialects.native.vocabulary import TOP_LEVEL_KEYS

    specs = list(catalog.specs())
    defs: dict[str, Any] = {}
    for strict in (True, False):
        steps_ref = {"$ref": f"#/$defs/{_steps_name(strict)}"}
        choices = [_action_step(spec, RESERVED_STEP_KEYS, steps_ref) for spec in specs]
        if not strict:
            builtin = [spec.name for spec in specs]
            choices.append(
                {
                    "description": (
                        "A call of a function defined in the playbook (the checker matches it to its definition)."
                    ),
                    "type": "object",
                    "minProperties": 1,
                    "not": {"anyOf": [{"required": [name]} for name in builtin]},
                }
            )
        defs[_step_name(strict)] = {"oneOf": choices}
        defs[_steps_name(strict)] = {"type": "array", "items": {"$ref": f"#/$defs/{_step_name(strict)}"}}

    def top(strict: bool) -> dict[str, Any]:
        steps = {"$ref": f"#/$defs/{_steps_name(strict)}"}
        catch = {
            "type": "array",
            "items": {"type": "object", "properties": {"code": {"type": "string"}, "steps": steps}},
        }
        return {"properties": {"steps": steps, "finally": steps, "catch": catch}}

    top_level = {key: {} for key in TOP_LEVEL_KEYS}
    top_level.update(
        {
            "name": {"type": "string"},
            "id": {"type": "string"},
            "description": {"type": "string"},
            "owner": {"type": ["string", "null"]},
            "catalyst": {"type": ["integer", "string"]},
        }
    )
    defines_a_function = {
        "properties": {"steps": {"type": "array", "contains": {"type": "object", "required": ["function"]}}}
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Catalyst playbook",
        "description": (
            f"A Catalyst YAML playbook (schema version {SCHEMA_VERSION}); `catalyst check` checks what a schema cannot."
        ),
        "type": "object",
        "properties": top_level,
        "additionalProperties": False,
        "if": defines_a_function,
        "then": top(False),
        "else": top(True),
        "$defs": defs,
    }


def _step_name(strict: bool) -> str:
    return "step" if strict else "stepOrFunctionCall"


def _steps_name(strict: bool) -> str:
    return "steps" if strict else "stepsOrFunctionCalls"


def _action_step(spec, reserved: tuple[str, ...], steps_ref: dict) -> dict[str, Any]:
    config = {name: _value(field.type, steps_ref) for name, field in spec.config.fields}
    as_object = {"type": "object", "properties": config, "additionalProperties": spec.config.open}
    forms = [as_object, {"type": "null"}]
    if spec.primary is not None:
        forms.insert(0, config.get(spec.primary, {}))
    properties = {spec.name: {"anyOf": forms}}
    properties.update({key: {} for key in reserved})
    properties.update({name: schema for name, schema in config.items() if name != spec.name})
    return {
        "title": spec.name,
        "description": spec.summary,
        "type": "object",
        "required": [spec.name],
        "properties": properties,
        "additionalProperties": False,
    }


def _value(type_: t.Type, steps_ref: dict) -> dict[str, Any]:
    """A config value of `type_`; a string is always allowed too, as a template."""
    if isinstance(type_, t.StepsT):
        return steps_ref
    if isinstance(type_, t.StringT) or isinstance(type_, t.EnumT):
        return {"type": "string"}
    if isinstance(type_, t.NumberT):
        return {"type": ["number", "string"]}
    if isinstance(type_, t.BooleanT):
        return {"type": ["boolean", "string"]}
    if isinstance(type_, t.DurationT):
        return {"type": ["number", "string"]}
    if isinstance(type_, t.ArrayT):
        return {"anyOf": [{"type": "array", "items": _value(type_.item, steps_ref)}, {"type": "string"}]}
    if isinstance(type_, t.ObjectT) and type_.fields:
        fields = {name: _value(field.type, steps_ref) for name, field in type_.fields}
        return {
            "anyOf": [{"type": "object", "properties": fields, "additionalProperties": type_.open}, {"type": "string"}]
        }
    return {}


def schema_text(catalog: Catalog) -> str:
    return json.dumps(playbook_schema(catalog), indent=1, sort_keys=True) + "\n"
