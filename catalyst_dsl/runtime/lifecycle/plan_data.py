"""A plan's data (docs/plan-format.md) apart from how it is shown: its canonical JSON, its
hash, its step entries walked in order and its summary counted.

The what-if builds plans with these (planner.py); the reports (report/plan.py), the
golden files and the pull-request comment read them. Nothing here is imported that a
what-if printed as text would not need: hashlib only when a hash is asked for.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator, Mapping

FORMAT = "catalyst-plan"
VERSION = 1

#: Every change type, in the order docs/plan-format.md lists them.
CHANGE_TYPES = ("create", "modify", "delete", "no-op", "read", "unknown", "skipped", "would-pause", "refused")


def canonical_json(plan: Mapping[str, Any]) -> str:
    """The plan as it is committed: sorted keys, two-space indent, UTF-8 text, LF, a final newline."""
    # NaN and Infinity are not JSON: a golden file must load in any JSON reader.
    return json.dumps(plan, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def plan_hash(plan: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of `plan` without its `planHash`."""
    import hashlib  # here: a what-if printed as text has no hash, and hashlib loads OpenSSL

    body = {key: value for key, value in plan.items() if key != "planHash"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def with_hash(plan: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `plan` with `planHash` (re)computed; `plan` itself is left as it was."""
    body = {key: value for key, value in plan.items() if key != "planHash"}
    return {**body, "planHash": plan_hash(body)}


def walk(steps: Iterable[Mapping[str, Any]], depth: int = 0) -> Iterator[tuple[Mapping[str, Any], int]]:
    """Every step entry with its depth, nested ones right after their parent, in plan order.
    One generator for the whole plan, its entries on a stack (the next one last), not one
    per entry: a large plan has hundreds."""
    pending = [(step, depth) for step in reversed(list(steps))]
    while pending:
        step, level = pending.pop()
        yield step, level
        nested = step.get("steps")
        if nested:
            pending.extend((inner, level + 1) for inner in reversed(nested))


def count_changes(steps: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The `summary` of a plan with these steps: every change type, 0 when absent, nested entries counted."""
    counts = dict.fromkeys(CHANGE_TYPES, 0)
    for step, _depth in walk(steps):
        counts[step["change"]] = counts.get(step["change"], 0) + 1
    return counts


def predicted_failure(plan: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first entry the plan predicts to end the run with a failure (marked `fails`),
    or None: a what-if that finds one exits as the failed run would."""
    return next((step for step, _depth in walk(plan.get("steps", ())) if step.get("fails")), None)
