"""Hover in kai playbooks and cleo cantbooks, rendered from each dialect's own reading and
lowering, never from a description kept beside them.

kai: a condition shows the predicate it lowers to (`kai.conditions.condition_check`: the
file path or command a run really tests); `autonomy`, `error_policy` and a trigger show
what the step lowers to (its condition, checkpoint and error policy); `model` the value
the AI step gets; `command` the first lines of its `.claude/commands/` file; `{{ arg }}`
the input the arg becomes. cleo: a node type shows the action it lowers to
(`cleo.lowering_tables.NODE_ACTIONS`, with the catalog's summary) and its keys; an
approval `policy` what its gate's lowered policy decides; a handler's `on` and `action`
the error code and policy action they become; a node id where it is named, that node;
`{{ name }}` the input.
"""

from __future__ import annotations

import json
from pathlib import Path

from catalyst_dsl._internal.markdown_text import author_markdown, code_span, fenced, strong_name
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.cleo import vocabulary as cleo
from catalyst_dsl.dialects.kai import conditions as kai_conditions
from catalyst_dsl.dialects.kai import lowering as kai_lowering
from catalyst_dsl.dialects.kai import model as kai
from catalyst_dsl.dialects.kai import reader as kai_reader
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.lsp.dialect_names import command_file, contains, name_at, node_of, read_cantbook
from catalyst_dsl.lsp.knowledge import word_at
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_nodes import YMap, YScalar, YSeq

#: How much of a slash command's file a hover shows.
COMMAND_LINES = 12
COMMAND_CHARS = 2000


def kai_hover(source: SourceFile, offset: int, root: Path | None = None) -> str | None:
    document = kai_reader.read(source)
    if document is not None:
        found = _kai_value_hover(source, offset, document, root)
        if found is not None:
            return found
    return _condition_hover(source, offset)


def _condition_hover(source: SourceFile, offset: int) -> str | None:
    found = word_at(source, offset)
    if found is None or found[0] not in kai.CONDITIONS:
        return None
    check = kai_conditions.condition_check(found[0], None)
    return (
        f"**{found[0]}** (kai condition) holds when:\n\n" + "\n".join(_lines(check, 0)) if check is not None else None
    )


def _kai_value_hover(source: SourceFile, offset: int, document: kai.KaiDocument, root: Path | None) -> str | None:
    name = name_at(source, offset, kai.DIALECT)
    if name is not None and name.kind == "arg":
        playbook = kai_lowering.lower(document, source, DiagnosticSink())
        decl = next((i for i in playbook.inputs if i.name == name.name), None)
        if decl is None:
            return f"{strong_name(name.name)}: not a declared arg (kai leaves the text as written)"
        return _input(decl, "kai arg")

    def on(named: kai.Named | None) -> bool:
        return named is not None and contains(source, named.span, offset)

    for step in document.steps:
        if not any(on(n) for n in (step.autonomy, step.error_policy, step.model, step.command, *step.triggers)):
            continue
        if on(step.command):
            return _command(step.command.text, root)
        if on(step.model):
            return (
                f"{strong_name(step.model.text)} (kai model): "
                f"the step's agent runs as `ai-prompt` with {code_span('model: ' + step.model.text)} "
                f"(one of {', '.join(kai.MODELS)})"
            )
        lowered = _lowered(document, source, step)
        if lowered is None:
            return None
        if on(step.autonomy):
            return f"{strong_name(step.autonomy.text)} (kai autonomy) lowers to:\n\n" + "\n".join(
                _autonomy(lowered, step.autonomy.span)
            )
        if on(step.error_policy):
            return (
                f"{strong_name(step.error_policy.text)} (kai error policy) lowers to the step's error policy:\n\n"
                + "\n".join(_policy(lowered.error_policy))
            )
        trigger = next(t for t in step.triggers if on(t))
        codes = kai.TRIGGER_CODES[trigger.text]
        actions = dict(lowered.error_policy.by_code) if lowered.error_policy is not None else {}
        return (
            f"**{trigger.text}** (kai escalation trigger): the step failing with "
            + " or ".join(f"`{c}`" for c in codes)
            + " is handled by "
            + ", ".join(dict.fromkeys(f"`{_action(actions[c])}`" for c in codes if c in actions))
            + ", before the error policy"
        )
    return None


def _lowered(document: kai.KaiDocument, source: SourceFile, step: kai.KaiStep) -> ir.Step | None:
    playbook = kai_lowering.lower(document, source, DiagnosticSink())
    return next((s for s in ir.all_steps(playbook) if s.action == "ai-prompt" and s.span == step.span), None)


def _autonomy(step: ir.Step, span) -> list[str]:
    """What of the lowered step comes from its autonomy: the parts written at its span."""
    lines = []
    if isinstance(step.condition, ir.Lit) and step.condition.value is False:
        lines.append("- `condition: false`: the step never runs")
    if step.gate is not None:
        policy = step.gate.policy.value if isinstance(step.gate.policy, ir.Lit) else "rules"
        lines.append(f"- a checkpoint {step.gate.when} the step, `policy: {policy}`")
    for code, action in step.error_policy.by_code if step.error_policy is not None else ():
        if (
            action.span == span
            and step.ensures is not None
            and any(c.code == code and c.span == span for c in step.ensures.checks)
        ):
            lines.append(f"- a check after the step failing with `{code}`, handled by `{_action(action)}`")
    return lines or ["- the step runs with no checkpoint of its own"]


def _policy(policy: ir.ErrorPolicy | None) -> list[str]:
    if policy is None:
        return []
    lines = [f"- any error: `{_action(policy.default)}`"] if policy.default is not None else []
    return lines + [f"- `{code}`: `{_action(action)}`" for code, action in policy.by_code]


def _action(action: ir.PolicyAction) -> str:
    return action.action + (
        f" after {action.retry_count} retr{'y' if action.retry_count == 1 else 'ies'}" if action.retry_count else ""
    )


def _command(text: str, root: Path | None) -> str:
    """The slash command's file in the project: its first lines, or that it has none."""
    path = command_file(text, root)
    head = f"{strong_name(text)} (slash command)"
    if path is None:
        return head + (": no file for it in the project's `.claude/commands/`" if root is not None else "")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head_text = f.read(COMMAND_CHARS)  # a file of one long line is not read whole
    except OSError:
        return head
    shown = "\n".join(head_text.split("\n")[:COMMAND_LINES]).rstrip("\n")
    return f"{head}: {code_span(path.relative_to(root.resolve()).as_posix())}\n\n{fenced(shown, 'markdown')}"


def _input(decl: ir.InputDecl, what: str) -> str:
    facts = ["required" if decl.required else "optional"]
    if decl.default is not None and isinstance(decl.default, ir.Lit):
        facts.append(
            f"default `{json.dumps(decl.default.value)}`" if decl.default.value != "" else "default empty text"
        )
    text = f"{strong_name(decl.name)} ({what}, {', '.join(facts)})"
    return text + (f"\n\n{author_markdown(decl.description)}" if decl.description else "")


# -- cleo -----------------------------------------------------------------------------------------


def cleo_hover(source: SourceFile, offset: int, catalog) -> str | None:
    book = read_cantbook(source)
    if book is None:
        return None
    name = name_at(source, offset, cleo.NAME)
    if name is not None and name.kind == "node":
        node = node_of(book, name.name)
        kind = f"cleo {node.type} node" if node.type else "cleo node"
        text = f"{strong_name(node.id)} ({kind}, line {node.id_span.line})"
        description = node.keys.get("description", (None, None))[1]
        shown = author_markdown(description.value) if isinstance(description, YScalar) else ""
        return text + (f"\n\n{shown}" if shown else "")
    if name is not None and name.kind == "input":
        from catalyst_dsl.dialects.cleo.lowering import Lowerer

        decl = next(i for i in book.inputs if i.name == name.name)
        return _input(Lowerer(book, DiagnosticSink()).input(decl), "cleo input")
    for node in book.nodes:
        type_ = _value_at(source, node.keys.get("type"), offset)
        if type_ in cleo.TYPE_KEYS:
            return _node_type(type_, catalog)
        policy = _value_at(source, node.keys.get("policy"), offset)
        if policy is not None and node.type == "approval":
            return _gate_policy(book, node, policy)
    handlers = book.root.get("error_handlers")
    for item in handlers.items if isinstance(handlers, YSeq) else ():
        if isinstance(item, YMap):
            found = _handler(source, item, offset)
            if found is not None:
                return found
    return None


def _value_at(source: SourceFile, entry, offset: int) -> str | None:
    """The text of a `key: value` entry's scalar value when the cursor is on it."""
    value = entry[1] if entry is not None else None
    if isinstance(value, YScalar) and isinstance(value.value, str) and contains(source, value.span, offset):
        return value.value
    return None


def _node_type(type_: str, catalog) -> str:
    from catalyst_dsl.dialects.cleo.lowering_tables import NODE_ACTIONS

    action = NODE_ACTIONS[type_]
    spec = catalog.get(action)
    lines = [f"**{type_}** (cleo node type): lowered to the `{action}` action", ""]
    if spec is not None:
        lines += [spec.summary, ""]
    lines.append("keys: " + ", ".join(f"`{k}`" for k in (*cleo.COMMON_KEYS, *cleo.TYPE_KEYS[type_])))
    return "\n".join(lines)


def _gate_policy(book, node, policy: str) -> str:
    """What the approval node's gate lowers to: a person always, or rules over the commands
    up to the next gate (cleo.node_lowering.NodeLowering.gate_policy)."""
    from catalyst_dsl.dialects.cleo.lowering import Lowerer

    head = f"{strong_name(policy)} (cleo approval policy)"
    if policy not in cleo.POLICIES:
        return head
    if book.graph is None:  # the commands after the gate are not known without the graph
        return head + ": the graph does not read (see `catalyst check`)"
    lowered = Lowerer(book, DiagnosticSink()).gate_policy(node)
    if isinstance(lowered, ir.Lit):
        return head + f": the gate's `policy: {lowered.value}`, a person answers it"
    entries = {e.key: e.value for e in lowered.entries}
    rules = entries.get("rules")
    by = (
        "the project's `approval-rules` setting"
        if isinstance(rules, ir.Lit)
        else f"cleo's {len(rules.items)} default rules"
    )
    commands = [c.value for c in entries["commands"].items]
    listed = ", ".join(f"`{c}`" for c in commands) if commands else "none"
    return head + (
        f": the gate passes by itself when {by} approve every command "
        f"up to the next gate ({listed}); else a person answers it"
    )


def _handler(source: SourceFile, item: YMap, offset: int) -> str | None:
    from catalyst_dsl.dialects.cleo.lowering_tables import HANDLER_ACTIONS, HANDLER_CODES

    on = item.get("on")
    action = item.get("action")
    code = HANDLER_CODES.get(on.value) if isinstance(on, YScalar) else None
    lowered = HANDLER_ACTIONS.get(action.value) if isinstance(action, YScalar) else None
    if isinstance(on, YScalar) and code is not None and contains(source, on.span, offset):
        return f"**{on.value}** (cleo handler event): the error `{code}`" + (
            f", handled by `{lowered}`" if lowered else ""
        )
    if isinstance(action, YScalar) and lowered is not None and contains(source, action.span, offset):
        return f"**{action.value}** (cleo handler action): the error policy action `{lowered}`" + (
            f" for `{code}`" if code else ""
        )
    return None


def _lines(check: ir.Check, depth: int) -> list[str]:
    indent = "  " * depth + "- "
    if check.kind in ("all", "any", "not"):
        head = {"all": "all of", "any": "any of", "not": "not"}[check.kind]
        return [indent + head] + [line for c in check.checks for line in _lines(c, depth + 1)]
    path, regex = _text(check.args.get("path")), _text(check.args.get("regex"))
    if check.kind == "file-exists":
        return [f"{indent}the file `{path}` exists"]
    if check.kind == "file-contains":
        return [f"{indent}the file `{path}` matches `{regex}`"]
    if check.kind == "command-output":
        argv = check.args.get("argv")
        words = " ".join(_text(v) for v in argv.items) if isinstance(argv, ir.ListV) else ""
        return [f"{indent}`{words}` prints text matching `{_text(check.args.get('match'))}`"]
    return [f"{indent}{check.kind}"]


def _text(value) -> str:
    if isinstance(value, ir.Tmpl):
        return value.text
    if isinstance(value, ir.Lit):
        return str(value.value)
    return ""
