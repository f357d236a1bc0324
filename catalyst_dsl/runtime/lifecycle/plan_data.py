"""A plan's data (docs/plan-format.md) apart from how it is shown: its canonical JSON, its
hash, its step entries walked in order and its summary counted.

The what-if builds plans with these (planner.py); the reports (report/plan.py), the
golden files and the pull-request comment read them. Nothing here is imported that a
what-if printed as text would not need: hashlib only when a hash is asked for.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Iterator, Mapping, MutableMapping, Sequence

FORMAT = "catalyst-plan"
#: 2: every step entry has an `address`, its identity across versions of the playbook.
VERSION = 2

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


# -- addresses --------------------------------------------------------------------------------------------------

#: The name the engine gives a step without one: its action and its line (`file-write@38`).
UNNAMED_STEP = re.compile(r"^(.+)@(?:\d+|\?)$")


def address_steps(steps: Sequence[MutableMapping[str, Any]], parts: Mapping[str, str] | None = None) -> None:
    """Give every step entry its `address`: what the step is, where `path` says where it sits.

    An address is a path of names: the step's name, under the names of the steps it runs
    in and the part of them it is in (`release/then/notes`, `tasks/each/1/write`, `docs/call/draft`).
    A step without a name is its action and its rank among the unnamed steps of that
    action beside it (`file-write#1`), so a step added or removed elsewhere, or a named one
    added beside it, leaves it as it was. A pause shown at a step (`…/checkpoint`,
    `…/approve-effects`) is the step's address and that word. An insertion renumbers the
    paths after it, never the addresses: a diff of two plans pairs entries by address.
    `parts` names the catch clauses and route branches by their paths (`steps/3/catch/0`:
    `E1`, its code; a branch's label or `when`): their steps are under that name, not the
    clause's position (`try#1/catch/E1/recover`), so a clause added before another leaves
    the other's steps as they were.
    """
    taken: set[str] = set()
    _address_level(steps, "", "", taken, parts or {})


def _address_level(
    steps: Sequence[MutableMapping[str, Any]], parent: str, parent_path: str, taken: set[str], parts: Mapping[str, str]
) -> None:
    own: dict[str, str] = {}  # a step's path -> its address, for the pauses shown at it
    ranks: dict[tuple[str, str], int] = {}  # (part of the parent, action) -> unnamed steps of it so far
    actions = {entry.get("path"): entry.get("action") for entry in steps}
    for entry in steps:
        path = str(entry.get("path") or "")
        base, _, last = path.rpartition("/")
        pause = last if base and not last.isdigit() else None
        step_path = base if pause else path
        address = own.get(step_path)
        if address is None:
            address = _step_address(entry, step_path, actions.get(step_path), parent, parent_path, ranks, parts)
            own[step_path] = address
        if pause:
            address = f"{address}/{pause}"
        entry["address"] = _unique(address, taken)
        nested = entry.get("steps")
        if nested:
            _address_level(nested, address, path, taken, parts)


def _step_address(
    entry: Mapping[str, Any],
    step_path: str,
    action: Any,
    parent: str,
    parent_path: str,
    ranks: dict[tuple[str, str], int],
    parts: Mapping[str, str],
) -> str:
    relative = (
        step_path[len(parent_path) + 1 :] if parent_path and step_path.startswith(parent_path + "/") else step_path
    )
    part = relative.split("/")[:-1]  # the index among its siblings left out: it is a position
    if part and part[-1] == "steps":  # a body of steps (`steps/0`, `call/steps/0`) is its owner's
        part.pop()
    named = parts.get(step_path.rpartition("/")[0]) if len(part) >= 2 and part[-2] in _NAMED_PARTS else None
    if named is not None:
        part[-1] = named  # a clause's code, a branch's label, in place of its position
    name = str(entry.get("step") or entry.get("action") or "")
    unnamed = UNNAMED_STEP.match(name)
    if unnamed and (action is None or unnamed.group(1) == action or entry.get("action") == unnamed.group(1)):
        key = ("/".join(part), unnamed.group(1))
        ranks[key] = ranks.get(key, 0) + 1
        name = f"{unnamed.group(1)}#{ranks[key]}"
    return "/".join(p for p in (parent, *part, name) if p)


#: The parts of a step whose bodies are told apart by a name (PlanRecorder.parts).
_NAMED_PARTS = frozenset({"catch", "branches"})


def _unique(address: str, taken: set[str]) -> str:
    """`address`, or with `~N` when an entry has it already (a step shown twice)."""
    candidate, n = address, 1
    while candidate in taken:
        n += 1
        candidate = f"{address}~{n}"
    taken.add(candidate)
    return candidate
