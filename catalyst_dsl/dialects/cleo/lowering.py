"""Lowering a checked cleo cantbook to the IR.

The graph walk becomes structured steps (B4.2): chains of unconditional edges become
consecutive steps; a node with guarded out-edges becomes a `route` up to the branches' join
(the immediate post-dominator): the one branch whose guard holds runs, and when several
or none hold the run stops naming the node and the guards. cleo's flat context is the
playbook's `bindings` object: each node merges its output into it (`bindings:` on its
step) and guards and `{{ key }}` templates read it (C-5).
Contracts are the step's `requires:`/`ensures:` checks raising ContractViolation (C-1), an
`inject_into` loop-back is a `retry-block` (C-6), an approval node a checkpoint with a
policy (C-7), and an agentic node an `ai-prompt` with its agent identity (C-4, C-8): each
node's own step is node_lowering.py's.
"""

from __future__ import annotations

from typing import Optional

from catalyst_dsl.diagnostics.ids import CLEO_PROJECT_WRITE_GRANT
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.cleo import graph as g
from catalyst_dsl.dialects.cleo.expressions import first_line, guard_condition, guard_text, ir_value
from catalyst_dsl.dialects.cleo.lowering_tables import HANDLER_ACTIONS, HANDLER_CODES, MAX_BRANCH_DEPTH, Item
from catalyst_dsl.dialects.cleo.model import DEFAULT_CAP, Cantbook, Edge, Node, _plain
from catalyst_dsl.dialects.cleo.node_lowering import NodeLowering
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.records import replace
from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl.syntax.yaml_nodes import YScalar


def lower(book: Cantbook, sink: DiagnosticSink, catalog) -> ir.Playbook:
    return Lowerer(book, sink).playbook()


class Lowerer(NodeLowering):
    """A whole cantbook: its inputs and handlers, and the walk of its graph."""

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
                        f"'{node.id}' loops back to '{node.inject_into.value}',"
                        " which is not before it on the same branch",
                        node.inject_into.span,
                        help="loop back to a node on the same chain or branch as this one",
                    )
            # A refused graph keeps no steps: half a lowering would only add diagnostics of its own.
            steps = tuple(step for step, _ in items) if not self.refused else ()
            if writers and not self.refused:
                self.sink.report(
                    CLEO_PROJECT_WRITE_GRANT,
                    "cleo declares no writes: catalyst lets this cantbook's nodes write anywhere in the project,"
                    " never in .git/ or the state directory",
                    first_line(book),
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

    def input(self, decl) -> ir.InputDecl:
        default = decl.default
        value = _plain(default) if default is not None else None
        kind = {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(
            type(value), "string"
        )
        lowered = None
        if value is not None:
            lowered = ir.Lit(value, span=default.span) if isinstance(default, YScalar) else ir_value(value, default)
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
                    f"'{node.id}' is reached by two branches before they join;"
                    " this graph does not reduce to nested if/else",
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
                items += self.entered_by(out[0])
                current = out[0].target
            else:
                join = self.ipdom[current]
                branches = [
                    (e, self.edge_check(e) + self.entered_by(e) + self.region(e.target, join, depth + 1)) for e in out
                ]
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
                    f"`inject_into: {node.inject_into.value}` names a node that runs after '{node.id}':"
                    " cleo would jump ahead to it, which catalyst does not lower",
                    node.inject_into.span,
                    help="name an earlier node to loop back to, or route to the later one with an edge",
                )
                return items
            if first != where[target] or items[first][1] != {target} or first >= last:
                self.refuse(
                    f"the loop back from '{node.id}' to '{node.inject_into.value}'"
                    " crosses a branch or another loop-back",
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
        """A `route` over the out-edges of `node`: the one edge whose guard holds is taken;
        several holding, or none, stop the run naming the node and the guards, as cleo's
        runtime does (B4.2; `RouteAmbiguous`, `RoutingFailed`)."""
        book = self.book
        chosen = []
        for edge, steps in branches:
            condition = guard_condition(edge.guard, self.inputs)
            if condition is None:
                self.refuse(
                    f"the guard of this edge out of '{node.id}' cannot be written as a condition",
                    edge.span,
                    help="compare the field with a string, number, boolean or null",
                )
                continue
            label = f"to '{safe_text(book.nodes[edge.target].id)}' when {guard_text(edge.guard)}"
            chosen.append(
                ir.MapV(
                    (
                        ir.Entry("when", condition),
                        ir.Entry("steps", ir.StepsV(tuple(steps))),
                        ir.Entry("label", ir.Lit(label)),
                    )
                )
            )
        config = (
            ir.Entry("branches", ir.ListV(tuple(chosen))),
            ir.Entry("label", ir.Lit(f"the edges out of '{safe_text(node.id)}'")),
        )
        # Shown by the node's id, as the author wrote it, rather than `route@line`.
        return ir.Step("route", ir.MapV(config), span=node.map.span, display_name=node.id)

    # -- nodes ----------------------------------------------------------------------------------------
