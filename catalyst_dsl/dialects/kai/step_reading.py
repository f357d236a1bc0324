"""The steps of a kai playbook, read: each step's keys, command, args and conditions,
then the rules across steps (parallel groups, the order of what they produce).
"""

from __future__ import annotations

import re

from catalyst_dsl.diagnostics.ids import (
    INVALID_VALUE,
    KAI_COMMAND_FORM,
    KAI_CONDITION_ORDER,
    KAI_OPTIONAL_ARG,
    KAI_PARALLEL_GROUP_SPLIT,
    KAI_SKIP_IGNORES,
    KAI_TRIGGER_NEVER_FIRES,
    MISSING_KEY,
    NO_STEPS,
    STEP_NOT_MAPPING,
    UNDEFINED_REFERENCE,
    WRONG_TYPE,
)
from catalyst_dsl.diagnostics.model import Label
from catalyst_dsl.dialects.kai.model import (
    AUTONOMY,
    COMMAND,
    CONDITIONS,
    ERROR_POLICIES,
    KAI_NAME,
    MODELS,
    REQUIRED_STEP_KEYS,
    STEP_KEYS,
    TRIGGERS,
    KaiArg,
    KaiStep,
    Named,
)
from catalyst_dsl.dialects.kai.pieces import Pieces
from catalyst_dsl.dialects.kai.templates import references
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


class StepReading(Pieces):
    """A kai playbook's `steps:`."""

    def _steps(self, root: YMap, args: tuple[KaiArg, ...]) -> tuple[KaiStep, ...]:
        node = root.get("steps")
        if node is None:
            self.sink.report(
                MISSING_KEY,
                "the playbook is missing the required key 'steps'",
                head_span(root),
                help="add `steps:` with at least one step",
            )
            return ()
        if isinstance(node, YScalar) and node.value is None or isinstance(node, YSeq) and not node.items:
            self.sink.report(
                NO_STEPS,
                "a playbook needs at least one step",
                root.key_node("steps").span,
                help="add a step with id, command, autonomy and error_policy",
            )
            return ()
        if not isinstance(node, YSeq):
            self.sink.report(
                WRONG_TYPE,
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
                STEP_NOT_MAPPING,
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
                    MISSING_KEY,
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
                INVALID_VALUE,
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
                        KAI_TRIGGER_NEVER_FIRES,
                        "`postcondition_fail` can never fire: the step has no postconditions",
                        trigger.span,
                        help="add the postconditions it should check, or remove the trigger",
                    )
        if step.skipped:
            for key in ("preconditions", "postconditions", "escalation_triggers", "model", "parallel_group"):
                if key in keys and not _empty(node.get(key)):
                    self.sink.report(
                        KAI_SKIP_IGNORES,
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
                    MISSING_KEY,
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
                KAI_COMMAND_FORM,
                f"the command '{command.text}' is not a literal slash command: {why}",
                command.span,
                help="write the command as it is (such as /docs.update) and put values in `args:`",
            )
        else:
            self.sink.report(
                KAI_COMMAND_FORM,
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
                WRONG_TYPE,
                f"a step's 'args' is the text handed to the command, not {kind_of(value)}",
                head_span(value),
                help="write the args as one string, such as `args: \"{{feature}}\"`",
            )
            return None
        for ref in references(value, self.sink):
            arg = declared.get(ref.name)
            if arg is None:
                self.sink.report(
                    UNDEFINED_REFERENCE,
                    f"'{ref.name}' is not a declared arg",
                    ref.span,
                    help=suggest(ref.name, declared) or "declare it under `args:`",
                )
            elif not arg.required:
                self.sink.report(
                    KAI_OPTIONAL_ARG,
                    f"the optional arg '{ref.name}' renders as empty text when it is not given",
                    ref.span,
                    help=f"pass it with -i {ref.name}=…, or make it required",
                )
        return value

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
                    KAI_PARALLEL_GROUP_SPLIT,
                    f"parallel_group '{name}' is also used on line {first.group.span.line},"
                    f" but step {between_name} (line {between.span.line}) sits between them",
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
                        KAI_CONDITION_ORDER,
                        f"the precondition '{condition.text}' is produced only by a later step ({who})",
                        condition.span,
                        help="move the step that produces it before this one",
                    )


def _empty(node: YNode | None) -> bool:
    return (
        node is None
        or isinstance(node, YScalar)
        and (node.value is None or node.text == "")
        or isinstance(node, YSeq)
        and not node.items
    )
