"""cleo's approval policy rules: which commands need a person.

A rule list is evaluated over one command line (argv joined by single spaces): every
`require-human` rule first (the first match decides), then every `auto-approve` rule,
else `require-human` for the reason `default`. The checker uses the default rules to find
risky commands with no approval node before them (CLE-22).
"""

from __future__ import annotations

import re

from catalyst_dsl._internal.records import record
from catalyst_dsl.ir.approval_rules import DEFAULT_RULES as RULES_AS_DATA


@record
class PolicyRule:
    action: str  # require-human | auto-approve
    reason: str
    pattern: re.Pattern


#: cleo's default rules (one list, catalyst_dsl/ir/approval_rules.py), compiled for the
#: checker; the patterns are RE2 text that Python's `re` reads the same way.
DEFAULT_RULES: tuple[PolicyRule, ...] = tuple(PolicyRule(a, r, re.compile(p)) for a, r, p in RULES_AS_DATA)


def evaluate(command: str, rules: tuple[PolicyRule, ...]) -> tuple[str, str]:
    """(action, reason) for one command line under `rules`."""
    for wanted in ("require-human", "auto-approve"):
        for rule in rules:
            if rule.action == wanted and rule.pattern.search(command):
                return rule.action, rule.reason
    return "require-human", "default"
