"""The native dialect: Catalyst YAML playbooks lowered into the IR (LANGUAGE.md 2-4).

Lowering checks structure as it goes (keys, required keys, literal types, names, the
action-key rule); references and expression types are checked afterwards, on the IR.
"""

from __future__ import annotations

import re
import sys

from catalyst_dsl.actions.control.checkpoint import APPROVAL_POLICY
from catalyst_dsl.actions.catalog import ActionSpec, Catalog, Effect
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.checks import lower_checks
from catalyst_dsl.dialects.values import ValueLowerer, kind_of, parse_duration, suggest, warn_milliseconds
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.source import SourceFile, Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span

KEBAB = re.compile(r"^[a-z][a-z0-9-]*$")
PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
SUPPORTED_LANGUAGE_VERSIONS = (1,)
RESERVED_STEP_KEYS = (
    "name",
    "condition",
    "errorPolicy",
    "timeout",
    "checkpoint",
    "writes",
    "isolated",
    "requires",
    "ensures",
    "bindings",
    "approved",
)
POLICY_ACTIONS = ("Stop", "Continue", "SilentlyContinue", "Ignore", "Inquire", "Suspend")
INPUT_TYPE_KEYS = ("string", "number", "boolean", "enum", "array", "object", "any")
TRANSFORMS = ("kebab-case", "snake-case", "camel-case")
TOP_LEVEL_KEYS = (
    "name",
    "id",
    "description",
    "owner",
    "catalyst",
    "reviewers",
    "triggers",
    "inputs",
    "outputs",
    "artifacts",
    "allowedWritePaths",
    "errorPolicy",
    "steps",
    "catch",
    "finally",
    "oneRunPer",
)


def ordinary_yaml(root, is_action) -> bool:
    """Whether a YAML document is no playbook at all (a `config.yaml`, a list of hooks): a
    mapping with none of a playbook's keys, a list of anything but steps, or a lone value
    (an empty document is C014's). Such a file found by a directory scan is skipped; named
    explicitly, it gets one C018 instead of a list of errors about keys it never meant."""
    from catalyst_dsl.syntax.yaml_nodes import YMap, YScalar, YSeq

    def keys(node) -> list[str]:
        return [k.value for k, _ in node.pairs if isinstance(k.value, str)] if isinstance(node, YMap) else []

    if isinstance(root, YMap):
        return not any(k in TOP_LEVEL_KEYS for k in keys(root))
    if isinstance(root, YSeq):  # steps without the playbook around them are C201's
        return not any(is_action(k) for item in root.items for k in keys(item))
    return isinstance(root, YScalar) and root.value is not None


#: What a Markdown playbook needs to do something (LANGUAGE.md 9), for the help of C014 and C204.
MARKDOWN_NEEDS = "write the prompt as Markdown text, or phases as headings such as `## Phase 1: Spec`; front matter between --- lines is optional"

#: A step's `bindings:`: names and the values merged into the playbook's `bindings` object.
BINDINGS = t.ObjectT((), t.ANY)
REVIEWERS = t.obj(required=t.opt(t.ArrayT(t.STRING)), optional=t.opt(t.ArrayT(t.STRING)))
#: `checkpoint:` next to an action, long form (docs/actions.md, "Checkpoints on a step").
GATE = t.obj(
    when=t.opt(t.EnumT(("before", "after")), "before or after the step runs (default after)"),
    message=t.opt(t.STRING),
    options=t.opt(t.ArrayT(t.EnumT(ir.GATE_OPTIONS)), "the answers offered"),
    policy=t.opt(APPROVAL_POLICY),
)
TRIGGER = t.obj(event=t.req(t.STRING), action=t.opt(t.STRING), args=t.opt(t.ObjectT((), t.ANY)))


class CatalystLowerer:
    def __init__(
        self, source: SourceFile, sink: DiagnosticSink, catalog: Catalog, dialect: str = "catalyst-yaml"
    ) -> None:
        self.source = source
        self.sink = sink
        self.catalog = catalog
        self.dialect = dialect
        self.values = ValueLowerer(sink, self.steps, self.inputs_value)
        #: Functions defined so far, in document order: name -> their input declarations.
        self.functions: dict[str, tuple[ir.InputDecl, ...]] = {}

    # -- the playbook --------------------------------------------------------------------

    def playbook(
        self,
        root: YNode | None,
        *,
        defaults: dict[str, str] | None = None,
        extra_steps: tuple[ir.Step, ...] = (),
        calls=(),
        markdown_inputs=(),
    ) -> ir.Playbook | None:
        defaults = defaults or {}
        markdown = self.dialect == "markdown"
        # The one place that tells a file with no playbook in it (C014) from a playbook
        # that lacks something: no YAML document (no front matter), or one that is only
        # `---`, and for Markdown no body either. (compile_bytes skips the loader for YAML
        # text that is blank or comments only, with the same diagnostic.)
        if root is None or _empty_document(root):
            if not markdown:
                self.sink.report(
                    "C014",
                    "the file is empty",
                    self.source.span(0),
                    help="a playbook needs at least name, description, owner and steps",
                )
                return None
            if not extra_steps:
                self.sink.report("C014", "the file is empty", self.source.span(0), help=MARKDOWN_NEEDS)
                return None
            root = YMap([], 0, 0, self.source)
        if not isinstance(root, YMap):
            self.sink.report(
                "C201",
                f"a playbook is a mapping of keys, not {kind_of(root)}",
                head_span(root),
                help="start the file with `name:`, `description:`, `owner:` and `steps:`",
            )
            return None
        keys = {k.text: (k, v) for k, v in root.pairs}
        for k, _ in root.pairs:
            if k.text not in TOP_LEVEL_KEYS and not (self.dialect == "markdown" and k.text == "steps"):
                hint = suggest(k.text, TOP_LEVEL_KEYS)
                self.sink.report(
                    "C202",
                    f"unknown top-level key '{k.text}'",
                    k.span,
                    help=hint or f"top-level keys are: {', '.join(TOP_LEVEL_KEYS)}",
                )

        name = self._name(keys, defaults.get("name"), root)
        description = self._text(keys, "description", defaults.get("description"), root)
        owner = self._text(keys, "owner", defaults.get("owner"), root, required=self.dialect != "markdown")
        language = self._language(keys)
        reviewers = self._reviewers(keys.get("reviewers"))
        triggers = self._triggers(keys.get("triggers"))
        inputs = self.inputs_value(keys["inputs"][1]).inputs if "inputs" in keys else ()
        inputs = (*inputs, *[i for i in markdown_inputs if i.name not in {x.name for x in inputs}])
        outputs, artifacts = self._outputs(keys.get("outputs"))
        artifacts = (*artifacts, *self._path_list(keys.get("artifacts"), "artifacts"))
        allowed = (
            self._path_list(keys.get("allowedWritePaths"), "allowedWritePaths") if "allowedWritePaths" in keys else None
        )
        policy = self.error_policy(keys["errorPolicy"][1]) if "errorPolicy" in keys else None
        one_run_per = self._one_run_per(keys["oneRunPer"][1], inputs) if "oneRunPer" in keys else ()

        steps: tuple[ir.Step, ...] = ()
        if "steps" in keys:
            steps_key, steps_node = keys["steps"]
            # C204 means there is really no step written: an empty list, or `steps:` with
            # no value. Steps that were written but are wrong (C401, C402) are not "no steps".
            if isinstance(steps_node, YScalar) and steps_node.value is None:
                if not extra_steps:
                    self.sink.report(
                        "C204",
                        "a playbook needs at least one step; `steps` has no value",
                        steps_key.span,
                        help="write the steps below `steps:`, for example `  - display: \"hello\"`",
                    )
            else:
                steps = self.steps(steps_node).steps
                if isinstance(steps_node, YSeq) and not steps_node.items and not extra_steps:
                    self.sink.report(
                        "C204",
                        "a playbook needs at least one step; `steps` is empty",
                        steps_key.span,
                        help="add a step, for example `- display: \"hello\"`",
                    )
        elif markdown and not extra_steps:
            # A Markdown playbook's steps come from its body, so "missing `steps:`" would
            # send the user the wrong way. Point at where the body should start: the last
            # line written, which is the front matter's closing ---.
            end = len(self.source.text.rstrip())
            at = self.source.span(self.source.text.rfind("\n", 0, end) + 1, end)
            self.sink.report(
                "C204",
                "the Markdown playbook has no body: the text after the front matter is what it runs",
                at,
                help=MARKDOWN_NEEDS,
            )
        elif not extra_steps:
            self.sink.report(
                "C203",
                "the playbook is missing the required key 'steps'",
                head_span(root),
                help="add `steps:` with at least one step",
            )
        steps = (*steps, *extra_steps)
        catch = self.catch_clauses(keys["catch"][1], "the playbook's catch") if "catch" in keys else ()
        final = self.steps(keys["finally"][1]).steps if "finally" in keys else ()
        return ir.Playbook(
            name=name,
            description=description or "",
            owner=owner,
            dialect=self.dialect,
            file=self.source.path,
            language=language,
            reviewers=reviewers,
            triggers=triggers,
            inputs=inputs,
            outputs=outputs,
            artifacts=artifacts,
            allowed_write_paths=allowed,
            error_policy=policy,
            steps=steps,
            catch=catch,
            finally_=final,
            calls=tuple(calls),
            one_run_per=one_run_per,
            span=root.span,
        )

    def _scalar_text(self, node: YNode, where: str) -> str | None:
        if isinstance(node, YScalar) and node.value is not None:
            if not isinstance(node.value, str):
                return node.text
            return node.value
        self.sink.report("C302", f"{where} expects a string, got {kind_of(node)}", head_span(node))
        return None

    def _name(self, keys, default: str | None, root: YMap) -> str:
        name_entry, id_entry = keys.get("name"), keys.get("id")
        name = self._scalar_text(name_entry[1], "'name'") if name_entry else None
        ident = self._scalar_text(id_entry[1], "'id'") if id_entry else None
        if name is not None and ident is not None and name != ident:
            self.sink.report(
                "C205",
                f"'name' ({name}) and 'id' ({ident}) differ",
                id_entry[0].span,
                labels=[Label(name_entry[0].span, "name given here")],
                help="keep one of them: `id` is only an alias of `name`",
            )
        chosen = name if name is not None else ident
        node = (name_entry or id_entry or (None, None))[1]
        if chosen is None:
            if default is not None:
                return default
            self.sink.report(
                "C203",
                "the playbook is missing the required key 'name'",
                head_span(root),
                help="add `name:` with a kebab-case name, such as `name: create-feature`",
            )
            return ""
        if not KEBAB.match(chosen):
            fixed = re.sub(r"[^a-z0-9]+", "-", chosen.lower()).strip("-")
            self.sink.report(
                "C206",
                f"the playbook name '{chosen}' is not kebab-case",
                node.span if node is not None else None,
                help=f"use lower-case words joined by '-': {fixed or 'my-playbook'}",
            )
        return chosen

    def _text(self, keys, key: str, default: str | None, root: YMap, required: bool = True) -> str | None:
        if key in keys:
            node = keys[key][1]
            tmpl_or_lit = self.values.value(node, t.STRING, f"'{key}'")
            if isinstance(tmpl_or_lit, ir.Lit):
                if tmpl_or_lit.value is None:
                    self.sink.report(
                        "C203", f"'{key}' has no value", keys[key][0].span, help=f"write the {key} after '{key}:'"
                    )
                    return None
                return str(tmpl_or_lit.value)
            return node.text if isinstance(node, YScalar) else None
        if default is not None:
            return default
        if required:
            self.sink.report(
                "C203", f"the playbook is missing the required key '{key}'", head_span(root), help=f"add `{key}:`"
            )
        return None

    def _language(self, keys) -> int:
        if "catalyst" not in keys:
            return 1
        key, node = keys["catalyst"]
        supported = ", ".join(str(v) for v in SUPPORTED_LANGUAGE_VERSIONS)
        if not isinstance(node, YScalar):
            self.sink.report(
                "C207",
                f"the language version is a number, not {kind_of(node)}",
                head_span(node),
                help=f"write the version as a plain number, such as `catalyst: 1` (supported versions: {supported})",
            )
            return 1
        value = node.value
        if value is None:
            self.sink.report(
                "C207",
                "`catalyst` has no value; it gives the language version, a number",
                key.span,
                help="write `catalyst: 1`, or remove the key: the version is 1 when it is left out",
            )
            return 1
        if isinstance(value, str) and re.fullmatch(r"[0-9]+", value) and int(value) in SUPPORTED_LANGUAGE_VERSIONS:
            # The version the user meant is plain; only its type is wrong (LANGUAGE.md 2:
            # `catalyst` is an integer). Say so, and read the playbook as that version.
            self.sink.report(
                "C302",
                f"'catalyst' expects a number, got {kind_of(node)}",
                node.span,
                help=f"remove the quotes: catalyst: {int(value)}",
            )
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.sink.report(
                "C207",
                f"the language version is a number, not {kind_of(node)}",
                node.span,
                help=f"supported versions: {supported}",
            )
            return 1
        if value not in SUPPORTED_LANGUAGE_VERSIONS:
            self.sink.report(
                "C207",
                f"language version {node.text} is not supported",
                node.span,
                help=f"supported versions: {supported}",
            )
            return 1
        return value

    def _reviewers(self, entry) -> ir.Reviewers:
        if entry is None:
            return ir.Reviewers()
        value = self.values.value(entry[1], REVIEWERS, "'reviewers'")
        if not isinstance(value, ir.MapV):
            return ir.Reviewers()

        def roles(key: str) -> tuple[str, ...]:
            v = value.get(key)
            return (
                tuple(str(i.value) for i in v.items if isinstance(i, ir.Lit) and i.value is not None)
                if isinstance(v, ir.ListV)
                else ()
            )

        return ir.Reviewers(roles("required"), roles("optional"))

    def _triggers(self, entry) -> tuple[ir.Trigger, ...]:
        if entry is None:
            return ()
        value = self.values.value(entry[1], t.ArrayT(TRIGGER), "'triggers'")
        triggers = []
        if isinstance(value, ir.ListV):
            for item in value.items:
                if isinstance(item, ir.MapV):
                    event, action = item.get("event"), item.get("action")
                    triggers.append(
                        ir.Trigger(
                            event=str(event.value) if isinstance(event, ir.Lit) else "",
                            action=str(action.value)
                            if isinstance(action, ir.Lit) and action.value is not None
                            else None,
                            args=item.get("args"),
                            span=item.span,
                        )
                    )
        return tuple(triggers)

    def _outputs(self, entry) -> tuple[tuple[ir.OutputDecl, ...], tuple[ir.Value, ...]]:
        if entry is None:
            return (), ()
        key, node = entry
        if isinstance(node, YSeq):
            self.sink.report(
                "C601",
                "`outputs` as a list of paths is the older form of `artifacts`; it is read as artifacts",
                key.span,
                help="rename `outputs:` to `artifacts:`, and use `outputs:` for typed values (name: type)",
            )
            return (), tuple(self.values.value(n, t.STRING, "an artifact") for n in node.items)
        if not isinstance(node, YMap):
            self.sink.report("C302", f"'outputs' expects a mapping of name: type, got {kind_of(node)}", head_span(node))
            return (), ()
        outputs = []
        for k, v in node.pairs:
            type_name = v.text if isinstance(v, YScalar) else None
            if type_name not in t.OUTPUT_TYPES:
                hint = suggest(type_name or "", t.OUTPUT_TYPES)
                self.sink.report(
                    "C303",
                    f"the output '{k.text}' has an unknown type '{getattr(v, 'text', kind_of(v))}'",
                    head_span(v),
                    help=hint or f"use one of: {', '.join(t.OUTPUT_TYPES)}",
                )
                type_name = "any"
            outputs.append(ir.OutputDecl(k.text, type_name, span=k.span))
        return tuple(outputs), ()

    def _one_run_per(self, node: YNode, inputs) -> tuple[str, ...]:
        """`oneRunPer: [input, …]`: the inputs whose values name a run of the playbook."""
        declared = [i.name for i in inputs]
        if not isinstance(node, YSeq) or not node.items:
            self.sink.report(
                "C616",
                f"'oneRunPer' expects a list of input names, got {kind_of(node)}",
                head_span(node),
                help="write the inputs whose values name a run, e.g. `oneRunPer: [feature]`",
            )
            return ()
        names: list[str] = []
        for item in node.items:
            name = item.value if isinstance(item, YScalar) and isinstance(item.value, str) else None
            if name not in declared:
                shown = f"'{name}'" if name is not None else kind_of(item)
                self.sink.report(
                    "C616",
                    f"'oneRunPer' names {shown}, which is not an input of this playbook",
                    head_span(item),
                    help=suggest(name or "", declared)
                    or (f"the inputs are: {', '.join(declared)}" if declared else "declare the input under `inputs:`"),
                )
            elif name not in names:
                names.append(name)
        return tuple(names)

    def _path_list(self, entry, key: str) -> tuple[ir.Value, ...]:
        if entry is None:
            return ()
        value = self.values.value(entry[1], t.ArrayT(t.STRING), f"'{key}'")
        return value.items if isinstance(value, ir.ListV) else ()

    # -- inputs ------------------------------------------------------------------------------

    def inputs_value(self, node: YNode) -> ir.InputsV:
        if not isinstance(node, YSeq):
            self.sink.report(
                "C302",
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
                    "C306",
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
                "C302",
                f"an input declaration is a mapping, got {kind_of(node)}",
                head_span(node),
                help="write `- string: name` with its keys below",
            )
            return None
        type_keys = [k for k, _ in node.pairs if k.text in INPUT_TYPE_KEYS]
        common = ("description", "required", "default", "allowed", "transform", "validation", "secret")
        if len(type_keys) > 1:
            self.sink.report(
                "C307",
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
                    "C203",
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
                    "C203",
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
                    "C303",
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
                    "C202",
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
                    "C303",
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
                self.sink.report("C302", f"'allowed' of {where} expects a list of values", head_span(allowed_node))
        if type_name == "enum" and allowed is None:
            self.sink.report(
                "C308", f"the enum input '{name}' has no `allowed` values", name_span, help="add `allowed: [a, b, c]`"
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
                    "C303",
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
        self.sink.report("C302", f"{where} expects a string, got {kind_of(node)}", head_span(node))
        return None

    def _opt_bool(self, node: YNode | None, where: str) -> bool:
        if node is None:
            return False
        if isinstance(node, YScalar) and isinstance(node.value, bool):
            return node.value
        self.values.check_literal(node, t.BOOLEAN, where) if isinstance(node, YScalar) else self.sink.report(
            "C302", f"{where} expects a boolean, got {kind_of(node)}", head_span(node)
        )
        return False

    def _rules(self, node: YNode | None, where: str, type_name: str) -> tuple[ir.Rule, ...]:
        if node is None:
            return ()
        items = node.items if isinstance(node, YSeq) else [node]
        rules: list[ir.Rule] = []
        kinds = {"regex": t.STRING, "minLength": t.NUMBER, "maxLength": t.NUMBER, "min": t.NUMBER, "max": t.NUMBER}
        for item in items:
            if not isinstance(item, YMap):
                self.sink.report(
                    "C302", f"a validation rule of {where} is a mapping such as `regex: ...`", head_span(item)
                )
                continue
            code_node, message_node = item.get("code"), item.get("message")
            code = code_node.text if isinstance(code_node, YScalar) else None
            message = message_node.text if isinstance(message_node, YScalar) else None
            if code is not None and not PASCAL.match(code):
                self.sink.report(
                    "C309",
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
                        "C202",
                        f"unknown validation rule '{k.text}' in {where}",
                        k.span,
                        help=suggest(k.text, kinds) or f"rules are: {', '.join(kinds)}",
                    )
                    continue
                if not isinstance(v, YScalar):
                    self.sink.report("C302", f"'{k.text}' expects a {kinds[k.text].describe()}", head_span(v))
                    continue
                self.values.check_literal(v, kinds[k.text], f"'{k.text}'")
                if k.text == "regex" and isinstance(v.value, str):
                    from catalyst_dsl.syntax.regex import PatternError, check_pattern

                    try:
                        check_pattern(v.text)
                    except PatternError as exc:
                        self.sink.report(
                            "C304",
                            f"the regex of {where} cannot be used: {exc.message}",
                            v.span,
                            help="fix the pattern; remember that YAML double quotes need \\\\ for a backslash",
                        )
                found[k.text] = ir.Rule(k.text, v.text if k.text == "regex" else v.value, code, message, span=k.span)
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
                        "C305",
                        f"{low} ({lo.value}) is greater than {high} ({hi.value}) in {where}",
                        lo.span,
                        labels=[Label(hi.span, f"{high} here")],
                        help="no value can satisfy both; swap them",
                    )
            rules.extend(found.values())
        return tuple(rules)

    # -- error policies ------------------------------------------------------------------------

    def error_policy(self, node: YNode) -> ir.ErrorPolicy | None:
        if isinstance(node, YScalar):
            action = self._policy_action(node)
            return ir.ErrorPolicy(default=action, span=node.span) if action else None
        if not isinstance(node, YMap):
            self.sink.report(
                "C302",
                f"'errorPolicy' expects a policy name or a mapping, got {kind_of(node)}",
                head_span(node),
                help="write `errorPolicy: Continue` or `errorPolicy: {default: {action: Stop}}`",
            )
            return None
        if node.get("action") is not None:
            return ir.ErrorPolicy(default=self._policy_entry(node), span=node.span)
        default = None
        by_code = []
        for k, v in node.pairs:
            entry = self._policy_entry(v)
            if entry is None:
                continue
            if k.text == "default":
                default = entry
            else:
                if not PASCAL.match(k.text):
                    self.sink.report(
                        "C309",
                        f"the error code '{k.text}' is not PascalCase",
                        k.span,
                        help="error codes look like RateLimitExceeded; `default` matches any code",
                    )
                by_code.append((k.text, entry))
        return ir.ErrorPolicy(default=default, by_code=tuple(by_code), span=node.span)

    def _policy_entry(self, node: YNode) -> ir.PolicyAction | None:
        if isinstance(node, YScalar):
            return self._policy_action(node)
        if not isinstance(node, YMap):
            self.sink.report(
                "C302", f"a policy is a name or a mapping with `action`, got {kind_of(node)}", head_span(node)
            )
            return None
        retry, message = 0, None
        for k, v in node.pairs:
            if k.text not in ("action", "retryCount", "message"):
                self.sink.report(
                    "C202",
                    f"unknown key '{k.text}' in an error policy",
                    k.span,
                    help=suggest(k.text, ("action", "retryCount", "message"))
                    or "policy keys are action, retryCount and message",
                )
        mnode = node.get("message")
        if mnode is not None:
            if isinstance(mnode, YScalar) and isinstance(mnode.value, str):
                message = mnode.value
            else:
                self.sink.report("C302", "'message' in an error policy expects text", head_span(mnode))
        rnode = node.get("retryCount")
        if rnode is not None:
            if (
                isinstance(rnode, YScalar)
                and isinstance(rnode.value, int)
                and not isinstance(rnode.value, bool)
                and rnode.value >= 0
            ):
                retry = rnode.value
            else:
                self.sink.report("C302", "'retryCount' expects a whole number of retries", head_span(rnode))
        anode = node.get("action")
        if anode is None:
            self.sink.report(
                "C203",
                "the error policy is missing the required key 'action'",
                head_span(node),
                help=f"add `action:` ({', '.join(POLICY_ACTIONS)})",
            )
            return None
        action = self._policy_action(anode)
        return ir.PolicyAction(action.action, retry, span=action.span, message=message) if action else None

    def _policy_action(self, node: YNode) -> ir.PolicyAction | None:
        text = node.text if isinstance(node, YScalar) else ""
        by_lower = {a.lower(): a for a in POLICY_ACTIONS}
        action = by_lower.get(str(text).lower())
        if action is None:
            hint = suggest(str(text), POLICY_ACTIONS)
            self.sink.report(
                "C303",
                f"unknown error policy action '{text}'",
                head_span(node),
                help=hint or f"use one of: {', '.join(POLICY_ACTIONS)}",
            )
            return None
        return ir.PolicyAction(action, span=node.span)

    # -- steps ---------------------------------------------------------------------------------

    def steps(self, node: YNode) -> ir.StepsV:
        if not isinstance(node, YSeq):
            self.sink.report(
                "C302",
                f"steps must be a list, got {kind_of(node)}",
                head_span(node),
                help="write each step as a list item starting with '- '",
            )
            return ir.StepsV((), span=node.span)
        steps = []
        for item in node.items:
            step = self.step(item)
            if step is not None:
                steps.append(step)
        return ir.StepsV(tuple(steps), span=node.span)

    def catch_clauses(self, node: YNode, where: str) -> tuple[ir.CatchClause, ...]:
        if not isinstance(node, YSeq):
            self.sink.report(
                "C302", f"{where} expects a list of `- code: ... steps: [...]`, got {kind_of(node)}", head_span(node)
            )
            return ()
        clauses = []
        for item in node.items:
            if not isinstance(item, YMap):
                self.sink.report(
                    "C302", f"a catch clause is a mapping with `code` and `steps`, got {kind_of(item)}", head_span(item)
                )
                continue
            value = self.values.mapping(item, t.obj(code=t.req(t.STRING), steps=t.req(t.STEPS)), "a catch clause")
            code = value.get("code")
            steps = value.get("steps")
            clauses.append(
                ir.CatchClause(
                    code=str(code.value) if isinstance(code, ir.Lit) else "",
                    steps=steps.steps if isinstance(steps, ir.StepsV) else (),
                    span=item.span,
                )
            )
        return tuple(clauses)

    def _names_action(self, key: str, pairs) -> bool:
        """Whether a step key names an action. A key that a built-in action of the same step
        takes as config (`value` beside `var`) is config whatever a plugin is called, so only
        other keys are looked up in the installed plugins: checking a playbook of built-in
        actions never scans the installed packages."""
        if key == "checkpoint" or key in RESERVED_STEP_KEYS:
            return False
        if key in self.functions or self.catalog.declares(key):
            return True
        for other, _ in pairs:
            spec = self.catalog.get(other.text) if self.catalog.declares(other.text) else None
            if spec is not None and spec.config.field(key) is not None:
                return False
        return key in self.catalog

    def step(self, node: YNode) -> ir.Step | None:
        if not isinstance(node, YMap):
            hint = None
            if isinstance(node, YScalar) and isinstance(node.value, str) and node.value in self.catalog:
                hint = f"write `- {node.value}: ...` with the action's value after the colon"
            self.sink.report(
                "C401",
                f"a step is a mapping with one action key, not {kind_of(node)}",
                head_span(node),
                help=hint or "write a step like `- display: \"hello\"`",
            )
            return None
        pairs = node.pairs
        action_keys = [(k, v) for k, v in pairs if self._names_action(k.text, pairs)]
        checkpoint_entry = next(((k, v) for k, v in pairs if k.text == "checkpoint"), None)
        if not action_keys and checkpoint_entry is not None:
            action_keys = [checkpoint_entry]
            checkpoint_entry = None
        if len(action_keys) > 1:
            # A key that is a config key of another candidate is config (ai-prompt's `return`).
            narrowed = [
                (k, v)
                for k, v in action_keys
                if not any(
                    other is not k
                    and (spec := self.catalog.get(other.text)) is not None
                    and spec.config.field(k.text) is not None
                    for other, _ in action_keys
                )
            ]
            action_keys = narrowed or action_keys
        if len(action_keys) > 1:
            first, second = action_keys[0][0], action_keys[1][0]
            self.sink.report(
                "C403",
                f"the step names two actions: '{first.text}' and '{second.text}'",
                second.span,
                labels=[Label(first.span, "first action here")],
                help="a step runs exactly one action; split it into two steps",
            )
        known = True
        if not action_keys:
            candidates = [(k, v) for k, v in pairs if k.text not in RESERVED_STEP_KEYS]
            if not candidates:
                self.sink.report(
                    "C402",
                    "the step has no action",
                    head_span(node),
                    help="add an action key such as `display:`, `bash:` or `ai-prompt:`",
                )
                return None
            key, value = candidates[0]
            hint = suggest(key.text, [*self.catalog.names(), *self.functions])
            broken = self.catalog.why_missing(key.text)
            if broken:
                hint = f"{broken}; fix or reinstall that plugin"
            self.sink.report(
                "C404",
                f"unknown action '{key.text}'",
                _where(key, node),
                help=hint
                or "`catalyst actions` lists the built-in actions; a `function` must be defined before the steps that call it",
            )
            action_keys = [(key, value)]
            known = False
        action_key, action_value = action_keys[0]
        action = sys.intern(action_key.text)  # one string per action name across a library
        spec = self.catalog.get(action) if known and action not in self.functions else None
        siblings = [
            (k, v)
            for k, v in pairs
            if k is not action_key
            and k.text not in RESERVED_STEP_KEYS
            and (k, v) not in action_keys[1:]
            and not (checkpoint_entry and k is checkpoint_entry[0])
        ]
        config = self._config(action, spec, action_key, action_value, siblings, node, known)

        reserved = {k.text: (k, v) for k, v in pairs if k.text in RESERVED_STEP_KEYS and k is not action_key}
        name = name_span = None
        if "name" in reserved:
            nk, nv = reserved["name"]
            if isinstance(nv, YScalar) and isinstance(nv.value, str) and KEBAB.match(nv.value):
                name, name_span = nv.value, nv.span
            else:
                text = nv.text if isinstance(nv, YScalar) else ""
                fixed = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
                self.sink.report(
                    "C206",
                    f"the step name '{text}' is not kebab-case",
                    head_span(nv),
                    help="use lower-case words joined by '-'" + (f": {fixed}" if fixed else ""),
                )
                if isinstance(nv, YScalar) and nv.text:
                    name, name_span = nv.text, nv.span
        condition = None
        if "condition" in reserved:
            condition = self.values.value(reserved["condition"][1], t.BOOLEAN, "'condition'")
        policy = self.error_policy(reserved["errorPolicy"][1]) if "errorPolicy" in reserved else None
        timeout = self._timeout(reserved["timeout"][1]) if "timeout" in reserved else None
        checkpoint, gate = None, None
        if checkpoint_entry is not None:
            checkpoint, gate = self._checkpoint_flag(checkpoint_entry[1])
        approved = self._opt_bool(reserved["approved"][1], "'approved'") if "approved" in reserved else False
        writes: tuple[ir.Value, ...] = ()
        if "writes" in reserved:
            wv = self.values.value(reserved["writes"][1], t.ArrayT(t.STRING), "'writes'")
            writes = wv.items if isinstance(wv, ir.ListV) else (wv,)
            if spec is not None and not spec.shell_like:
                self._writes_not_shell(spec, reserved["writes"][0])
        isolated = self._opt_bool(reserved["isolated"][1], "'isolated'") if "isolated" in reserved else False
        if action == "function" and known:
            self._define_function(config, action_key)
        requires, ensures = (
            lower_checks(*reserved[k], self.values, self.sink) if k in reserved else None
            for k in ("requires", "ensures")
        )
        bindings = (
            self.values.value(reserved["bindings"][1], BINDINGS, "'bindings'") if "bindings" in reserved else None
        )
        return ir.Step(
            action=action,
            config=config,
            name=name,
            condition=condition,
            error_policy=policy,
            timeout=timeout,
            checkpoint=checkpoint,
            writes=writes,
            writes_declared="writes" in reserved,
            isolated=isolated,
            gate=gate,
            approved=approved,
            known=known,
            span=head_span(node),
            action_span=action_key.span,
            name_span=name_span,
            requires=requires,
            ensures=ensures,
            bindings=bindings if isinstance(bindings, (ir.MapV, ir.Tmpl)) else None,
        )

    def _checkpoint_flag(self, node: YNode) -> tuple[bool | str | None, ir.Gate | None]:
        """`checkpoint:` next to an action: `true` or a message (a pause after the step), the
        word `before` (a gate before it, answered yes / skip / abort), `after` (as `true`),
        or the long form `{when, message, options, policy}`."""
        if isinstance(node, YScalar) and node.is_plain and node.value in ("before", "after"):
            if node.value == "after":
                return True, None
            return None, ir.Gate("before", options=ir.GATE_OPTIONS, span=node.span)
        if isinstance(node, YScalar) and isinstance(node.value, (bool, str)):
            return node.value, None
        if not isinstance(node, YMap):
            self.sink.report(
                "C302",
                f"'checkpoint' next to an action expects true, a message, `before`, or a mapping with when/message/options/policy, got {kind_of(node)}",
                head_span(node),
            )
            return None, None
        value = self.values.mapping(node, GATE, "'checkpoint'")
        when = value.get("when")
        when_text = when.value if isinstance(when, ir.Lit) and when.value in ("before", "after") else "after"
        written = node.get("when")
        if (
            isinstance(written, YScalar) and written.value is not None and not isinstance(written.value, str)
        ):  # text is the enum check's
            self.sink.report(
                "C303",
                f"'when' must be before or after, not {when.value!r}",
                when.span,
                help="write `when: before` or `when: after`",
            )
        options = value.get("options")
        if isinstance(options, ir.ListV):
            chosen = tuple(str(o.value) for o in options.items if isinstance(o, ir.Lit) and o.value in ir.GATE_OPTIONS)
        else:
            chosen = ir.GATE_OPTIONS if when_text == "before" else ("yes", "abort")
        return None, ir.Gate(
            when_text, message=value.get("message"), options=chosen, policy=value.get("policy"), span=node.span
        )

    def _writes_not_shell(self, spec: ActionSpec, key: YScalar) -> None:
        """C408: `writes:` belongs to shell-like steps only (LANGUAGE.md 7).

        Two different mistakes share the code, each with its own message: the action
        already declares what it writes (file-write's `path`), or it is not a step that
        writes through `writes:` at all (display, http-get, playbook).
        """
        if spec.writes:
            keys = " and ".join(f"`{w.key}`" for w in spec.writes)
            self.sink.report(
                "C408",
                f"'writes' is for shell-like steps; {spec.name} declares its own writes (its {keys})",
                key.span,
                help=f"remove `writes:`; what {spec.name} writes is checked from its {keys} already",
            )
            return
        shell = ", ".join(s.name for s in self.catalog.specs() if s.shell_like)
        if spec.effect is Effect.CONTROL:
            why = f"remove `writes:`; the steps that {spec.name} runs declare what they write"
        else:
            why = "remove `writes:`"
        self.sink.report(
            "C408", f"'writes' is only for shell-like steps ({shell}); {spec.name} is not one", key.span, help=why
        )

    def _timeout(self, node: YNode) -> float | None:
        value = node.value if isinstance(node, YScalar) else None
        seconds = parse_duration(value)
        if seconds is None:
            self.sink.report(
                "C302",
                f"'timeout' is not a duration: {getattr(node, 'text', kind_of(node))}",
                head_span(node),
                help="write seconds as a number, or a number with a unit: 500ms, 30s, 5m, 1h",
            )
            return None
        if isinstance(node, YScalar):
            warn_milliseconds(self.sink, node, "'timeout'")
        return seconds

    def _config(
        self,
        action: str,
        spec: ActionSpec | None,
        action_key: YScalar,
        action_value: YNode,
        siblings,
        step: YMap,
        known: bool,
    ) -> ir.MapV:
        where = f"the {action} step"
        if not known:
            # Read on as far as it can be understood, like a compiler after a syntax error:
            # lists of steps under the unknown action are steps (checked, and the names they
            # define seen by later steps); the rest is data. The action itself is not invented.
            entries = []
            if isinstance(action_value, YMap):
                entries = [
                    ir.Entry(k.text, self._unknown_value(v, f"'{k.text}'"), span=k.span) for k, v in action_value.pairs
                ]
            elif not (isinstance(action_value, YScalar) and action_value.value is None):
                entries = [ir.Entry("value", self._unknown_value(action_value, where), span=action_key.span)]
            entries += [ir.Entry(k.text, self._unknown_value(v, f"'{k.text}'"), span=k.span) for k, v in siblings]
            return ir.MapV(tuple(entries), span=step.span)
        if spec is None:  # a call of a function defined earlier in this playbook
            return self._function_call(action, action_key, action_value, siblings, step)
        schema = spec.config
        pairs: list[tuple[YScalar, YNode]] = []
        if isinstance(action_value, YMap):
            sibling_keys = {k.text for k, _ in siblings}
            pairs = [(k, v) for k, v in action_value.pairs if k.text not in sibling_keys]
        elif isinstance(action_value, YScalar) and action_value.value is None:
            pass  # `action: ~` means the sibling keys are the config
        else:
            if spec.primary is None:
                self.sink.report(
                    "C302",
                    f"{action} takes a mapping of settings, not {kind_of(action_value)}",
                    head_span(action_value),
                )
            else:
                pairs = [
                    (
                        YScalar(spec.primary, spec.primary, "", action_key.start, action_key.end, action_key.source),
                        action_value,
                    )
                ]
        pairs += siblings
        fake = YMap(pairs, step.start, step.end, step.source)
        return self.values.mapping(fake, schema, where, suggestions=RESERVED_STEP_KEYS)

    def _unknown_value(self, node: YNode, where: str) -> ir.Value:
        """A value under an unknown action: a list of mappings of which one names an action
        is a list of steps; anything else is data of any type."""
        if (
            isinstance(node, YSeq)
            and node.items
            and all(isinstance(i, YMap) for i in node.items)
            and any(k.text in self.catalog or k.text in self.functions for i in node.items for k, _ in i.pairs)
        ):
            return self.steps(node)
        return self.values.value(node, t.ANY, where)

    # -- functions -------------------------------------------------------------------------------

    def _define_function(self, config: ir.MapV, key: YScalar) -> None:
        name_value = config.get("name")
        if not isinstance(name_value, ir.Lit) or not isinstance(name_value.value, str):
            return
        name = name_value.value
        if name in self.catalog:
            whose = "a built-in action" if self.catalog.declares(name) else "an action an installed plugin provides"
            self.sink.report(
                "C410",
                f"the function '{name}' has the name of {whose}",
                name_value.span,
                help="give the function a name of its own",
            )
            return
        if not KEBAB.match(name):
            self.sink.report(
                "C206",
                f"the function name '{name}' is not kebab-case",
                name_value.span,
                help="use lower-case words joined by '-'",
            )
        inputs = config.get("inputs")
        self.functions[name] = inputs.inputs if isinstance(inputs, ir.InputsV) else ()

    def _function_call(self, action: str, key: YScalar, value: YNode, siblings, step: YMap) -> ir.MapV:
        inputs = self.functions[action]
        schema = t.ObjectT(
            tuple((i.name, t.Field(t.input_type(i), i.required and i.default is None)) for i in inputs), None
        )
        where = f"the call of {action}"
        if isinstance(value, YSeq):  # positional: mapped by index to the inputs
            if len(value.items) > len(inputs):
                self.sink.report(
                    "C302",
                    f"{action} takes {len(inputs)} input(s), got {len(value.items)}",
                    value.items[len(inputs)].span
                    if isinstance(value.items[len(inputs)], YScalar)
                    else head_span(value),
                    help=f"inputs in order: {', '.join(i.name for i in inputs) or 'none'}",
                )
            pairs = [(YScalar(i.name, i.name, "", n.start, n.end, n.source), n) for i, n in zip(inputs, value.items)]
        elif isinstance(value, YMap):
            pairs = list(value.pairs)
        elif isinstance(value, YScalar) and value.value is None:
            pairs = []
        elif inputs:
            pairs = [(YScalar(inputs[0].name, inputs[0].name, "", key.start, key.end, key.source), value)]
        else:
            self.sink.report("C302", f"{action} takes no inputs, got {kind_of(value)}", head_span(value))
            pairs = []
        pairs += siblings
        return self.values.mapping(
            YMap(pairs, step.start, step.end, step.source), schema, where, suggestions=RESERVED_STEP_KEYS
        )


def _empty_document(root: YNode) -> bool:
    """A document with nothing in it: `---` alone gives an empty, untagged plain scalar.

    `~` or `null` written out are values (not a playbook: C201), not an empty file.
    """
    return isinstance(root, YScalar) and root.is_plain and root.text == "" and root.tag is None


def _where(inner: YNode, outer: YNode) -> Span:
    """`inner`'s span, or `outer`'s when `inner` was written elsewhere (an aliased step)."""
    if outer.start <= inner.start < max(outer.end, outer.start + 1):
        return inner.span
    return head_span(outer)
