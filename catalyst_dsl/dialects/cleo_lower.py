"""Lowering a checked cleo cantbook to the IR (DIALECTS.md B5), and saying what cannot run yet.

The graph walk becomes structured steps (B4.2): chains of unconditional edges become
consecutive steps; a node with guarded out-edges becomes an `if`/`else` cascade up to the
branches' join (the immediate post-dominator), ending in a `throw RoutingFailed` when no
guard holds. Constructs whose run semantics need what the interpreter lacks (DIALECTS.md
Part C) are lowered as far as they go and named in `Playbook.unrunnable`, so `catalyst run`
refuses the cantbook instead of running it with other semantics.
"""

from __future__ import annotations

import json
import re
from typing import Optional

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects import cleo_graph as g
from catalyst_dsl.dialects.cleo_model import DASHED_PLACEHOLDER, DEFAULT_CAP, PLACEHOLDER, Cantbook, Edge, Guard, Node, _plain
from catalyst_dsl.dialects.values import ValueLowerer
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.templates import parse_template
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq

#: How deeply guarded branches may nest; a deeper graph is refused with C966, not a crash.
MAX_BRANCH_DEPTH = 200
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
#: Handler triggers and actions as catalyst error codes and policy actions (B4.8).
HANDLER_CODES = {"contract_violation": "ContractViolation", "iteration_cap_exceeded": "IterationCapExceeded", "agentic_timeout": "StepTimeout"}
HANDLER_ACTIONS = {"abort": "Stop", "hitl_escalate": "Inquire", "inject_hint": "Continue"}
#: What each missing construct is, for the reasons `catalyst run` shows (DIALECTS.md Part C).
MISSING = {
    "identity": "agentic nodes name an agent or skill ({nodes}); AI steps have no agent identity yet (DIALECTS C-4)",
    "contracts": "contracts (`requires`, `ensures`, edge `contract`) on {nodes} need step-level assertions (DIALECTS C-1)",
    "inject_into": "`on_failure.inject_into` on {nodes} needs a bounded loop-back block (DIALECTS C-6)",
    "context": "{nodes} read the run-wide context that node outputs merge into (guards, `{{{{ key }}}}` templates), which does not exist yet (DIALECTS C-5)",
    "policy": "approval nodes ({nodes}) need per-checkpoint approval policies, so a conservative gate always waits for a person even under --mode autonomous (DIALECTS C-7)",
}


def lower(book: Cantbook, sink: DiagnosticSink, catalog) -> ir.Playbook:
    return Lowerer(book, sink).playbook()


class Lowerer:
    def __init__(self, book: Cantbook, sink: DiagnosticSink) -> None:
        self.book = book
        self.sink = sink
        #: construct -> node ids that need it, in the order met (a dict as an ordered set).
        self.needs: dict[str, dict[str, None]] = {}
        self.inputs = {i.name for i in book.inputs}
        self.emitted: list[bool] = [False] * len(book.nodes)
        self.refused = False

    def need(self, construct: str, node_id: str) -> None:
        self.needs.setdefault(construct, {})[node_id] = None

    def playbook(self) -> ir.Playbook:
        book = self.book
        steps: tuple[ir.Step, ...] = ()
        writers = [n for n in book.nodes if n.type in ("agentic", "deterministic")]
        if not book.broken and book.entry is not None:
            self.ipdom = g.post_dominators(book.graph, book.order)
            steps = tuple(self.region(book.entry, g.EXIT, 0))
            if writers and not self.refused:
                self.sink.report("C967", "cleo declares no writes: catalyst lets this cantbook's nodes write anywhere in the project, never in .git/ or the state directory",
                                 _first_line(book), help="nothing to do; programs stay confined to the project")
        unrunnable = tuple(MISSING[c].format(nodes=_some(list(ids))) for c, ids in self.needs.items())
        if book.broken or self.refused:
            unrunnable = ("the cantbook has errors (see `catalyst check`)", *unrunnable)
        return ir.Playbook(
            name=book.name or book.source.path, description=book.description, owner=None, dialect="cleo", file=book.source.path,
            inputs=tuple(self.input(i) for i in book.inputs),
            allowed_write_paths=(ir.Lit("**"),) if writers else None,
            error_policy=self.handlers(), steps=steps, span=book.root.span, unrunnable=unrunnable,
        )

    # -- inputs and handlers -------------------------------------------------------------------

    def input(self, decl) -> ir.InputDecl:
        default = decl.default
        value = _plain(default) if default is not None else None
        kind = {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(type(value), "string")
        lowered = None
        if value is not None:
            lowered = ir.Lit(value, span=default.span) if isinstance(default, YScalar) else _value(value, default)
        return ir.InputDecl(decl.name, kind, decl.description, decl.required and value is None, lowered, span=decl.span)

    def handlers(self) -> Optional[ir.ErrorPolicy]:
        if not self.book.handlers:
            return None
        by_code = tuple((HANDLER_CODES[h.on], ir.PolicyAction(HANDLER_ACTIONS[h.action], span=h.span)) for h in self.book.handlers)
        return ir.ErrorPolicy(None, by_code)

    # -- the walk -----------------------------------------------------------------------------------

    def region(self, start: int, stop: int, depth: int) -> list[ir.Step]:
        """The steps from `start` up to (not including) `stop`, following B4.2."""
        book, graph = self.book, self.book.graph
        steps: list[ir.Step] = []
        if depth > MAX_BRANCH_DEPTH:
            node = book.nodes[start]
            self.sink.report("C966", f"guarded branches nest more than {MAX_BRANCH_DEPTH} deep at '{node.id}'", node.id_span, help="split the cantbook into smaller ones")
            self.refused = True
            return steps
        current = start
        while current != stop and current != g.EXIT and not self.refused:
            node = book.nodes[current]
            if self.emitted[current]:
                self.sink.report("C966", f"'{node.id}' is reached by two branches before they join; this graph does not reduce to nested if/else",
                                 node.id_span, help="route both branches through a common node first, or duplicate the node")
                self.refused = True
                break
            self.emitted[current] = True
            steps.append(self.step(node))
            out = [book.edges[e] for e in graph.out[current]]
            if not out:
                current = g.EXIT
            elif len(out) == 1 and out[0].guard is None:
                current = out[0].target
                self.edge_contract(out[0])
            else:
                join = self.ipdom[current]
                branches = [(e, self.region(e.target, join, depth + 1)) for e in out]
                steps.append(self.cascade(node, branches))
                current = join
        return steps

    def edge_contract(self, edge: Edge) -> None:
        if edge.requires or edge.ensures:
            self.need("contracts", self.book.nodes[edge.source].id)

    def cascade(self, node: Node, branches: list[tuple[Edge, list[ir.Step]]]) -> ir.Step:
        """`if g1 … else if g2 … else throw RoutingFailed` over the out-edges of `node`."""
        self.need("context", node.id)
        otherwise: list[ir.Step] = [ir.Step("throw", ir.MapV((
            ir.Entry("code", ir.Lit("RoutingFailed")),
            ir.Entry("message", ir.Lit(f"no edge out of '{node.id}' has a guard that holds")),
        )), span=node.map.span)]
        for edge, steps in reversed(branches):
            self.edge_contract(edge)
            condition = _guard(node, edge.guard)
            if condition is None:
                self.sink.report("C966", f"the guard of this edge out of '{node.id}' cannot be written as a condition", edge.span, help="compare the field with a string, number, boolean or null")
                self.refused = True
                continue
            otherwise = [ir.Step("if", ir.MapV((
                ir.Entry("condition", condition),
                ir.Entry("then", ir.StepsV(tuple(steps))),
                ir.Entry("else", ir.StepsV(tuple(otherwise))),
            )), span=edge.span)]
        return otherwise[0]

    # -- nodes ----------------------------------------------------------------------------------------

    def step(self, node: Node) -> ir.Step:
        keys = node.keys
        if "requires" in keys or "ensures" in keys:
            if node.type != "approval":
                self.need("contracts", node.id)
        if node.inject_into is not None and node.inject_into.value != node.id:
            self.need("inject_into", node.id)
        if node.type == "agentic":
            return self.agentic(node)
        if node.type == "deterministic":
            return self.deterministic(node)
        self.need("policy", node.id)
        config = [ir.Entry("message", self.text(node, keys["prompt"][1]), span=keys["prompt"][0].span)]
        return ir.Step("checkpoint", ir.MapV(tuple(config)), name=node.id, span=node.map.span, name_span=node.id_span)

    def policy(self, node: Node) -> ir.ErrorPolicy:
        cap = node.cap if node.cap is not None else DEFAULT_CAP
        return ir.ErrorPolicy(ir.PolicyAction("Inquire" if node.escalate else "Stop", max(cap, 1) - 1))

    def agentic(self, node: Node) -> ir.Step:
        keys = node.keys
        self.need("identity", node.id)
        config: list[ir.Entry] = []
        if "description" in keys and isinstance(keys["description"][1], YScalar) and isinstance(keys["description"][1].value, str):
            config.append(ir.Entry("prompt", ir.Lit(keys["description"][1].value), span=keys["description"][0].span))
        if isinstance(keys.get("inputs", (None, None))[1], YMap):
            entries = tuple(ir.Entry(k.text, self.text(node, v), span=k.span) for k, v in keys["inputs"][1].pairs if isinstance(v, YScalar))
            config.append(ir.Entry("context", ir.MapV(entries), span=keys["inputs"][0].span))
        if isinstance(keys.get("allowed_tools", (None, None))[1], YSeq):
            items = tuple(ir.Lit(i.value, span=i.span) for i in keys["allowed_tools"][1].items if isinstance(i, YScalar))
            config.append(ir.Entry("tools", ir.ListV(items), span=keys["allowed_tools"][0].span))
        for key in ("model", "provider", "role"):
            if key in keys and isinstance(keys[key][1], YScalar):
                config.append(ir.Entry(key, ir.Lit(keys[key][1].value, span=keys[key][1].span), span=keys[key][0].span))
        return ir.Step("ai-prompt", ir.MapV(tuple(config)), name=node.id, error_policy=self.policy(node), span=node.map.span, name_span=node.id_span)

    def deterministic(self, node: Node) -> ir.Step:
        keys = node.keys
        command = keys["command"][1]
        argv = [ir.Lit(command.value, span=command.span)]
        if isinstance(keys.get("args", (None, None))[1], YSeq):
            argv += [self.text(node, a) for a in keys["args"][1].items if isinstance(a, YScalar)]
        config = [ir.Entry("argv", ir.ListV(tuple(argv)), span=keys["command"][0].span)]
        if "cwd" in keys:
            config.append(ir.Entry("cwd", self.text(node, keys["cwd"][1]), span=keys["cwd"][0].span))
        if isinstance(keys.get("env", (None, None))[1], YMap):
            entries = tuple(ir.Entry(k.text, self.text(node, v), span=k.span) for k, v in keys["env"][1].pairs)
            config.append(ir.Entry("env", ir.MapV(entries), span=keys["env"][0].span))
        timeout = None
        if "timeout_ms" in keys and keys["timeout_ms"][1].value > 0:  # 0 is no limit, as in cleo's runner
            timeout = keys["timeout_ms"][1].value / 1000
        return ir.Step("command", ir.MapV(tuple(config)), name=node.id, error_policy=self.policy(node), timeout=timeout,
                       writes=(ir.Lit("**"),), writes_declared=True, span=node.map.span, action_span=keys["command"][0].span, name_span=node.id_span)

    def text(self, node: Node, scalar: YScalar) -> ir.Value:
        """A rendered value (B4.9): a native template when it reads only inputs, else the text
        as written and the node marked as needing the run-wide context."""
        value = scalar.value
        if not isinstance(value, str) or "{{" not in value:
            return ir.Lit(value, span=scalar.span)
        names = [m.group(1) for m in PLACEHOLDER.finditer(value)]
        reads_inputs_only = names and not DASHED_PLACEHOLDER.search(value) and all(
            (n.split(".")[0] == "inputs" and n.count(".") >= 1 and n.split(".")[1] in self.inputs) or n.split(".")[0] in self.inputs for n in names)
        if reads_inputs_only:
            scratch = DiagnosticSink()
            tmpl = ValueLowerer(scratch, _no_steps, _no_inputs).template(scalar, t.STRING)
            if tmpl is not None and not scratch.items:
                return tmpl
        self.need("context", node.id)
        return ir.Lit(value, span=scalar.span)


def _guard(node: Node, guard: Guard) -> Optional[ir.Tmpl]:
    """A `when` guard as a condition on the routing node's result (B4.4).

    cleo reads `field` from the merged context (C-5); until that exists, the field is read
    where it comes from in the cantbooks people write: the routing node's own output (an
    agent's answer, a program's `<id>_stdout`/`<id>_exitCode`), or an input of that name.
    """
    subject = _subject(node, guard.field)
    op, value = guard.operator, guard.value
    is_nan = lambda v: isinstance(v, float) and v != v
    if op in ("equals", "notEquals") and is_nan(value):
        # cleo compares like Object.is: NaN equals NaN, the one value not equal to itself.
        text = f"{subject} !== {subject}" if op == "equals" else f"{subject} === {subject}"
    elif op == "equals":
        text = f"{subject} === {_literal(value)}"
    elif op == "notEquals":
        text = f"{subject} !== {_literal(value)}"
    elif op == "in":
        text = f"[{', '.join(_literal(v) for v in value if not is_nan(v))}].includes({subject})"
        if any(is_nan(v) for v in value):
            text += f" || {subject} !== {subject}"
    elif op == "exists":
        text = f"{subject} !== null" if value else f"{subject} === null"
    else:
        text = f"!!({subject})" if value else f"!({subject})"
    expression = "${{ " + text + " }}"
    parsed = parse_template(expression)
    if parsed.errors:  # not expected: every piece above is written to parse; never a crash
        return None
    return ir.Tmpl(expression, parsed.parts, span=guard.node.span)


def _literal(value: object) -> str:
    """A YAML scalar as an expression literal (infinities as numbers too large for a float)."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "1e999" if value > 0 else "-1e999"
    return json.dumps(value)


def _subject(node: Node, field: str) -> str:
    if node.type == "deterministic" and field in (f"{node.id}_stdout", f"{node.id}_exitCode"):
        field = field[len(node.id) + 1:]
    if IDENTIFIER.match(node.id) and IDENTIFIER.match(field):
        return f"{node.id}.{field}"
    # An id with '-' or a field with spaces cannot be written with dots in an expression.
    return f"get({json.dumps(node.id + '.' + field)})"


def _value(value: object, node: YNode) -> ir.Value:
    if isinstance(value, list):
        return ir.ListV(tuple(_value(v, node) for v in value))
    if isinstance(value, dict):
        return ir.MapV(tuple(ir.Entry(k, _value(v, node)) for k, v in value.items()))
    return ir.Lit(value, span=node.span)


def _some(ids: list[str], shown: int = 5) -> str:
    """Node ids for a message: the first few, then how many more."""
    named = ", ".join(f"'{i}'" for i in ids[:shown])
    return named if len(ids) <= shown else f"{named} and {len(ids) - shown:,} more"


def _first_line(book: Cantbook):
    return book.source.span(book.root.start, book.root.start + max(1, book.source.text.find("\n", book.root.start) - book.root.start))


def _no_steps(node):  # templates never hold steps
    return ir.StepsV(())


def _no_inputs(node):
    return ir.InputsV(())
