"""Reading a cantbook: whether a YAML file is one (`sniff`), the model with every mistake
reported (`Reader`, then the graph rules of rules.py), and the registry's
`compile_document`, which lowers what this version can run (lowering.py).
"""

from __future__ import annotations

from typing import Optional

from catalyst_dsl.diagnostics.ids import (
    CLEO_AMBIGUOUS_FILE,
    CLEO_DUPLICATE_HANDLER,
    CLEO_NAME_STYLE,
    CLEO_REQUIRED_WITH_DEFAULT,
    CLEO_UNKNOWN_NODE,
    CLEO_VERSION,
    DUPLICATE_INPUT,
    EMPTY_FILE,
    INVALID_VALUE,
    MISSING_KEY,
    NON_STRING_KEY,
    NOT_A_PLAYBOOK,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.cleo.model import Cantbook, Edge, Guard, Handler, Input, _plain
from catalyst_dsl.dialects.cleo.node_reading import NodeReading
from catalyst_dsl.dialects.cleo.rules import Checker
from catalyst_dsl.dialects.cleo.vocabulary import (
    CONTRACT_KEYS,
    EDGE_KEYS,
    HANDLER_ACTIONS,
    HANDLER_KEYS,
    HANDLER_ON,
    INPUT_KEYS,
    KEBAB,
    TOP_KEYS,
    WHEN_OPERATORS,
)
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.syntax.source import SourceFile, Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


def sniff(root: YNode, sink: DiagnosticSink) -> bool:
    """A mapping with a `nodes` list and a `version`, and no `steps`, is a cantbook (B1)."""
    if not isinstance(root, YMap):
        return False
    keys = {k.text: (k, v) for k, v in root.pairs}
    if not ("version" in keys and "nodes" in keys and isinstance(keys["nodes"][1], YSeq)):
        return False
    if "steps" in keys:
        sink.report(
            CLEO_AMBIGUOUS_FILE,
            "this file has both cleo's `nodes` and `version` and the native `steps`; it is read as a native playbook",
            keys["nodes"][0].span,
            help="name a cleo playbook `*.cantbook`, or remove `nodes` from a native one",
        )
        return False
    return True


def compile_document(source: SourceFile, root: Optional[YNode], sink: DiagnosticSink, catalog):
    from catalyst_dsl.dialects.cleo.lowering import lower

    _forget_yaml11_key_notes(sink, source)
    if root is None:
        sink.report(
            EMPTY_FILE,
            "the file is empty",
            source.span(0),
            help="a cantbook needs `version: \"1.0\"`, `name` and `nodes`",
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
        if not (
            d.code == NON_STRING_KEY and "YAML 1.1" in d.message and d.span is not None and d.span.file == source.path
        )
    ]


class Reader(NodeReading):
    """A cantbook's whole reading: top-level keys, inputs, nodes, edges and handlers."""

    def read(self, root: YNode) -> Optional[Cantbook]:
        if not isinstance(root, YMap):
            self.sink.report(
                NOT_A_PLAYBOOK,
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
                CLEO_NAME_STYLE,
                f"the cantbook name '{name}' is not kebab-case",
                keys["name"][1].span,
                help="cleo finds playbooks by file stem, catalyst lists and reports them by name:"
                " lower-case words joined by '-' read the same in both",
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

    def version(self, root: YMap, entry) -> None:
        if entry is None:
            self.sink.report(
                MISSING_KEY,
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
                CLEO_VERSION,
                f"`version` is the number {value.text}, not the string \"1.0\"",
                value.span,
                help="quote it: version: \"1.0\"",
            )
        else:
            self.sink.report(
                CLEO_VERSION,
                f"`version` is {kind_of(value)}; cleo knows only \"1.0\"",
                head_span(value),
                help="write version: \"1.0\"",
            )

    def inputs(self, entry) -> list[Input]:
        result: list[Input] = []
        first: dict[str, Input] = {}
        listed = self.mappings(
            entry, "inputs", "an input", help="write each input as `- name: x`", item_help="write `- name: x`"
        )
        for item in listed:
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
                    DUPLICATE_INPUT,
                    f"two inputs are named '{name}'",
                    decl.span,
                    labels=[Label(first[name].span, "first declared here")],
                    help="rename or remove one",
                )
                continue
            if required and decl.default is not None:
                self.sink.report(
                    CLEO_REQUIRED_WITH_DEFAULT,
                    f"the input '{name}' is required and has a default: the default is never used",
                    keys["default"][0].span,
                    help="remove `required: true` to let the default apply, or remove the default",
                )
            first[name] = decl
            result.append(decl)
        return result

    def edges(self, entry, ids: dict[str, int]) -> list[Edge]:
        result = []
        listed = self.mappings(
            entry,
            "edges",
            "an edge",
            help="write each edge as `- from: a` with `to: b`",
            item_help="write `- from: a` with `to: b`",
        )
        for item in listed:
            keys = self.keys(item, EDGE_KEYS, "in an edge")
            ends = []
            for end in ("from", "to"):
                name = self.text(keys.get(end), end, required_in=item)
                if name is not None and name not in ids:
                    self.sink.report(
                        CLEO_UNKNOWN_NODE,
                        f"the edge's `{end}` is '{name}', which names no node",
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
                INVALID_VALUE,
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
            self.sink.report(INVALID_VALUE, "`in` needs a non-empty list", head_span(value), help="write `in: [a, b]`")
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
        result: list[Handler] = []
        first: dict[str, Span] = {}
        listed = self.mappings(
            entry,
            "error_handlers",
            "a handler",
            help="write each handler as `- on: contract_violation` with `action:`",
            item_help="write `- on: contract_violation` with `action: abort`",
        )
        for item in listed:
            keys = self.keys(item, HANDLER_KEYS, "in an error handler")
            for required in ("on", "action"):
                if required not in keys:
                    self.sink.report(
                        MISSING_KEY, f"an error handler needs `{required}`", head_span(item), help=f"add `{required}:`"
                    )
            on = self.enum(keys.get("on"), "on", HANDLER_ON)
            action = self.enum(keys.get("action"), "action", HANDLER_ACTIONS)
            message = self.text(keys.get("message"), "message", non_empty=False)
            if on is None or action is None:
                continue
            span = keys["on"][1].span
            if on in first:
                self.sink.report(
                    CLEO_DUPLICATE_HANDLER,
                    f"a second handler for `{on}`: only the first is used",
                    span,
                    labels=[Label(first[on], "this one is used")],
                    help="merge them into one handler",
                )
                continue
            first[on] = span
            result.append(Handler(on, action, message, span))
        return result
