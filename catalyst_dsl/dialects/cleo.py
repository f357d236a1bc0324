"""The cleo dialect: `.cantbook` graphs read, checked whole (DIALECTS.md B3.3) and lowered.

cleo's own parser stops at the first mistake and drops unknown keys; this reader reports
every mistake of a file in one pass, each at its place (this module: keys, types, enums),
then checks the graph (cleo_rules.py: cycles, entries, reachability, routing, templates)
and lowers what this version can run (cleo_lower.py). The model read is cleo_model.py.
Names are kept as written: the native naming rules (kebab-case) are the native reader's,
so they never reach a cantbook.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Optional


from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.cleo_model import Cantbook, Edge, Guard, Handler, Input, Node, _plain
from catalyst_dsl.dialects.cleo_rules import Checker
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.syntax.source import SourceFile, Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span

NAME = "cleo"
TOP_KEYS = ("version", "name", "description", "inputs", "nodes", "edges", "error_handlers")
INPUT_KEYS = ("name", "required", "default", "description")
COMMON_KEYS = ("id", "type", "description", "depends", "requires", "ensures", "on_failure")
TYPE_KEYS = {
    "agentic": (
        "skill",
        "agent",
        "role",
        "inputs",
        "context_files",
        "profile",
        "model",
        "provider",
        "allowed_skills",
        "allowed_tools",
    ),
    "deterministic": ("command", "args", "cwd", "env", "timeout_ms"),
    "approval": ("prompt", "policy"),
}
NODE_TYPES = tuple(TYPE_KEYS)
REQUIRES_KEYS = ("from", "fields", "schema")
ENSURES_KEYS = ("outputFiles", "exitCode", "schema")
ON_FAILURE_KEYS = ("inject_into", "max_iterations", "escalate")
EDGE_KEYS = ("from", "to", "contract", "when")
CONTRACT_KEYS = ("requires", "ensures")
WHEN_OPERATORS = ("equals", "notEquals", "exists", "in", "truthy")
HANDLER_KEYS = ("on", "action", "message")
ROLES = ("orchestrator", "lead", "worker")
POLICIES = ("conservative", "permissive", "custom")
HANDLER_ON = ("agentic_timeout", "iteration_cap_exceeded", "contract_violation")
HANDLER_ACTIONS = ("inject_hint", "hitl_escalate", "abort")
#: Registered `ensures.schema` names (B2.1).
SCHEMAS = (
    "task_tree",
    "evidence",
    "version_bump_report",
    "changelog_entry",
    "publish_report",
    "research_summary",
    "consensus_decision",
    "architecture_plan",
    "specification_document",
    "implementation_diff",
    "validation_report",
    "audit_report",
    "test_report",
    "release_confirmation",
)
#: Programs cleo's guarded runner refuses to start (CLE-21).
DENIED_COMMANDS = ("rm", "rmdir", "shutdown", "reboot", "mkfs", "dd", "shred", "fdisk", "mkswap", "kill", "killall")
#: Keys people write for something cleo spells elsewhere.
MISPLACED = {
    "iteration_cap": "on_failure.max_iterations",
    "max_iterations": "on_failure.max_iterations",
    "retries": "on_failure.max_iterations",
    "inject_into": "on_failure.inject_into",
    "escalate": "on_failure.escalate",
}
NODE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
KEBAB = re.compile(r"^[a-z][a-z0-9-]*$")


def sniff(root: YNode, sink: DiagnosticSink) -> bool:
    """A mapping with a `nodes` list and a `version`, and no `steps`, is a cantbook (B1)."""
    if not isinstance(root, YMap):
        return False
    keys = {k.text: (k, v) for k, v in root.pairs}
    if not ("version" in keys and "nodes" in keys and isinstance(keys["nodes"][1], YSeq)):
        return False
    if "steps" in keys:
        sink.report(
            "C968",
            "this file has both cleo's `nodes` and `version` and the native `steps`; it is read as a native playbook",
            keys["nodes"][0].span,
            help="name a cleo playbook `*.cantbook`, or remove `nodes` from a native one",
        )
        return False
    return True


def compile_document(source: SourceFile, root: Optional[YNode], sink: DiagnosticSink, catalog):
    from catalyst_dsl.dialects.cleo_lower import lower

    _forget_yaml11_key_notes(sink, source)
    if root is None:
        sink.report(
            "C014", "the file is empty", source.span(0), help="a cantbook needs `version: \"1.0\"`, `name` and `nodes`"
        )
        return None
    book = Reader(source, sink).read(root)
    if book is None:
        return None
    return lower(book, sink, catalog)


def _forget_yaml11_key_notes(sink: DiagnosticSink, source: SourceFile) -> None:
    """cleo reads YAML 1.2 (js-yaml), where `on` is text: YAML 1.1's reading of a key is no
    mistake here (B2.2), so the loader's notes about it are dropped for this file."""
    sink.items[:] = [
        d
        for d in sink.items
        if not (d.code == "C011" and "YAML 1.1" in d.message and d.span is not None and d.span.file == source.path)
    ]


# -- reading ------------------------------------------------------------------------------


class Reader:
    def __init__(self, source: SourceFile, sink: DiagnosticSink) -> None:
        self.source = source
        self.sink = sink

    def read(self, root: YNode) -> Optional[Cantbook]:
        if not isinstance(root, YMap):
            self.sink.report(
                "C201",
                f"a cantbook is a mapping of keys, not {kind_of(root)}",
                head_span(root),
                help="start the file with `version: \"1.0\"`, `name:` and `nodes:`",
            )
            return None
        keys = self.keys(root, TOP_KEYS, "at the top level")
        self.version(root, keys.get("version"))
        name = self.text(keys.get("name"), "name", required_in=root) or ""
        if name and not KEBAB.match(name):
            self.sink.report(
                "C964",
                f"the cantbook name '{name}' is not kebab-case",
                keys["name"][1].span,
                help="cleo finds playbooks by file stem, catalyst lists and reports them by name: lower-case words joined by '-' read the same in both",
            )
        description = self.text(keys.get("description"), "description") or ""
        inputs = self.inputs(keys.get("inputs"))
        nodes = self.nodes(root, keys.get("nodes"))
        ids = {n.id: n.index for n in nodes}
        edges = self.edges(keys.get("edges"), ids)
        handlers = self.handlers(keys.get("error_handlers"))
        book = Cantbook(self.source, root, name, description, inputs, nodes, edges, handlers)
        Checker(book, self.sink, ids).run()
        return book

    # -- generic shapes ---------------------------------------------------------------------

    def keys(
        self, node: YMap, allowed, where: str, *, misplaced: dict[str, str] | None = None
    ) -> dict[str, tuple[YScalar, YNode]]:
        """The mapping's known keys; every other key reported with the fix (CLE-06)."""
        found = {}
        for key, value in node.pairs:
            if key.text in allowed:
                found[key.text] = (key, value)
                continue
            belongs = (misplaced or {}).get(key.text) or MISPLACED.get(key.text)
            hint = (
                f"did you mean '{belongs}'?"
                if belongs
                else suggest(key.text, allowed) or f"the keys {where} are: {', '.join(allowed)}"
            )
            self.sink.report("C202", f"unknown key '{key.text}' {where}", key.span, help=hint)
        return found

    def mapping(self, entry, what: str) -> Optional[YMap]:
        if entry is None:
            return None
        key, value = entry
        if not isinstance(value, YMap):
            self.sink.report(
                "C302",
                f"`{what}` is a mapping, not {kind_of(value)}",
                head_span(value),
                help=f"write the keys of `{what}` indented below it",
            )
            return None
        return value

    def text(self, entry, what: str, *, required_in: YMap | None = None, non_empty: bool = True) -> Optional[str]:
        if entry is None:
            if required_in is not None:
                self.sink.report(
                    "C203", f"the required key '{what}' is missing", head_span(required_in), help=f"add `{what}:`"
                )
            return None
        _, value = entry
        if not (isinstance(value, YScalar) and isinstance(value.value, str)):
            self.sink.report(
                "C302",
                f"`{what}` is a string, not {kind_of(value)}",
                head_span(value),
                help=f"quote it: {what}: \"...\""
                if isinstance(value, YScalar) and value.value is not None
                else f"give `{what}` a text value",
            )
            return None
        if non_empty and not value.value.strip():
            self.sink.report("C302", f"`{what}` is empty", value.span, help=f"give `{what}` a value")
            return None
        return value.value

    def strings(self, entry, what: str) -> list[tuple[str, YScalar]]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(
                "C302",
                f"`{what}` is a list of strings, not {kind_of(value)}",
                head_span(value),
                help=f"write `{what}: [a, b]`",
            )
            return []
        result = []
        for item in value.items:
            if isinstance(item, YScalar) and isinstance(item.value, str):
                result.append((item.value, item))
            else:
                self.sink.report(
                    "C302", f"an entry of `{what}` is {kind_of(item)}, not a string", head_span(item), help="quote it"
                )
        return result

    def boolean(self, entry, what: str) -> Optional[bool]:
        if entry is None:
            return None
        _, value = entry
        if isinstance(value, YScalar) and isinstance(value.value, bool):
            return value.value
        self.sink.report(
            "C302",
            f"`{what}` is true or false, not {kind_of(value)}",
            head_span(value),
            help=f"write `{what}: true` or `{what}: false`",
        )
        return None

    def enum(self, entry, what: str, allowed) -> Optional[str]:
        text = self.text(entry, what)
        if text is None:
            return None
        if text not in allowed:
            hint = suggest(text, allowed) or suggest(text.lower(), allowed)
            self.sink.report(
                "C303",
                f"`{what}: {text}` is not one of {', '.join(allowed)}",
                entry[1].span,
                help=hint or f"use one of {', '.join(allowed)}",
            )
            return None
        return text

    def string_map(self, entry, what: str) -> list[tuple[str, YScalar]]:
        value = self.mapping(entry, what)
        result = []
        for key, item in value.pairs if value is not None else ():
            if isinstance(item, YScalar) and isinstance(item.value, str):
                result.append((key.text, item))
            else:
                self.sink.report(
                    "C302", f"`{what}.{key.text}` is a string, not {kind_of(item)}", head_span(item), help="quote it"
                )
        return result

    # -- the top level ---------------------------------------------------------------------------

    def version(self, root: YMap, entry) -> None:
        if entry is None:
            self.sink.report(
                "C203",
                "the required key 'version' is missing",
                head_span(root),
                help="add `version: \"1.0\"` as the first line",
            )
            return
        _, value = entry
        if isinstance(value, YScalar) and value.value == "1.0" and isinstance(value.value, str):
            return
        if (
            isinstance(value, YScalar)
            and isinstance(value.value, (int, float))
            and not isinstance(value.value, bool)
            and value.value == 1.0
        ):
            self.sink.report(
                "C940",
                f"`version` is the number {value.text}, not the string \"1.0\"",
                value.span,
                help="quote it: version: \"1.0\"",
            )
        else:
            self.sink.report(
                "C940",
                f"`version` is {kind_of(value)}; cleo knows only \"1.0\"",
                head_span(value),
                help="write version: \"1.0\"",
            )

    def inputs(self, entry) -> list[Input]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(
                "C302",
                f"`inputs` is a list, not {kind_of(value)}",
                head_span(value),
                help="write each input as `- name: x`",
            )
            return []
        result: list[Input] = []
        first: dict[str, Input] = {}
        for item in value.items:
            if not isinstance(item, YMap):
                self.sink.report(
                    "C302", f"an input is a mapping, not {kind_of(item)}", head_span(item), help="write `- name: x`"
                )
                continue
            keys = self.keys(item, INPUT_KEYS, "in an input")
            name = self.text(keys.get("name"), "name", required_in=item)
            required = bool(self.boolean(keys.get("required"), "required"))
            description = self.text(keys.get("description"), "description", non_empty=False)
            if name is None:
                continue
            decl = Input(
                name, keys["name"][1].span, required, keys["default"][1] if "default" in keys else None, description
            )
            if name in first:
                self.sink.report(
                    "C306",
                    f"two inputs are named '{name}'",
                    decl.span,
                    labels=[Label(first[name].span, "first declared here")],
                    help="rename or remove one",
                )
                continue
            if required and decl.default is not None:
                self.sink.report(
                    "C956",
                    f"the input '{name}' is required and has a default: the default is never used",
                    keys["default"][0].span,
                    help="remove `required: true` to let the default apply, or remove the default",
                )
            first[name] = decl
            result.append(decl)
        return result

    def nodes(self, root: YMap, entry) -> list[Node]:
        if entry is None:
            self.sink.report(
                "C203",
                "the required key 'nodes' is missing",
                head_span(root),
                help="add `nodes:` with at least one node",
            )
            return []
        key, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(
                "C302",
                f"`nodes` is a list, not {kind_of(value)}",
                head_span(value),
                help="write each node as `- id: x`",
            )
            return []
        if not value.items:
            self.sink.report(
                "C204",
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
                    "C411",
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
                "C302",
                f"a node is a mapping, not {kind_of(item)}",
                head_span(item),
                help="write `- id: x` and `type:` below it",
            )
            return None
        given = {k.text: (k, v) for k, v in item.pairs}
        type_ = self.enum(given.get("type"), "type", NODE_TYPES) if "type" in given else None
        if "type" not in given:
            self.sink.report(
                "C203", "a node needs `type`", head_span(item), help=f"add `type:` with one of {', '.join(NODE_TYPES)}"
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
                "C965",
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
                    "C963",
                    f"`policy: {policy}`: cleo ignores `policy`; catalyst lets this gate pass by itself only when {rules} approve every command up to the next gate",
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
                    "C202",
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
                self.sink.report("C202", f"unknown key '{key.text}' in a node", key.span, help=hint)
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
                    "C302",
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
                    "C954",
                    f"`ensures.schema: {schema}` is not a schema cleo knows",
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
                        "C963",
                        f"`{key}` on an approval node has no effect",
                        keys[key][0].span,
                        help=f"move `{key}` to the node after the gate, or remove it",
                    )

    def _cap(self, value: YNode) -> Optional[int]:
        if not (isinstance(value, YScalar) and type(value.value) is int):
            self.sink.report(
                "C302",
                f"`max_iterations` is a whole number, not {kind_of(value)}",
                head_span(value),
                help="write a number from 0 to 10",
            )
            return None
        if not 0 <= value.value <= 10:
            self.sink.report(
                "C303",
                f"`max_iterations: {value.value}` is outside 0..10",
                value.span,
                help="cleo allows at most 10 attempts: write a number from 0 to 10",
            )
            return None
        if value.value == 0:
            self.sink.report(
                "C949",
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
                "C203",
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
                    "C962",
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
                "C203",
                f"the deterministic node '{node.id}' has no `command`",
                node.id_span,
                help="add `command:` with the program to run, and its arguments under `args:`",
            )
        if command is not None:
            span = keys["command"][1].span
            words = command.split()
            if len(words) > 1 or command != command.strip():
                self.sink.report(
                    "C957",
                    f"`command: \"{command}\"` contains a space; the program '{command}' does not exist (no shell runs it)",
                    span,
                    help=f"write `command: {words[0]}`, `args: [{', '.join(words[1:])}]`"
                    if words
                    else "name one program",
                )
            elif "{{" in command:
                self.sink.report(
                    "C957",
                    "`command` is a template; the program must be named as written",
                    span,
                    help="name the program and put the values in `args`",
                )
            elif PurePosixPath(command.replace("\\", "/")).name in DENIED_COMMANDS:
                self.sink.report(
                    "C958",
                    f"`{command}` is on cleo's deny list: its runner refuses to start it",
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
                    "C302",
                    f"`timeout_ms` is a number of milliseconds, not {kind_of(value)}",
                    head_span(value),
                    help="write `timeout_ms: 60000` for a minute",
                )
            elif number < 0:
                self.sink.report(
                    "C303",
                    f"`timeout_ms: {value.text}` is negative",
                    value.span,
                    help="write a positive number of milliseconds, or leave it out",
                )
            elif number == 0:
                self.sink.report(
                    "C960",
                    "`timeout_ms: 0` sets no time limit",
                    value.span,
                    help="write a positive number of milliseconds, or leave it out",
                )
            elif number != int(number):
                self.sink.report(
                    "C960",
                    f"`timeout_ms: {value.text}` has a fraction of a millisecond",
                    value.span,
                    help=f"write `timeout_ms: {int(number) or 1}`",
                )

    # -- edges and handlers ------------------------------------------------------------------------

    def edges(self, entry, ids: dict[str, int]) -> list[Edge]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(
                "C302",
                f"`edges` is a list, not {kind_of(value)}",
                head_span(value),
                help="write each edge as `- from: a` with `to: b`",
            )
            return []
        result = []
        for item in value.items:
            if not isinstance(item, YMap):
                self.sink.report(
                    "C302",
                    f"an edge is a mapping, not {kind_of(item)}",
                    head_span(item),
                    help="write `- from: a` with `to: b`",
                )
                continue
            keys = self.keys(item, EDGE_KEYS, "in an edge")
            ends = []
            for end in ("from", "to"):
                name = self.text(keys.get(end), end, required_in=item)
                if name is not None and name not in ids:
                    self.sink.report(
                        "C941",
                        f"the edge's `{end}: {name}` names no node",
                        keys[end][1].span,
                        help=suggest(name, ids) or "name a node's `id`",
                    )
                    name = None
                ends.append(name)
            edge = Edge(-1, -1, head_span(item))
            contract = self.mapping(keys.get("contract"), "contract")
            if contract is not None:
                ck = self.keys(contract, CONTRACT_KEYS, "in a contract")
                edge.requires = tuple(s for s, _ in self.strings(ck.get("requires"), "contract.requires"))
                edge.ensures = tuple(s for s, _ in self.strings(ck.get("ensures"), "contract.ensures"))
            when = self.mapping(keys.get("when"), "when")
            if when is not None:
                edge.guard = self.guard(when)
            if None in ends:
                continue
            edge.source, edge.target = ids[ends[0]], ids[ends[1]]
            result.append(edge)
        return result

    def guard(self, when: YMap) -> Optional[Guard]:
        keys = self.keys(when, ("field", *WHEN_OPERATORS), "in `when`")
        field = self.text(keys.get("field"), "when.field", required_in=when)
        operators = [k for k in WHEN_OPERATORS if k in keys]
        if len(operators) != 1:
            where = keys[operators[1]][0].span if len(operators) > 1 else head_span(when)
            self.sink.report(
                "C303",
                f"`when` needs exactly one of {', '.join(WHEN_OPERATORS)}; it has {len(operators)}",
                where,
                help="split it into edges with one operator each"
                if operators
                else "add `equals: value` (or another operator)",
            )
            return None
        op = operators[0]
        value = keys[op][1]
        if op in ("exists", "truthy") and self.boolean(keys[op], f"when.{op}") is None:
            return None
        if op == "in" and not (isinstance(value, YSeq) and value.items):
            self.sink.report("C303", "`in` needs a non-empty list", head_span(value), help="write `in: [a, b]`")
            return None
        if field is None:
            return None
        composite = (
            isinstance(value, (YMap,))
            or (isinstance(value, YSeq) and op != "in")
            or (op == "in" and any(not isinstance(i, YScalar) for i in value.items))
        )
        data = [_plain(i) for i in value.items] if op == "in" else _plain(value)
        return Guard(field, op, data, when, composite)

    def handlers(self, entry) -> list[Handler]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report(
                "C302",
                f"`error_handlers` is a list, not {kind_of(value)}",
                head_span(value),
                help="write each handler as `- on: contract_violation` with `action:`",
            )
            return []
        result: list[Handler] = []
        first: dict[str, Span] = {}
        for item in value.items:
            if not isinstance(item, YMap):
                self.sink.report(
                    "C302",
                    f"a handler is a mapping, not {kind_of(item)}",
                    head_span(item),
                    help="write `- on: contract_violation` with `action: abort`",
                )
                continue
            keys = self.keys(item, HANDLER_KEYS, "in an error handler")
            for required in ("on", "action"):
                if required not in keys:
                    self.sink.report(
                        "C203", f"an error handler needs `{required}`", head_span(item), help=f"add `{required}:`"
                    )
            on = self.enum(keys.get("on"), "on", HANDLER_ON)
            action = self.enum(keys.get("action"), "action", HANDLER_ACTIONS)
            message = self.text(keys.get("message"), "message", non_empty=False)
            if on is None or action is None:
                continue
            span = keys["on"][1].span
            if on in first:
                self.sink.report(
                    "C961",
                    f"a second handler for `{on}`: only the first is used",
                    span,
                    labels=[Label(first[on], "this one is used")],
                    help="merge them into one handler",
                )
                continue
            first[on] = span
            result.append(Handler(on, action, message, span))
        return result
