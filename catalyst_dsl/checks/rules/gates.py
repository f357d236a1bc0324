"""Gates and agent identity: `checkpoint:` answers, `approved: true`, approval-policy rules and
the form of slash commands on `ai-prompt` steps (C630-C634).

These run on every compile; the rule that looks for a slash command's file (C635) needs
the project root, so it runs in the library check only (slash_commands.py).
"""

from __future__ import annotations

from catalyst_dsl.actions.builtin import writing_tools
from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.checks.rules.slash_commands import slash_command_name, written_command
from catalyst_dsl.diagnostics.ids import (
    APPROVED_NOTHING,
    APPROVED_NOT_AI,
    GATE_OPTIONS,
    POLICY_RULE_PATTERN,
    SLASH_COMMAND_FORM,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.regex import PatternError, check_pattern


def check_gates(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog) -> None:
    for step in ir.all_steps(playbook):
        if step.gate is not None:
            _gate_options(step.gate, sink)
            _policy_rules(step.gate.policy, sink)
        if step.action == "checkpoint":
            _policy_rules(step.config.get("policy"), sink)
        spec = catalog.get(step.action) if step.known else None
        if step.approved:
            _pre_approval(step, spec, sink)
        if step.action == "ai-prompt" and spec is not None:
            command = step.config.get("command")
            text = written_command(command)
            if text is not None and slash_command_name(text) is None:
                sink.report(
                    SLASH_COMMAND_FORM,
                    f"`command` is not a slash command: {text!r}",
                    command.span,
                    help="write the command as `/name` followed by its arguments, such as `/speckit.plan 001-login`",
                )


def _gate_options(gate: ir.Gate, sink: DiagnosticSink) -> None:
    seen: set[str] = set()
    for option in gate.options:
        if option in seen:
            sink.report(
                GATE_OPTIONS, f"the checkpoint offers `{option}` twice", gate.span, help="list each answer once"
            )
        seen.add(option)
    if gate.when == "after" and "skip" in seen:
        sink.report(
            GATE_OPTIONS,
            "a checkpoint after the step cannot skip it: the step has run by then",
            gate.span,
            help="use `when: before` to offer skipping the step, or offer only yes and abort",
        )
    if "yes" not in seen:
        sink.report(
            GATE_OPTIONS,
            "the checkpoint does not offer `yes`, so no answer lets the run go on",
            gate.span,
            help="add `yes` to its options",
        )


def _policy_rules(policy: ir.Value | None, sink: DiagnosticSink) -> None:
    rules = policy.get("rules") if isinstance(policy, ir.MapV) else None
    for rule in rules.items if isinstance(rules, ir.ListV) else ():
        pattern = rule.get("pattern") if isinstance(rule, ir.MapV) else None
        if isinstance(pattern, ir.Lit) and isinstance(pattern.value, str):
            try:
                check_pattern(pattern.value)
            except PatternError as error:
                sink.report(
                    POLICY_RULE_PATTERN,
                    f"the pattern of this approval rule cannot be used: {error.message}",
                    pattern.span,
                    help="fix the regular expression; write (?i) at its start to ignore case",
                )


def _pre_approval(step: ir.Step, spec, sink: DiagnosticSink) -> None:
    if spec is None:
        return
    if spec.group != "ai":
        sink.report(
            APPROVED_NOT_AI,
            f"`approved: true` is for AI steps; {step.action} is not one",
            step.span,
            help="remove it: a program's declared writes are approved when it runs (or in autonomous mode)",
        )
        return
    tools = step.config.get("tools")
    if tools is None:
        granted: list[str] | None = []
    elif isinstance(tools, ir.ListV) and all(isinstance(i, ir.Lit) for i in tools.items):
        granted = writing_tools([i.value for i in tools.items])  # type: ignore[union-attr]
    else:
        granted = None  # computed at run time
    if granted == []:
        sink.report(
            APPROVED_NOTHING,
            "`approved: true` pre-approves nothing: this AI step is granted no tool that changes things",
            step.span,
            help="remove it, or grant the tools the author approves in `tools:`",
        )
