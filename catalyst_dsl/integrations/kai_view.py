"""kai's session files kept while a kai playbook runs: a view of catalyst's snapshot.

After every save of the run's snapshot, `.playbooks/sessions/<id>/session.yaml` and
`journal.yaml` are written again from it, in kai's format (kai_sessions.py), so kai's
`status`/`list` and a reviewer reading the journal see the run. The
snapshot stays the source of truth: the files are derived from it whole each time (never
appended to), written atomically, and a failure to write them is a warning, never a
failure of the run.

The kai session id (`YYYYMMDD-xyz`) is chosen once per run and remembered beside the
snapshot, in `<state dir>/views/kai-<run id>`.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, Callable, Optional

from catalyst_dsl.dialects.kai.model import TRIGGER_CODES
from catalyst_dsl.integrations import kai_sessions as files
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.state import durable

SESSIONS = Path(".playbooks") / "sessions"
#: catalyst's run status -> kai's session status (A4.10).
SESSION_STATUS = {
    "running": "in_progress",
    "paused": "in_progress",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "aborted",
}
#: catalyst's journal status -> kai's entry status.
ENTRY_STATUS = {"completed": "done", "failed": "failed", "skipped": "skipped"}


def run_view(project_root: Path, state_dir: Path, playbook: ir.Playbook) -> Callable[[Any], None]:
    """The function the state store calls after each save of a run of `playbook`."""
    steps = kai_steps(playbook)
    triggers = _triggers(playbook.file)

    def keep(state) -> None:
        if not state.run_id:
            return
        session_id = _session_id(project_root, state_dir, state)
        directory = project_root / SESSIONS / session_id
        _inside(project_root, directory)
        session, entries = view_of(state, steps, session_id, triggers)
        files.write_journal(directory, entries)
        files.write_session(directory, session)

    return keep


def _inside(project_root: Path, directory: Path) -> None:
    """Refuse a sessions folder that a symbolic link (in a cloned repository, say) leads
    out of the project: session files are never written outside it."""
    import os

    real_root = os.path.realpath(project_root)
    parent = directory
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    real = os.path.realpath(parent)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise files.SessionFileError(
            directory,
            f"{SESSIONS} leads out of the project (to {real})",
            fix="remove the symbolic link: kai's session files are kept only inside the project",
        )


def kai_steps(playbook: ir.Playbook) -> list[tuple[str, ir.Step]]:
    """Each kai step of the lowered playbook with its path, in file order (a parallel
    group's members inside it)."""
    found = []
    for i, step in enumerate(playbook.steps):
        if step.action == "parallel":
            members = step.config.get("steps")
            for j, member in enumerate(members.steps if isinstance(members, ir.StepsV) else ()):
                found.append((f"steps/{i}/branch/{j}", member))
        else:
            found.append((f"steps/{i}", step))
    return found


def _triggers(file: str) -> dict[str, tuple[str, ...]]:
    """Each step id -> the escalation triggers it lists, in order (kai's own words: the
    lowered steps hold only the error codes the triggers answer)."""
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.dialects.kai.reader import read
    from catalyst_dsl.syntax.yaml_loader import decode

    try:
        source = decode(Path(file).read_bytes(), file, DiagnosticSink())
    except OSError:
        return {}
    document = read(source) if source is not None else None
    if document is None:
        return {}
    return {s.id.text: tuple(t.text for t in s.triggers) for s in document.steps if s.id is not None}


def view_of(
    state, steps: list[tuple[str, ir.Step]], session_id: str, triggers: dict[str, tuple[str, ...]]
) -> tuple[files.Session, list[files.JournalEntry]]:
    by_path = dict(steps)
    entries: list[files.JournalEntry] = []
    current = ""
    seen: set[str] = set()
    for record in state.steps:
        step = by_path.get(record.path)
        if step is None or record.path in seen:
            continue
        seen.add(record.path)
        entries.append(
            _entry(
                state,
                record.path,
                step,
                triggers,
                ENTRY_STATUS.get(record.status, "failed"),
                record.started_at,
                _plus(record.started_at, record.duration),
                round(record.duration),
                record.reason,
            )
        )
    waiting = state.pause.path if state.pause is not None else None
    for path, step in steps:
        if path in seen:
            continue
        if state.in_flight == path:
            current = step.name or ""
            entries.append(_entry(state, path, step, triggers, "in_progress", state.updated_at, None, None, None))
        elif state.status in ("failed", "cancelled") and _last_failure(state, step) is not None:
            # The step that ended the run (a stop is not in catalyst's journal: a resume runs it again).
            failure = _last_failure(state, step)
            entries.append(
                _entry(
                    state,
                    path,
                    step,
                    triggers,
                    "failed",
                    _minus(failure.at, failure.duration),
                    failure.at,
                    round(failure.duration),
                    None,
                )
            )
        elif waiting is not None and (waiting == path or waiting.startswith(path + "/")):
            current = step.name or ""
            if waiting.endswith("/inquire"):
                # A failure waiting for a person: what happened so far is the failure.
                failure = _last_failure(state, step)
                entries.append(
                    _entry(
                        state,
                        path,
                        step,
                        triggers,
                        "failed",
                        failure.at if failure else state.updated_at,
                        None,
                        None,
                        None,
                    )
                )
    session = files.Session(
        session_id=session_id,
        playbook=state.playbook.name,
        feature=str(state.inputs.get("feature", "")),
        args={
            name: str(value) for name, value in state.inputs.items() if value is not None and files.ARG_NAME.match(name)
        },
        status=SESSION_STATUS.get(state.status, "in_progress"),
        started_at=state.started_at,
        completed_at=state.ended_at or "",
        current_step=current if state.status in ("running", "paused") else "",
        worktree="",
    )
    return session, entries


def _entry(
    state,
    path: str,
    step: ir.Step,
    triggers: dict[str, tuple[str, ...]],
    status: str,
    started: str,
    completed: Optional[str],
    seconds: Optional[int],
    reason: Optional[str],
) -> files.JournalEntry:
    decision, trigger, response = _decision(state, path, step, triggers.get(step.name or "", ()))
    error = None
    if status == "failed":
        failure = _last_failure(state, step)
        error = f"{failure.code}: {failure.message}" if failure is not None else reason
    return files.JournalEntry(
        step_id=step.name or "",
        status=status,
        decision=decision,
        started_at=started,
        completed_at=completed,
        duration_seconds=seconds,
        trigger=trigger,
        human_response=response,
        error=error,
    )


def _decision(state, path: str, step: ir.Step, listed: tuple[str, ...]) -> tuple[str, Optional[str], Optional[str]]:
    """(decision, trigger, human_response) of A4.9: `skipped` for `autonomy: skip`, `gate`
    for a question before the step or a failure the error policy asked about, `escalated`
    for a failure a trigger asked about, `auto` when nobody was asked."""
    if isinstance(step.condition, ir.Lit) and step.condition.value is False:
        return "skipped", None, None
    answered = [a for a in state.approvals if a.path in (f"{path}/before", f"{path}/inquire") and a.via != "playbook"]
    response = None
    if answered:
        last = answered[-1]
        # The answer given: an option chosen, else the default (yes before a step, continue after a failure).
        default = "yes" if last.path.endswith("/before") else "continue"
        response = str(last.selected if last.selected is not None else default) + (
            f": {last.comment}" if last.comment else ""
        )
    asked = bool(answered) or (state.pause is not None and state.pause.path in (f"{path}/before", f"{path}/inquire"))
    if not asked:
        return "auto", None, None
    if any(a.path == f"{path}/inquire" for a in answered) or (
        state.pause is not None and state.pause.path == f"{path}/inquire"
    ):
        failure = _last_failure(state, step)
        trigger = next((t for t in listed if failure is not None and failure.code in TRIGGER_CODES.get(t, ())), None)
        if trigger is not None:
            return "escalated", trigger, response
    return "gate", None, response


def _last_failure(state, step: ir.Step):
    return next((f for f in reversed(state.failures) if f.step == step.name), None)


def _plus(started: str, seconds: float) -> Optional[str]:
    from catalyst_dsl.runtime.machine import format_time, parse_time

    try:
        return format_time(parse_time(started) + datetime.timedelta(seconds=seconds))
    except (ValueError, TypeError):
        return None


def _minus(ended: str, seconds: float) -> str:
    return _plus(ended, -seconds) or ended


def _session_id(project_root: Path, state_dir: Path, state) -> str:
    """The run's kai session id: the one chosen at its first save, else a new free one."""
    memo = state_dir / "views" / f"kai-{state.run_id}"
    try:
        kept = memo.read_text(encoding="utf-8").strip()
    except OSError:
        kept = ""
    if files.SESSION_ID.match(kept):
        return kept
    sessions = project_root / SESSIONS
    from catalyst_dsl.runtime.machine import parse_time

    started = parse_time(state.started_at).astimezone().date()
    chosen = files.new_session_id(started, taken=lambda candidate: (sessions / candidate).exists())
    memo.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    durable.replace(memo, chosen.encode("utf-8"))
    return chosen
