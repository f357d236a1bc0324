"""One playbook's flow as a graph, read from the IR: every dialect draws the same way.

Each step is a box named as a run names it (`draft (ai-prompt)`), joined to the next by
an arrow; control steps branch (`if`, `route`), loop back (`for-each`, `retry-block`),
fork and join (`parallel`) or hand errors to a handler (`try`, the playbook's `catch`).
Every box of a step keeps the step's path as a run's journal and a plan write it
(`steps/2/then/0`; a loop's body as its iteration 0, a retry's as its attempt 1), so a
partial flow can be asked for by those paths (`flow_graph(..., only=...)`).
"""

from __future__ import annotations

import re
from typing import Collection, Optional

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.report.graph.model import Graph, Link, Node

#: (box, label of the arrow that leaves it, its style): where the next box is joined from.
Exit = tuple[str, str, str]

#: The end box's id: ours, and not `end`, which Mermaid reads as a keyword.
END = "nEnd"


def flow_graph(playbook: ir.Playbook, only: Optional[Collection[str]] = None) -> Graph:
    """The flow of `playbook`; with `only`, of those steps (paths as a plan names them)
    and the control steps around them, each run of steps left out drawn as one box."""
    flow = _Flow()
    start = flow.node(playbook.name, "start")
    exits = flow.chain(playbook.steps, "steps", [(start, "", "normal")])
    for k, clause in enumerate(playbook.catch):
        handler = [(start, f"error {clause.code}", "error")]
        exits += flow.chain(clause.steps, f"catch/{k}", handler)
    # A `return` or a `throw` ends the steps, not the run: the `finally` steps still run.
    exits = flow.chain(playbook.finally_, "finally", exits + flow.ended)
    flow.ended = []
    flow.nodes.append(Node(END, "end", "end"))
    flow.connect(exits, END)
    graph = Graph(playbook.name, tuple(flow.nodes), tuple(_unique(flow.links)))
    if only is not None:
        graph = _partial(graph, {_static(path) for path in only})
    return graph


def unknown_steps(graph: Graph, paths: Collection[str]) -> list[str]:
    """The paths of `paths` at which the full flow `graph` draws no step (a typo, a step
    since removed): a partial flow of them would fold every step and mark none."""
    drawn = {node.path for node in graph.nodes if node.path is not None}
    return [path for path in paths if _static(path) not in drawn]


def value_text(value: Optional[ir.Value]) -> str:
    """A config value as the playbook wrote it, for a label: a template's text, a literal."""
    if isinstance(value, ir.Tmpl):
        return value.text
    if isinstance(value, ir.Lit):
        return (
            "null"
            if value.value is None
            else str(value.value).lower()
            if isinstance(value.value, bool)
            else str(value.value)
        )
    if isinstance(value, ir.ListV):  # a literal list (`for-each: [a, b]`), as YAML's flow style writes it
        return "[" + ", ".join(value_text(item) for item in value.items) + "]"
    return ""


def step_label(step: ir.Step) -> str:
    """A step as a run's output names it: `draft (ai-prompt)`, `file-write@38 (file-write)`."""
    name = step.display_name or step.name or f"{step.action}@{step.span.line if step.span is not None else '?'}"
    return f"{name} ({step.action})"


class _Flow:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.links: list[Link] = []
        #: The exits of `return` and `throw` steps: they go on to the `finally` steps, or the end.
        self.ended: list[Exit] = []

    def node(self, label: str, kind: str, path: Optional[str] = None) -> str:
        ident = f"n{len(self.nodes)}"
        self.nodes.append(Node(ident, label, kind, path))
        return ident

    def connect(self, exits: list[Exit], target: str) -> None:
        for source, label, style in exits:
            self.links.append(Link(source, target, label, style))

    def chain(self, steps: tuple[ir.Step, ...], prefix: str, exits: list[Exit]) -> list[Exit]:
        for i, step in enumerate(steps):
            exits = self.step(step, f"{prefix}/{i}", exits)
        return exits

    def step(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        name = step_label(step).split(" (")[0]
        if step.condition is not None and len(exits) > 1:
            # The ways in meet at one point first: drawn from each of them, the arrows round
            # a run of N steps with conditions would be N * N, and a picture of thousands.
            exits = [(self.box("", "merge", path, exits), "", "normal")]
        if step.gate is not None and step.gate.when == "before":
            exits = self.pause(step.gate.message, f"checkpoint before {name}", path, exits)
        draw = _DRAWN.get(step.action, _Flow.plain)
        out = draw(self, step, path, exits)
        if step.checkpoint or (step.gate is not None and step.gate.when == "after"):
            message = step.gate.message if step.gate is not None else None
            out = self.pause(message if message is not None else step.checkpoint, f"checkpoint after {name}", path, out)
        if step.condition is not None:
            # A step whose condition is false is skipped: the flow also goes round it.
            out = out + [(source, "skipped" if not label else label, style) for source, label, style in exits]
        return out

    def pause(self, message: object, said: str, path: str, exits: list[Exit]) -> list[Exit]:
        text = (
            message
            if isinstance(message, str)
            else value_text(message)
            if isinstance(message, (ir.Lit, ir.Tmpl))
            else ""
        )
        box = self.node(f"{said}: {text}" if text else said, "checkpoint", path)
        self.connect(exits, box)
        return [(box, "", "normal")]

    def box(self, label: str, kind: str, path: str, exits: list[Exit]) -> str:
        box = self.node(label, kind, path)
        self.connect(exits, box)
        return box

    def plain(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        return [(self.box(step_label(step), "step", path, exits), "", "normal")]

    def checkpoint(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        message = value_text(step.config.get("message"))
        label = f"{step_label(step)}: {message}" if message else step_label(step)
        return [(self.box(label, "checkpoint", path, exits), "", "normal")]

    def call(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        label = f"call {value_text(step.config.get('name'))}"
        return [(self.box(f"{step.name}: {label}" if step.name else label, "call", path, exits), "", "normal")]

    def if_(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        decision = self.box(f"if {value_text(step.config.get('condition'))}", "decision", path, exits)
        out: list[Exit] = []
        for branch in ("then", "else"):
            out += self.chain(_steps(step, branch), f"{path}/{branch}", [(decision, branch, "normal")])
        return out

    def route(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        label = value_text(step.config.get("label")) or step.name or "route"
        decision = self.box(label, "decision", path, exits)
        out: list[Exit] = []
        branches = step.config.get("branches")
        for k, branch in enumerate(branches.items if isinstance(branches, ir.ListV) else ()):
            if not isinstance(branch, ir.MapV):
                continue
            said = value_text(branch.get("label")) or value_text(branch.get("when"))
            out += self.chain(_steps(branch, "steps"), f"{path}/branches/{k}", [(decision, said, "normal")])
        if isinstance(step.config.get("otherwise"), ir.StepsV):
            out += self.chain(_steps(step, "otherwise"), f"{path}/otherwise", [(decision, "otherwise", "normal")])
        return out

    def for_each(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        item = value_text(step.config.get("item"))
        label = f"for each {item} in {value_text(step.config.get('in'))}"
        loop = self.box(label, "loop", path, exits)
        body = self.chain(_steps(step, "steps"), f"{path}/each/0", [(loop, "each", "normal")])
        self.connect([(source, "next", "back") for source, _, _ in body if source != loop], loop)
        return [(loop, "done", "normal")]

    def retry_block(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        attempts = value_text(step.config.get("maxAttempts"))
        loop = self.box(f"retry, {attempts} attempts at most", "loop", path, exits)
        body = self.chain(_steps(step, "steps"), f"{path}/attempt/1", [(loop, "attempt", "normal")])
        self.connect([(source, "failed", "back") for source, _, _ in body if source != loop], loop)
        return body

    def parallel(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        fork = self.box(step.name or "parallel", "fork", path, exits)
        ends: list[Exit] = []
        for i, inner in enumerate(_steps(step, "steps")):
            ends += self.step(inner, f"{path}/branch/{i}", [(fork, "", "normal")])
        join = self.box("all done", "join", path, ends or [(fork, "", "normal")])
        return [(join, "", "normal")]

    def try_(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        guard = self.box(step.name or "try", "try", path, exits)
        ended = len(self.ended)
        out = self.chain(_steps(step, "steps"), f"{path}/steps", [(guard, "", "normal")])
        catch = step.config.get("catch")
        for k, clause in enumerate(catch.items if isinstance(catch, ir.ListV) else ()):
            if isinstance(clause, ir.MapV):
                code = value_text(clause.get("code")) or "any error"
                out += self.chain(_steps(clause, "steps"), f"{path}/catch/{k}", [(guard, f"error {code}", "error")])
        final = _steps(step, "finally")
        if final:
            # A `return` or `throw` inside the try runs its `finally` steps first.
            out += self.ended[ended:]
            del self.ended[ended:]
        return self.chain(final, f"{path}/finally", out)

    def ends_run(self, step: ir.Step, path: str, exits: list[Exit]) -> list[Exit]:
        box = self.box(step_label(step), "step", path, exits)
        self.ended.append((box, "error", "error") if step.action == "throw" else (box, "", "normal"))
        return []


_DRAWN = {
    "checkpoint": _Flow.checkpoint,
    "playbook": _Flow.call,
    "if": _Flow.if_,
    "route": _Flow.route,
    "for-each": _Flow.for_each,
    "retry-block": _Flow.retry_block,
    "parallel": _Flow.parallel,
    "try": _Flow.try_,
    "return": _Flow.ends_run,
    "throw": _Flow.ends_run,
}


def _steps(holder: ir.Step | ir.MapV, key: str) -> tuple[ir.Step, ...]:
    value = holder.config.get(key) if isinstance(holder, ir.Step) else holder.get(key)
    return value.steps if isinstance(value, ir.StepsV) else ()


def _unique(links: list[Link]) -> list[Link]:
    seen: set[Link] = set()
    return [link for link in links if not (link in seen or seen.add(link))]


#: An iteration or attempt number in a path: a partial flow draws a loop's body once.
_ITERATION = re.compile(r"/(each)/\d+/|/(attempt)/\d+/")


def _static(path: str) -> str:
    return _ITERATION.sub(lambda m: "/each/0/" if m.group(1) else "/attempt/1/", path.strip("/"))


def _partial(graph: Graph, wanted: set[str]) -> Graph:
    """`graph` with the steps in `wanted` (marked), the control steps that hold them, and
    each connected run of the other steps drawn as one box saying how many it stands for."""

    def kept(node: Node) -> bool:
        if node.path is None:
            return True
        return any(path == node.path or path.startswith(node.path + "/") for path in wanted)

    # Each dropped box joins the group of the dropped boxes it is linked with (union-find).
    group: dict[str, str] = {n.id: n.id for n in graph.nodes if not kept(n)}

    def root(ident: str) -> str:
        while group[ident] != ident:
            group[ident] = group[group[ident]]
            ident = group[ident]
        return ident

    for link in graph.links:
        if link.source in group and link.target in group:
            group[root(link.source)] = root(link.target)
    members: dict[str, int] = {}
    steps_in: dict[str, set[str]] = {}
    for ident in group:
        members[root(ident)] = members.get(root(ident), 0) + 1
    by_id = {n.id: n for n in graph.nodes}
    for ident in group:
        path = by_id[ident].path
        steps_in.setdefault(root(ident), set()).add(path)
    nodes: list[Node] = []
    for node in graph.nodes:
        if node.id not in group:
            nodes.append(Node(node.id, node.label, node.kind, node.path, marked=node.path in wanted))
        elif root(node.id) == node.id:
            count = len(steps_in[node.id])
            nodes.append(Node(node.id, f"… {count} other step{'s' if count != 1 else ''}", "elided"))
    links: list[Link] = []
    for link in graph.links:
        source = root(link.source) if link.source in group else link.source
        target = root(link.target) if link.target in group else link.target
        if source != target or link.source not in group:
            links.append(Link(source, target, link.label, link.style))
    return Graph(graph.title, tuple(nodes), tuple(_unique(links)))
