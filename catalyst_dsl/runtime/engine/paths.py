"""Step paths: the stable address of every step a run executes, and the way back to it.

A path names where a step sits, including which loop iteration, function call or
called playbook it ran in: `steps/2/then/0`, `steps/3/each/1/0` (iteration 1),
`steps/7/branches/1/0` (branch 1 of a `route`; its `otherwise` is `steps/7/otherwise/0`),
`steps/4/call/steps/0` (inside a called playbook), `steps/5/fn/0` (inside the function
that step 5 calls), `steps/6/attempt/2/0` (attempt 2 of a `retry-block`). The snapshot
keys its journal by path; resume finds each recorded step again with `step_at` to tell
whether the playbook changed under the run.

A few paths name what happens at a step rather than a step: its pauses
(`…/before`, `…/checkpoint`, `…/approve-effects`, `…/review`, `…/inquire`) and journal
entries that only resume reads: `…/catch/caught` (a failure a catch handled),
`…/each/N/item` (the item loop iteration N ran for) and `…/attempt/N/failed` (the failure
that ended attempt N of a `retry-block`).
"""

from __future__ import annotations

import json
from typing import Callable

from catalyst_dsl.ir import nodes as ir


def join(prefix: str, *segments: object) -> str:
    tail = "/".join(map(str, segments))
    return f"{prefix}/{tail}" if prefix else tail


def step_label(step_id: str, path: str) -> str:
    """The one name a person sees for a step: its id (its `name`, else `action@line`),
    with the loop iteration and `retry-block` attempt it runs in, counted from 1 and
    outermost first (`check [iteration 2]`, `lint [iteration 3, attempt 2]`). The path
    itself stays internal: it is how the journal and the snapshot address the step."""
    if "/each/" not in path and "/attempt/" not in path:
        return step_id
    segments = path.split("/")
    where = []
    for i, segment in enumerate(segments[:-1]):
        if segment == "each" and segments[i + 1].isdigit():
            where.append(f"iteration {int(segments[i + 1]) + 1}")
        elif segment == "attempt" and segments[i + 1].isdigit():
            where.append(f"attempt {segments[i + 1]}")  # a retry-block counts its attempts from 1
    return f"{step_id} [{', '.join(where)}]" if where else step_id


#: id(node) -> (node, hash). Keyed by identity: hashing a frozen IR tree for a dict key
#: would walk the whole tree on every lookup, and IR nodes live as long as the run.
_FINGERPRINTS: dict[int, tuple[object, str]] = {}


def value_digest(value: object) -> str:
    """A short hash of a plain (JSON-like) value, keys in any order: what a loop item was."""
    data = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    import hashlib  # here: a what-if has no loop items to remember, and hashlib loads OpenSSL

    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]


def fingerprint(node: object) -> str:
    """A hash of a step or playbook as the IR says it (positions left out)."""
    known = _FINGERPRINTS.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    from catalyst_dsl.ir.serialize import converter

    digest = value_digest(converter().unstructure(node))
    _FINGERPRINTS[id(node)] = (node, digest)
    return digest


def _body(step: ir.Step, key: str) -> tuple[ir.Step, ...]:
    value = step.config.get(key)
    return value.steps if isinstance(value, ir.StepsV) else ()


def _catch_body(config_value, index: int) -> tuple[ir.Step, ...]:
    if isinstance(config_value, ir.ListV) and index < len(config_value.items):
        clause = config_value.items[index]
        if isinstance(clause, ir.MapV):
            body = clause.get("steps")
            if isinstance(body, ir.StepsV):
                return body.steps
    return ()


def step_at(
    playbook: ir.Playbook, path: str, callee: Callable[[ir.Playbook, ir.Step], ir.Playbook | None]
) -> ir.Step | None:
    """The step at `path`, or None when the playbook has no step there any more.

    `callee(playbook, step)` loads the playbook a `playbook` step calls (None if it cannot).
    """
    segments = path.split("/")
    try:
        return _walk(playbook, segments, callee)
    except (ValueError, IndexError):
        return None


def _index(segments: list[str]) -> int:
    return int(segments.pop(0))


def _walk(playbook: ir.Playbook, segments: list[str], callee) -> ir.Step | None:
    segments = list(segments)
    section = segments.pop(0)
    if section == "steps":
        steps = playbook.steps
    elif section == "finally":
        steps = playbook.finally_
    elif section == "catch":
        steps = playbook.catch[_index(segments)].steps
    else:
        return None
    step = steps[_index(segments)]
    while segments:
        kind = segments.pop(0)
        if kind in ("then", "else", "steps", "finally", "otherwise"):
            step = _body(step, kind)[_index(segments)]
        elif kind in ("catch", "branches"):  # a try's clause k, a route's branch k: its steps
            k = _index(segments)
            step = _catch_body(step.config.get(kind), k)[_index(segments)]
        elif kind in ("each", "attempt"):
            _index(segments)  # the iteration or attempt: each runs the same body
            step = _body(step, "steps")[_index(segments)]
        elif kind == "branch":
            step = _body(step, "steps")[_index(segments)]
        elif kind == "fn":
            definition = _function(playbook, step.action)
            if definition is None:
                return None
            step = _body(definition, "steps")[_index(segments)]
        elif kind == "call":
            child = callee(playbook, step)
            if child is None:
                return None
            return _walk(child, segments, callee)
        else:
            return None
    return step


def _function(playbook: ir.Playbook, name: str) -> ir.Step | None:
    for step in ir.all_steps(playbook):
        if step.action == "function":
            defined = step.config.get("name")
            if isinstance(defined, ir.Lit) and defined.value == name:
                return step
    return None
