"""Lowering a checked cleo cantbook to the IR (DIALECTS.md B5).

The graph walk becomes structured steps (B4.2): chains of unconditional edges become
consecutive steps; a node with guarded out-edges becomes an `if`/`else` cascade up to the
branches' join (the immediate post-dominator), ending in a `throw RoutingFailed` when no
guard holds. cleo's flat context is the playbook's `bindings` object: each node merges its
output into it (`bindings:` on its step) and guards and `{{ key }}` templates read it (C-5).
Contracts are the step's `requires:`/`ensures:` checks raising ContractViolation (C-1), an
`inject_into` loop-back is a `retry-block` (C-6), an approval node a checkpoint with a
policy (C-7), and an agentic node an `ai-prompt` with its agent identity (C-4, C-8).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Optional

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects import cleo_graph as g
from catalyst_dsl.dialects.cleo_model import (
    DEFAULT_CAP,
    LAST_APPROVAL,
    LAST_APPROVAL_KEYS,
    PLACEHOLDER,
    PROGRAM_OUTPUTS,
    Cantbook,
    Edge,
    Guard,
    Node,
    _plain,
)
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.ir.approval_rules import DEFAULT_RULES
from catalyst_dsl.records import replace
from catalyst_dsl.syntax.expr.templates import parse_template
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq

#: How deeply guarded branches may nest; a deeper graph is refused with C966, not a crash.
MAX_BRANCH_DEPTH = 200
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
#: Handler triggers and actions as catalyst error codes and policy actions (B4.8).
HANDLER_CODES = {
    "contract_violation": "ContractViolation",
    "iteration_cap_exceeded": "IterationCapExceeded",
    "agentic_timeout": "StepTimeout",
}
HANDLER_ACTIONS = {"abort": "Stop", "hitl_escalate": "Inquire", "inject_hint": "Continue"}
#: The action each node type lowers to (B5); the editor's hover of a node type reads it too.
NODE_ACTIONS = {"agentic": "ai-prompt", "deterministic": "command", "approval": "checkpoint"}
#: The error code of a failed contract (B4.6), and of an approval node answered `reject`.
CONTRACT = "ContractViolation"
REJECTED = "ApprovalRejected"
#: The answers of an approval node: `approve` (the default: ENTER, an approval without
#: `--select`) and `reject`, which fails the run as cleo's rejectGate does (B4.10).
APPROVAL_OPTIONS = ("approve", "reject")
#: The registered `ensures.schema` names that check something (B2.1), as JSON Schemas.
_NON_BLANK = {"type": "string", "pattern": r"\S"}
SCHEMAS = {
    "task_tree": {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "required": ["title", "acceptance"],
            "properties": {
                "title": _NON_BLANK,
                "acceptance": {"type": "array", "minItems": 1, "contains": _NON_BLANK},
                "parentId": {"type": "string"},
                "depends": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
    "evidence": {"anyOf": [_NON_BLANK, {"type": "array", "minItems": 1}, {"type": "object", "minProperties": 1}]},
}
#: The name of the step that checks a node's `requires` under `inject_hint` (see Lowerer.hint).
REQUIRES_CHECK = "{} (requires)"
#: What a node merges into the context: an object, any keys.
_OBJECT = t.ObjectT((), t.ANY)

#: One lowered step and the nodes it holds (itself, or every node of an `if` or a block), so
#: a loop-back can find the steps from its target to its node.
Item = tuple[ir.Step, set]


def lower(book: Cantbook, sink: DiagnosticSink, catalog) -> ir.Playbook:
    return Lowerer(book, sink).playbook()


class Lowerer:
    def __init__(self, book: Cantbook, sink: DiagnosticSink) -> None:
        self.book = book
        self.sink = sink
        self.inputs = {i.name for i in book.inputs}
        self.emitted: list[bool] = [False] * len(book.nodes)
        self.refused = False
        self.by_id = {n.id: n for n in book.nodes}
        #: Nodes whose `inject_into` became a retry-block around them.
        self.looped: set[int] = set()
        self.loop_backs: dict[int, int] = {}
        # The first handler per `on` counts (a second one is C961).
        self.handler = {h.on: HANDLER_ACTIONS[h.action] for h in reversed(book.handlers)}
        self.message = {h.on: h.message for h in reversed(book.handlers)}

    def refuse(self, message: str, span, help: str) -> None:
        self.sink.report("C966", message, span, help=help)
        self.refused = True

    def playbook(self) -> ir.Playbook:
        book = self.book
        steps: tuple[ir.Step, ...] = ()
        writers = [n for n in book.nodes if n.type in ("agentic", "deterministic")]
        if not book.broken and book.entry is not None:
            self.ipdom = g.post_dominators(book.graph, book.order)
            self.loop_backs = self._loop_backs()
            items = self.region(book.entry, g.EXIT, 0)
            for n in self.loop_backs:
                if n not in self.looped and not self.refused:
                    node = book.nodes[n]
                    self.refuse(
                        f"'{node.id}' loops back to '{node.inject_into.value}', which is not before it on the same branch",
                        node.inject_into.span,
                        help="loop back to a node on the same chain or branch as this one",
                    )
            # A refused graph keeps no steps: half a lowering would only add diagnostics of its own.
            steps = tuple(step for step, _ in items) if not self.refused else ()
            if writers and not self.refused:
                self.sink.report(
                    "C967",
                    "cleo declares no writes: catalyst lets this cantbook's nodes write anywhere in the project, never in .git/ or the state directory",
                    _first_line(book),
                    help="nothing to do; programs stay confined to the project",
                )
        unrunnable = ("the cantbook has errors (see `catalyst check`)",) if book.broken or self.refused else ()
        return ir.Playbook(
            name=book.name or book.source.path,
            description=book.description,
            owner=None,
            dialect="cleo",
            file=book.source.path,
            inputs=tuple(self.input(i) for i in book.inputs),
            allowed_write_paths=(ir.Lit("**"),) if writers else None,
            error_policy=self.handlers(),
            steps=steps,
            span=book.root.span,
            unrunnable=unrunnable,
        )

    def _loop_backs(self) -> dict[int, int]:
        """node -> the node its `inject_into` names (naming itself is a plain retry)."""
        found = {}
        for node in self.book.nodes:
            target = self.by_id.get(node.inject_into.value) if node.inject_into is not None else None
            if target is not None and target.index != node.index:
                found[node.index] = target.index
        return found

    # -- inputs and handlers -------------------------------------------------------------------

    def input(self, decl) -> ir.InputDecl:
        default = decl.default
        value = _plain(default) if default is not None else None
        kind = {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(
            type(value), "string"
        )
        lowered = None
        if value is not None:
            lowered = ir.Lit(value, span=default.span) if isinstance(default, YScalar) else _value(value, default)
        return ir.InputDecl(decl.name, kind, decl.description, decl.required and value is None, lowered, span=decl.span)

    def handlers(self) -> Optional[ir.ErrorPolicy]:
        if not self.book.handlers:
            return None
        by_code = tuple(
            (HANDLER_CODES[h.on], ir.PolicyAction(HANDLER_ACTIONS[h.action], span=h.span, message=h.message))
            for h in self.book.handlers
        )
        return ir.ErrorPolicy(None, by_code)

    # -- the walk -----------------------------------------------------------------------------------

    def region(self, start: int, stop: int, depth: int) -> list[Item]:
        """The steps from `start` up to (not including) `stop`, following B4.2."""
        book, graph = self.book, self.book.graph
        items: list[Item] = []
        if depth > MAX_BRANCH_DEPTH:
            node = book.nodes[start]
            self.refuse(
                f"guarded branches nest more than {MAX_BRANCH_DEPTH} deep at '{node.id}'",
                node.id_span,
                help="split the cantbook into smaller ones",
            )
            return items
        current = start
        while current != stop and current != g.EXIT and not self.refused:
            node = book.nodes[current]
            if self.emitted[current]:
                self.refuse(
                    f"'{node.id}' is reached by two branches before they join; this graph does not reduce to nested if/else",
                    node.id_span,
                    help="route both branches through a common node first, or duplicate the node",
                )
                break
            self.emitted[current] = True
            step = self.step(node)
            if step.requires is not None and self.handler.get("contract_violation") == "Continue":
                items.append((self.hint(node, step.requires), set()))
                step = replace(step, requires=None)
            items.append((step, {current}))
            out = [book.edges[e] for e in graph.out[current]]
            if not out:
                current = g.EXIT
            elif len(out) == 1 and out[0].guard is None:
                current = out[0].target
            else:
                join = self.ipdom[current]
                branches = [(e, self.edge_check(e) + self.region(e.target, join, depth + 1)) for e in out]
                held: set = set()
                for _, branch in branches:
                    for _, nodes in branch:
                        held |= nodes
                items.append((self.cascade(node, [(e, [s for s, _ in b]) for e, b in branches]), held))
                current = join
        return self.wrap_loop_backs(items)

    def wrap_loop_backs(self, items: list[Item]) -> list[Item]:
        """Each `inject_into` whose node and target are both among `items` becomes a retry-block
        from the target's step to the node's (C-6): the node has max(cap, 1) attempts in the
        whole run, loop-backs included, then IterationCapExceeded (B4.7).

        Inner loops are wrapped first (by the node's position); wrapped items are merged into
        the block's first one through a union-find over positions and a list of the positions
        still standing, so each item is walked over once however many loops there are."""
        where: dict[int, int] = {}
        for i, (_, nodes) in enumerate(items):
            for n in nodes:
                where[n] = i
        loops = sorted(
            (where[n], n)
            for n in where
            if n in self.loop_backs and n not in self.looped and self.loop_backs[n] in where
        )
        if not loops or self.refused:
            return items
        steps = [step for step, _ in items]
        held = [set(nodes) for _, nodes in items]
        parent = list(range(len(items)))
        after = list(range(1, len(items) + 1))  # the next position still standing

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for _, n in loops:
            node, target = self.book.nodes[n], self.loop_backs[n]
            first, last = find(where[target]), find(where[n])
            # The block starts at the target's own step: not inside a branch, nor inside the
            # block of a loop that starts earlier (two loops that overlap without nesting).
            if where[target] > where[n]:
                self.refuse(
                    f"`inject_into: {node.inject_into.value}` names a node that runs after '{node.id}': cleo would jump ahead to it, which catalyst does not lower",
                    node.inject_into.span,
                    help="name an earlier node to loop back to, or route to the later one with an edge",
                )
                return items
            if first != where[target] or items[first][1] != {target} or first >= last:
                self.refuse(
                    f"the loop back from '{node.id}' to '{node.inject_into.value}' crosses a branch or another loop-back",
                    node.inject_into.span,
                    help="loop back to an earlier node of the same chain, one loop-back inside another at most",
                )
                return items
            self.looped.add(n)
            block, j = [], first
            while j <= last:
                block.append(steps[j])
                if j != first:
                    parent[j] = first
                    held[first] |= held[j]
                j = after[j]
            after[first] = j
            cap = max(node.cap if node.cap is not None else DEFAULT_CAP, 1)
            policy = ir.ErrorPolicy(ir.PolicyAction("Inquire")) if node.escalate else None
            # Only the node's own failure loops back; another node's failure ends the block.
            steps[first] = ir.Step(
                "retry-block",
                ir.MapV(
                    (
                        ir.Entry("steps", ir.StepsV(tuple(block))),
                        ir.Entry("maxAttempts", ir.Lit(cap)),
                        ir.Entry("retryFrom", ir.ListV((ir.Lit(node.id),))),
                    )
                ),
                error_policy=policy,
                span=node.inject_into.span,
            )
        standing, j = [], 0
        while j < len(items):
            standing.append((steps[j], held[j]))
            j = after[j]
        return standing

    def cascade(self, node: Node, branches: list[tuple[Edge, list[ir.Step]]]) -> ir.Step:
        """`if g1 … else if g2 … else throw RoutingFailed` over the out-edges of `node`."""
        otherwise: list[ir.Step] = [
            ir.Step(
                "throw",
                ir.MapV(
                    (
                        ir.Entry("code", ir.Lit("RoutingFailed")),
                        ir.Entry("message", ir.Lit(f"no edge out of '{node.id}' has a guard that holds")),
                    )
                ),
                span=node.map.span,
            )
        ]
        for edge, steps in reversed(branches):
            condition = _guard(edge.guard, self.inputs)
            if condition is None:
                self.refuse(
                    f"the guard of this edge out of '{node.id}' cannot be written as a condition",
                    edge.span,
                    help="compare the field with a string, number, boolean or null",
                )
                continue
            otherwise = [
                ir.Step(
                    "if",
                    ir.MapV(
                        (
                            ir.Entry("condition", condition),
                            ir.Entry("then", ir.StepsV(tuple(steps))),
                            ir.Entry("else", ir.StepsV(tuple(otherwise))),
                        )
                    ),
                    span=edge.span,
                )
            ]
        return otherwise[0]

    # -- nodes ----------------------------------------------------------------------------------------

    def step(self, node: Node) -> ir.Step:
        if node.type == "agentic":
            return self.agentic(node)
        if node.type == "deterministic":
            return self.deterministic(node)
        return self.approval(node)

    def approval(self, node: Node) -> ir.Step:
        """A checkpoint with the rendered prompt, `approve` or `reject`, the node's policy, and
        the decision bound as `__lastApproval` for the routing after it (B4.10)."""
        keys = node.keys
        ref = _ref(node.id)
        options = ir.ListV(
            tuple(ir.MapV((ir.Entry("key", ir.Lit(k)), ir.Entry("label", ir.Lit(k)))) for k in APPROVAL_OPTIONS)
        )
        config = [
            ir.Entry("message", self.text(keys["prompt"][1]), span=keys["prompt"][0].span),
            ir.Entry("options", options),
            ir.Entry("default", ir.Lit(APPROVAL_OPTIONS[0])),
            ir.Entry("policy", self.gate_policy(node), span=keys["policy"][0].span if "policy" in keys else None),
        ]
        approved = _expression(f"{ref}.selected !== {json.dumps(APPROVAL_OPTIONS[1])}", node.map.span)
        ensures = ir.Checks(
            (ir.Check("expression", ir.MapV((ir.Entry("expression", approved),)), span=node.map.span),),
            REJECTED,
            span=node.map.span,
        )
        fields = [f"nodeId: {json.dumps(node.id)}", *(f"{key}: {ref}.{path}" for key, path in LAST_APPROVAL_KEYS)]
        last = _expression("{" + ", ".join(fields) + "}", node.map.span, t.ANY)
        return ir.Step(
            NODE_ACTIONS["approval"],
            ir.MapV(tuple(config)),
            name=node.id,
            span=node.map.span,
            name_span=node.id_span,
            ensures=ensures,
            bindings=ir.MapV((ir.Entry(LAST_APPROVAL, last),)),
        )

    def edge_check(self, edge: Edge) -> list[Item]:
        """The `contract.requires` of a guarded edge into a node with other ways in: checked
        as the first step of the edge's branch, when the walk crosses that edge (B4.6)."""
        graph = self.book.graph
        if not edge.requires or len(graph.into[edge.target]) == 1:
            return []
        source, target = self.book.nodes[edge.source], self.book.nodes[edge.target]
        checks = _checks(list(dict.fromkeys(_has(k) for k in edge.requires)), source)
        step = ir.Step(
            "log-debug",
            ir.MapV((ir.Entry("message", ir.Lit(f"the contract of '{source.id}' → '{target.id}' holds")),)),
            name=f"{source.id} → {target.id} (contract)",
            requires=checks,
            span=edge.span,
        )
        return [(step, set())]

    def hint(self, node: Node, requires: ir.Checks) -> ir.Step:
        """`inject_hint` for a broken `requires` (B4.3, B4.8): the violation is recorded and
        shown, `__contractViolation`, `__lastError`, `__lastFailedNode` and `__hint` are set,
        and the node runs all the same. A `try` around a step that only checks, whose
        `catch` binds those keys."""
        span, message = node.map.span, self.message.get("contract_violation")
        # Stop: the failure goes to the `catch` beside it, not to the playbook's handler.
        check = ir.Step(
            "log-debug",
            ir.MapV((ir.Entry("message", ir.Lit(f"the requires of '{node.id}' hold")),)),
            requires=requires,
            name=REQUIRES_CHECK.format(node.id),
            error_policy=ir.ErrorPolicy(ir.PolicyAction("Stop")),
            span=span,
        )
        keys = [
            ir.Entry("__contractViolation", _expression("$error.message", span, t.ANY)),
            ir.Entry("__lastError", _expression("$error", span, t.ANY)),
            ir.Entry("__lastFailedNode", ir.Lit(node.id)),
            ir.Entry("__hint", ir.Lit(message)),
        ]
        said = f"'{node.id}' runs although its requires do not hold" + (f": {message}" if message else "")
        warn = ir.Step(
            "log-warning", ir.MapV((ir.Entry("message", ir.Lit(said)),)), bindings=ir.MapV(tuple(keys)), span=span
        )
        catch = ir.MapV((ir.Entry("code", ir.Lit(CONTRACT)), ir.Entry("steps", ir.StepsV((warn,)))))
        return ir.Step(
            "try", ir.MapV((ir.Entry("steps", ir.StepsV((check,))), ir.Entry("catch", ir.ListV((catch,))))), span=span
        )

    def gate_policy(self, node: Node) -> ir.Value:
        """`conservative` (the default) needs a person; `permissive` passes by itself when
        cleo's default rules auto-approve every program up to the next gate, `custom` when the
        project's `approval-rules` setting does (B4.10)."""
        policy = node.keys.get("policy", (None, None))[1]
        kind = policy.value if isinstance(policy, YScalar) else None
        if kind not in ("permissive", "custom"):
            return ir.Lit("human")
        rules: ir.Value = ir.Lit("project")
        if kind == "permissive":
            rules = ir.ListV(
                tuple(
                    ir.MapV(
                        (ir.Entry("action", ir.Lit(a)), ir.Entry("reason", ir.Lit(r)), ir.Entry("pattern", ir.Lit(p)))
                    )
                    for a, r, p in DEFAULT_RULES
                )
            )
        commands = tuple(ir.Lit(c) for c in self.guarded_commands(node))
        return ir.MapV((ir.Entry("rules", rules), ir.Entry("commands", ir.ListV(commands))))

    def guarded_commands(self, gate: Node) -> list[str]:
        """The command lines of the deterministic nodes after `gate` up to the next gate or the
        end, argv joined by single spaces as cleo's policy reads them (B4.10)."""
        book, seen, lines = self.book, {gate.index}, []
        stack = list(book.graph.successors(gate.index))
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            node = book.nodes[n]
            if node.type == "approval":
                continue
            if node.type == "deterministic":
                args = node.keys.get("args", (None, None))[1]
                words = (
                    [node.keys["command"][1].value, *(a.value for a in args.items if isinstance(a, YScalar))]
                    if isinstance(args, YSeq)
                    else [node.keys["command"][1].value]
                )
                lines.append(" ".join(str(w) for w in words))
            stack.extend(book.graph.successors(n))
        return lines

    def policy(self, node: Node) -> ir.ErrorPolicy:
        """The node's attempts (max(cap, 1), B4.7), then `escalate` or the cap handler; a
        contract that fails goes to the contract handler at once (B4.6), an agent's timeout to
        the `agentic_timeout` handler. A node a loop-back block ends fails into the block."""
        cap = max(node.cap if node.cap is not None else DEFAULT_CAP, 1)
        retries = 0 if node.index in self.loop_backs else cap - 1
        looped = node.index in self.loop_backs
        spent = "Stop" if looped else "Inquire" if node.escalate else self.handler.get("iteration_cap_exceeded", "Stop")
        spent_message = None if looped or node.escalate else self.message.get("iteration_cap_exceeded")
        by_code = [
            (
                CONTRACT,
                ir.PolicyAction(
                    self.handler.get("contract_violation", "Stop"), message=self.message.get("contract_violation")
                ),
            )
        ]
        if node.type == "agentic" and "agentic_timeout" in self.handler:
            by_code.append(
                (
                    "StepTimeout",
                    ir.PolicyAction(self.handler["agentic_timeout"], retries, message=self.message["agentic_timeout"]),
                )
            )
        return ir.ErrorPolicy(ir.PolicyAction(spent, retries, message=spent_message), tuple(by_code))

    def contracts(self, node: Node) -> tuple[Optional[ir.Checks], Optional[ir.Checks]]:
        """The node's `requires`/`ensures` and the contracts of the edges around it (B4.6), as
        checks on context keys raising ContractViolation. An edge's `requires` is checked on
        crossing it: before its target when the target has no other way in, else after its
        source when the source has no other way out; its `ensures` after its target."""
        book, graph = self.book, self.book.graph
        before = [_has(k) for k in node.requires_fields]
        after = [self.produced(node, k) for k in node.ensures_keys]
        if node.ensures_exit_code is not None and node.type == "deterministic":
            after.append(f"{_ref(node.id)}.exitCode === {node.ensures_exit_code}")
        incoming = [book.edges[e] for e in graph.into[node.index]]
        for edge in incoming:
            if not (edge.requires or edge.ensures):
                continue
            if len(incoming) == 1:
                before += [_has(k) for k in edge.requires]
                after += [self.produced(node, k) for k in edge.ensures]
                continue
            source = book.nodes[edge.source]
            # An edge's `requires` out of a branching node is its branch's first step (edge_check).
            if edge.ensures:
                self.refuse(
                    f"the contract of the edge '{source.id}' → '{node.id}' cannot be checked on that edge alone: '{node.id}' has other ways in",
                    edge.span,
                    help=f"write the keys as `requires.fields` or `ensures.outputFiles` of '{node.id}'",
                )
        outgoing = graph.out[node.index]
        if len(outgoing) == 1:
            edge = book.edges[outgoing[0]]
            if edge.requires and len(graph.into[edge.target]) != 1:
                after += [self.produced(node, k) for k in edge.requires]
        # A key both the node and an edge into it require is checked once.
        ensures = _checks(list(dict.fromkeys(after)), node)
        schema = self.schema(node)
        if schema is not None:
            ensures = ir.Checks((*(ensures.checks if ensures else ()), schema), CONTRACT, span=node.map.span)
        return _checks(list(dict.fromkeys(before)), node), ensures

    def produced(self, node: Node, key: str) -> str:
        """Whether `key` is in the context once the node's output is merged (ensures run
        before the merge, so they read the node's own result too)."""
        if node.type == "deterministic" and key in {node.id + suffix for suffix, _ in PROGRAM_OUTPUTS}:
            return "true"
        if node.type == "agentic":
            return f"{_has(key)} || Object.keys({_ref(node.id)} ?? {{}}).includes({json.dumps(key)})"
        return _has(key)

    def schema(self, node: Node) -> Optional[ir.Check]:
        """`ensures.schema` (B2.1) as a `json-schema` check of the context key of that name;
        the other registered names accept anything, as in cleo."""
        schema = SCHEMAS.get(node.ensures_schema)
        if schema is None:
            return None
        key = json.dumps(node.ensures_schema)
        value = (
            f"(({_ref(node.id)} ?? {{}})[{key}] ?? bindings[{key}])" if node.type == "agentic" else f"bindings[{key}]"
        )
        return ir.Check(
            "json-schema",
            ir.MapV(
                (
                    ir.Entry("value", _expression(value, node.map.span, t.ANY)),
                    ir.Entry("schema", _value(schema, node.map)),
                )
            ),
            span=node.map.span,
        )

    def agentic(self, node: Node) -> ir.Step:
        keys = node.keys
        config: list[ir.Entry] = []
        description = _scalar(keys, "description")
        agent = _scalar(keys, "agent") or _scalar(keys, "skill")
        # cleo never renders `description` (documentation only), so it is sent as written.
        prompt = (
            description
            if isinstance(description, str) and description.strip()
            else f"Run the cleo node '{node.id}' as {agent}."
        )
        config.append(ir.Entry("prompt", ir.Lit(prompt)))
        # cleo hands the agent the context overlaid with the node's rendered inputs (B4.5).
        entries = [
            ir.Entry("inputs", _expression("inputs", node.map.span, t.ANY)),
            ir.Entry("bindings", _expression("bindings", node.map.span, t.ANY)),
        ]
        if isinstance(keys.get("inputs", (None, None))[1], YMap):
            named = {k.text for k, _ in keys["inputs"][1].pairs}
            entries = [e for e in entries if e.key not in named]
            entries += [
                ir.Entry(k.text, self.text(v, t.ANY), span=k.span)
                for k, v in keys["inputs"][1].pairs
                if isinstance(v, YScalar)
            ]
        if node.index in self.loop_backs.values():
            # The node a loop-back starts again from hears why (cleo puts these in the context).
            entries += [
                ir.Entry("__lastError", _expression("__lastError", node.map.span, t.ANY)),
                ir.Entry(
                    "__lastFailedNode",
                    _expression("__lastError == null ? null : __lastError.step", node.map.span, t.ANY),
                ),
            ]
        config.append(ir.Entry("context", ir.MapV(tuple(entries))))
        for cleo_key, key in (("allowed_tools", "tools"), ("allowed_skills", "skills"), ("context_files", "readPaths")):
            if isinstance(keys.get(cleo_key, (None, None))[1], YSeq):
                items = tuple(ir.Lit(i.value, span=i.span) for i in keys[cleo_key][1].items if isinstance(i, YScalar))
                config.append(ir.Entry(key, ir.ListV(items), span=keys[cleo_key][0].span))
        for key in ("agent", "skill", "profile", "model", "provider", "role"):
            if key in keys and isinstance(keys[key][1], YScalar):
                config.append(ir.Entry(key, ir.Lit(keys[key][1].value, span=keys[key][1].span), span=keys[key][0].span))
        config.append(ir.Entry("return", ir.Lit("a JSON object: the context keys this node produces")))
        requires, ensures = self.contracts(node)
        return ir.Step(
            NODE_ACTIONS["agentic"],
            ir.MapV(tuple(config)),
            name=node.id,
            error_policy=self.policy(node),
            span=node.map.span,
            name_span=node.id_span,
            requires=requires,
            ensures=ensures,
            bindings=_expression(_ref(node.id), node.map.span, _OBJECT),
        )

    def deterministic(self, node: Node) -> ir.Step:
        keys = node.keys
        command = keys["command"][1]
        argv = [ir.Lit(command.value, span=command.span)]
        if isinstance(keys.get("args", (None, None))[1], YSeq):
            argv += [self.text(a) for a in keys["args"][1].items if isinstance(a, YScalar)]
        config = [ir.Entry("argv", ir.ListV(tuple(argv)), span=keys["command"][0].span)]
        if "cwd" in keys:
            config.append(ir.Entry("cwd", self.text(keys["cwd"][1]), span=keys["cwd"][0].span))
        if isinstance(keys.get("env", (None, None))[1], YMap):
            entries = tuple(ir.Entry(k.text, self.text(v), span=k.span) for k, v in keys["env"][1].pairs)
            config.append(ir.Entry("env", ir.MapV(entries), span=keys["env"][0].span))
        timeout = None
        if "timeout_ms" in keys and keys["timeout_ms"][1].value > 0:  # 0 is no limit, as in cleo's runner
            timeout = keys["timeout_ms"][1].value / 1000
        ref = _ref(node.id)
        # What cleo merges into the context for a program that succeeded (B4.5).
        bindings = ir.MapV(
            tuple(
                ir.Entry(node.id + suffix, _expression(f"{ref}.{field}", node.map.span, t.ANY))
                for suffix, field in PROGRAM_OUTPUTS
            )
        )
        requires, ensures = self.contracts(node)
        return ir.Step(
            NODE_ACTIONS["deterministic"],
            ir.MapV(tuple(config)),
            name=node.id,
            error_policy=self.policy(node),
            timeout=timeout,
            writes=(ir.Lit("**"),),
            writes_declared=True,
            span=node.map.span,
            action_span=keys["command"][0].span,
            name_span=node.id_span,
            requires=requires,
            ensures=ensures,
            bindings=bindings,
        )

    def text(self, scalar: YScalar, expected: t.Type = t.STRING) -> ir.Value:
        """A rendered value (B4.9): cleo's `{{ name }}` placeholders as catalyst templates over
        the inputs (`{{ inputs.x }}`, `{{ x }}` for an input) and the run-wide context (any
        other name: `{{ bindings.name }}`). A value that is one placeholder keeps its type
        where any type is welcome (agentic `inputs`)."""
        value = scalar.value
        if not isinstance(value, str) or not PLACEHOLDER.search(value):
            return ir.Lit(value, span=scalar.span)
        whole = PLACEHOLDER.fullmatch(value.strip())
        if whole is not None and isinstance(expected, t.AnyT):
            text = "${{ " + self.reference(whole.group(1)) + " }}"
        else:
            pieces, at = [], 0
            for m in PLACEHOLDER.finditer(value):
                pieces.append(_escaped(value[at : m.start()]))
                pieces.append("{{ " + self.reference(m.group(1)) + " }}")
                at = m.end()
            pieces.append(_escaped(value[at:]))
            text = "".join(pieces)
        parsed = parse_template(text)
        if parsed.errors or not parsed.has_templates:  # not expected: every piece is written to parse
            self.refuse(
                f"`{value}` cannot be written as a catalyst template",
                scalar.span,
                help="write placeholders as `{{ name }}`",
            )
            return ir.Lit(value, span=scalar.span)
        return ir.Tmpl(text, parsed.parts, span=scalar.span, expected=expected)

    def reference(self, name: str) -> str:
        parts = name.split(".")
        if parts[0] == "inputs" and len(parts) > 1 and parts[1] in self.inputs:
            return name
        if parts[0] in self.inputs:
            return name
        return "bindings." + name


def _escaped(text: str) -> str:
    """Text between cleo placeholders, with braces catalyst would read as a template kept as text."""
    return text.replace("{{", "\\{{")


def _scalar(keys, key: str):
    value = keys.get(key, (None, None))[1]
    return value.value if isinstance(value, YScalar) else None


def _has(key: str) -> str:
    """Whether the context holds `key` as its own key, even with a null value (B4.4)."""
    return f"Object.keys(bindings).includes({json.dumps(key)})"


def _ref(node_id: str) -> str:
    """A node's result in an expression: by name, or through get() for an id with '-'."""
    return node_id if IDENTIFIER.match(node_id) else f"get({json.dumps(node_id)})"


def _expression(text: str, span, expected: t.Type = t.BOOLEAN) -> ir.Tmpl:
    expression = "${{ " + text + " }}"
    return ir.Tmpl(expression, _parsed(expression).parts, span=span, expected=expected)


@functools.lru_cache(maxsize=4096)
def _parsed(expression: str):
    """An expression this module writes, parsed once: the same few texts recur on every
    node (`bindings`, a guard on one field, a key's check). The parts are immutable."""
    return parse_template(expression)


def _checks(texts: list[str], node: Node) -> Optional[ir.Checks]:
    if not texts:
        return None
    checks = tuple(
        ir.Check("expression", ir.MapV((ir.Entry("expression", _expression(x, node.map.span)),)), span=node.map.span)
        for x in texts
    )
    return ir.Checks(checks, CONTRACT, span=node.map.span)


def _guard(guard: Guard, inputs: set[str]) -> Optional[ir.Tmpl]:
    """A `when` guard as a condition on the run-wide context after the routing node's output
    was merged (B4.4). `has` is "an own key of the context"; an input is in it from the start."""
    field = json.dumps(guard.field)
    has, subject = _has(guard.field), f"bindings[{field}]"
    if guard.field in inputs and IDENTIFIER.match(guard.field):
        has, subject = "true", f"({_has(guard.field)} ? bindings[{field}] : {guard.field})"
    op, value = guard.operator, guard.value
    is_nan = lambda v: isinstance(v, float) and v != v
    if op in ("equals", "notEquals") and is_nan(value):
        # cleo compares like Object.is: NaN equals NaN, the one value not equal to itself.
        text = f"({has} && {subject} !== {subject})"
    elif op in ("equals", "notEquals"):
        text = f"({has} && {subject} === {_literal(value)})"
    elif op == "in":
        values = ", ".join(_literal(v) for v in value if not is_nan(v))
        nan = f" || {subject} !== {subject}" if any(is_nan(v) for v in value) else ""
        text = f"({has} && ([{values}].includes({subject}){nan}))"
    elif op == "exists":
        text = has if value else f"!({has})"
    else:
        text = f"!!({subject})" if value else f"!({subject})"
    if op == "notEquals":
        text = f"!{text}"
    expression = "${{ " + text + " }}"
    parsed = _parsed(expression)
    if parsed.errors:  # not expected: every piece above is written to parse; never a crash
        return None
    return ir.Tmpl(expression, parsed.parts, span=guard.node.span, expected=t.BOOLEAN)


def _literal(value: object) -> str:
    """A YAML scalar as an expression literal (infinities as numbers too large for a float)."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "1e999" if value > 0 else "-1e999"
    return json.dumps(value)


def _value(value: object, node: YNode) -> ir.Value:
    if isinstance(value, list):
        return ir.ListV(tuple(_value(v, node) for v in value))
    if isinstance(value, dict):
        return ir.MapV(tuple(ir.Entry(k, _value(v, node)) for k, v in value.items()))
    return ir.Lit(value, span=node.span)


def _first_line(book: Cantbook):
    return book.source.span(
        book.root.start, book.root.start + max(1, book.source.text.find("\n", book.root.start) - book.root.start)
    )
