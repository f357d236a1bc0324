"""The cleo dialect: `.cantbook` graphs read, checked whole (DIALECTS.md B3.3) and lowered.

cleo's own parser stops at the first mistake and drops unknown keys; this reader reports
every mistake of a file in one pass, each at its place, then checks the graph (cycles,
entries, reachability, routing) and lowers what this version can run (cleo_lower.py).
Names are kept as written: the native naming rules (kebab-case) are the native reader's,
so they never reach a cantbook.
"""

from __future__ import annotations

import difflib
import re
from pathlib import PurePosixPath
from typing import Optional

import attrs

from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects import cleo_graph as g
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.source import SourceFile, Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span

NAME = "cleo"
TOP_KEYS = ("version", "name", "description", "inputs", "nodes", "edges", "error_handlers")
INPUT_KEYS = ("name", "required", "default", "description")
COMMON_KEYS = ("id", "type", "description", "depends", "requires", "ensures", "on_failure")
TYPE_KEYS = {
    "agentic": ("skill", "agent", "role", "inputs", "context_files", "profile", "model", "provider", "allowed_skills", "allowed_tools"),
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
    "task_tree", "evidence", "version_bump_report", "changelog_entry", "publish_report", "research_summary",
    "consensus_decision", "architecture_plan", "specification_document", "implementation_diff",
    "validation_report", "audit_report", "test_report", "release_confirmation",
)
#: Programs cleo's guarded runner refuses to start (CLE-21).
DENIED_COMMANDS = ("rm", "rmdir", "shutdown", "reboot", "mkfs", "dd", "shred", "fdisk", "mkswap", "kill", "killall")
#: Keys people write for something cleo spells elsewhere.
MISPLACED = {
    "iteration_cap": "on_failure.max_iterations", "max_iterations": "on_failure.max_iterations",
    "retries": "on_failure.max_iterations", "inject_into": "on_failure.inject_into", "escalate": "on_failure.escalate",
}
NODE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
KEBAB = re.compile(r"^[a-z][a-z0-9-]*$")
#: cleo's placeholders (B4.9); the second pattern finds names cleo does not read as one.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
DASHED_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*-[A-Za-z0-9_.-]*)\s*\}\}")
DEFAULT_CAP = 3


def sniff(root: YNode, sink: DiagnosticSink) -> bool:
    """A mapping with a `nodes` list and a `version`, and no `steps`, is a cantbook (B1)."""
    if not isinstance(root, YMap):
        return False
    keys = {k.text: (k, v) for k, v in root.pairs}
    if not ("version" in keys and "nodes" in keys and isinstance(keys["nodes"][1], YSeq)):
        return False
    if "steps" in keys:
        sink.report("C968", "this file has both cleo's `nodes` and `version` and the native `steps`; it is read as a native playbook",
                    keys["nodes"][0].span, help="name a cleo playbook `*.cantbook`, or remove `nodes` from a native one")
        return False
    return True


def compile_document(source: SourceFile, root: Optional[YNode], sink: DiagnosticSink, catalog):
    from catalyst_dsl.dialects.cleo_lower import lower

    _forget_yaml11_key_notes(sink, source)
    if root is None:
        sink.report("C014", "the file is empty", source.span(0), help="a cantbook needs `version: \"1.0\"`, `name` and `nodes`")
        return None
    book = Reader(source, sink).read(root)
    if book is None:
        return None
    return lower(book, sink, catalog)


def _forget_yaml11_key_notes(sink: DiagnosticSink, source: SourceFile) -> None:
    """cleo reads YAML 1.2 (js-yaml), where `on` is text: YAML 1.1's reading of a key is no
    mistake here (B2.2), so the loader's notes about it are dropped for this file."""
    sink.items[:] = [d for d in sink.items if not (d.code == "C011" and "YAML 1.1" in d.message and d.span is not None and d.span.file == source.path)]


# -- the model read from the file ------------------------------------------------------------


@attrs.define(eq=False)
class Guard:
    field: str
    operator: str
    value: object
    node: YMap
    #: Whether the value is a list or mapping (compared by identity in JavaScript: never equal).
    composite: bool = False


@attrs.define(eq=False)
class Edge:
    source: int
    target: int
    span: Span
    guard: Optional[Guard] = None
    requires: tuple[str, ...] = ()
    ensures: tuple[str, ...] = ()
    explicit: bool = True


@attrs.define(eq=False)
class Node:
    index: int
    id: str
    type: Optional[str]
    map: YMap
    id_span: Span
    keys: dict[str, tuple[YScalar, YNode]]
    depends: list[tuple[str, YScalar]] = attrs.Factory(list)
    requires_from: Optional[YScalar] = None
    requires_fields: tuple[str, ...] = ()
    ensures_keys: tuple[str, ...] = ()
    cap: Optional[int] = None
    inject_into: Optional[YScalar] = None
    escalate: bool = False


@attrs.define(eq=False)
class Input:
    name: str
    span: Span
    required: bool = False
    default: Optional[YNode] = None
    description: Optional[str] = None


@attrs.define(eq=False)
class Handler:
    on: str
    action: str
    message: Optional[str]
    span: Span


@attrs.define(eq=False)
class Cantbook:
    source: SourceFile
    root: YMap
    name: str
    description: str
    inputs: list[Input]
    nodes: list[Node]
    edges: list[Edge]
    handlers: list[Handler]
    graph: Optional[g.Graph] = None
    #: The single entry, when the graph is sound enough to walk (no cycle, one root).
    entry: Optional[int] = None
    order: list[int] = attrs.Factory(list)
    #: Whether any error was reported for the file: then nothing is lowered.
    broken: bool = False


# -- reading ------------------------------------------------------------------------------


class Reader:
    def __init__(self, source: SourceFile, sink: DiagnosticSink) -> None:
        self.source = source
        self.sink = sink

    def read(self, root: YNode) -> Optional[Cantbook]:
        if not isinstance(root, YMap):
            self.sink.report("C201", f"a cantbook is a mapping of keys, not {kind_of(root)}", head_span(root), help="start the file with `version: \"1.0\"`, `name:` and `nodes:`")
            return None
        keys = self.keys(root, TOP_KEYS, "at the top level")
        self.version(root, keys.get("version"))
        name = self.text(keys.get("name"), "name", required_in=root) or ""
        if name and not KEBAB.match(name):
            self.sink.report("C964", f"the cantbook name '{name}' is not kebab-case", keys["name"][1].span,
                             help="cleo finds playbooks by file stem, catalyst lists and reports them by name: lower-case words joined by '-' read the same in both")
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

    def keys(self, node: YMap, allowed, where: str, *, misplaced: dict[str, str] | None = None) -> dict[str, tuple[YScalar, YNode]]:
        """The mapping's known keys; every other key reported with the fix (CLE-06)."""
        found = {}
        for key, value in node.pairs:
            if key.text in allowed:
                found[key.text] = (key, value)
                continue
            belongs = (misplaced or {}).get(key.text) or MISPLACED.get(key.text)
            hint = f"did you mean '{belongs}'?" if belongs else suggest(key.text, allowed) or f"the keys {where} are: {', '.join(allowed)}"
            self.sink.report("C202", f"unknown key '{key.text}' {where}", key.span, help=hint)
        return found

    def mapping(self, entry, what: str) -> Optional[YMap]:
        if entry is None:
            return None
        key, value = entry
        if not isinstance(value, YMap):
            self.sink.report("C302", f"`{what}` is a mapping, not {kind_of(value)}", head_span(value), help=f"write the keys of `{what}` indented below it")
            return None
        return value

    def text(self, entry, what: str, *, required_in: YMap | None = None, non_empty: bool = True) -> Optional[str]:
        if entry is None:
            if required_in is not None:
                self.sink.report("C203", f"the required key '{what}' is missing", head_span(required_in), help=f"add `{what}:`")
            return None
        _, value = entry
        if not (isinstance(value, YScalar) and isinstance(value.value, str)):
            self.sink.report("C302", f"`{what}` is a string, not {kind_of(value)}", head_span(value), help=f"quote it: {what}: \"...\"" if isinstance(value, YScalar) and value.value is not None else f"give `{what}` a text value")
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
            self.sink.report("C302", f"`{what}` is a list of strings, not {kind_of(value)}", head_span(value), help=f"write `{what}: [a, b]`")
            return []
        result = []
        for item in value.items:
            if isinstance(item, YScalar) and isinstance(item.value, str):
                result.append((item.value, item))
            else:
                self.sink.report("C302", f"an entry of `{what}` is {kind_of(item)}, not a string", head_span(item), help="quote it")
        return result

    def boolean(self, entry, what: str) -> Optional[bool]:
        if entry is None:
            return None
        _, value = entry
        if isinstance(value, YScalar) and isinstance(value.value, bool):
            return value.value
        self.sink.report("C302", f"`{what}` is true or false, not {kind_of(value)}", head_span(value), help=f"write `{what}: true` or `{what}: false`")
        return None

    def enum(self, entry, what: str, allowed) -> Optional[str]:
        text = self.text(entry, what)
        if text is None:
            return None
        if text not in allowed:
            hint = suggest(text, allowed) or suggest(text.lower(), allowed)
            self.sink.report("C303", f"`{what}: {text}` is not one of {', '.join(allowed)}", entry[1].span, help=hint or f"use one of {', '.join(allowed)}")
            return None
        return text

    def string_map(self, entry, what: str) -> list[tuple[str, YScalar]]:
        value = self.mapping(entry, what)
        result = []
        for key, item in value.pairs if value is not None else ():
            if isinstance(item, YScalar) and isinstance(item.value, str):
                result.append((key.text, item))
            else:
                self.sink.report("C302", f"`{what}.{key.text}` is a string, not {kind_of(item)}", head_span(item), help="quote it")
        return result

    # -- the top level ---------------------------------------------------------------------------

    def version(self, root: YMap, entry) -> None:
        if entry is None:
            self.sink.report("C203", "the required key 'version' is missing", head_span(root), help="add `version: \"1.0\"` as the first line")
            return
        _, value = entry
        if isinstance(value, YScalar) and value.value == "1.0" and isinstance(value.value, str):
            return
        if isinstance(value, YScalar) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool) and value.value == 1.0:
            self.sink.report("C940", f"`version` is the number {value.text}, not the string \"1.0\"", value.span, help="quote it: version: \"1.0\"")
        else:
            self.sink.report("C940", f"`version` is {kind_of(value)}; cleo knows only \"1.0\"", head_span(value), help="write version: \"1.0\"")

    def inputs(self, entry) -> list[Input]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report("C302", f"`inputs` is a list, not {kind_of(value)}", head_span(value), help="write each input as `- name: x`")
            return []
        result: list[Input] = []
        first: dict[str, Input] = {}
        for item in value.items:
            if not isinstance(item, YMap):
                self.sink.report("C302", f"an input is a mapping, not {kind_of(item)}", head_span(item), help="write `- name: x`")
                continue
            keys = self.keys(item, INPUT_KEYS, "in an input")
            name = self.text(keys.get("name"), "name", required_in=item)
            required = bool(self.boolean(keys.get("required"), "required"))
            description = self.text(keys.get("description"), "description", non_empty=False)
            if name is None:
                continue
            decl = Input(name, keys["name"][1].span, required, keys["default"][1] if "default" in keys else None, description)
            if name in first:
                self.sink.report("C306", f"two inputs are named '{name}'", decl.span, labels=[Label(first[name].span, "first declared here")], help="rename or remove one")
                continue
            if required and decl.default is not None:
                self.sink.report("C956", f"the input '{name}' is required and has a default: the default is never used", keys["default"][0].span, help="remove `required: true` to let the default apply, or remove the default")
            first[name] = decl
            result.append(decl)
        return result

    def nodes(self, root: YMap, entry) -> list[Node]:
        if entry is None:
            self.sink.report("C203", "the required key 'nodes' is missing", head_span(root), help="add `nodes:` with at least one node")
            return []
        key, value = entry
        if not isinstance(value, YSeq):
            self.sink.report("C302", f"`nodes` is a list, not {kind_of(value)}", head_span(value), help="write each node as `- id: x`")
            return []
        if not value.items:
            self.sink.report("C204", "a cantbook needs at least one node; `nodes` is empty", key.span, help="add a node such as `- id: build` with `type: deterministic` and `command:`")
        result: list[Node] = []
        seen: dict[str, Span] = {}
        for item in value.items:
            node = self.node(item, len(result))
            if node is None:
                continue
            if node.id in seen:
                self.sink.report("C411", f"two nodes have the id '{node.id}'", node.id_span, labels=[Label(seen[node.id], "first used here")], help="give each node its own id")
                continue
            seen[node.id] = node.id_span
            result.append(node)
        return result

    def node(self, item: YNode, index: int) -> Optional[Node]:
        if not isinstance(item, YMap):
            self.sink.report("C302", f"a node is a mapping, not {kind_of(item)}", head_span(item), help="write `- id: x` and `type:` below it")
            return None
        given = {k.text: (k, v) for k, v in item.pairs}
        type_ = self.enum(given.get("type"), "type", NODE_TYPES) if "type" in given else None
        if "type" not in given:
            self.sink.report("C203", "a node needs `type`", head_span(item), help=f"add `type:` with one of {', '.join(NODE_TYPES)}")
        own = TYPE_KEYS.get(type_, ()) if type_ else tuple(k for keys in TYPE_KEYS.values() for k in keys)
        elsewhere = {k: f"a key of {t} nodes; this node is {type_}" for t, keys in TYPE_KEYS.items() for k in keys if type_ and t != type_}
        keys = self._node_keys(item, (*COMMON_KEYS, *own), elsewhere)
        node_id = self.text(keys.get("id"), "id", required_in=item)
        if node_id is None:
            return None
        id_span = keys["id"][1].span
        if not NODE_ID.match(node_id):
            self.sink.report("C965", f"the node id '{node_id}' cannot be used in references", id_span, help="use letters, digits, '_' and '-', starting with a letter or '_'")
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
                self.sink.report("C963", f"`policy: {policy}`: cleo ignores `policy`; catalyst lets this gate pass by itself only when the rules approve every command up to the next gate",
                                 keys["policy"][1].span, help="write `policy: conservative` (or leave it out) to always ask a person")
        return node

    def _node_keys(self, item: YMap, allowed, elsewhere: dict[str, str]):
        found = {}
        for key, value in item.pairs:
            if key.text in allowed:
                found[key.text] = (key, value)
            elif key.text in elsewhere:
                self.sink.report("C202", f"`{key.text}` is {elsewhere[key.text]}", key.span, help="remove it, or change the node's `type`")
            else:
                hint = f"did you mean '{MISPLACED[key.text]}'?" if key.text in MISPLACED else suggest(key.text, allowed) or f"the keys of this node are: {', '.join(allowed)}"
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
            if "exitCode" in ek and not (isinstance(ek["exitCode"][1], YScalar) and type(ek["exitCode"][1].value) is int):
                self.sink.report("C302", f"`ensures.exitCode` is a whole number, not {kind_of(ek['exitCode'][1])}", head_span(ek["exitCode"][1]), help="write `exitCode: 0`")
            schema = self.text(ek.get("schema"), "ensures.schema")
            if schema is not None and schema not in SCHEMAS:
                self.sink.report("C954", f"`ensures.schema: {schema}` is not a schema cleo knows", ek["schema"][1].span,
                                 help=suggest(schema, SCHEMAS) or f"the schemas are: {', '.join(SCHEMAS)}")
        failure = self.mapping(keys.get("on_failure"), "on_failure")
        if failure is not None:
            fk = self.keys(failure, ON_FAILURE_KEYS, "in `on_failure`", misplaced={"iteration_cap": "max_iterations", "retries": "max_iterations"})
            if "inject_into" in fk and self.text(fk["inject_into"], "on_failure.inject_into") is not None:
                node.inject_into = fk["inject_into"][1]
            node.escalate = bool(self.boolean(fk.get("escalate"), "on_failure.escalate"))
            if "max_iterations" in fk:
                node.cap = self._cap(fk["max_iterations"][1])
        if type_ == "approval":
            for key in ("requires", "ensures", "on_failure"):
                if key in keys:
                    self.sink.report("C963", f"`{key}` on an approval node has no effect", keys[key][0].span, help=f"move `{key}` to the node after the gate, or remove it")

    def _cap(self, value: YNode) -> Optional[int]:
        if not (isinstance(value, YScalar) and type(value.value) is int):
            self.sink.report("C302", f"`max_iterations` is a whole number, not {kind_of(value)}", head_span(value), help="write a number from 0 to 10")
            return None
        if not 0 <= value.value <= 10:
            self.sink.report("C303", f"`max_iterations: {value.value}` is outside 0..10", value.span, help="cleo allows at most 10 attempts: write a number from 0 to 10")
            return None
        if value.value == 0:
            self.sink.report("C949", "`max_iterations: 0` means one attempt, the same as 1", value.span, help="write `max_iterations: 1` to say what happens")
        return value.value

    def _agentic(self, node: Node, item: YMap) -> None:
        keys = node.keys
        skill = self.text(keys.get("skill"), "skill")
        agent = self.text(keys.get("agent"), "agent")
        if skill is None and agent is None and "skill" not in keys and "agent" not in keys:
            self.sink.report("C203", f"the agentic node '{node.id}' needs `skill` or `agent`", node.id_span, help="add `skill:` (such as ct-task-executor) or `agent:`")
        self.enum(keys.get("role"), "role", ROLES)
        self.string_map(keys.get("inputs"), "inputs")
        for path, scalar in self.strings(keys.get("context_files"), "context_files"):
            pure = PurePosixPath(path.replace("\\", "/"))
            if pure.is_absolute() or re.match(r"^[A-Za-z]:", path) or ".." in pure.parts:
                self.sink.report("C962", f"the context file '{path}' is outside the project", scalar.span, help="write a path relative to the project root, without `..`")
        for key in ("profile", "model", "provider"):
            self.text(keys.get(key), key)
        self.strings(keys.get("allowed_skills"), "allowed_skills")
        self.strings(keys.get("allowed_tools"), "allowed_tools")

    def _deterministic(self, node: Node, item: YMap) -> None:
        keys = node.keys
        command = self.text(keys.get("command"), "command")
        if "command" not in keys:
            self.sink.report("C203", f"the deterministic node '{node.id}' has no `command`", node.id_span, help="add `command:` with the program to run, and its arguments under `args:`")
        if command is not None:
            span = keys["command"][1].span
            words = command.split()
            if len(words) > 1 or command != command.strip():
                self.sink.report("C957", f"`command: \"{command}\"` contains a space; the program '{command}' does not exist (no shell runs it)", span,
                                 help=f"write `command: {words[0]}`, `args: [{', '.join(words[1:])}]`" if words else "name one program")
            elif "{{" in command:
                self.sink.report("C957", "`command` is a template; the program must be named as written", span, help="name the program and put the values in `args`")
            elif PurePosixPath(command.replace("\\", "/")).name in DENIED_COMMANDS:
                self.sink.report("C958", f"`{command}` is on cleo's deny list: its runner refuses to start it", span,
                                 help="do this in a reviewed script, or with an agentic node behind an approval node")
        self.strings(keys.get("args"), "args")
        self.text(keys.get("cwd"), "cwd")
        self.string_map(keys.get("env"), "env")
        if "timeout_ms" in keys:
            value = keys["timeout_ms"][1]
            number = value.value if isinstance(value, YScalar) else None
            if not isinstance(number, (int, float)) or isinstance(number, bool) or number != number or number in (float("inf"), float("-inf")):
                self.sink.report("C302", f"`timeout_ms` is a number of milliseconds, not {kind_of(value)}", head_span(value), help="write `timeout_ms: 60000` for a minute")
            elif number < 0:
                self.sink.report("C303", f"`timeout_ms: {value.text}` is negative", value.span, help="write a positive number of milliseconds, or leave it out")
            elif number == 0:
                self.sink.report("C960", "`timeout_ms: 0` sets no time limit", value.span, help="write a positive number of milliseconds, or leave it out")
            elif number != int(number):
                self.sink.report("C960", f"`timeout_ms: {value.text}` has a fraction of a millisecond", value.span, help=f"write `timeout_ms: {int(number) or 1}`")

    # -- edges and handlers ------------------------------------------------------------------------

    def edges(self, entry, ids: dict[str, int]) -> list[Edge]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report("C302", f"`edges` is a list, not {kind_of(value)}", head_span(value), help="write each edge as `- from: a` with `to: b`")
            return []
        result = []
        for item in value.items:
            if not isinstance(item, YMap):
                self.sink.report("C302", f"an edge is a mapping, not {kind_of(item)}", head_span(item), help="write `- from: a` with `to: b`")
                continue
            keys = self.keys(item, EDGE_KEYS, "in an edge")
            ends = []
            for end in ("from", "to"):
                name = self.text(keys.get(end), end, required_in=item)
                if name is not None and name not in ids:
                    self.sink.report("C941", f"the edge's `{end}: {name}` names no node", keys[end][1].span, help=suggest(name, ids) or "name a node's `id`")
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
            self.sink.report("C303", f"`when` needs exactly one of {', '.join(WHEN_OPERATORS)}; it has {len(operators)}", where,
                             help="split it into edges with one operator each" if operators else "add `equals: value` (or another operator)")
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
        composite = isinstance(value, (YMap,)) or (isinstance(value, YSeq) and op != "in") or (op == "in" and any(not isinstance(i, YScalar) for i in value.items))
        data = [_plain(i) for i in value.items] if op == "in" else _plain(value)
        return Guard(field, op, data, when, composite)

    def handlers(self, entry) -> list[Handler]:
        if entry is None:
            return []
        _, value = entry
        if not isinstance(value, YSeq):
            self.sink.report("C302", f"`error_handlers` is a list, not {kind_of(value)}", head_span(value), help="write each handler as `- on: contract_violation` with `action:`")
            return []
        result: list[Handler] = []
        first: dict[str, Span] = {}
        for item in value.items:
            if not isinstance(item, YMap):
                self.sink.report("C302", f"a handler is a mapping, not {kind_of(item)}", head_span(item), help="write `- on: contract_violation` with `action: abort`")
                continue
            keys = self.keys(item, HANDLER_KEYS, "in an error handler")
            for required in ("on", "action"):
                if required not in keys:
                    self.sink.report("C203", f"an error handler needs `{required}`", head_span(item), help=f"add `{required}:`")
            on = self.enum(keys.get("on"), "on", HANDLER_ON)
            action = self.enum(keys.get("action"), "action", HANDLER_ACTIONS)
            message = self.text(keys.get("message"), "message", non_empty=False)
            if on is None or action is None:
                continue
            span = keys["on"][1].span
            if on in first:
                self.sink.report("C961", f"a second handler for `{on}`: only the first is used", span, labels=[Label(first[on], "this one is used")], help="merge them into one handler")
                continue
            first[on] = span
            result.append(Handler(on, action, message, span))
        return result


def _plain(node: YNode) -> object:
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [_plain(i) for i in node.items]
    return {k.text: _plain(v) for k, v in node.pairs}


# -- the graph rules ----------------------------------------------------------------------------


class Checker:
    """CLE-09 … CLE-22: what only the whole graph shows."""

    def __init__(self, book: Cantbook, sink: DiagnosticSink, ids: dict[str, int]) -> None:
        self.book = book
        self.sink = sink
        self.ids = ids
        self._ancestors: Optional[list[int]] = None

    def run(self) -> None:
        book = self.book
        edges = self.explicit_edges()
        edges += self.depends_edges({(e.source, e.target): e for e in edges})
        book.edges = edges
        graph = book.graph = g.Graph.of(len(book.nodes), [(e.source, e.target) for e in edges])
        cycle = g.find_cycle(graph)
        if cycle is not None:
            names = " → ".join(book.nodes[n].id for n in cycle)
            first = book.nodes[cycle[0]]
            self.sink.report("C944", f"the nodes form a cycle: {names}", first.id_span,
                             help="cleo's graphs run forward only: remove one of these edges or depends (a loop back on failure is `on_failure.inject_into`)")
        else:
            book.order = g.topological_order(graph)
            self.entries()
            self.routing()
            self.references()
            self.gates()
        self.templates()
        book.broken = any(d.severity.value == "error" for d in self.sink.items)

    def explicit_edges(self) -> list[Edge]:
        seen: dict[tuple[int, int], Edge] = {}
        kept = []
        for edge in self.book.edges:
            pair = (edge.source, edge.target)
            if pair in seen:
                a, b = (self.book.nodes[i].id for i in pair)
                self.sink.report("C942", f"the edge {a} → {b} is written twice", edge.span, labels=[Label(seen[pair].span, "first written here")],
                                 help=f"remove one; cleo's runtime stops at '{a}' with two successors")
                continue
            seen[pair] = edge
            kept.append(edge)
        return kept

    def depends_edges(self, explicit: dict[tuple[int, int], Edge]) -> list[Edge]:
        result = []
        for node in self.book.nodes:
            seen: set[str] = set()
            for name, scalar in node.depends:
                if name in seen:
                    self.sink.report("C942", f"'{node.id}' depends on '{name}' twice", scalar.span, help="remove one")
                    continue
                seen.add(name)
                if name not in self.ids:
                    self.sink.report("C941", f"'{node.id}' depends on '{name}', which names no node", scalar.span, help=suggest(name, self.ids) or "name a node's `id`")
                    continue
                pair = (self.ids[name], node.index)
                if pair in explicit:
                    self.sink.report("C943", f"`depends: {name}` repeats the edge {name} → {node.id}", scalar.span, labels=[Label(explicit[pair].span, "the edge")],
                                     help="keep one of them")
                    continue
                result.append(Edge(pair[0], pair[1], scalar.span, explicit=False))
        return result

    def entries(self) -> None:
        book, graph = self.book, self.book.graph
        roots = [n for n in range(graph.size) if not graph.into[n]]
        if not roots:
            return
        book.entry = roots[0]
        entry = book.nodes[roots[0]]
        for other in roots[1:]:
            node = book.nodes[other]
            self.sink.report("C945", f"'{node.id}' has no predecessor, like '{entry.id}'; cleo runs only the first root, so '{node.id}' would never run",
                             node.id_span, labels=[Label(entry.id_span, "the entry")], help=f"add an edge into '{node.id}' (or `depends:`), or remove it")
        seen = g.reachable(graph, roots[0])
        roots_set = set(roots)
        for n in range(graph.size):
            # The other roots were reported above; what only they lead to is reported here.
            if not seen[n] and n not in roots_set:
                node = book.nodes[n]
                self.sink.report("C946", f"'{node.id}' cannot be reached from the entry '{entry.id}'", node.id_span, help="add an edge from a node that runs, or remove it")
        if len(roots) > 1:
            book.entry = None

    def routing(self) -> None:
        book, graph = self.book, self.book.graph
        for n in range(graph.size):
            out = [book.edges[e] for e in graph.out[n]]
            if len(out) < 2 and not (out and out[0].guard):
                continue
            node = book.nodes[n]
            plain = [e for e in out if e.guard is None]
            guarded = [e for e in out if e.guard is not None]
            composite = [e for e in guarded if e.guard.composite]
            for e in composite:
                self.sink.report("C948", f"the guard on '{node.id}' → '{book.nodes[e.target].id}' compares with a list or mapping, which is never equal in cleo", e.guard.node.span,
                                 help="compare with a string, number, boolean or null")
            if len(plain) > 1:
                names = ", ".join(book.nodes[e.target].id for e in plain)
                self.sink.report("C947", f"'{node.id}' has {len(plain)} unguarded successors ({names}); cleo runs one node at a time and stops there",
                                 plain[1].span, labels=[Label(plain[0].span, "the first")], help="guard the edges with `when:` so exactly one holds, or chain the nodes")
            elif plain and guarded:
                self.sink.report("C947", f"'{node.id}' has an unconditional edge and a guarded one: whenever `{guarded[0].guard.field}` makes the guard hold, both apply and cleo's runtime throws",
                                 guarded[0].span, labels=[Label(plain[0].span, "the unconditional edge")], help="guard both edges")
            elif len(guarded) == 1:
                self.sink.report("C948", f"the only edge out of '{node.id}' is guarded: when its guard is false the run stops with no next node",
                                 guarded[0].span, help="add an edge with the opposite guard, or remove the guard")
            elif guarded and not composite and not _exclusive_and_exhaustive([e.guard for e in guarded]):
                self.sink.report("C948", f"the guards out of '{node.id}' are not provably exclusive and exhaustive; the run stops when none or several hold",
                                 guarded[0].span, help="guard one field: `equals: v` with `notEquals: v`, `exists`/`truthy` true with false, or disjoint values plus their complement")

    def ancestors(self) -> list[int]:
        if self._ancestors is None:
            self._ancestors = g.ancestors(self.book.graph, self.book.order)
        return self._ancestors

    def references(self) -> None:
        book = self.book
        for node in book.nodes:
            if node.inject_into is not None:
                target = node.inject_into.value
                if target not in self.ids:
                    self.sink.report("C950", f"`inject_into: {target}` names no node", node.inject_into.span, help=suggest(target, self.ids) or "name an earlier node to loop back to")
                elif target == node.id:
                    self.sink.report("C952", "`inject_into` names the node itself: the same as leaving it out", node.inject_into.span, help="remove it, or name an earlier node to loop back to")
                elif not self.ancestors()[node.index] >> self.ids[target] & 1:
                    self.sink.report("C951", f"`inject_into: {target}` is not an earlier node of '{node.id}': the run would jump forward or sideways", node.inject_into.span,
                                     help="name a node that runs before this one")
                else:
                    cap = max(node.cap if node.cap is not None else DEFAULT_CAP, 1)
                    escalate = next((h for h in book.handlers if h.on == "iteration_cap_exceeded"), None)
                    then = (f"then the handler on line {escalate.span.line} {'asks a person' if escalate.action == 'hitl_escalate' else 'applies'}"
                            if escalate is not None else "then the run fails with IterationCapExceeded")
                    self.sink.report("C951", f"loop-back {node.id} → {target}: cleo never stops this loop while '{node.id}' fails; catalyst limits '{node.id}' to {cap} attempt{'s' if cap != 1 else ''}, {then}",
                                     node.inject_into.span, help="keep it if that is what you mean; catalyst counts attempts through the loop")
            if node.requires_from is not None:
                source = node.requires_from.value
                if source not in self.ids:
                    self.sink.report("C953", f"`requires.from: {source}` names no node", node.requires_from.span, help=suggest(source, self.ids) or "name an earlier node")
                elif not self.ancestors()[node.index] >> self.ids[source] & 1:
                    self.sink.report("C953", f"`requires.from: {source}` is not an earlier node of '{node.id}'", node.requires_from.span, help="name a node that runs before this one")

    def gates(self) -> None:
        from catalyst_dsl.dialects.cleo_policy import DEFAULT_RULES, evaluate

        book = self.book
        commands = [(n, _command_line(n)) for n in book.nodes if n.type == "deterministic"]
        commands = [(n, line, evaluate(line, DEFAULT_RULES)) for n, line in commands if line]
        risky = [(n, line, rule) for n, line, (action, rule) in commands if action == "require-human" and rule != "default"]
        if not risky:
            return
        is_gate = [n.type == "approval" for n in book.nodes]
        behind = g.gated(book.graph, book.order, is_gate)
        for node, line, rule in risky:
            if not behind[node.index]:
                span = node.keys["command"][1].span
                self.sink.report("C959", f"`{line}` matches the require-human rule `{rule}`, and no approval node precedes it", span,
                                 help="add an approval node on every path before this node")

    def templates(self) -> None:
        book = self.book
        inputs = {i.name for i in book.inputs}
        declared: dict[str, int] = {}  # key -> bit set of nodes that declare it
        for edge in book.edges:
            for key in edge.ensures:
                declared[key] = declared.get(key, 0) | (1 << edge.target)
            if edge.guard is not None:
                declared[edge.guard.field] = declared.get(edge.guard.field, 0) | (1 << edge.source)
        for node in book.nodes:
            for key in (*node.ensures_keys, *node.requires_fields):
                declared[key] = declared.get(key, 0) | (1 << node.index)
            if node.type == "deterministic":
                for key in (f"{node.id}_stdout", f"{node.id}_exitCode"):
                    declared[key] = declared.get(key, 0) | (1 << node.index)
            if node.type == "approval":
                declared["__lastApproval"] = declared.get("__lastApproval", 0) | (1 << node.index)
        for node in book.nodes:
            for scalar in template_scalars(node):
                self.template(node, scalar, inputs, declared)

    def template(self, node: Node, scalar: YScalar, inputs: set[str], declared: dict[str, int]) -> None:
        text = scalar.value
        if "{{" not in text:
            return
        smap = ScalarMap(scalar)
        for match in DASHED_PLACEHOLDER.finditer(text):
            self.sink.report("C955", f"`{{{{ {match.group(1)} }}}}` is not a template in cleo: names cannot contain '-'", smap.span(match.start(), match.end()),
                             help="use '_' in the name")
        for match in PLACEHOLDER.finditer(text):
            name = match.group(1)
            span = smap.span(match.start(1), match.end(1))
            root, _, rest = name.partition(".")
            if root == "inputs" and rest:
                field = rest.split(".")[0]
                if field not in inputs:
                    self.sink.report("C501", f"`inputs.{field}` is not a declared input", span, help=_did_you_mean_input(field, inputs))
                continue
            if root in inputs:
                continue
            mask = declared.get(root, 0)
            if self.book.order and mask and (self.ancestors()[node.index] & mask or (mask >> node.index) & 1 and root.startswith("__")):
                continue
            self.sink.report("C955", f"`{name}` is neither a declared input nor a key an earlier node declares", span,
                             help=suggest(root, inputs, prefix="did you mean ") or "declare it under `inputs:`, or in an earlier node's `ensures.outputFiles`")


def _did_you_mean_input(field: str, inputs: set[str]) -> str:
    close = difflib.get_close_matches(field, sorted(inputs), n=1, cutoff=0.6)
    return f"did you mean `inputs.{close[0]}`?" if close else "declare it under `inputs:`"


def template_scalars(node: Node) -> list[YScalar]:
    """The values cleo renders (B4.9): agentic `inputs`, approval `prompt`, deterministic `args`, `cwd`, `env`."""
    keys = node.keys
    found: list[YNode] = []
    if node.type == "agentic" and isinstance(keys.get("inputs", (None, None))[1], YMap):
        found += [v for _, v in keys["inputs"][1].pairs]
    if node.type == "approval" and "prompt" in keys:
        found.append(keys["prompt"][1])
    if node.type == "deterministic":
        if isinstance(keys.get("args", (None, None))[1], YSeq):
            found += keys["args"][1].items
        if "cwd" in keys:
            found.append(keys["cwd"][1])
        if isinstance(keys.get("env", (None, None))[1], YMap):
            found += [v for _, v in keys["env"][1].pairs]
    return [s for s in found if isinstance(s, YScalar) and isinstance(s.value, str)]


def _command_line(node: Node) -> str:
    """A deterministic node's argv joined by single spaces, as the policy rules read it."""
    keys = node.keys
    command = keys.get("command", (None, None))[1]
    if not (isinstance(command, YScalar) and isinstance(command.value, str)):
        return ""
    args = keys.get("args", (None, None))[1]
    words = [a.value for a in args.items if isinstance(a, YScalar) and isinstance(a.value, str)] if isinstance(args, YSeq) else []
    return " ".join([command.value, *words])


def _same(a: object, b: object) -> bool:
    """JavaScript's strict equality for YAML scalars: no coercion between types."""
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and not isinstance(a, bool) and isinstance(b, (int, float)) and not isinstance(b, bool) and a == b)


def _exclusive_and_exhaustive(guards: list[Guard]) -> bool:
    """Whether exactly one of these guards holds for every context (CLE-14): one field, and
    either two complementary guards, or disjoint `equals`/`in` values plus one `notEquals`
    of the single value they leave."""
    if len({gd.field for gd in guards}) != 1:
        return False
    ops = sorted(guards, key=lambda gd: gd.operator)
    if len(guards) == 2:
        a, b = ops
        if (a.operator, b.operator) == ("equals", "notEquals") and _same(a.value, b.value):
            return True
        if a.operator == b.operator and a.operator in ("exists", "truthy") and a.value != b.value:
            return True
    return False
