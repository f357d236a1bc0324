"""Reading a kai file: whether a YAML file found elsewhere is kai's (`sniff`), the
document with its findings (`Reader`), and the registry's `compile_document`.
"""

from __future__ import annotations

import re

from catalyst_dsl.diagnostics.ids import (
    DIALECT_AMBIGUOUS,
    DUPLICATE_INPUT,
    EMPTY_FILE,
    INVALID_VALUE,
    KAI_ARG_NAME,
    KAI_NO_ARGS,
    MISSING_KEY,
    NOT_A_PLAYBOOK,
    WRONG_TYPE,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.kai.lowering import lower
from catalyst_dsl.dialects.kai.model import (
    ARG_KEYS,
    ARG_REFERENCE,
    KAI_NAME,
    NATIVE_STEP_KEYS,
    STEP_KEYS,
    TOP_KEYS,
    KaiArg,
    KaiDocument,
)
from catalyst_dsl.dialects.kai.step_reading import StepReading
from catalyst_dsl.dialects.values import kind_of
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


def sniff(root: YNode, sink: DiagnosticSink) -> bool:
    """Whether a YAML file found outside `.playbooks/playbooks/` is a kai playbook (A1).

    A file that is also written like a native playbook (a step with a native action or
    step key) is reported as C900 and left to the native language.
    """
    if not isinstance(root, YMap):
        return False
    keys = {k.text for k, _ in root.pairs}
    if not keys <= set(TOP_KEYS) or "version" not in keys or "steps" not in keys:
        return False
    steps = root.get("steps")
    items = [i for i in steps.items if isinstance(i, YMap)] if isinstance(steps, YSeq) else []
    if not any(i.get("autonomy") is not None or i.get("error_policy") is not None for i in items):
        return False
    native = next(
        (
            k
            for i in items
            for k, _ in i.pairs
            if k.text in NATIVE_STEP_KEYS or (k.text not in STEP_KEYS and _is_action(k.text))
        ),
        None,
    )
    if native is not None:
        sink.report(
            DIALECT_AMBIGUOUS,
            f"this file could be a kai playbook or a native one (the step key '{native.text}' is native);"
            " it is read as native",
            native.span,
            help="move it to .playbooks/playbooks/ to have it read as kai, or give it `owner:` and native steps",
        )
        return False
    return True


def _is_action(key: str) -> bool:
    from catalyst_dsl.actions.installed import builtin_catalog

    return key in builtin_catalog()


class Reader(StepReading):
    """Reads a kai document, reporting every mistake into the sink (A3.3)."""

    def document(self, root: YNode | None) -> KaiDocument | None:
        if root is None or (isinstance(root, YScalar) and root.is_plain and root.text == "" and root.tag is None):
            self.sink.report(
                EMPTY_FILE,
                "the file is empty",
                self.source.span(0),
                help="a kai playbook needs name, description, version, args and steps",
            )
            return None
        if not isinstance(root, YMap):
            self.sink.report(
                NOT_A_PLAYBOOK,
                f"a kai playbook is a mapping of keys, not {kind_of(root)}",
                head_span(root),
                help="start the file with `name:`, `description:`, `version:`, `args:` and `steps:`",
            )
            return None
        self._keys(root, TOP_KEYS, "at the top level")
        self._templates_outside_args(root, "the playbook")
        name = self._text(root, "name", "the playbook", required=True)
        if name is not None and not KAI_NAME.match(name.text):
            fixed = re.sub(r"[^a-z0-9]+", "-", name.text.lower()).strip("-")
            self.sink.report(
                INVALID_VALUE,
                f"the playbook name '{name.text}' does not match [a-z0-9-]+",
                name.span,
                help=f"use lower-case letters, digits and '-': {fixed or 'my-workflow'}",
            )
        description = self._text(root, "description", "the playbook", required=True)
        version = self._text(root, "version", "the playbook", required=True)
        args = self._args(root)
        steps = self._steps(root, args)
        return KaiDocument(
            name, description.text if description else "", version.text if version else "", args, steps, root.span
        )

    def _args(self, root: YMap) -> tuple[KaiArg, ...]:
        node = root.get("args")
        if node is None:
            self.sink.report(
                KAI_NO_ARGS,
                "the playbook has no `args:` list",
                head_span(root),
                help="add `args: []`, or declare the args its steps use (kai's contract asks for the key)",
            )
            return ()
        if isinstance(node, YScalar) and node.value is None:
            return ()
        if not isinstance(node, YSeq):
            self.sink.report(
                WRONG_TYPE,
                f"'args' expects a list of args, got {kind_of(node)}",
                head_span(node),
                help="write `args: []`, or `- name: feature` items with description and required",
            )
            return ()
        args: list[KaiArg] = []
        seen: dict[str, KaiArg] = {}
        for item in node.items:
            if not isinstance(item, YMap):
                what = f"the string '{item.text}'" if isinstance(item, YScalar) else kind_of(item)
                name = item.text if isinstance(item, YScalar) else "feature"
                self.sink.report(
                    WRONG_TYPE,
                    f"an arg is a mapping with name, description and required, not {what}",
                    head_span(item),
                    help=f"write `- name: \"{name}\"` with `description:` and `required:` below it",
                )
                continue
            self._keys(item, ARG_KEYS, "in an arg")
            name = self._text(item, "name", "the arg", required=True)
            description = self._text(item, "description", "the arg", required=True)
            required = self._required(item)
            if name is None:
                continue
            arg = KaiArg(name.text, description.text if description else "", required is not False, name.span)
            if name.text in seen:
                self.sink.report(
                    DUPLICATE_INPUT,
                    f"the arg '{name.text}' is declared twice",
                    name.span,
                    labels=[Label(seen[name.text].span, "first declared here")],
                    help="remove or rename one of them",
                )
                continue
            if not ARG_REFERENCE.match(name.text):
                self.sink.report(
                    KAI_ARG_NAME,
                    f"the arg name '{name.text}' cannot be named in {{{{ }}}}",
                    name.span,
                    help="start it with a letter or '_' and use letters, digits, '_' and '-'",
                )
            seen[name.text] = arg
            args.append(arg)
        return tuple(args)

    def _required(self, item: YMap) -> bool | None:
        node = item.get("required")
        if node is None:
            self.sink.report(
                MISSING_KEY,
                "the arg is missing the required key 'required'",
                head_span(item),
                help="add `required: true` or `required: false`",
            )
            return None
        if isinstance(node, YScalar):
            if node.text in ("true", "false") and (isinstance(node.value, bool) or not node.is_plain):
                return node.text == "true"
            fix = (
                "true"
                if isinstance(node.value, bool) and node.value or node.text.lower() in ("yes", "on", "y", "1")
                else "false"
            )
            self.sink.report(
                WRONG_TYPE,
                f"'required' is true or false, not {kind_of(node)}",
                node.span,
                help=f"write `required: {fix}`",
            )
            return None
        self.sink.report(
            WRONG_TYPE,
            f"'required' is true or false, not {kind_of(node)}",
            head_span(node),
            help="write `required: true` or `required: false`",
        )
        return None


def compile_document(source: SourceFile, root: YNode | None, sink: DiagnosticSink, catalog=None) -> ir.Playbook | None:
    document = Reader(source, sink).document(root)
    if document is None:
        return None
    return lower(document, source, sink)


def read(source: SourceFile) -> KaiDocument | None:
    """The document of a kai file, without its findings (for the library checks and the
    index, which need what the file says: its `name`, its commands, its steps)."""
    from catalyst_dsl.syntax.yaml_loader import load_yaml

    scratch = DiagnosticSink()
    return Reader(source, scratch).document(load_yaml(source, scratch))
