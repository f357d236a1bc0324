"""Approval policies: whether a pause may pass without a person (DIALECTS C-7, B4.10).

A pause with no policy is released as every pause is: ENTER, `catalyst approve`, a token,
or `--mode autonomous`. `policy: human` is released by a person only: autonomous mode never
answers it. `policy: {rules: [...]}` judges the commands the pause guards: for each command
the `require-human` rules are tried first (the first that matches decides), then the
`auto-approve` rules, else it needs a person (reason `default`). The pause passes by itself
only when every command is auto-approved, and the approval records the rules that let it.

The commands are read as the author wrote them, never rendered: a value supplied at run
time (an input, an AI answer) never turns a pause into an approval. A command holding a
`{{ }}` placeholder therefore needs a person, as does a pause that guards no command.
"""

from __future__ import annotations

from typing import Sequence

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.records import record

HUMAN = "human"
RULES = "rules"
REQUIRE_HUMAN = "require-human"
AUTO_APPROVE = "auto-approve"


@record
class PolicyRule:
    action: str  # REQUIRE_HUMAN | AUTO_APPROVE
    reason: str
    #: A regular expression (RE2, linear time) searched in the command; None when it was not
    #: written out as text (a template), so it never matches.
    pattern: str | None


@record
class Command:
    """A command a pause guards, as written; `fixed` is False when it holds a placeholder."""

    text: str
    fixed: bool = True


@record
class Verdict:
    passes: bool
    #: Why, in words recorded with the approval (or shown with the pause).
    reason: str


@record
class ApprovalPolicy:
    kind: str  # HUMAN | RULES
    rules: tuple[PolicyRule, ...] = ()
    #: The commands named by the policy itself (`commands:`); None: the guarded step's own.
    commands: tuple[Command, ...] | None = None

    def judge(self, commands: Sequence[Command]) -> Verdict:
        """Whether the pause passes by itself over `commands`, and why."""
        if self.kind == HUMAN:
            return Verdict(False, "its policy asks for a person")
        if not commands:
            return Verdict(False, "its rules have no command to judge")
        passed = []
        for command in commands:
            if not command.fixed:
                return Verdict(False, f"`{command.text}` holds values known only at run time")
            action, reason = self._decide(command.text)
            if action != AUTO_APPROVE:
                return Verdict(False, f"rule {reason} asks for a person for `{command.text}`")
            passed.append(f"`{command.text}` ({reason})")
        return Verdict(True, "passed by its approval rules: " + ", ".join(passed))

    def _decide(self, text: str) -> tuple[str, str]:
        from catalyst_dsl.syntax.regex import PatternError, compile_pattern

        for wanted in (REQUIRE_HUMAN, AUTO_APPROVE):
            for rule in self.rules:
                if rule.action != wanted or rule.pattern is None:
                    continue
                try:
                    if compile_pattern(rule.pattern).search(text) is not None:
                        return rule.action, rule.reason
                except PatternError:
                    continue  # reported before the run (C633); a rule that cannot match decides nothing
        return REQUIRE_HUMAN, "default"


#: `rules: project`: the project's `approval-rules` setting.
PROJECT_RULES = "project"


def policy_of(value: ir.Value | None, project_rules: Sequence[dict] = ()) -> ApprovalPolicy | None:
    """The policy a `policy:` value states, read from the IR as written. Anything but the
    text `human` or a mapping of literal rules asks for a person: a policy computed at run
    time could otherwise be loosened by a value. `rules: project` takes the project's rules
    (`project_rules`, already checked when the settings were read)."""
    if value is None or (isinstance(value, ir.Lit) and value.value is None):
        return None
    if not isinstance(value, ir.MapV):
        return ApprovalPolicy(HUMAN)
    rules = []
    written = value.get("rules")
    if isinstance(written, ir.Lit) and written.value == PROJECT_RULES:
        written = ir.ListV(
            tuple(ir.MapV(tuple(ir.Entry(k, ir.Lit(v)) for k, v in rule.items())) for rule in project_rules)
        )
    for item in written.items if isinstance(written, ir.ListV) else ():
        if not isinstance(item, ir.MapV):
            continue
        action, reason, pattern = (_text(item.get(key)) for key in ("action", "reason", "pattern"))
        if action in (REQUIRE_HUMAN, AUTO_APPROVE):
            rules.append(PolicyRule(action, reason or action, pattern))
    listed = value.get("commands")
    commands = tuple(command_of(item) for item in listed.items) if isinstance(listed, ir.ListV) else None
    return ApprovalPolicy(RULES, tuple(rules), commands)


def command_of(value: ir.Value) -> Command:
    if isinstance(value, ir.Lit):
        return Command(str(value.value))
    if isinstance(value, ir.Tmpl):
        return Command(value.text, fixed=False)
    return Command("<a computed value>", fixed=False)


def step_commands(step: ir.Step) -> tuple[Command, ...]:
    """What a step runs, as written: a program's argv joined by single spaces, a script's
    text, an AI step's slash command. Other steps run no command."""
    config = step.config
    if step.action == "command":
        argv = config.get("argv")
        if isinstance(argv, ir.ListV):
            parts = [command_of(item) for item in argv.items]
            return (Command(" ".join(p.text for p in parts), all(p.fixed for p in parts)),)
        return (command_of(argv),) if argv is not None else ()
    key = {"bash": "script", "powershell": "script", "test": "command", "ai-prompt": "command"}.get(step.action)
    value = config.get(key) if key else None
    return (command_of(value),) if value is not None else ()


def _text(value: ir.Value | None) -> str | None:
    return value.value if isinstance(value, ir.Lit) and isinstance(value.value, str) else None
