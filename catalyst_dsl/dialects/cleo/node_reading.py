"""A cantbook's `nodes:` read: each node's keys for its type, contracts, iteration caps,
and what agentic and deterministic nodes take (B2.3-B2.6).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Optional

from catalyst_dsl.diagnostics.ids import (
    CLEO_COMMAND_FORM,
    CLEO_CONTEXT_FILE_OUTSIDE,
    CLEO_DENIED_COMMAND,
    CLEO_NODE_ID_STYLE,
    CLEO_NO_EFFECT,
    CLEO_TIMEOUT,
    CLEO_UNKNOWN_SCHEMA,
    CLEO_ZERO_ITERATIONS,
    DUPLICATE_STEP_NAME,
    INVALID_VALUE,
    MISSING_KEY,
    NO_STEPS,
    UNKNOWN_KEY,
    WRONG_TYPE,
)
from catalyst_dsl.diagnostics.model import Label
from catalyst_dsl.dialects.cleo.model import Node
from catalyst_dsl.dialects.cleo.shapes import Shapes
from catalyst_dsl.dialects.cleo.vocabulary import (
    COMMON_KEYS,
    DENIED_COMMANDS,
    ENSURES_KEYS,
    MISPLACED,
    NODE_ID,
    NODE_TYPES,
    ON_FAILURE_KEYS,
    POLICIES,
    REQUIRES_KEYS,
    ROLES,
    SCHEMAS,
    TYPE_KEYS,
)
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.syntax.source import Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


class NodeReading(Shapes):
    """The nodes of a cantbook."""

    def nodes(self, root: YMap, entry) -> list[Node]:
        if entry is None:
            self.sink.report(
                MISSING_KEY,
                "the required key 'nodes' is missing",
                head_span(root),
                help="add `nodes:` with at least one node",
            )
            return []
        key, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(
                WRONG_TYPE,
                f"`nodes` is a list, not {kind_of(value)}",
                head_span(value),
                help="write each node as `- id: x`",
            )
            return []
        if not value.items:
            self.sink.report(
                NO_STEPS,
                "a cantbook needs at least one node; `nodes` is empty",
                key.span,
                help="add a node such as `- id: build` with `type: deterministic` and `command:`",
            )
        result: list[Node] = []
        seen: dict[str, Span] = {}
        for item in value.items:
            node = self.node(item, len(result))
            if node is None:
                continue
            if node.id in seen:
                self.sink.report(
                    DUPLICATE_STEP_NAME,
                    f"two nodes have the id '{node.id}'",
                    node.id_span,
                    labels=[Label(seen[node.id], "first used here")],
                    help="give each node its own id",
                )
                continue
            seen[node.id] = node.id_span
            result.append(node)
        return result

    def node(self, item: YNode, index: int) -> Optional[Node]:
        if not isinstance(item, YMap):
            self.sink.report(
                WRONG_TYPE,
                f"a node is a mapping, not {kind_of(item)}",
                head_span(item),
                help="write `- id: x` and `type:` below it",
            )
            return None
        given = {k.text: (k, v) for k, v in item.pairs}
        type_ = self.enum(given.get("type"), "type", NODE_TYPES) if "type" in given else None
        if "type" not in given:
            self.sink.report(
                MISSING_KEY,
                "a node needs `type`",
                head_span(item),
                help=f"add `type:` with one of {', '.join(NODE_TYPES)}",
            )
        own = TYPE_KEYS.get(type_, ()) if type_ else tuple(k for keys in TYPE_KEYS.values() for k in keys)
        elsewhere = {
            k: f"a key of {t} nodes; this node is {type_}"
            for t, keys in TYPE_KEYS.items()
            for k in keys
            if type_ and t != type_
        }
        keys = self._node_keys(item, (*COMMON_KEYS, *own), elsewhere)
        node_id = self.text(keys.get("id"), "id", required_in=item)
        if node_id is None:
            return None
        id_span = keys["id"][1].span
        if not NODE_ID.match(node_id):
            self.sink.report(
                CLEO_NODE_ID_STYLE,
                f"the node id '{node_id}' cannot be used in references",
                id_span,
                help="use letters, digits, '_' and '-', starting with a letter or '_'",
            )
        self.text(keys.get("description"), "description", non_empty=False)
        node = Node(index, node_id, type_, item, id_span, keys)
        node.depends = self.strings(keys.get("depends"), "depends")
        self._contracts(node, type_)
        if type_ == "agentic":
            self._agentic(node, item)
        elif type_ == "deterministic":
            self._deterministic(node, item)
        elif type_ == "approval":
            self.text(keys.get("prompt"), "prompt", required_in=item)
            policy = self.enum(keys.get("policy"), "policy", POLICIES)
            if policy in ("permissive", "custom"):
                rules = "cleo's default rules" if policy == "permissive" else "the project's approval-rules setting"
                self.sink.report(
                    CLEO_NO_EFFECT,
                    f"`policy: {policy}`: cleo ignores `policy`; catalyst lets this gate pass by itself"
                    f" only when {rules} approve every command up to the next gate",
                    keys["policy"][1].span,
                    help="write `policy: conservative` (or leave it out) to always ask a person",
                )
        return node

    def _node_keys(self, item: YMap, allowed, elsewhere: dict[str, str]):
        found = {}
        for key, value in item.pairs:
            if key.text in allowed:
                found[key.text] = (key, value)
            elif key.text in elsewhere:
                self.sink.report(
                    UNKNOWN_KEY,
                    f"`{key.text}` is {elsewhere[key.text]}",
                    key.span,
                    help="remove it, or change the node's `type`",
                )
            else:
                hint = (
                    f"did you mean '{MISPLACED[key.text]}'?"
                    if key.text in MISPLACED
                    else suggest(key.text, allowed) or f"the keys of this node are: {', '.join(allowed)}"
                )
                self.sink.report(UNKNOWN_KEY, f"unknown key '{key.text}' in a node", key.span, help=hint)
        return found

    def _contracts(self, node: Node, type_: Optional[str]) -> None:
        keys = node.keys
        requires = self.mapping(keys.get("requires"), "requires")
        if requires is not None:
            rk = self.keys(requires, REQUIRES_KEYS, "in `requires`")
            if "from" in rk and self.text(rk["from"], "requires.from") is not None:
                node.requires_from = rk["from"][1]
            node.requires_fields = tuple(s for s, _ in self.strings(rk.get("fields"), "requires.fields"))
            self.text(rk.get("schema"), "requires.schema")
        ensures = self.mapping(keys.get("ensures"), "ensures")
        if ensures is not None:
            ek = self.keys(ensures, ENSURES_KEYS, "in `ensures`")
            node.ensures_keys = tuple(s for s, _ in self.strings(ek.get("outputFiles"), "ensures.outputFiles"))
            if "exitCode" in ek and not (
                isinstance(ek["exitCode"][1], YScalar) and type(ek["exitCode"][1].value) is int
            ):
                self.sink.report(
                    WRONG_TYPE,
                    f"`ensures.exitCode` is a whole number, not {kind_of(ek['exitCode'][1])}",
                    head_span(ek["exitCode"][1]),
                    help="write `exitCode: 0`",
                )
            elif "exitCode" in ek:
                node.ensures_exit_code = ek["exitCode"][1].value
            schema = self.text(ek.get("schema"), "ensures.schema")
            node.ensures_schema = schema
            if schema is not None and schema not in SCHEMAS:
                self.sink.report(
                    CLEO_UNKNOWN_SCHEMA,
                    f"`ensures.schema` is '{schema}', which is not a schema cleo knows",
                    ek["schema"][1].span,
                    help=suggest(schema, SCHEMAS) or f"the schemas are: {', '.join(SCHEMAS)}",
                )
        failure = self.mapping(keys.get("on_failure"), "on_failure")
        if failure is not None:
            fk = self.keys(
                failure,
                ON_FAILURE_KEYS,
                "in `on_failure`",
                misplaced={"iteration_cap": "max_iterations", "retries": "max_iterations"},
            )
            if "inject_into" in fk and self.text(fk["inject_into"], "on_failure.inject_into") is not None:
                node.inject_into = fk["inject_into"][1]
            node.escalate = bool(self.boolean(fk.get("escalate"), "on_failure.escalate"))
            if "max_iterations" in fk:
                node.cap = self._cap(fk["max_iterations"][1])
        if type_ == "approval":
            for key in ("requires", "ensures", "on_failure"):
                if key in keys:
                    self.sink.report(
                        CLEO_NO_EFFECT,
                        f"`{key}` on an approval node has no effect",
                        keys[key][0].span,
                        help=f"move `{key}` to the node after the gate, or remove it",
                    )

    def _cap(self, value: YNode) -> Optional[int]:
        if not (isinstance(value, YScalar) and type(value.value) is int):
            self.sink.report(
                WRONG_TYPE,
                f"`max_iterations` is a whole number, not {kind_of(value)}",
                head_span(value),
                help="write a number from 0 to 10",
            )
            return None
        if not 0 <= value.value <= 10:
            self.sink.report(
                INVALID_VALUE,
                f"`max_iterations: {value.value}` is outside 0..10",
                value.span,
                help="cleo allows at most 10 attempts: write a number from 0 to 10",
            )
            return None
        if value.value == 0:
            self.sink.report(
                CLEO_ZERO_ITERATIONS,
                "`max_iterations: 0` means one attempt, the same as 1",
                value.span,
                help="write `max_iterations: 1` to say what happens",
            )
        return value.value

    def _agentic(self, node: Node, item: YMap) -> None:
        keys = node.keys
        skill = self.text(keys.get("skill"), "skill")
        agent = self.text(keys.get("agent"), "agent")
        if skill is None and agent is None and "skill" not in keys and "agent" not in keys:
            self.sink.report(
                MISSING_KEY,
                f"the agentic node '{node.id}' needs `skill` or `agent`",
                node.id_span,
                help="add `skill:` (such as ct-task-executor) or `agent:`",
            )
        self.enum(keys.get("role"), "role", ROLES)
        self.string_map(keys.get("inputs"), "inputs")
        for path, scalar in self.strings(keys.get("context_files"), "context_files"):
            pure = PurePosixPath(path.replace("\\", "/"))
            if pure.is_absolute() or re.match(r"^[A-Za-z]:", path) or ".." in pure.parts:
                self.sink.report(
                    CLEO_CONTEXT_FILE_OUTSIDE,
                    f"the context file '{path}' is outside the project",
                    scalar.span,
                    help="write a path relative to the project root, without `..`",
                )
        for key in ("profile", "model", "provider"):
            self.text(keys.get(key), key)
        self.strings(keys.get("allowed_skills"), "allowed_skills")
        self.strings(keys.get("allowed_tools"), "allowed_tools")

    def _deterministic(self, node: Node, item: YMap) -> None:
        keys = node.keys
        command = self.text(keys.get("command"), "command")
        if "command" not in keys:
            self.sink.report(
                MISSING_KEY,
                f"the deterministic node '{node.id}' has no `command`",
                node.id_span,
                help="add `command:` with the program to run, and its arguments under `args:`",
            )
        if command is not None:
            span = keys["command"][1].span
            words = command.split()
            if len(words) > 1 or command != command.strip():
                self.sink.report(
                    CLEO_COMMAND_FORM,
                    f"the command '{command}' contains a space;"
                    f" the program '{command}' does not exist (no shell runs it)",
                    span,
                    help=f"write `command: {words[0]}`, `args: [{', '.join(words[1:])}]`"
                    if words
                    else "name one program",
                )
            elif "{{" in command:
                self.sink.report(
                    CLEO_COMMAND_FORM,
                    "`command` is a template; the program must be named as written",
                    span,
                    help="name the program and put the values in `args`",
                )
            elif PurePosixPath(command.replace("\\", "/")).name in DENIED_COMMANDS:
                self.sink.report(
                    CLEO_DENIED_COMMAND,
                    f"'{command}' is on cleo's deny list: its runner refuses to start it",
                    span,
                    help="do this in a reviewed script, or with an agentic node behind an approval node",
                )
        self.strings(keys.get("args"), "args")
        self.text(keys.get("cwd"), "cwd")
        self.string_map(keys.get("env"), "env")
        if "timeout_ms" in keys:
            value = keys["timeout_ms"][1]
            number = value.value if isinstance(value, YScalar) else None
            if (
                not isinstance(number, (int, float))
                or isinstance(number, bool)
                or number != number
                or number in (float("inf"), float("-inf"))
            ):
                self.sink.report(
                    WRONG_TYPE,
                    f"`timeout_ms` is a number of milliseconds, not {kind_of(value)}",
                    head_span(value),
                    help="write `timeout_ms: 60000` for a minute",
                )
            elif number < 0:
                self.sink.report(
                    INVALID_VALUE,
                    f"`timeout_ms: {value.text}` is negative",
                    value.span,
                    help="write a positive number of milliseconds, or leave it out",
                )
            elif number == 0:
                self.sink.report(
                    CLEO_TIMEOUT,
                    "`timeout_ms: 0` sets no time limit",
                    value.span,
                    help="write a positive number of milliseconds, or leave it out",
                )
            elif number != int(number):
                self.sink.report(
                    CLEO_TIMEOUT,
                    f"`timeout_ms: {value.text}` has a fraction of a millisecond",
                    value.span,
                    help=f"write `timeout_ms: {int(number) or 1}`",
                )
