"""A playbook's (or function's) `inputs:`: declarations, their types, defaults, allowed
values, transforms and validation rules.
"""

from __future__ import annotations

from catalyst_dsl.diagnostics.ids import (
    BAD_REGEX,
    DUPLICATE_INPUT,
    ENUM_WITHOUT_VALUES,
    ERROR_CODE_CASE,
    INVALID_VALUE,
    MIN_ABOVE_MAX,
    MISSING_KEY,
    TWO_INPUT_TYPES,
    UNKNOWN_KEY,
    WRONG_TYPE,
)
from catalyst_dsl.diagnostics.model import Label
from catalyst_dsl.dialects.native.part import LoweringPart
from catalyst_dsl.dialects.native.vocabulary import INPUT_TYPE_KEYS, PASCAL, TRANSFORMS
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


class InputLowering(LoweringPart):
    """Input declarations, of a playbook or of a function."""

    def inputs_value(self, node: YNode) -> ir.InputsV:
        if not isinstance(node, YSeq):
            self.sink.report(
                WRONG_TYPE,
                f"'inputs' expects a list of input declarations, got {kind_of(node)}",
                head_span(node),
                help="write each input as `- string: name`",
            )
            return ir.InputsV(())
        decls: list[ir.InputDecl] = []
        seen: dict[str, ir.InputDecl] = {}
        for item in node.items:
            decl = self.input_decl(item)
            if decl is None:
                continue
            if decl.name in seen:
                self.sink.report(
                    DUPLICATE_INPUT,
                    f"the input '{decl.name}' is declared twice",
                    decl.span,
                    labels=[Label(seen[decl.name].span, "first declared here")],
                    help="remove or rename one of them",
                )
                continue
            seen[decl.name] = decl
            decls.append(decl)
        return ir.InputsV(tuple(decls), span=node.span)

    def input_decl(self, node: YNode) -> ir.InputDecl | None:
        if not isinstance(node, YMap):
            self.sink.report(
                WRONG_TYPE,
                f"an input declaration is a mapping, got {kind_of(node)}",
                head_span(node),
                help="write `- string: name` with its keys below",
            )
            return None
        type_keys = [k for k, _ in node.pairs if k.text in INPUT_TYPE_KEYS]
        common = ("description", "required", "default", "allowed", "transform", "validation", "secret")
        if len(type_keys) > 1:
            self.sink.report(
                TWO_INPUT_TYPES,
                f"the input declares two types: {type_keys[0].text} and {type_keys[1].text}",
                type_keys[1].span,
                help="keep one type key",
            )
        if type_keys:
            type_key = type_keys[0]
            type_name = type_key.text
            name_node = node.get(type_name)
            extra = ("name", "type", "values")
            name_span = name_node.span if name_node is not None else type_key.span
            name = name_node.text if isinstance(name_node, YScalar) and name_node.value is not None else None
            if name is None:
                self.sink.report(
                    MISSING_KEY,
                    f"the {type_name} input has no name",
                    type_key.span,
                    help=f"write the name after the type: `- {type_name}: my-input`",
                )
                return None
            allowed_keys = (*INPUT_TYPE_KEYS, *common)
        else:
            type_node, name_node = node.get("type"), node.get("name")
            if name_node is None or type_node is None:
                self.sink.report(
                    MISSING_KEY,
                    "an input declaration needs a type key with its name, such as `- string: feature-id`",
                    head_span(node),
                    help="write `- string: my-input` (or the longer form `name:` and `type:`)",
                )
                return None
            name = name_node.text if isinstance(name_node, YScalar) else ""
            name_span = name_node.span
            type_name = type_node.text if isinstance(type_node, YScalar) else ""
            if type_name not in INPUT_TYPE_KEYS:
                hint = suggest(type_name, INPUT_TYPE_KEYS)
                self.sink.report(
                    INVALID_VALUE,
                    f"unknown input type '{type_name}'",
                    head_span(type_node),
                    help=hint or f"use one of: {', '.join(INPUT_TYPE_KEYS)}",
                )
                type_name = "string"
            extra = ()
            allowed_keys = ("name", "type", "values", *common)
        for k, _ in node.pairs:
            if k.text not in allowed_keys and k.text not in extra:
                self.sink.report(
                    UNKNOWN_KEY,
                    f"unknown key '{k.text}' in the input '{name}'",
                    k.span,
                    help=suggest(k.text, allowed_keys) or f"input keys are: {', '.join(common)}",
                )
        where = f"the input '{name}'"
        description = self._opt_text(node.get("description"), f"'description' of {where}")
        required = self._opt_bool(node.get("required"), f"'required' of {where}")
        secret = self._opt_bool(node.get("secret"), f"'secret' of {where}")
        transform = None
        tnode = node.get("transform")
        if tnode is not None:
            transform = tnode.text if isinstance(tnode, YScalar) else None
            if transform not in TRANSFORMS:
                self.sink.report(
                    INVALID_VALUE,
                    f"unknown transform '{getattr(tnode, 'text', '')}' in {where}",
                    head_span(tnode),
                    help=suggest(transform or "", TRANSFORMS) or f"use one of: {', '.join(TRANSFORMS)}",
                )
                transform = None
        allowed_node = node.get("allowed") or node.get("values")
        allowed = None
        if allowed_node is not None:
            if isinstance(allowed_node, YSeq) and all(isinstance(i, YScalar) for i in allowed_node.items):
                allowed = tuple(
                    i.value if not (type_name in ("string", "enum") and i.is_plain) else i.text
                    for i in allowed_node.items
                )  # type: ignore[union-attr]
            else:
                self.sink.report(WRONG_TYPE, f"'allowed' of {where} expects a list of values", head_span(allowed_node))
        if type_name == "enum" and allowed is None:
            self.sink.report(
                ENUM_WITHOUT_VALUES,
                f"the enum input '{name}' has no `allowed` values",
                name_span,
                help="add `allowed: [a, b, c]`",
            )
        value_type = (
            t.EnumT(tuple(str(a) for a in allowed))
            if allowed and type_name in ("string", "enum")
            else t.INPUT_TYPES.get(type_name, t.ANY)
        )
        default = None
        dnode = node.get("default")
        if dnode is not None:
            default = self.values.value(dnode, value_type, f"the default of {where}")
            if (
                isinstance(default, ir.Lit)
                and allowed is not None
                and default.value is not None
                and default.value not in allowed
                and not isinstance(value_type, t.EnumT)
            ):
                self.sink.report(
                    INVALID_VALUE,
                    f"the default of {where} is not one of its allowed values",
                    dnode.span if dnode is not None else None,
                    help=f"use one of: {', '.join(map(str, allowed))}",
                )
        rules = self._rules(node.get("validation"), where, type_name)
        return ir.InputDecl(
            name=name,
            type=type_name,
            description=description,
            required=required,
            default=default,
            allowed=allowed,
            transform=transform,
            validation=rules,
            secret=secret,
            span=name_span,
        )

    def _opt_text(self, node: YNode | None, where: str) -> str | None:
        if node is None:
            return None
        if isinstance(node, YScalar):
            return node.text
        self.sink.report(WRONG_TYPE, f"{where} expects a string, got {kind_of(node)}", head_span(node))
        return None

    def _opt_bool(self, node: YNode | None, where: str) -> bool:
        if node is None:
            return False
        if isinstance(node, YScalar) and isinstance(node.value, bool):
            return node.value
        self.values.check_literal(node, t.BOOLEAN, where) if isinstance(node, YScalar) else self.sink.report(
            WRONG_TYPE, f"{where} expects a boolean, got {kind_of(node)}", head_span(node)
        )
        return False

    def _rules(self, node: YNode | None, where: str, type_name: str) -> tuple[ir.Rule, ...]:
        if node is None:
            return ()
        items = node.items if isinstance(node, YSeq) else [node]
        rules: list[ir.Rule] = []
        kinds = {
            "regex": t.STRING,
            "minLength": t.NUMBER,
            "maxLength": t.NUMBER,
            "min": t.NUMBER,
            "max": t.NUMBER,
            "script": t.STRING,  # JavaScript run with node when a run starts (runtime/lifecycle/input_scripts.py)
        }
        for item in items:
            if not isinstance(item, YMap):
                self.sink.report(
                    WRONG_TYPE, f"a validation rule of {where} is a mapping such as `regex: ...`", head_span(item)
                )
                continue
            code_node, message_node = item.get("code"), item.get("message")
            code = code_node.text if isinstance(code_node, YScalar) else None
            message = message_node.text if isinstance(message_node, YScalar) else None
            if code is not None and not PASCAL.match(code):
                self.sink.report(
                    ERROR_CODE_CASE,
                    f"the error code '{code}' is not PascalCase",
                    code_node.span,
                    help="error codes look like InvalidFeatureId",
                )
            found: dict[str, ir.Rule] = {}
            for k, v in item.pairs:
                if k.text in ("code", "message"):
                    continue
                if k.text not in kinds:
                    self.sink.report(
                        UNKNOWN_KEY,
                        f"unknown validation rule '{k.text}' in {where}",
                        k.span,
                        help=suggest(k.text, kinds) or f"rules are: {', '.join(kinds)}",
                    )
                    continue
                if not isinstance(v, YScalar):
                    self.sink.report(WRONG_TYPE, f"'{k.text}' expects a {kinds[k.text].describe()}", head_span(v))
                    continue
                self.values.check_literal(v, kinds[k.text], f"'{k.text}'")
                if k.text == "regex" and isinstance(v.value, str):
                    from catalyst_dsl.syntax.regex import PatternError, check_pattern

                    try:
                        check_pattern(v.text)
                    except PatternError as exc:
                        self.sink.report(
                            BAD_REGEX,
                            f"the regex of {where} cannot be used: {exc.message}",
                            v.span,
                            help="fix the pattern; remember that YAML double quotes need \\\\ for a backslash",
                        )
                found[k.text] = ir.Rule(
                    k.text, v.text if k.text in ("regex", "script") else v.value, code, message, span=k.span
                )
            for low, high in (("minLength", "maxLength"), ("min", "max")):
                lo, hi = found.get(low), found.get(high)
                if (
                    lo
                    and hi
                    and isinstance(lo.value, (int, float))
                    and isinstance(hi.value, (int, float))
                    and lo.value > hi.value
                ):
                    self.sink.report(
                        MIN_ABOVE_MAX,
                        f"{low} ({lo.value}) is greater than {high} ({hi.value}) in {where}",
                        lo.span,
                        labels=[Label(hi.span, f"{high} here")],
                        help="no value can satisfy both; swap them",
                    )
            rules.extend(found.values())
        return tuple(rules)
