"""The rules of a cleo cantbook that only the whole graph shows."""

from __future__ import annotations

import difflib
from typing import Optional

from catalyst_dsl.diagnostics.ids import (
    CLEO_CYCLE,
    CLEO_DUPLICATE_EDGE,
    CLEO_EDGE_REPEATS_DEPENDS,
    CLEO_GUARDS_NOT_EXHAUSTIVE,
    CLEO_INJECT_INTO_SELF,
    CLEO_LOOP_BACK,
    CLEO_POLICY_UNGUARDED,
    CLEO_REQUIRES_FROM,
    CLEO_ROUTING,
    CLEO_SEVERAL_ENTRIES,
    CLEO_UNDECLARED_KEY,
    CLEO_UNKNOWN_INJECT_TARGET,
    CLEO_UNKNOWN_NODE,
    CLEO_UNREACHABLE_NODE,
    UNDEFINED_REFERENCE,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.cleo import graph as g
from catalyst_dsl.dialects.cleo.model import (
    DASHED_PLACEHOLDER,
    DEFAULT_CAP,
    LAST_APPROVAL,
    PLACEHOLDER,
    PROGRAM_OUTPUTS,
    Cantbook,
    Edge,
    Guard,
    Node,
)
from catalyst_dsl.dialects.values import suggest
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq


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
            names = " → ".join(f"'{book.nodes[n].id}'" for n in cycle)
            first = book.nodes[cycle[0]]
            self.sink.report(
                CLEO_CYCLE,
                f"the nodes form a cycle: {names}",
                first.id_span,
                help=(
                    "cleo's graphs run forward only: remove one of these edges or depends (a loop back on failure is"
                    " `on_failure.inject_into`)"
                ),
            )
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
                self.sink.report(
                    CLEO_DUPLICATE_EDGE,
                    f"the edge '{a}' → '{b}' is written twice",
                    edge.span,
                    labels=[Label(seen[pair].span, "first written here")],
                    help=f"remove one; cleo's runtime stops at '{a}' with two successors",
                )
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
                    self.sink.report(
                        CLEO_DUPLICATE_EDGE, f"'{node.id}' depends on '{name}' twice", scalar.span, help="remove one"
                    )
                    continue
                seen.add(name)
                if name not in self.ids:
                    self.sink.report(
                        CLEO_UNKNOWN_NODE,
                        f"'{node.id}' depends on '{name}', which names no node",
                        scalar.span,
                        help=suggest(name, self.ids) or "name a node's `id`",
                    )
                    continue
                pair = (self.ids[name], node.index)
                if pair in explicit:
                    self.sink.report(
                        CLEO_EDGE_REPEATS_DEPENDS,
                        f"'{node.id}' depends on '{name}', which repeats the edge '{name}' → '{node.id}'",
                        scalar.span,
                        labels=[Label(explicit[pair].span, "the edge")],
                        help="keep one of them",
                    )
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
            self.sink.report(
                CLEO_SEVERAL_ENTRIES,
                f"'{node.id}' has no predecessor, like '{entry.id}'; cleo runs only the first root, so '{node.id}'"
                " would never run",
                node.id_span,
                labels=[Label(entry.id_span, "the entry")],
                help=f"add an edge into '{node.id}' (or `depends:`), or remove it",
            )
        seen = g.reachable(graph, roots[0])
        roots_set = set(roots)
        for n in range(graph.size):
            # The other roots were reported above; what only they lead to is reported here.
            if not seen[n] and n not in roots_set:
                node = book.nodes[n]
                self.sink.report(
                    CLEO_UNREACHABLE_NODE,
                    f"'{node.id}' cannot be reached from the entry '{entry.id}'",
                    node.id_span,
                    help="add an edge from a node that runs, or remove it",
                )
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
                self.sink.report(
                    CLEO_GUARDS_NOT_EXHAUSTIVE,
                    f"the guard on '{node.id}' → '{book.nodes[e.target].id}' compares with a list or mapping, which is"
                    " never equal in cleo",
                    e.guard.node.span,
                    help="compare with a string, number, boolean or null",
                )
            if len(plain) > 1:
                names = ", ".join(f"'{book.nodes[e.target].id}'" for e in plain)
                self.sink.report(
                    CLEO_ROUTING,
                    f"'{node.id}' has {len(plain)} unguarded successors ({names}); cleo runs one node at a time and"
                    " stops there",
                    plain[1].span,
                    labels=[Label(plain[0].span, "the first")],
                    help="guard the edges with `when:` so exactly one holds, or chain the nodes",
                )
            elif plain and guarded:
                self.sink.report(
                    CLEO_ROUTING,
                    f"'{node.id}' has an unconditional edge and a guarded one: whenever '{guarded[0].guard.field}'"
                    " makes the guard hold, both apply and cleo's runtime throws",
                    guarded[0].span,
                    labels=[Label(plain[0].span, "the unconditional edge")],
                    help="guard both edges",
                )
            elif len(guarded) == 1:
                self.sink.report(
                    CLEO_GUARDS_NOT_EXHAUSTIVE,
                    f"the only edge out of '{node.id}' is guarded: when its guard is false the run stops with no next"
                    " node",
                    guarded[0].span,
                    help="add an edge with the opposite guard, or remove the guard",
                )
            elif guarded and not composite and not _exclusive_and_exhaustive([e.guard for e in guarded]):
                self.sink.report(
                    CLEO_GUARDS_NOT_EXHAUSTIVE,
                    f"the guards out of '{node.id}' are not provably exclusive and exhaustive; the run stops when none"
                    " or several hold",
                    guarded[0].span,
                    help=(
                        "guard one field: `equals: v` with `notEquals: v`, `exists`/`truthy` true with false, or"
                        " disjoint values plus their complement"
                    ),
                )

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
                    self.sink.report(
                        CLEO_UNKNOWN_INJECT_TARGET,
                        f"`inject_into` is '{target}', which names no node",
                        node.inject_into.span,
                        help=suggest(target, self.ids) or "name an earlier node to loop back to",
                    )
                elif target == node.id:
                    self.sink.report(
                        CLEO_INJECT_INTO_SELF,
                        "`inject_into` names the node itself: the same as leaving it out",
                        node.inject_into.span,
                        help="remove it, or name an earlier node to loop back to",
                    )
                elif not self.ancestors()[node.index] >> self.ids[target] & 1:
                    self.sink.report(
                        CLEO_LOOP_BACK,
                        f"`inject_into` is '{target}', which is not an earlier node of '{node.id}':"
                        " the run would jump forward or sideways",
                        node.inject_into.span,
                        help="name a node that runs before this one",
                    )
                else:
                    cap = max(node.cap if node.cap is not None else DEFAULT_CAP, 1)
                    escalate = next((h for h in book.handlers if h.on == "iteration_cap_exceeded"), None)
                    then = (
                        f"then the handler on line {escalate.span.line}"
                        f" {'asks a person' if escalate.action == 'hitl_escalate' else 'applies'}"
                        if escalate is not None
                        else "then the run fails with IterationCapExceeded"
                    )
                    self.sink.report(
                        CLEO_LOOP_BACK,
                        f"loop-back '{node.id}' → '{target}': cleo never stops this loop while '{node.id}' fails;"
                        f" catalyst limits '{node.id}' to {cap} attempt{'s' if cap != 1 else ''}, {then}",
                        node.inject_into.span,
                        help="keep it if that is what you mean; catalyst counts attempts through the loop",
                    )
            if node.requires_from is not None:
                source = node.requires_from.value
                if source not in self.ids:
                    self.sink.report(
                        CLEO_REQUIRES_FROM,
                        f"`requires.from` is '{source}', which names no node",
                        node.requires_from.span,
                        help=suggest(source, self.ids) or "name an earlier node",
                    )
                elif not self.ancestors()[node.index] >> self.ids[source] & 1:
                    self.sink.report(
                        CLEO_REQUIRES_FROM,
                        f"`requires.from` is '{source}', which is not an earlier node of '{node.id}'",
                        node.requires_from.span,
                        help="name a node that runs before this one",
                    )

    def gates(self) -> None:
        from catalyst_dsl.dialects.cleo.policy import DEFAULT_RULES, evaluate

        book = self.book
        commands = [(n, _command_line(n)) for n in book.nodes if n.type == "deterministic"]
        commands = [(n, line, evaluate(line, DEFAULT_RULES)) for n, line in commands if line]
        risky = [
            (n, line, rule) for n, line, (action, rule) in commands if action == "require-human" and rule != "default"
        ]
        if not risky:
            return
        is_gate = [n.type == "approval" for n in book.nodes]
        behind = g.gated(book.graph, book.order, is_gate)
        for node, line, rule in risky:
            if not behind[node.index]:
                span = node.keys["command"][1].span
                self.sink.report(
                    CLEO_POLICY_UNGUARDED,
                    f"the command '{line}' matches the require-human rule '{rule}', and no approval node precedes it",
                    span,
                    help="add an approval node on every path before this node",
                )

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
                for suffix, _ in PROGRAM_OUTPUTS:
                    declared[node.id + suffix] = declared.get(node.id + suffix, 0) | (1 << node.index)
            if node.type == "approval":
                declared[LAST_APPROVAL] = declared.get(LAST_APPROVAL, 0) | (1 << node.index)
        for node in book.nodes:
            for scalar in template_scalars(node):
                self.template(node, scalar, inputs, declared)

    def template(self, node: Node, scalar: YScalar, inputs: set[str], declared: dict[str, int]) -> None:
        text = scalar.value
        if "{{" not in text:
            return
        smap = ScalarMap(scalar)
        for match in DASHED_PLACEHOLDER.finditer(text):
            self.sink.report(
                CLEO_UNDECLARED_KEY,
                f"`{{{{ {match.group(1)} }}}}` is not a template in cleo: names cannot contain '-'",
                smap.span(match.start(), match.end()),
                help="use '_' in the name",
            )
        for match in PLACEHOLDER.finditer(text):
            name = match.group(1)
            span = smap.span(match.start(1), match.end(1))
            root, _, rest = name.partition(".")
            if root == "inputs" and rest:
                field = rest.split(".")[0]
                if field not in inputs:
                    self.sink.report(
                        UNDEFINED_REFERENCE,
                        f"'inputs.{field}' is not a declared input",
                        span,
                        help=_did_you_mean_input(field, inputs),
                    )
                continue
            if root in inputs:
                continue
            mask = declared.get(root, 0)
            if (
                self.book.order
                and mask
                and (self.ancestors()[node.index] & mask or (mask >> node.index) & 1 and root.startswith("__"))
            ):
                continue
            self.sink.report(
                CLEO_UNDECLARED_KEY,
                f"'{name}' is neither a declared input nor a key an earlier node declares",
                span,
                help=suggest(root, inputs, prefix="did you mean ")
                or "declare it under `inputs:`, or in an earlier node's `ensures.outputFiles`",
            )


def _did_you_mean_input(field: str, inputs: set[str]) -> str:
    close = difflib.get_close_matches(field, sorted(inputs), n=1, cutoff=0.6)
    return f"did you mean 'inputs.{close[0]}'?" if close else "declare it under `inputs:`"


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
    words = (
        [a.value for a in args.items if isinstance(a, YScalar) and isinstance(a.value, str)]
        if isinstance(args, YSeq)
        else []
    )
    return " ".join([command.value, *words])


def _same(a: object, b: object) -> bool:
    """JavaScript's strict equality for YAML scalars: no coercion between types."""
    return (
        type(a) is type(b)
        and a == b
        or (
            isinstance(a, (int, float))
            and not isinstance(a, bool)
            and isinstance(b, (int, float))
            and not isinstance(b, bool)
            and a == b
        )
    )


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
