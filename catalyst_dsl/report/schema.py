"""The JSON Schema (2020-12) of YAML playbooks, generated from the action catalog.

For yaml-language-server's `# yaml-language-server: $schema=…` comment and for schema
stores. It is made from what the checker itself uses (the catalog's actions and their
config, the top-level and reserved step keys), never written by hand, and shipped in the
package as `catalyst_dsl/schema/playbook.schema.json` (`catalyst schema` prints it).

What a schema can say is less than what `catalyst check` says, and it must never reject
a playbook the checker accepts (tests/report/test_schema_agreement.py holds the two
together):
- a typed value takes what the lowering takes (dialects/values.py): a literal of its
  type, null, or a template (a string with `{{`), since `{{ }}` and `${{ }}` may stand
  anywhere; enum values, durations, error policies and input declarations are spelt out;
- each action key and config key carries its description, which editors show on hover;
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
#: The files the schema is for, as globs from the project's root (yaml-language-server's
#: `yaml.schemas`, a schema store's `fileMatch`): YAML playbooks in the default playbook
#: directories. kai's `.playbooks/playbooks/` and cleo's `.cantbook` files are written in
#: other languages, which this schema does not describe: they are left out.
FILE_MATCH = (
    "playbooks/**/*.yaml",
    "playbooks/**/*.yml",
    ".xe/playbooks/**/*.yaml",
    ".xe/playbooks/**/*.yml",
)


def playbook_schema(catalog: Catalog) -> dict[str, Any]:
    from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS
    from catalyst_dsl.dialects.native.vocabulary import SUPPORTED_LANGUAGE_VERSIONS, TOP_LEVEL_KEYS

    specs = list(catalog.specs())
    defs: dict[str, Any] = {"errorPolicy": _error_policy(), "inputs": _inputs()}
    reserved: dict[str, Any] = {key: {} for key in RESERVED_STEP_KEYS}
    reserved["errorPolicy"] = {"$ref": "#/$defs/errorPolicy"}
    # A step's own timeout is a literal: no template, no empty value.
    reserved["timeout"] = {"anyOf": [{"type": "number", "minimum": 0}, DURATION_TEXT]}
    for strict in (True, False):
        steps_ref = {"$ref": f"#/$defs/{_steps_name(strict)}"}
        choices = [_action_step(spec, reserved, steps_ref) for spec in specs]
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
            # A code is read as text, as the checker reads it (`code: 5` is "5").
            "items": {"type": "object", "properties": {"code": {"type": SCALAR}, "steps": steps}},
        }
        # A playbook needs a step (C204); nested lists of steps may be empty.
        return {"properties": {"steps": {"allOf": [steps, {"minItems": 1}]}, "finally": steps, "catch": catch}}

    top_level = {key: {} for key in TOP_LEVEL_KEYS}
    top_level.update(
        {
            "name": {"type": "string"},
            "id": {"type": "string"},
            # Read as text, as the checker reads them: `description: 5` is "5".
            "description": {"type": ["string", "number", "boolean"]},
            "owner": {"type": SCALAR},
            "catalyst": {"enum": list(SUPPORTED_LANGUAGE_VERSIONS)},
            "errorPolicy": {"$ref": "#/$defs/errorPolicy"},
            "inputs": {"$ref": "#/$defs/inputs"},
        }
    )
    defines_a_function = {
        "properties": {"steps": {"type": "array", "contains": {"type": "object", "required": ["function"]}}}
    }
    defs["native"] = {
        "type": "object",
        "properties": top_level,
        "additionalProperties": False,
        "if": defines_a_function,
        "then": top(False),
        "else": top(True),
    }
    # A file the checker reads in another dialect wherever it is (as the dialects' `sniff`
    # tells them) is not this schema's to judge: it is left alone, never rejected. A native
    # playbook with a stray `version:` is not such a file, and is still rejected for it.
    foreign = _foreign_shapes()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Catalyst playbook",
        "description": (
            f"A Catalyst YAML playbook (schema version {SCHEMA_VERSION}); `catalyst check` checks what a schema cannot."
        ),
        "type": "object",
        "if": {"anyOf": foreign},
        "then": {},
        "else": {"$ref": "#/$defs/native"},
        "$defs": defs,
    }


def _foreign_shapes() -> list[dict[str, Any]]:
    """The files the other dialects claim by their content (dialects/*/reader.py `sniff`):
    cleo's, a `version` and a list of `nodes` without `steps`; kai's, only kai's top-level
    keys, `version` among them, and a step with `autonomy` or `error_policy`."""
    from catalyst_dsl.dialects.kai.model import TOP_KEYS as KAI_TOP_KEYS

    cleo = {
        "required": ["version", "nodes"],
        "properties": {"nodes": {"type": "array"}},
        "not": {"required": ["steps"]},
    }
    kai_step = {"type": "object", "anyOf": [{"required": ["autonomy"]}, {"required": ["error_policy"]}]}
    kai = {
        "required": ["version", "steps"],
        "propertyNames": {"enum": sorted(KAI_TOP_KEYS)},
        "properties": {"steps": {"type": "array", "contains": kai_step}},
    }
    return [cleo, kai]


def _error_policy() -> dict[str, Any]:
    """`errorPolicy:` as `dialects.native.policies` reads it: an action's name (in any
    case), or a mapping: one entry (with `action`) or entries by error code."""
    from catalyst_dsl.dialects.native.vocabulary import POLICY_ACTIONS

    either_case = "|".join("".join(f"[{c.lower()}{c.upper()}]" for c in a) for a in POLICY_ACTIONS)
    name = {"type": "string", "pattern": f"^({either_case})$", "description": ", ".join(POLICY_ACTIONS)}
    entry = {
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": name,
            "retryCount": {"type": "integer", "minimum": 0},
            "message": {"type": "string"},
        },
        "additionalProperties": False,
    }
    by_code = {"type": "object", "not": {"required": ["action"]}, "additionalProperties": {"anyOf": [name, entry]}}
    return {"anyOf": [name, entry, by_code]}


def _inputs() -> dict[str, Any]:
    """`inputs:` declarations as `dialects.native.inputs` reads them: a type key with the
    name (`- string: feature-id`), or `name:` and `type:`; one type each."""
    from catalyst_dsl.dialects.native.vocabulary import INPUT_TYPE_KEYS, TRANSFORMS

    name = {"type": ["string", "number", "boolean"]}
    number = {"type": ["number", "null"]}
    rule = {
        "type": "object",
        "properties": {
            "code": {},
            "message": {},
            "regex": {"type": ["string", "null"]},
            "minLength": number,
            "maxLength": number,
            "min": number,
            "max": number,
        },
        "additionalProperties": False,
    }
    flag = {"type": ["boolean", "null"]}
    properties: dict[str, Any] = {key: name for key in INPUT_TYPE_KEYS}
    properties.update(
        {
            "name": {"type": SCALAR},
            "type": {},
            "values": {},
            "description": {"type": SCALAR},
            "required": flag,
            "secret": flag,
            "default": {},
            "allowed": {"type": "array", "items": {"type": SCALAR}},
            "transform": {"enum": list(TRANSFORMS)},
            "validation": {"anyOf": [rule, {"type": "array", "items": rule}]},
        }
    )
    properties["values"] = properties["allowed"]
    # A default is a value of its input's type, as a config value of that type is.
    defaults = {key: {"properties": {"default": _input_default(t.INPUT_TYPES[key])}} for key in INPUT_TYPE_KEYS}
    by_type_key = [{"required": [key], **defaults[key]} for key in INPUT_TYPE_KEYS]
    long_form = {
        "required": ["name", "type"],
        "properties": {"type": {"enum": list(INPUT_TYPE_KEYS)}},
        "not": {"anyOf": [{"required": [key]} for key in INPUT_TYPE_KEYS]},
        "allOf": [{"if": {"properties": {"type": {"const": key}}}, "then": defaults[key]} for key in INPUT_TYPE_KEYS],
    }
    is_enum = {"anyOf": [{"required": ["enum"]}, {"required": ["type"], "properties": {"type": {"const": "enum"}}}]}
    declaration = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "oneOf": [*by_type_key, long_form],
        # An enum input lists its values (C308).
        "if": is_enum,
        "then": {"anyOf": [{"required": ["allowed"]}, {"required": ["values"]}]},
    }
    return {"type": "array", "items": declaration}


def _input_default(type_: t.Type) -> dict[str, Any]:
    """An input's `default:` of `type_`: a config value of that type, and for an object
    input (whose fields are not declared) a mapping, null or a template."""
    if isinstance(type_, t.ObjectT) and not type_.fields:
        return {"anyOf": [{"type": ["object", "null"]}, TEMPLATE]}
    return _value(type_, {})


def _step_name(strict: bool) -> str:
    return "step" if strict else "stepOrFunctionCall"


def _steps_name(strict: bool) -> str:
    return "steps" if strict else "stepsOrFunctionCalls"


def _action_step(spec, reserved: dict[str, Any], steps_ref: dict) -> dict[str, Any]:
    config = {name: _described(_value(field.type, steps_ref), field.doc) for name, field in spec.config.fields}
    as_object = {"type": "object", "properties": config, "additionalProperties": spec.config.open}
    forms = [as_object, {"type": "null"}]
    if spec.primary is not None:
        forms.insert(0, config.get(spec.primary, {}))
    # The action's key carries its summary, which an editor shows on hover.
    properties = {spec.name: {"description": spec.summary, "anyOf": forms}}
    properties.update(reserved)
    properties.update({name: schema for name, schema in config.items() if name != spec.name})
    return {
        "title": spec.name,
        "description": spec.summary,
        "type": "object",
        "required": [spec.name],
        "properties": properties,
        "additionalProperties": False,
    }


def _described(schema: dict[str, Any], doc: str) -> dict[str, Any]:
    return {"description": doc, **schema} if doc else schema


#: A string holding `{{ }}` or `${{ }}` (or an escaped `\{{`): a template, which may stand
#: for a value of any type, and whose type only the checker works out.
TEMPLATE = {"type": "string", "pattern": "\\{\\{"}
#: A duration as text: a number, then ms, s, m or h (or none, for seconds), as
#: `dialects.values.parse_duration` reads it, which takes what Python's float() takes.
DURATION_TEXT = {
    "type": "string",
    # `nan` is no duration (C302); `inf` is one: a step without a limit.
    "pattern": "^\\s*([+]?[0-9_]*[.]?[0-9_]+([eE][+-]?[0-9_]+)?[.]?"
    "|[+]?[iI][nN][fF]([iI][nN][iI][tT][yY])?)\\s*(ms|s|m|h)?\\s*$",
}
#: What a YAML scalar written without quotes may be where the checker takes it as text.
SCALAR = ["string", "number", "boolean", "null"]


def _value(type_: t.Type, steps_ref: dict) -> dict[str, Any]:
    """A config value of `type_` as the checker's lowering accepts it
    (`dialects.values.ValueLowering`): null for any type (a key left empty), a template
    for any type but steps, and a literal of the type."""
    if isinstance(type_, t.StepsT):
        return steps_ref
    if isinstance(type_, t.StringT):
        return {"type": SCALAR}  # a plain number or boolean is taken as the text written
    if isinstance(type_, t.EnumT):
        # A plain number or boolean is taken as its text, unchecked against the values.
        return {"anyOf": [{"enum": list(type_.values)}, {"type": ["number", "boolean", "null"]}, TEMPLATE]}
    if isinstance(type_, t.NumberT):
        return {"anyOf": [{"type": ["number", "null"]}, TEMPLATE]}
    if isinstance(type_, t.BooleanT):
        return {"anyOf": [{"type": ["boolean", "null"]}, TEMPLATE]}
    if isinstance(type_, t.DurationT):
        return _duration()
    if isinstance(type_, t.ArrayT):
        return {"anyOf": [{"type": "array", "items": _value(type_.item, steps_ref)}, {"type": "null"}, TEMPLATE]}
    if isinstance(type_, t.ObjectT) and type_.fields:
        fields = {name: _described(_value(field.type, steps_ref), field.doc) for name, field in type_.fields}
        closed = {"type": "object", "properties": fields, "additionalProperties": type_.open}
        return {"anyOf": [closed, {"type": "null"}, TEMPLATE]}
    if isinstance(type_, t.UnionT):
        return _union(type_, steps_ref)
    return {}


def _duration() -> dict[str, Any]:
    return {"anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}, DURATION_TEXT, TEMPLATE]}


def _union(type_: t.UnionT, steps_ref: dict) -> dict[str, Any]:
    """One of the options; a text only when an option is text (or a template), and then,
    when every text option is an enum, one of their values."""
    options = t.options_of(type_)
    if any(isinstance(o, (t.StringT, t.AnyT)) for o in options):
        return {}
    forms: list[dict[str, Any]] = [{"type": "null"}, TEMPLATE]
    values = [v for o in options if isinstance(o, t.EnumT) for v in o.values]
    if values:
        forms.append({"enum": values})
    for option in options:
        if isinstance(option, t.NumberT):
            forms.append({"type": "number"})
        elif isinstance(option, t.BooleanT):
            forms.append({"type": "boolean"})
        elif isinstance(option, t.DurationT):
            forms.append(_duration())
        elif isinstance(option, t.ArrayT):
            forms.append({"type": "array", "items": _value(option.item, steps_ref)})
        elif isinstance(option, t.ObjectT):
            fields = {name: _described(_value(f.type, steps_ref), f.doc) for name, f in option.fields}
            forms.append({"type": "object", "properties": fields, "additionalProperties": option.open})
        elif not isinstance(option, (t.EnumT, t.NullT)):
            return {}  # a type this schema does not spell out: anything
    return {"anyOf": forms}


def schema_text(catalog: Catalog) -> str:
    return json.dumps(playbook_schema(catalog), indent=1, sort_keys=True) + "\n"
