"""`catalyst runs export RUN --format cleo`: a cantbook's run in the shape of cleo's task
database, for users who keep `tasks.db`.

One `playbook_runs` row, the `playbook_approvals` rows of its approval nodes, and the
contract violations cleo would have written to `.cleo/audit/contract-violations.jsonl`.
The run-wide context (`bindings`) is rebuilt from the journal the way the run built it:
the inputs, then each completed node's output in the order they completed.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from pathlib import Path
from typing import Any, Optional

from catalyst_dsl.dialects.cleo.lowering_tables import CHECK_SUFFIXES, CONTRACT_SAID_PATTERN, REQUIRES_CHECK
from catalyst_dsl.dialects.cleo.model import LAST_APPROVAL, LAST_APPROVAL_KEYS, PROGRAM_OUTPUTS
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.engine import paths
from catalyst_dsl.runtime.state.snapshot import Approval, RunState, StepRecord

FORMAT = "cleo-playbook-run"
VERSION = 1
#: What a pause adds to the path of the step it belongs to (runtime/engine/pauses.py).
PAUSE_SUFFIXES = ("checkpoint", "before", "approve-effects", "inquire", "review")
#: The answer of an approval node that rejects it (dialects/cleo/lowering_tables.py).
REJECT = "reject"
#: How the run names a step without a name: `action@line` (runtime/engine/engine.py).
_UNNAMED = re.compile(r"[a-z][a-z-]*@\d+")


def export(state: RunState, playbook: Optional[ir.Playbook], source: Optional[bytes]) -> dict[str, Any]:
    """`playbook` and `source` are the cantbook as it is now, when it is still the one the
    run ran (same fingerprint); without them node ids come from the journal alone and the
    hash is null."""
    steps = _StepsOf(playbook)
    run = {
        "run_id": state.run_id,
        "playbook_name": state.playbook.name,
        "playbook_hash": hashlib.sha256(source).hexdigest() if source is not None else None,
        "current_node": None
        if state.finished
        else steps.node(state.in_flight or (state.pause.path if state.pause else None), state),
        "bindings": context(state, steps),
        "error_context": state.error.message if state.error is not None else None,
        "status": state.status,
        "iteration_counts": attempts(state, steps),
        "epic_id": None,
        "session_id": None,
        "started_at": state.started_at,
        "completed_at": state.ended_at,
    }
    for key, column in (("epicId", "epic_id"), ("sessionId", "session_id")):
        if isinstance(run["bindings"].get(key), str) and run["bindings"][key]:
            run[column] = run["bindings"][key]
    return {
        "format": FORMAT,
        "version": VERSION,
        "playbook_runs": [run],
        "playbook_approvals": approvals(state, steps),
        "contract_violations": [
            {
                "timestamp": f.at,
                "runId": state.run_id,
                "nodeId": _node_of_check(f.step),
                **_contract_of(f.message),
                "message": f.message,
                "playbookName": state.playbook.name,
            }
            for f in state.failures
            if f.code == "ContractViolation"
        ],
    }


class _StepsOf:
    """Which node a journal path or a pause belongs to, and what kind of node it is."""

    def __init__(self, playbook: Optional[ir.Playbook]) -> None:
        self.playbook = playbook
        self._nodes: Optional[set[str]] = None

    def step(self, path: Optional[str]) -> Optional[ir.Step]:
        if self.playbook is None or not path:
            return None
        found = paths.step_at(self.playbook, path, lambda pb, step: None)
        if found is None and path.rsplit("/", 1)[-1] in PAUSE_SUFFIXES:
            found = paths.step_at(self.playbook, path.rsplit("/", 1)[0], lambda pb, step: None)
        return found

    def node(self, path: Optional[str], state: RunState) -> Optional[str]:
        step = self.step(path)
        if step is not None:
            return step.name
        for record in reversed(state.steps):  # without the cantbook: the journal's name for that path
            if path and record.name and (record.path == path or path.startswith(record.path + "/")):
                return record.name
        return None

    def is_node(self, name: Optional[str]) -> bool:
        """A node's id, not a step the cantbook's lowering added (a contract's check, a loop-back
        block, which are named by their action and line)."""
        if not name or name.endswith(CHECK_SUFFIXES):
            return False
        if self.playbook is not None:
            if self._nodes is None:
                self._nodes = {s.name for s in ir.all_steps(self.playbook) if s.name}
            return name in self._nodes
        return not _UNNAMED.fullmatch(name)

    def is_gate(self, path: str) -> bool:
        """An approval node's checkpoint (not a pause before a program's effects)."""
        step = self.step(path)
        if step is not None:
            return step.action == "checkpoint" and path == _step_path(path)
        return path.rsplit("/", 1)[-1].isdigit()


def _node_of_check(step: Optional[str]) -> Optional[str]:
    """The node whose `requires` an `inject_hint` check step checked, else the step itself."""
    suffix = REQUIRES_CHECK.format("")
    return step[: -len(suffix)] if step and step.endswith(suffix) else step


def _contract_of(message: str) -> dict[str, str]:
    """The contract's field and key a violation's message names (lowering_tables.CONTRACT_SAID);
    a schema's check names no key: its message is the key, as cleo's own lines have one."""
    said = CONTRACT_SAID_PATTERN.match(message)
    if said is None:
        return {"field": "requires" if message.startswith("requires") else "ensures", "key": message}
    return {"field": said.group(1), "key": said.group(2) or "exitCode"}


def _step_path(path: str) -> str:
    return path.rsplit("/", 1)[0] if path.rsplit("/", 1)[-1] in PAUSE_SUFFIXES else path


def context(state: RunState, steps: _StepsOf) -> dict[str, Any]:
    """cleo's flat context: the inputs (also under `inputs`), then each completed node's output."""
    bindings: dict[str, Any] = {"inputs": dict(state.inputs), **state.inputs}
    for record in state.steps:
        if record.status != "completed" or not record.name:
            continue
        bindings.update(_output(record))
    return bindings


def _output(record: StepRecord) -> dict[str, Any]:
    result = record.result
    if record.action == "ai-prompt":
        return dict(result) if isinstance(result, dict) else {}
    if record.action == "command" and isinstance(result, dict):
        return {f"{record.name}{suffix}": result.get(field) for suffix, field in PROGRAM_OUTPUTS}
    if record.action == "checkpoint" and isinstance(result, dict):
        return {LAST_APPROVAL: {"nodeId": record.name, **{key: _at(result, path) for key, path in LAST_APPROVAL_KEYS}}}
    return {}


def _at(value: Any, path: str) -> Any:
    for segment in path.split("."):
        value = value.get(segment) if isinstance(value, dict) else None
    return value


def attempts(state: RunState, steps: _StepsOf) -> dict[str, int]:
    """Attempts per node over the whole run, loop-backs included (B4.7): every failed
    attempt, from the run's failures (one per attempt, also those no journal entry keeps: a
    node that never succeeded, an attempt a loop-back started over), and every attempt that
    succeeded, from the journal (a step `Ignore` let through failed, and is counted so)."""
    counts: dict[str, int] = {}

    def count(name: Optional[str]) -> None:
        if steps.is_node(name):
            counts[name] = counts.get(name, 0) + 1

    for failure in state.failures:
        count(failure.step)
    for record in state.steps:
        if record.status == "completed" and record.reason is None:
            count(record.name)
    return counts


def approvals(state: RunState, steps: _StepsOf) -> list[dict[str, Any]]:
    rows = [_approval(state, a, steps) for a in state.approvals if a.decision != "comment" and steps.is_gate(a.path)]
    pause = state.pause
    if state.status == "paused" and pause is not None and pause.kind == "checkpoint" and steps.is_gate(pause.path):
        rows.append(
            {
                "approval_id": _id(state.run_id, pause.path, pause.since),
                "run_id": state.run_id,
                "node_id": steps.node(pause.path, state),
                "token": None,
                "requested_at": pause.since,
                "approved_at": None,
                "approver": None,
                "reason": pause.message,
                "status": "pending",
                "auto_passed": 0,
            }
        )
    return rows


def _approval(state: RunState, approval: Approval, steps: _StepsOf) -> dict[str, Any]:
    rejected = approval.selected == REJECT or approval.decision == "request-changes"
    return {
        "approval_id": _id(state.run_id, approval.path, approval.at),
        "run_id": state.run_id,
        "node_id": steps.node(approval.path, state),
        "token": approval.token,
        "requested_at": None,  # the snapshot keeps when a pause began only while it lasts
        "approved_at": approval.at,
        "approver": approval.by,
        "reason": approval.comment,
        "status": "rejected" if rejected else "approved",
        "auto_passed": 1 if approval.via in ("autonomous", "policy") else 0,
    }


def _id(run_id: str, path: str, at: str) -> str:
    """A stable UUID per approval (the same export gives the same ids)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"catalyst-run:{run_id}:{path}:{at}"))


def load(project_root: Path, state: RunState, compile_path) -> tuple[Optional[ir.Playbook], Optional[bytes]]:
    """The cantbook the run ran, when the file still holds it."""
    file = project_root / state.playbook.file
    try:
        data = file.read_bytes()
    except OSError:
        return None, None
    compiled = compile_path(str(file))
    if compiled.playbook is None or paths.fingerprint(compiled.playbook) != state.playbook.fingerprint:
        return None, None
    return compiled.playbook, data
