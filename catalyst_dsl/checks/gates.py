"""Gates and agent identity: `checkpoint:` answers, `approved: true`, approval-policy rules and
slash commands on `ai-prompt` steps (C630-C635).

The per-file rules run on every compile; the one that looks for a slash command's file
(C635) needs the project root, so it runs in the library check only, like C819.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalyst_dsl.actions.builtin import writing_tools
from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.lazy_pattern import LazyPattern
from catalyst_dsl.project import observed
from catalyst_dsl.syntax.regex import PatternError, check_pattern

#: `/name` then, after white space, its arguments. The name is what `.claude/commands/`
#: holds a file for: `/speckit.plan` is `.claude/commands/speckit.plan.md`.
SLASH_COMMAND = LazyPattern(r"/(?P<name>[A-Za-z0-9][A-Za-z0-9._:-]*)(?:\s+.*)?", re.DOTALL)
COMMANDS_DIR = ".claude/commands"


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
                    "C634",
                    f"`command` is not a slash command: {text!r}",
                    command.span,
                    help="write the command as `/name` followed by its arguments, such as `/speckit.plan 001-login`",
                )


def written_command(value: ir.Value | None) -> str | None:
    """The text of a `command` whose command name is written out (its arguments may be
    templates); None when absent or when the name itself is computed at run time."""
    if isinstance(value, ir.Lit) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ir.Tmpl):
        head = value.text.strip().split(None, 1)[0] if value.text.strip() else ""
        return value.text if head and "{{" not in head else None
    return None


def slash_command_name(text: str) -> str | None:
    """The name of the slash command `text` starts (`speckit.plan` for `/speckit.plan x`), or None."""
    match = SLASH_COMMAND.fullmatch(text.strip())
    return match.group("name") if match else None


def _gate_options(gate: ir.Gate, sink: DiagnosticSink) -> None:
    seen: set[str] = set()
    for option in gate.options:
        if option in seen:
            sink.report("C630", f"the checkpoint offers `{option}` twice", gate.span, help="list each answer once")
        seen.add(option)
    if gate.when == "after" and "skip" in seen:
        sink.report(
            "C630",
            "a checkpoint after the step cannot skip it: the step has run by then",
            gate.span,
            help="use `when: before` to offer skipping the step, or offer only yes and abort",
        )
    if "yes" not in seen:
        sink.report(
            "C630",
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
                    "C633",
                    f"the pattern of this approval rule cannot be used: {error.message}",
                    pattern.span,
                    help="fix the regular expression; write (?i) at its start to ignore case",
                )


def _pre_approval(step: ir.Step, spec, sink: DiagnosticSink) -> None:
    if spec is None:
        return
    if spec.group != "ai":
        sink.report(
            "C631",
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
            "C632",
            "`approved: true` pre-approves nothing: this AI step is granted no tool that changes things",
            step.span,
            help="remove it, or grant the tools the author approves in `tools:`",
        )


def check_slash_commands(library, files: list[str], sink: DiagnosticSink) -> None:
    """C635: an `ai-prompt` naming a slash command the project has no file for, in a
    project that keeps its commands in `.claude/commands/`."""
    commands = Path(library.project.root) / COMMANDS_DIR
    if observed.listdir(commands) is None:
        # The project keeps no commands of its own: they come from the user's own folder,
        # skills or plugins, which a check of the project cannot see.
        return
    for path in files:
        playbook = library.compiled(path).playbook
        if playbook is None:
            continue
        for step in ir.all_steps(playbook):
            command = step.config.get("command") if step.action == "ai-prompt" else None
            text = written_command(command)
            if text is None:
                continue  # absent, or its name computed at run time: the adapter meets it then
            name = slash_command_name(text)
            if name is not None and not observed.is_file(commands / f"{name}.md"):
                sink.report(
                    "C635",
                    f"the slash command /{name} has no file {COMMANDS_DIR}/{name}.md in this project",
                    command.span,
                    help=f"add {COMMANDS_DIR}/{name}.md, or check the command's spelling; the agent will not know the command",
                )
