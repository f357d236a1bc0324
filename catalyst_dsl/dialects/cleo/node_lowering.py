"""Each node of a cantbook lowered to a step (B5): agentic nodes to `ai-prompt`,
deterministic ones to `command`, approval nodes to checkpoints; their contracts, hints,
error policies and the text templates they hold.
"""

from __future__ import annotations

import json
from typing import Optional

from catalyst_dsl.diagnostics.ids import CLEO_IRREDUCIBLE_GRAPH
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.cleo.expressions import (
    contract_checks,
    escaped_text,
    expression_template,
    has_key,
    ir_value,
    node_ref,
    scalar_value,
)
from catalyst_dsl.dialects.cleo.lowering_tables import (
    APPROVAL_OPTIONS,
    CONTRACT,
    HANDLER_ACTIONS,
    MERGED_OBJECT,
    NODE_ACTIONS,
    REJECTED,
    REQUIRES_CHECK,
    CONTRACT_CHECK,
    CONTRACT_EXIT_SAID,
    EDGE_TAKEN,
    CONTRACT_SAID,
    SCHEMAS,
    Item,
)
from catalyst_dsl.dialects.cleo.model import (
    DEFAULT_CAP,
    ENTERED_BY,
    LAST_APPROVAL,
    LAST_APPROVAL_KEYS,
    PLACEHOLDER,
    PROGRAM_OUTPUTS,
    Cantbook,
    Edge,
    Node,
)
from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.ir.approval_rules import DEFAULT_RULES
from catalyst_dsl.syntax.expr.templates import parse_template
from catalyst_dsl.syntax.yaml_nodes import YMap, YScalar, YSeq


class NodeLowering:
    """One cantbook's nodes, lowered one at a time."""

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
        self.sink.report(CLEO_IRREDUCIBLE_GRAPH, message, span, help=help)
        self.refused = True

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
        ref = node_ref(node.id)
        options = ir.ListV(
            tuple(ir.MapV((ir.Entry("key", ir.Lit(k)), ir.Entry("label", ir.Lit(k)))) for k in APPROVAL_OPTIONS)
        )
        config = [
            ir.Entry("message", self.text(keys["prompt"][1]), span=keys["prompt"][0].span),
            ir.Entry("options", options),
            ir.Entry("default", ir.Lit(APPROVAL_OPTIONS[0])),
            ir.Entry("policy", self.gate_policy(node), span=keys["policy"][0].span if "policy" in keys else None),
        ]
        approved = expression_template(f"{ref}.selected !== {json.dumps(APPROVAL_OPTIONS[1])}", node.map.span)
        # A rejection is told as the reviewer gave it, never as the check that finds it.
        by, note = f"{ref}.approval.by", f"{ref}.approval.note"
        rejected = expression_template(
            json.dumps(f"the approval node '{safe_text(node.id)}' was rejected")
            + f' + ({by} ? " by " + {by} : "") + ({note} ? ": " + {note} : "")',
            node.map.span,
            t.STRING,
        )
        ensures = ir.Checks(
            (
                ir.Check(
                    "expression",
                    ir.MapV((ir.Entry("expression", approved),)),
                    span=node.map.span,
                    message=rejected,
                ),
            ),
            REJECTED,
            span=node.map.span,
        )
        fields = [f"nodeId: {json.dumps(node.id)}", *(f"{key}: {ref}.{path}" for key, path in LAST_APPROVAL_KEYS)]
        last = expression_template("{" + ", ".join(fields) + "}", node.map.span, t.ANY)
        return ir.Step(
            NODE_ACTIONS["approval"],
            ir.MapV(tuple(config)),
            name=node.id,
            span=node.map.span,
            name_span=node.id_span,
            ensures=ensures,
            bindings=ir.MapV((ir.Entry(LAST_APPROVAL, last),)),
        )

    def edge_label(self, edge: Edge) -> str:
        return f"{self.book.nodes[edge.source].id} → {self.book.nodes[edge.target].id}"

    def entered_by(self, edge: Edge) -> list[Item]:
        """Crossing an edge into a node with several ways in, one of which has a
        `contract.ensures`: the walk records which edge it came by (the context's
        ENTERED_BY), so that the node's checks hold each edge's `ensures` only when it was
        the one taken (contracts)."""
        graph = self.book.graph
        incoming = [self.book.edges[e] for e in graph.into[edge.target]]
        if len(incoming) == 1 or not any(e.ensures for e in incoming):
            return []
        label = self.edge_label(edge)
        step = ir.Step(
            "log-debug",
            ir.MapV((ir.Entry("message", ir.Lit(f"took the edge {label}")),)),
            name=EDGE_TAKEN.format(label),
            span=edge.span,
            bindings=ir.MapV((ir.Entry(ENTERED_BY, ir.Lit(label)),)),
        )
        return [(step, set())]

    def edge_check(self, edge: Edge) -> list[Item]:
        """The `contract.requires` of a guarded edge into a node with other ways in: checked
        as the first step of the edge's branch, when the walk crosses that edge (B4.6)."""
        graph = self.book.graph
        if not edge.requires or len(graph.into[edge.target]) == 1:
            return []
        source, target = self.book.nodes[edge.source], self.book.nodes[edge.target]
        between = f"'{safe_text(source.id)}' → '{safe_text(target.id)}'"
        edge_said = f"the edge {between}"
        checks = contract_checks(_once([(has_key(k), _said(edge_said, "requires", k)) for k in edge.requires]), source)
        step = ir.Step(
            "log-debug",
            ir.MapV((ir.Entry("message", ir.Lit(f"the contract of {between} holds")),)),
            name=CONTRACT_CHECK.format(source.id, target.id),
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
            ir.MapV((ir.Entry("message", ir.Lit(f"the requires of '{safe_text(node.id)}' hold")),)),
            requires=requires,
            name=REQUIRES_CHECK.format(node.id),
            error_policy=ir.ErrorPolicy(ir.PolicyAction("Stop")),
            span=span,
        )
        keys = [
            ir.Entry("__contractViolation", expression_template("$error.message", span, t.ANY)),
            ir.Entry("__lastError", expression_template("$error", span, t.ANY)),
            ir.Entry("__lastFailedNode", ir.Lit(node.id)),
            ir.Entry("__hint", ir.Lit(message)),
        ]
        said = f"'{safe_text(node.id)}' runs although its requires do not hold" + (f": {message}" if message else "")
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
        owner = f"'{safe_text(node.id)}'"
        before = [(has_key(k), _said(owner, "requires", k)) for k in node.requires_fields]
        after = [(self.produced(node, k), _said(owner, "ensures", k)) for k in node.ensures_keys]
        if node.ensures_exit_code is not None and node.type == "deterministic":
            code = node.ensures_exit_code
            exited = json.dumps(CONTRACT_EXIT_SAID.format(owner=owner, code=code)) + f" + {node_ref(node.id)}.exitCode"
            after.append((f"{node_ref(node.id)}.exitCode === {code}", exited))
        incoming = [book.edges[e] for e in graph.into[node.index]]
        for edge in incoming:
            if not (edge.requires or edge.ensures):
                continue
            source = book.nodes[edge.source]
            edge_said = f"the edge '{safe_text(source.id)}' → '{safe_text(node.id)}'"
            if len(incoming) == 1:
                before += [(has_key(k), _said(edge_said, "requires", k)) for k in edge.requires]
                after += [(self.produced(node, k), _said(edge_said, "ensures", k)) for k in edge.ensures]
                continue
            # An edge's `requires` out of a branching node is its branch's first step (edge_check);
            # its `ensures` hold after the node only when the walk came in by it (entered_by).
            taken = f"bindings.{ENTERED_BY} !== {json.dumps(self.edge_label(edge), ensure_ascii=False)}"
            after += [(f"{taken} || ({self.produced(node, k)})", _said(edge_said, "ensures", k)) for k in edge.ensures]
        outgoing = graph.out[node.index]
        if len(outgoing) == 1:
            edge = book.edges[outgoing[0]]
            if edge.requires and len(graph.into[edge.target]) != 1:
                edge_said = f"the edge '{safe_text(node.id)}' → '{safe_text(book.nodes[edge.target].id)}'"
                after += [(self.produced(node, k), _said(edge_said, "requires", k)) for k in edge.requires]
        # A key both the node and an edge into it require is checked once.
        ensures = contract_checks(_once(after), node)
        schema = self.schema(node)
        if schema is not None:
            ensures = ir.Checks((*(ensures.checks if ensures else ()), schema), CONTRACT, span=node.map.span)
        return contract_checks(_once(before), node), ensures

    def produced(self, node: Node, key: str) -> str:
        """Whether `key` is in the context once the node's output is merged (ensures run
        before the merge, so they read the node's own result too)."""
        if node.type == "deterministic" and key in {node.id + suffix for suffix, _ in PROGRAM_OUTPUTS}:
            return "true"
        if node.type == "agentic":
            return f"{has_key(key)} || Object.keys({node_ref(node.id)} ?? {{}}).includes({json.dumps(key)})"
        return has_key(key)

    def schema(self, node: Node) -> Optional[ir.Check]:
        """`ensures.schema` (B2.1) as a `json-schema` check of the context key of that name;
        the other registered names accept anything, as in cleo."""
        schema = SCHEMAS.get(node.ensures_schema)
        if schema is None:
            return None
        key = json.dumps(node.ensures_schema)
        value = (
            f"(({node_ref(node.id)} ?? {{}})[{key}] ?? bindings[{key}])"
            if node.type == "agentic"
            else f"bindings[{key}]"
        )
        return ir.Check(
            "json-schema",
            ir.MapV(
                (
                    ir.Entry("value", expression_template(value, node.map.span, t.ANY)),
                    ir.Entry("schema", ir_value(schema, node.map)),
                )
            ),
            span=node.map.span,
        )

    def agentic(self, node: Node) -> ir.Step:
        keys = node.keys
        config: list[ir.Entry] = []
        description = scalar_value(keys, "description")
        agent = scalar_value(keys, "agent") or scalar_value(keys, "skill")
        # cleo never renders `description` (documentation only), so it is sent as written.
        prompt = (
            description
            if isinstance(description, str) and description.strip()
            else f"Run the cleo node '{node.id}' as {agent}."
        )
        config.append(ir.Entry("prompt", ir.Lit(prompt)))
        # cleo hands the agent the context overlaid with the node's rendered inputs (B4.5).
        entries = [
            ir.Entry("inputs", expression_template("inputs", node.map.span, t.ANY)),
            ir.Entry("bindings", expression_template("bindings", node.map.span, t.ANY)),
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
                ir.Entry("__lastError", expression_template("__lastError", node.map.span, t.ANY)),
                ir.Entry(
                    "__lastFailedNode",
                    expression_template("__lastError == null ? null : __lastError.step", node.map.span, t.ANY),
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
            bindings=expression_template(node_ref(node.id), node.map.span, MERGED_OBJECT),
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
        ref = node_ref(node.id)
        # What cleo merges into the context for a program that succeeded (B4.5).
        bindings = ir.MapV(
            tuple(
                ir.Entry(node.id + suffix, expression_template(f"{ref}.{field}", node.map.span, t.ANY))
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
                pieces.append(escaped_text(value[at : m.start()]))
                pieces.append("{{ " + self.reference(m.group(1)) + " }}")
                at = m.end()
            pieces.append(escaped_text(value[at:]))
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


def _said(owner: str, field: str, key: str) -> str:
    """What a broken contract on `key` says, as an expression (a string literal)."""
    return json.dumps(CONTRACT_SAID.format(owner=owner, field=field, key=key))


def _once(checks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each condition once, in order, with the words of its first mention."""
    first: dict[str, str] = {}
    for condition, said in checks:
        first.setdefault(condition, said)
    return list(first.items())
