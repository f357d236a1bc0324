"""cleo's approval policy rules (DIALECTS.md B4.10): which commands need a person.

A rule list is evaluated over one command line (argv joined by single spaces): every
`require-human` rule first (the first match decides), then every `auto-approve` rule,
else `require-human` for the reason `default`. The checker uses the default rules to find
risky commands with no approval node before them (CLE-22).
"""

from __future__ import annotations

import re

import attrs


@attrs.frozen
class PolicyRule:
    action: str  # require-human | auto-approve
    reason: str
    pattern: re.Pattern


def _rule(action: str, reason: str, pattern: str, flags: int = 0) -> PolicyRule:
    return PolicyRule(action, reason, re.compile(pattern, flags))


DEFAULT_RULES: tuple[PolicyRule, ...] = (
    _rule("require-human", "publish", r"\b(?:npm|pnpm|yarn) publish\b"),
    _rule("require-human", "push", r"\bgit push\b"),
    _rule("require-human", "tag", r"\bgit tag\b"),
    _rule("require-human", "release", r"\bgh release create\b"),
    _rule("require-human", "workflow-trigger", r"\bgh workflow run\b"),
    _rule("require-human", "destructive", r"\b(?:rm -rf|drop table|truncate|delete from)\b", re.IGNORECASE),
    _rule("require-human", "external-api", r"\b(?:curl|wget|fetch)\b.*https?://", re.IGNORECASE),
    _rule("require-human", "remote-access", r"\b(?:ssh|scp|rsync)\b.*@"),
    _rule("auto-approve", "safe-qa-tool", r"^(?:pnpm test|pnpm run test|pnpm biome|pnpm tsc)"),
    _rule("auto-approve", "safe-cleo-read", r"^cleo (?:verify|check|show|find|list|status|current|next)\b"),
)


def evaluate(command: str, rules: tuple[PolicyRule, ...]) -> tuple[str, str]:
    """(action, reason) for one command line under `rules`."""
    for wanted in ("require-human", "auto-approve"):
        for rule in rules:
            if rule.action == wanted and rule.pattern.search(command):
                return rule.action, rule.reason
    return "require-human", "default"
