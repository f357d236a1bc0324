"""The kai dialect: playbooks of the kai supervisor (`.playbooks/playbooks/*.yaml`), checked
and lowered into the IR (DIALECTS.md Part A).

Reading keeps kai's meaning (names as written, strings as their source text, `{{ name }}`
only in a step's `args`) and reports every mistake in one pass (rules KAI-01 to KAI-19 of
A3.3). The lowering (A5) uses the language's step checks (conditions as `requires:`/`ensures:`),
checkpoints before a step with a `human` policy (`gate_always`), slash-command AI steps
and per-code error policies (triggers); nothing of it is kai-only. Library-level rules (the command files of KAI-13, the index of
KAI-20) are in `checks/kai.py`.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.records import record
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.source import SourceFile, Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span

DIALECT = "kai"
TOP_KEYS = ("name", "description", "version", "args", "steps")
ARG_KEYS = ("name", "description", "required")
STEP_KEYS = (
    "id",
    "command",
    "args",
    "autonomy",
    "error_policy",
    "preconditions",
    "postconditions",
    "escalation_triggers",
    "parallel_group",
    "model",
)
REQUIRED_STEP_KEYS = ("id", "command", "autonomy", "error_policy")
AUTONOMY = ("auto", "gate_on_breaking", "gate_always", "skip")
ERROR_POLICIES = ("stop", "retry_once", "gate")
MODELS = ("opus", "sonnet", "haiku")
TRIGGERS = ("postcondition_fail", "verdict_fail", "agreement_breaking", "subagent_error")
CONDITIONS = (
    "spec_exists",
    "plan_exists",
    "tasks_exists",
    "agreement_exists",
    "agreement_pass",
    "qa_plan_exists",
    "qa_verdict_pass",
    "pr_created",
)
#: Playbook names and step ids (kai's own pattern: a leading digit or hyphen is allowed).
KAI_NAME = re.compile(r"^[a-z0-9-]+$")
#: An arg name a `{{ }}` can name.
ARG_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
COMMAND = re.compile(r"^/[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
#: The run's `feature` is one path segment: conditions build paths from it (KAI-21).
FEATURE_PATTERN = r"^(\.{0,2}[A-Za-z0-9_-]|\.\.\.)[A-Za-z0-9._-]*$"

#: The error codes an escalation trigger answers (A5), each handled by a question.
TRIGGER_CODES = {
    "postcondition_fail": ("PostconditionFailed",),
    "verdict_fail": ("VerdictFailed",),
    "agreement_breaking": ("AgreementBreaking",),
    "subagent_error": ("AIAdapterError", "AIAdapterUnavailable", "StepTimeout"),
}
#: Where the agents may write: the project (as in kai), and by name the folders kai's
#: conditions read, which a run creates when missing so that an agent may make files in
#: them (a program's confinement covers only the entries of the project root that exist).
GRANTS = ("**", "specs/**", ".agreements/**", ".qa/**")
#: What the agent of a step may do: everything, as in kai (read, write, run programs).
AGENT_TOOLS = ("read", "write", "edit", "shell")
#: The native step keys and actions that make a kai-shaped file also read as native.
NATIVE_STEP_KEYS = ("name", "condition", "errorPolicy", "timeout", "checkpoint", "writes", "isolated")


# -- what a kai file says ----------------------------------------------------------------------


@record
class Named:
    """A string value with where it was written."""

    text: str
    span: Span


@record
class KaiArg:
    name: str
    description: str
    required: bool
    span: Span


@record
class KaiStep:
    id: Optional[Named]
    command: Optional[Named]
    args: Optional[YScalar]
    autonomy: Optional[Named]
    error_policy: Optional[Named]
    preconditions: tuple[Named, ...]
    postconditions: tuple[Named, ...]
    triggers: tuple[Named, ...]
    group: Optional[Named]
    model: Optional[Named]
    #: The keys written on the step (for the rules about `skip` steps).
    keys: dict
    span: Span

    @property
    def skipped(self) -> bool:
        return self.autonomy is not None and self.autonomy.text == "skip"


@record
class KaiDocument:
    name: Optional[Named]
    description: str
    version: str
    args: tuple[KaiArg, ...]
    steps: tuple[KaiStep, ...]
    span: Span


# -- recognition -------------------------------------------------------------------------------


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
            "C900",
            f"this file could be a kai playbook or a native one (the step key '{native.text}' is native); it is read as native",
            native.span,
            help="move it to .playbooks/playbooks/ to have it read as kai, or give it `owner:` and native steps",
        )
        return False
    return True


def _is_action(key: str) -> bool:
    from catalyst_dsl.actions.catalog import builtin_catalog

    return key in builtin_catalog()


# -- reading -----------------------------------------------------------------------------------


class Reader:
    """Reads a kai document, reporting every mistake into the sink (A3.3)."""

    def __init__(self, source: SourceFile, sink: DiagnosticSink) -> None:
        self.source = source
        self.sink = sink

    def document(self, root: YNode | None) -> KaiDocument | None:
        if root is None or (isinstance(root, YScalar) and root.is_plain and root.text == "" and root.tag is None):
            self.sink.report(
                "C014",
                "the file is empty",
                self.source.span(0),
                help="a kai playbook needs name, description, version, args and steps",
            )
            return None
        if not isinstance(root, YMap):
            self.sink.report(
                "C201",
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
                "C303",
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

    # -- pieces ------------------------------------------------------------------------------

    def _keys(self, node: YMap, allowed: tuple[str, ...], where: str) -> None:
        for key, _ in node.pairs:
            if key.text not in allowed:
                self.sink.report(
                    "C202",
                    f"unknown key '{key.text}' {where}",
                    key.span,
                    help=suggest(key.text, allowed) or f"the keys here are: {', '.join(allowed)}",
                )

    def _text(self, node: YMap, key: str, where: str, *, required: bool) -> Named | None:
        """A string key as kai reads it: the scalar's text as written (`1.0` stays `1.0`)."""
        value = node.get(key)
        if value is None:
            if required:
                self.sink.report(
                    "C203", f"{where} is missing the required key '{key}'", head_span(node), help=f"add `{key}:`"
                )
            return None
        if not isinstance(value, YScalar):
            self.sink.report(
                "C302",
                f"'{key}' expects a string, got {kind_of(value)}",
                head_span(value),
                help=f"write one value after `{key}:`",
            )
            return None
        if value.value is None or value.text.strip() == "":
            if required:
                self.sink.report(
                    "C203",
                    f"'{key}' of {where} has no value",
                    node.key_node(key).span,
                    help=f"write the {key.replace('_', ' ')} after `{key}:`",
                )
            return None
        return Named(value.text, value.span)

    def _enum(self, node: YMap, key: str, values: tuple[str, ...], what: str, *, required: bool) -> Named | None:
        named = self._text(node, key, "the step", required=required)
        if named is None:
            return None
        if named.text not in values:
            self.sink.report(
                "C303",
                f"{what} '{named.text}' is not one of {', '.join(values)}",
                named.span,
                help=suggest(named.text, values) or f"use one of: {', '.join(values)}",
            )
            return None
        return named

    def _list(self, node: YMap, key: str, values: tuple[str, ...], what: str) -> tuple[Named, ...]:
        value = node.get(key)
        if value is None or (isinstance(value, YScalar) and value.value is None):
            return ()
        if not isinstance(value, YSeq):
            example = f"[{value.text}]" if isinstance(value, YScalar) else "[a, b]"
            self.sink.report(
                "C302",
                f"'{key}' expects a list of {what}s, got {kind_of(value)}",
                head_span(value),
                help=f"write a list: {key}: {example}",
            )
            return ()
        found: list[Named] = []
        seen: dict[str, Named] = {}
        for item in value.items:
            if not isinstance(item, YScalar) or not isinstance(item.value, str):
                self.sink.report(
                    "C302",
                    f"a {what} in '{key}' is a name, not {kind_of(item)}",
                    head_span(item),
                    help=f"use one of: {', '.join(values)}",
                )
                continue
            if item.text not in values:
                self.sink.report(
                    "C303",
                    f"unknown {what} '{item.text}'",
                    item.span,
                    help=suggest(item.text, values) or f"use one of: {', '.join(values)}",
                )
                continue
            named = Named(item.text, item.span)
            if item.text in seen:
                self.sink.report(
                    "C905",
                    f"the {what} '{item.text}' is listed twice in '{key}'",
                    item.span,
                    labels=[Label(seen[item.text].span, "first listed here")],
                    help="remove the second one",
                )
                continue
            seen[item.text] = named
            found.append(named)
        return tuple(found)

    def _args(self, root: YMap) -> tuple[KaiArg, ...]:
        node = root.get("args")
        if node is None:
            self.sink.report(
                "C906",
                "the playbook has no `args:` list",
                head_span(root),
                help="add `args: []`, or declare the args its steps use (kai's contract asks for the key)",
            )
            return ()
        if isinstance(node, YScalar) and node.value is None:
            return ()
        if not isinstance(node, YSeq):
            self.sink.report(
                "C302",
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
                    "C302",
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
                    "C306",
                    f"the arg '{name.text}' is declared twice",
                    name.span,
                    labels=[Label(seen[name.text].span, "first declared here")],
                    help="remove or rename one of them",
                )
                continue
            if not ARG_REFERENCE.match(name.text):
                self.sink.report(
                    "C907",
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
                "C203",
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
                "C302", f"'required' is true or false, not {kind_of(node)}", node.span, help=f"write `required: {fix}`"
            )
            return None
        self.sink.report(
            "C302",
            f"'required' is true or false, not {kind_of(node)}",
            head_span(node),
            help="write `required: true` or `required: false`",
        )
        return None

    def _steps(self, root: YMap, args: tuple[KaiArg, ...]) -> tuple[KaiStep, ...]:
        node = root.get("steps")
        if node is None:
            self.sink.report(
                "C203",
                "the playbook is missing the required key 'steps'",
                head_span(root),
                help="add `steps:` with at least one step",
            )
            return ()
        if isinstance(node, YScalar) and node.value is None or isinstance(node, YSeq) and not node.items:
            self.sink.report(
                "C204",
                "a playbook needs at least one step",
                root.key_node("steps").span,
                help="add a step with id, command, autonomy and error_policy",
            )
            return ()
        if not isinstance(node, YSeq):
            self.sink.report(
                "C302",
                f"'steps' expects a list of steps, got {kind_of(node)}",
                head_span(node),
                help="write each step as a list item starting with '- id:'",
            )
            return ()
        declared = {a.name: a for a in args}
        # Step ids become step names: two steps with one id are reported on the IR (C411).
        steps = [step for step in (self._step(item, declared) for item in node.items) if step is not None]
        self._groups(steps)
        self._order(steps)
        return tuple(steps)

    def _step(self, node: YNode, declared: dict[str, KaiArg]) -> KaiStep | None:
        if not isinstance(node, YMap):
            self.sink.report(
                "C401",
                f"a step is a mapping of keys (id, command, autonomy, error_policy, …), not {kind_of(node)}",
                head_span(node),
                help="write a step as `- id: \"plan\"` with its keys below it",
            )
            return None
        self._keys(node, STEP_KEYS, "in a step")
        # A required key written with no value is reported by the reading of its value.
        node_keys = {k.text for k, _ in node.pairs}
        for key in REQUIRED_STEP_KEYS:
            if node.get(key) is None:
                self.sink.report(
                    "C203",
                    f"the step is missing the required key '{key}'",
                    head_span(node),
                    help=f"add `{key}:`"
                    + (
                        f" ({', '.join(AUTONOMY if key == 'autonomy' else ERROR_POLICIES)})"
                        if key in ("autonomy", "error_policy")
                        else ""
                    ),
                )
        ident = self._text(node, "id", "the step", required="id" in node_keys)
        if ident is not None and not KAI_NAME.match(ident.text):
            fixed = re.sub(r"[^a-z0-9]+", "-", ident.text.lower()).strip("-")
            self.sink.report(
                "C303",
                f"the step id '{ident.text}' does not match [a-z0-9-]+",
                ident.span,
                help=f"use lower-case letters, digits and '-': {fixed or 'step-1'}",
            )
        command = self._command(node, declared)
        args = self._step_args(node, declared)
        self._templates_outside_args(node, "the step", skip=("args", "command"))
        autonomy = self._enum(node, "autonomy", AUTONOMY, "autonomy", required="autonomy" in node_keys)
        policy = self._enum(node, "error_policy", ERROR_POLICIES, "error_policy", required="error_policy" in node_keys)
        model = self._model(node)
        pre = self._list(node, "preconditions", CONDITIONS, "condition")
        post = self._list(node, "postconditions", CONDITIONS, "condition")
        triggers = self._list(node, "escalation_triggers", TRIGGERS, "trigger")
        group = self._text(node, "parallel_group", "the step", required=False)
        keys = {k.text: k for k, _ in node.pairs}
        step = KaiStep(ident, command, args, autonomy, policy, pre, post, triggers, group, model, keys, head_span(node))
        if not post:
            for trigger in triggers:
                if trigger.text == "postcondition_fail":
                    self.sink.report(
                        "C908",
                        "`postcondition_fail` can never fire: the step has no postconditions",
                        trigger.span,
                        help="add the postconditions it should check, or remove the trigger",
                    )
        if step.skipped:
            for key in ("preconditions", "postconditions", "escalation_triggers", "model", "parallel_group"):
                if key in keys and not _empty(node.get(key)):
                    self.sink.report(
                        "C909",
                        f"'{key}' has no effect on a step whose autonomy is skip",
                        keys[key].span,
                        help="remove it, or change the autonomy",
                    )
        return step

    def _model(self, node: YMap) -> Named | None:
        value = node.get("model")
        if isinstance(value, YScalar) and isinstance(value.value, str) and value.text == "":
            return None  # `model: ""` means the session's default, as in kai
        return self._enum(node, "model", MODELS, "model", required=False)

    def _command(self, node: YMap, declared: dict[str, KaiArg]) -> Named | None:
        command = self._text(node, "command", "the step", required=False)
        if command is None:
            if node.get("command") is not None and isinstance(node.get("command"), YScalar):
                self.sink.report(
                    "C203",
                    "'command' of the step has no value",
                    node.key_node("command").span,
                    help="write the slash command, such as `command: \"/speckit.plan\"`",
                )
            return None
        if COMMAND.match(command.text):
            return command
        if "{{" in command.text:
            names = [m.strip() for m in re.findall(r"\{\{(.*?)\}\}", command.text)]
            unknown = [n for n in names if n not in declared]
            why = "kai does not interpolate `command`"
            if unknown:
                why += (
                    ", and "
                    + ", ".join(f"'{n}'" for n in unknown)
                    + (" is not a declared arg" if len(unknown) == 1 else " are not declared args")
                )
            self.sink.report(
                "C901",
                f"the command '{command.text}' is not a literal slash command: {why}",
                command.span,
                help="write the command as it is (such as /docs.update) and put values in `args:`",
            )
        else:
            self.sink.report(
                "C901",
                f"the command '{command.text}' is not a slash command of the form /namespace.command",
                command.span,
                help="write it like /speckit.plan: '/', then names of letters, digits, '_' or '-' joined by '.'",
            )
        return command

    def _step_args(self, node: YMap, declared: dict[str, KaiArg]) -> YScalar | None:
        value = node.get("args")
        if value is None or isinstance(value, YScalar) and value.value is None:
            return None
        if not isinstance(value, YScalar):
            self.sink.report(
                "C302",
                f"a step's 'args' is the text handed to the command, not {kind_of(value)}",
                head_span(value),
                help="write the args as one string, such as `args: \"{{feature}}\"`",
            )
            return None
        for ref in references(value, self.sink):
            arg = declared.get(ref.name)
            if arg is None:
                self.sink.report(
                    "C501",
                    f"'{ref.name}' is not a declared arg",
                    ref.span,
                    help=suggest(ref.name, declared) or "declare it under `args:`",
                )
            elif not arg.required:
                self.sink.report(
                    "C910",
                    f"the optional arg '{ref.name}' renders as empty text when it is not given",
                    ref.span,
                    help=f"pass it with -i {ref.name}=…, or make it required",
                )
        return value

    def _templates_outside_args(self, node: YMap, where: str, skip: tuple[str, ...] = ("steps", "args")) -> None:
        """KAI-09: kai replaces `{{ }}` only in a step's `args`; anywhere else it stays as written."""
        for key, value in node.pairs:
            if key.text in skip or not isinstance(value, YScalar) or "{{" not in value.text:
                continue
            at = value.text.index("{{")
            self.sink.report(
                "C902",
                f"kai does not replace {{{{ }}}} in '{key.text}' of {where}: it stays as written",
                ScalarMap(value).span(at, at + 2),
                help="only a step's `args:` is interpolated; write the text as it should appear",
            )

    def _groups(self, steps: list[KaiStep]) -> None:
        """KAI-12: the steps of one parallel group are next to each other."""
        first_of: dict[str, int] = {}
        last_of: dict[str, int] = {}
        for index, step in enumerate(steps):
            if step.group is None:
                continue
            name = step.group.text
            if name in last_of and last_of[name] != index - 1:
                first = steps[first_of[name]]
                between = steps[last_of[name] + 1]
                between_name = f"'{between.id.text}'" if between.id else "another step"
                self.sink.report(
                    "C903",
                    f"parallel_group '{name}' is also used on line {first.group.span.line}, but step {between_name} (line {between.span.line}) sits between them",
                    step.group.span,
                    labels=[Label(first.group.span, "first used here")],
                    help="put the steps of one group next to each other, or give them different groups",
                )
            first_of.setdefault(name, index)
            last_of[name] = index

    def _order(self, steps: list[KaiStep]) -> None:
        """KAI-16: a precondition that only a later step produces."""
        first_producer: dict[str, int] = {}
        for index, step in enumerate(steps):
            for condition in step.postconditions:
                first_producer.setdefault(condition.text, index)
        for index, step in enumerate(steps):
            for condition in step.preconditions:
                first = first_producer.get(condition.text)
                if first is not None and first > index:
                    later = steps[first]
                    who = f"'{later.id.text}'" if later.id else "a later step"
                    self.sink.report(
                        "C904",
                        f"the precondition '{condition.text}' is produced only by a later step ({who})",
                        condition.span,
                        help="move the step that produces it before this one",
                    )


@record
class Reference:
    name: str
    span: Span
    start: int  # in the scalar's text
    end: int


def references(node: YScalar, sink: DiagnosticSink | None) -> list[Reference]:
    """The `{{ name }}` of a kai `args` string; unclosed and nested braces go to `sink` (KAI-19).

    Only `{{` and `}}` are special: `$` or `\\` before them is plain text, as in kai.
    """
    text = node.text
    smap = ScalarMap(node)
    found: list[Reference] = []
    i = text.find("{{")
    while i != -1:
        close = text.find("}}", i + 2)
        nested = text.find("{{", i + 2)
        if close == -1:
            if sink is not None:
                sink.report("C104", "this {{ is never closed", smap.span(i, i + 2), help="close it with }}")
            break
        if nested != -1 and nested < close:
            if sink is not None:
                sink.report(
                    "C105",
                    "{{ cannot start inside another {{ }}",
                    smap.span(nested, nested + 2),
                    help="close the first reference before opening another",
                )
            i = text.find("{{", close + 2)
            continue
        inner = text[i + 2 : close]
        name = inner.strip()
        lead = len(inner) - len(inner.lstrip())
        at = i + 2 + lead
        found.append(
            Reference(name, smap.span(at, at + max(len(name), 1)) if name else smap.span(i, close + 2), i, close + 2)
        )
        i = text.find("{{", close + 2)
    return found


def _empty(node: YNode | None) -> bool:
    return (
        node is None
        or isinstance(node, YScalar)
        and (node.value is None or node.text == "")
        or isinstance(node, YSeq)
        and not node.items
    )


# -- lowering ----------------------------------------------------------------------------------


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


def lower(document: KaiDocument, source: SourceFile, sink: DiagnosticSink) -> ir.Playbook:
    inputs = _inputs(document)
    declared = {i.name for i in inputs}
    lowered = [_step(step, declared) for step in document.steps]
    steps = _parallel(document.steps, lowered)
    at = document.name.span if document.name is not None else document.span
    # In its folder kai addresses a playbook by its file stem and never compares it with
    # `name` (A1); a kai file elsewhere is named by `name`, like a native one.
    stem = os.path.basename(source.path).rsplit(".", 1)[0]
    in_folder = _in_kai_folder(source.path)
    written = document.name.text if document.name is not None and KAI_NAME.match(document.name.text) else None
    name = stem if in_folder or written is None else written
    if in_folder and written is not None and written != stem:
        sink.report(
            "C803",
            f"the playbook '{document.name.text}' is in the file '{os.path.basename(source.path)}'",
            document.name.span,
            help=f"kai runs it as '{stem}': rename the file to {document.name.text}.yaml, or the playbook to '{stem}'",
        )
    sink.report(
        "C911",
        "the steps' agents may write anywhere in the project (kai gives them every tool): the playbook is granted the project root",
        at,
        help="this is what kai does; review the steps' commands before running it",
    )
    return ir.Playbook(
        name=name,
        description=document.description,
        owner=None,
        dialect=DIALECT,
        file=source.path,
        inputs=inputs,
        allowed_write_paths=tuple(ir.Lit(p, span=at) for p in GRANTS),
        steps=steps,
        one_run_per=("feature",),
        span=document.span,
    )


def _in_kai_folder(path: str) -> bool:
    from catalyst_dsl.dialects import registry

    dialect = registry.by_place(path)
    return dialect is not None and dialect.name == DIALECT


def _inputs(document: KaiDocument) -> tuple[ir.InputDecl, ...]:
    feature_rule = ir.Rule(
        "regex",
        FEATURE_PATTERN,
        "InvalidFeature",
        "the feature is one path segment: letters, digits, '.', '_' and '-', not '.' or '..'",
    )
    inputs = []
    for arg in document.args:
        rules = (feature_rule,) if arg.name == "feature" else ()
        # `feature` roots every condition's path: the run always needs it (A4.1).
        required = arg.required or arg.name == "feature"
        # An optional arg that is not given is empty text in the command (A4.1).
        default = None if required else ir.Lit("", span=arg.span)
        inputs.append(
            ir.InputDecl(
                arg.name, "string", arg.description or None, required, default, validation=rules, span=arg.span
            )
        )
    if all(a.name != "feature" for a in document.args):
        inputs.append(
            ir.InputDecl(
                "feature",
                "string",
                "the feature the run works on (kai's implicit argument)",
                True,
                validation=(feature_rule,),
                span=document.span,
            )
        )
    return tuple(inputs)


class _Template:
    """Builds an `ir.Tmpl` piece by piece: text, and references to inputs by name."""

    def __init__(self) -> None:
        self.parts: list[ast.Part] = []
        self.text = ""

    def add_text(self, piece: str) -> "_Template":
        if piece:
            self.parts.append(ast.TextPart(piece, start=len(self.text), end=len(self.text) + len(piece)))
            self.text += piece
        return self

    def add_ref(self, name: str) -> "_Template":
        written = "{{" + name + "}}"
        ref = ast.PathRef(name, (), start=0, end=len(name))
        self.parts.append(
            ast.RefPart(ref, start=len(self.text), end=len(self.text) + len(written), base=len(self.text) + 2)
        )
        self.text += written
        return self

    def done(self, span: Span | None, expected=None) -> ir.Tmpl:
        return ir.Tmpl(self.text, tuple(self.parts), span=span, expected=expected)


def _feature_path(before: str, after: str, span: Span | None) -> ir.Tmpl:
    """`before{{feature}}after`: a path of a condition (A4.4), rooted at the run's feature."""
    from catalyst_dsl.ir import types as t

    return _Template().add_text(before).add_ref("feature").add_text(after).done(span, t.STRING)


#: `verdict:` followed by PASS or FAIL as a word (A4.4: not PASSED, not PASS_WITH…).
VERDICT = r"verdict:[ \t]*{}\b"


def _exists(before: str, after: str, span: Span | None) -> ir.Check:
    return ir.Check(
        "file-exists", ir.MapV((ir.Entry("path", _feature_path(before, after, span), span=span),), span=span), span=span
    )


def _contains(before: str, after: str, pattern: str, span: Span | None) -> ir.Check:
    entries = (
        ir.Entry("path", _feature_path(before, after, span), span=span),
        ir.Entry("regex", ir.Lit(pattern, span=span), span=span),
    )
    return ir.Check("file-contains", ir.MapV(entries, span=span), span=span)


def _verdict_says(word: str, span: Span | None) -> ir.Check:
    """The QA verdict says `word`: `verdict.yaml`, or `verdict.md` when there is no
    `verdict.yaml` (A4.4, K-D16)."""
    pattern = VERDICT.format(word)
    fallback = ir.Check(
        "all",
        ir.MapV(()),
        span=span,
        checks=(
            ir.Check("not", ir.MapV(()), span=span, checks=(_exists(".qa/", "/verdict.yaml", span),)),
            _contains(".qa/", "/verdict.md", pattern, span),
        ),
    )
    return ir.Check("any", ir.MapV(()), span=span, checks=(_contains(".qa/", "/verdict.yaml", pattern, span), fallback))


def condition_check(name: str, span: Span | None) -> ir.Check | None:
    """The predicate of one kai condition (A4.4), or None for a name kai does not know
    (reported by the reader)."""
    if name == "spec_exists":
        return _exists("specs/", "/spec.md", span)
    if name == "plan_exists":
        return _exists("specs/", "/plan.md", span)
    if name == "tasks_exists":
        return _exists("specs/", "/tasks.md", span)
    if name == "agreement_exists":
        return _exists(".agreements/", "/agreement.yaml", span)
    if name == "agreement_pass":
        return _contains(".agreements/", "/check-report.md", VERDICT.format("PASS"), span)
    if name == "qa_plan_exists":
        return ir.Check(
            "any",
            ir.MapV(()),
            span=span,
            checks=(_exists(".qa/", "/test-plan.md", span), _exists(".qa/", "/_index.yaml", span)),
        )
    if name == "qa_verdict_pass":
        return _verdict_says("PASS", span)
    if name == "pr_created":
        from catalyst_dsl.ir import types as t

        # `--head=F` is one argument: a feature starting with `-` cannot be read as an option.
        argv = (
            ir.Lit("gh"),
            ir.Lit("pr"),
            ir.Lit("list"),
            _Template().add_text("--head=").add_ref("feature").done(span, t.STRING),
            ir.Lit("--json"),
            ir.Lit("number"),
            ir.Lit("--jq"),
            ir.Lit("length"),
        )
        entries = (
            ir.Entry("argv", ir.ListV(argv, span=span), span=span),
            ir.Entry("match", ir.Lit(r"^[1-9][0-9]*\s*$", span=span), span=span),
        )
        return ir.Check("command-output", ir.MapV(entries, span=span), span=span)
    return None


def _breaking(span: Span | None) -> ir.Check:
    """The agreement check ran and did not pass (A4.4's `breaking`)."""
    return ir.Check(
        "all",
        ir.MapV(()),
        span=span,
        checks=(
            _exists(".agreements/", "/check-report.md", span),
            ir.Check("not", ir.MapV(()), span=span, checks=(condition_check("agreement_pass", span),)),
        ),
    )


def _not(check: ir.Check, code: str | None = None) -> ir.Check:
    return ir.Check("not", ir.MapV(()), span=check.span, checks=(check,), code=code)


def _requires(step: KaiStep) -> ir.Checks | None:
    checks = tuple(c for n in step.preconditions if (c := condition_check(n.text, n.span)) is not None)
    return ir.Checks(checks, "PreconditionFailed", span=step.preconditions[0].span) if checks else None


def _ensures(step: KaiStep) -> ir.Checks | None:
    """The postconditions, and before them the signals that name a failure more precisely
    (A4.8: `VerdictFailed`, `AgreementBreaking` before `PostconditionFailed`).

    A signal listed as a trigger fails the step only when a postcondition fails too (a
    step fails by its agent or its postconditions, never by a signal alone): `any(all
    postconditions, not signal)`. `gate_on_breaking` asks whenever the agreement breaks,
    failed or not (A4.3 step 6)."""
    posts = tuple(c for n in step.postconditions if (c := condition_check(n.text, n.span)) is not None)
    span = step.postconditions[0].span if step.postconditions else step.span
    checks: list[ir.Check] = []
    if step.autonomy is not None and step.autonomy.text == "gate_on_breaking":
        checks.append(_not(_breaking(step.autonomy.span), "AgreementBreaking"))
    triggers = {t.text for t in step.triggers}
    if posts:
        everything = ir.Check("all", ir.MapV(()), span=span, checks=posts)
        signals = (
            ("verdict_fail", "VerdictFailed", _verdict_says("FAIL", span)),
            ("agreement_breaking", "AgreementBreaking", _breaking(span)),
        )
        for trigger, code, signal in signals:
            if trigger in triggers:
                checks.append(ir.Check("any", ir.MapV(()), span=span, checks=(everything, _not(signal)), code=code))
    checks.extend(posts)
    # Only postconditions say that an interrupted step got its work done (A4.11, K-D11).
    return ir.Checks(tuple(checks), "PostconditionFailed", span=span, recovers=bool(posts)) if checks else None


def _step(step: KaiStep, declared: set[str]) -> ir.Step:
    from catalyst_dsl.ir import types as t

    span = step.span
    entries = [
        ir.Entry("prompt", _Template().add_text("Feature: ").add_ref("feature").done(span, t.STRING), span=span),
        ir.Entry("tools", ir.ListV(tuple(ir.Lit(tool) for tool in AGENT_TOOLS)), span=span),
    ]
    if step.command is not None and COMMAND.match(step.command.text):  # else reported by the reader
        entries.insert(0, ir.Entry("command", _command(step, declared), span=step.command.span))
    if step.model is not None:
        entries.append(ir.Entry("model", ir.Lit(step.model.text, span=step.model.span), span=step.model.span))
    condition = ir.Lit(False, span=step.autonomy.span) if step.skipped else None
    gate = None
    if step.autonomy is not None and step.autonomy.text == "gate_always":
        # The author asked for a person before this step: autonomous mode does not answer (A4.5, C-3).
        gate = ir.Gate(
            "before", options=ir.GATE_OPTIONS, policy=ir.Lit("human", span=step.autonomy.span), span=step.autonomy.span
        )
    return ir.Step(
        action="ai-prompt",
        config=ir.MapV(tuple(entries), span=span),
        name=step.id.text if step.id else None,
        condition=condition,
        error_policy=_policy(step),
        gate=gate,
        approved=True,
        requires=_requires(step),
        ensures=_ensures(step),
        span=span,
        action_span=step.command.span if step.command else span,
        name_span=step.id.span if step.id else None,
    )


def _command(step: KaiStep, declared: set[str]) -> ir.Tmpl:
    """`<command> <args>` (A4.6): the args' `{{ name }}` as references to the inputs."""
    from catalyst_dsl.ir import types as t

    built = _Template().add_text(step.command.text)
    args = step.args.text.strip() if step.args is not None else ""
    if args:
        built.add_text(" ")
        offset = len(step.args.text) - len(step.args.text.lstrip())
        cursor = 0
        for ref in references(step.args, None):
            start, end = ref.start - offset, ref.end - offset
            built.add_text(args[cursor:start])
            # An undeclared name is reported already; it stays as text, as kai leaves it.
            built.add_ref(ref.name) if ref.name in declared else built.add_text(args[start:end])
            cursor = end
        built.add_text(args[cursor:])
    # At the command, where a missing command file is reported (C635).
    return built.done(step.command.span, t.STRING)


def _policy(step: KaiStep) -> ir.ErrorPolicy | None:
    """A false precondition pauses the run, outside the error policy (A4.3 step 2); the
    triggers come before the policy (A4.8); `gate_on_breaking` always asks."""
    if step.error_policy is None:
        return None
    span = step.error_policy.span
    default = {
        "stop": ir.PolicyAction("Stop", span=span),
        "retry_once": ir.PolicyAction("Stop", 1, span=span),
        "gate": ir.PolicyAction("Inquire", span=span),
    }[step.error_policy.text]
    by_code = [("PreconditionFailed", ir.PolicyAction("Suspend", span=span))]
    if step.autonomy is not None and step.autonomy.text == "gate_on_breaking":
        by_code.append(("AgreementBreaking", ir.PolicyAction("Inquire", span=step.autonomy.span)))
    by_code += [
        (code, ir.PolicyAction("Inquire", span=t.span)) for t in step.triggers for code in TRIGGER_CODES[t.text]
    ]
    return ir.ErrorPolicy(default=default, by_code=tuple(by_code), span=span)


def _parallel(kai_steps: tuple[KaiStep, ...], lowered: list[ir.Step]) -> tuple[ir.Step, ...]:
    """A maximal run of consecutive steps with one `parallel_group` becomes a `parallel` step (A4.7)."""
    result: list[ir.Step] = []
    index = 0
    while index < len(lowered):
        group = kai_steps[index].group
        end = index + 1
        while (
            group is not None
            and end < len(lowered)
            and kai_steps[end].group is not None
            and kai_steps[end].group.text == group.text
        ):
            end += 1
        if end - index > 1:
            members = tuple(lowered[index:end])
            result.append(
                ir.Step(
                    action="parallel",
                    config=ir.MapV(
                        (ir.Entry("steps", ir.StepsV(members, span=group.span), span=group.span),), span=group.span
                    ),
                    span=group.span,
                    action_span=group.span,
                )
            )
        else:
            result.append(lowered[index])
        index = end
    return tuple(result)
