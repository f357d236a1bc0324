"""The approval rules cleo's policy evaluator applies by default, as data.

A dialect that lowers a `permissive` gate writes these into the checkpoint's
`policy: {rules: [...]}` (each `{action, reason, pattern}`), so the rules a run applies are
visible in the IR and the what-if like any the author wrote. Patterns are RE2 (linear time)
and give the original's decisions: the `require-human` rules are tried before the
`auto-approve` ones, whatever their order here.
"""

from __future__ import annotations

#: (action, reason, pattern)
DEFAULT_RULES: tuple[tuple[str, str, str], ...] = (
    ("require-human", "publish", r"\b(?:npm|pnpm|yarn) publish\b"),
    ("require-human", "push", r"git push"),
    ("require-human", "tag", r"git tag"),
    ("require-human", "release", r"gh release create"),
    ("require-human", "workflow-trigger", r"gh workflow run"),
    ("require-human", "destructive", r"(?i)\b(?:rm -rf|drop table|truncate|delete from)\b"),
    ("require-human", "external-api", r"(?i)\b(?:curl|wget|fetch)\b.*https?://"),
    ("require-human", "remote-access", r"\b(?:ssh|scp|rsync)\b.*@"),
    ("auto-approve", "safe-qa-tool", r"^(?:pnpm test|pnpm run test|pnpm biome|pnpm tsc)"),
    ("auto-approve", "safe-cleo-read", r"^cleo (?:verify|check|show|find|list|status|current|next)\b"),
)
