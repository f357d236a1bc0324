"""The playbook's own keys besides its steps: name, description and owner, the language
version, reviewers, triggers, outputs and artifacts, `oneRunPer`, path lists.
"""

from __future__ import annotations

import re

from catalyst_dsl.diagnostics.ids import (
    INVALID_VALUE,
    LANGUAGE_VERSION,
    MISSING_KEY,
    NAME_ID_CONFLICT,
    NOT_KEBAB_CASE,
    ONE_RUN_PER_INPUT,
    OUTPUTS_AS_ARTIFACTS,
    WRONG_TYPE,
)
from catalyst_dsl.diagnostics.model import Label
from catalyst_dsl.dialects.native.part import LoweringPart
from catalyst_dsl.dialects.native.vocabulary import KEBAB, REVIEWERS, SUPPORTED_LANGUAGE_VERSIONS, TRIGGER
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


class HeaderLowering(LoweringPart):
    """The playbook's keys other than inputs, steps and policies."""

    def _scalar_text(self, node: YNode, where: str) -> str | None:
        if isinstance(node, YScalar) and node.value is not None:
            if not isinstance(node.value, str):
                return node.text
            return node.value
        self.sink.report(WRONG_TYPE, f"{where} expects a string, got {kind_of(node)}", head_span(node))
        return None

    def _name(self, keys, default: str | None, root: YMap) -> str:
        name_entry, id_entry = keys.get("name"), keys.get("id")
        name = self._scalar_text(name_entry[1], "'name'") if name_entry else None
        ident = self._scalar_text(id_entry[1], "'id'") if id_entry else None
        if name is not None and ident is not None and name != ident:
            self.sink.report(
                NAME_ID_CONFLICT,
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
                MISSING_KEY,
                "the playbook is missing the required key 'name'",
                head_span(root),
                help="add `name:` with a kebab-case name, such as `name: create-feature`",
            )
            return ""
        if not KEBAB.match(chosen):
            fixed = re.sub(r"[^a-z0-9]+", "-", chosen.lower()).strip("-")
            self.sink.report(
                NOT_KEBAB_CASE,
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
                        MISSING_KEY, f"'{key}' has no value", keys[key][0].span, help=f"write the {key} after '{key}:'"
                    )
                    return None
                return str(tmpl_or_lit.value)
            return node.text if isinstance(node, YScalar) else None
        if default is not None:
            return default
        if required:
            self.sink.report(
                MISSING_KEY, f"the playbook is missing the required key '{key}'", head_span(root), help=f"add `{key}:`"
            )
        return None

    def _language(self, keys) -> int:
        if "catalyst" not in keys:
            return 1
        key, node = keys["catalyst"]
        supported = ", ".join(str(v) for v in SUPPORTED_LANGUAGE_VERSIONS)
        if not isinstance(node, YScalar):
            self.sink.report(
                LANGUAGE_VERSION,
                f"the language version is a number, not {kind_of(node)}",
                head_span(node),
                help=f"write the version as a plain number, such as `catalyst: 1` (supported versions: {supported})",
            )
            return 1
        value = node.value
        if value is None:
            self.sink.report(
                LANGUAGE_VERSION,
                "`catalyst` has no value; it gives the language version, a number",
                key.span,
                help="write `catalyst: 1`, or remove the key: the version is 1 when it is left out",
            )
            return 1
        # Digits are compared as text, never through int(): a string of thousands of digits
        # (plain digits the loader left as text, too long to read) would make int() raise.
        digits = (value.lstrip("0") or "0") if isinstance(value, str) and re.fullmatch(r"[0-9]+", value) else None
        if digits is not None and node.is_plain:
            return 1  # the loader reported the number as too long (C016)
        if digits in {str(v) for v in SUPPORTED_LANGUAGE_VERSIONS}:
            # The version the user meant is plain; only its type is wrong (`catalyst` is an
            # integer). Say so, and read the playbook as that version.
            self.sink.report(
                WRONG_TYPE,
                f"'catalyst' expects a number, got {kind_of(node)}",
                node.span,
                help=f"remove the quotes: catalyst: {digits}",
            )
            return int(digits)
        if isinstance(value, bool) or not isinstance(value, int):
            self.sink.report(
                LANGUAGE_VERSION,
                f"the language version is a number, not {kind_of(node)}",
                node.span,
                help=f"supported versions: {supported}",
            )
            return 1
        if value not in SUPPORTED_LANGUAGE_VERSIONS:
            self.sink.report(
                LANGUAGE_VERSION,
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
                OUTPUTS_AS_ARTIFACTS,
                "`outputs` as a list of paths is the older form of `artifacts`; it is read as artifacts",
                key.span,
                help="rename `outputs:` to `artifacts:`, and use `outputs:` for typed values (name: type)",
            )
            return (), self._path_items(node, "an artifact", "artifact")
        if not isinstance(node, YMap):
            self.sink.report(
                WRONG_TYPE, f"'outputs' expects a mapping of name: type, got {kind_of(node)}", head_span(node)
            )
            return (), ()
        outputs = []
        for k, v in node.pairs:
            type_name = v.text if isinstance(v, YScalar) else None
            if type_name not in t.OUTPUT_TYPES:
                hint = suggest(type_name or "", t.OUTPUT_TYPES)
                self.sink.report(
                    INVALID_VALUE,
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
                ONE_RUN_PER_INPUT,
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
                    ONE_RUN_PER_INPUT,
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
        node = entry[1]
        if isinstance(node, YSeq):
            return self._path_items(node, f"an item of '{key}'", "artifact" if key == "artifacts" else "entry")
        value = self.values.value(node, t.ArrayT(t.STRING), f"'{key}'")
        return value.items if isinstance(value, ir.ListV) else ()

    def _path_items(self, node: YSeq, where: str, noun: str) -> tuple[ir.Value, ...]:
        """The paths of a list, each a string. A null, a list or a mapping is no path: it
        is reported here, at the entry, rather than found missing when the run ends."""
        items = []
        for item in node.items:
            if isinstance(item, YScalar) and item.value is not None:
                items.append(self.values.value(item, t.STRING, where))
                continue
            self.sink.report(
                WRONG_TYPE,
                f"{where} expects a path (a string), got {kind_of(item)}",
                head_span(item),
                help=f"each {noun} is a path string: write its path (e.g. out/report.md)"
                + (", or remove the empty entry" if isinstance(item, YScalar) else ""),
            )
        return tuple(items)
