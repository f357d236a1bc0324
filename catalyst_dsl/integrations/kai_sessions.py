"""kai's session files: `.playbooks/sessions/<id>/session.yaml` and `journal.yaml`, written
in exactly the layout kai's own tools read and read back
defensively.

Writing is durable (a temporary file renamed over the old one: a reader sees the old file
or the new one, never half of either). Reading goes through the YAML loader and checks
every field, so a file damaged or hand-edited by another tool is a `SessionFileError`
naming the file, the line and the fix, never a traceback or a half-read session. These
files are a view of a run for kai's tools and reviewers; catalyst's own snapshot stays the
source of truth.
"""

from __future__ import annotations

import datetime
import re
import secrets
import string
from pathlib import Path
from typing import Optional

from catalyst_dsl._internal.records import factory, record

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.runtime.state import durable
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span

SESSION_STATUSES = ("pending", "in_progress", "completed", "failed", "aborted", "running")
ENTRY_STATUSES = ("done", "failed", "skipped", "in_progress")
DECISIONS = ("auto", "gate", "escalated", "skipped")
SESSION_FIELDS = (
    "session_id",
    "playbook",
    "feature",
    "args",
    "status",
    "started_at",
    "completed_at",
    "current_step",
    "worktree",
)
ENTRY_FIELDS = (
    "step_id",
    "status",
    "decision",
    "started_at",
    "completed_at",
    "duration_seconds",
    "trigger",
    "human_response",
    "error",
)
#: An arg name kai's line reader reads back as written (`  name: "value"`).
ARG_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
#: A session id as kai makes them: `YYYYMMDD-xyz`.
SESSION_ID = re.compile(r"^[0-9]{8}-[a-z0-9]{3}$")
#: Characters written as escapes inside double quotes. kai unescapes the first five; the
#: others (control and line-separator characters) must not reach the file raw, since YAML
#: readers refuse them or break the line there.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029\ufeff]")


class SessionFileError(Exception):
    """A kai session file that cannot be read: where, what, and how to fix it."""

    def __init__(self, path: Path, message: str, line: Optional[int] = None, fix: str = "") -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}" + (f" ({fix})" if fix else ""))
        self.path = path
        self.line = line
        self.fix = fix


@record
class Session:
    session_id: str
    playbook: str
    feature: str
    #: Not copied: every maker of a session (its reader, kai_view) builds a dict of its own.
    args: dict = factory(dict)
    status: str = "in_progress"
    started_at: str = ""
    completed_at: str = ""
    current_step: str = ""
    worktree: str = ""


@record
class JournalEntry:
    step_id: str
    status: str
    decision: str
    started_at: str
    completed_at: Optional[str] = None
    duration_seconds: Optional[int] = None
    trigger: Optional[str] = None
    human_response: Optional[str] = None
    error: Optional[str] = None


# -- writing -----------------------------------------------------------------------------------


def new_session_id(today: datetime.date, taken=lambda _id: False) -> str:
    """`YYYYMMDD-xyz` with three random characters of a-z0-9, at most three tries (A4.2)."""
    alphabet = string.ascii_lowercase + string.digits
    for _ in range(3):
        candidate = f"{today:%Y%m%d}-" + "".join(secrets.choice(alphabet) for _ in range(3))
        if not taken(candidate):
            return candidate
    raise SessionFileError(
        Path(f"{today:%Y%m%d}-…"), "no free session id after 3 tries", fix="remove old sessions of today"
    )


def quoted(text: str) -> str:
    body = "".join(_ESCAPES.get(c, c) for c in text)
    body = _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", body)
    return f'"{body}"'


def session_text(session: Session) -> str:
    lines = [
        f"session_id: {quoted(session.session_id)}",
        f"playbook: {quoted(session.playbook)}",
        f"feature: {quoted(session.feature)}",
    ]
    if session.args:
        lines.append("args:")
        for name, value in session.args.items():
            if not ARG_NAME.match(name):
                raise SessionFileError(
                    Path("session.yaml"),
                    f"the arg name {name!r} cannot be written so that kai reads it back",
                    fix="use letters, digits, '_', '-' and '.'",
                )
            lines.append(f"  {name}: {quoted(str(value))}")
    else:
        lines.append("args: {}")
    for field in ("status", "started_at", "completed_at", "current_step", "worktree"):
        lines.append(f"{field}: {quoted(getattr(session, field))}")
    return "\n".join(lines) + "\n"


def journal_text(entries) -> str:
    entries = list(entries)
    if not entries:
        return "entries: []\n"
    lines = ["entries:"]
    for entry in entries:
        lines.append(f"  - step_id: {quoted(entry.step_id)}")
        for field in ("status", "decision", "started_at", "completed_at"):
            value = getattr(entry, field)
            if value is not None:
                lines.append(f"    {field}: {quoted(value)}")
        duration = entry.duration_seconds
        if duration is None and entry.completed_at is not None:
            duration = _seconds_between(entry.started_at, entry.completed_at)
        if duration is not None:
            lines.append(f"    duration_seconds: {int(duration)}")
        for field in ("trigger", "human_response", "error"):
            value = getattr(entry, field)
            if value is not None:
                lines.append(f"    {field}: {quoted(value)}")
    return "\n".join(lines) + "\n"


def write_session(directory: Path, session: Session) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    durable.replace(directory / "session.yaml", session_text(session).encode("utf-8"))


def write_journal(directory: Path, entries) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    durable.replace(directory / "journal.yaml", journal_text(entries).encode("utf-8"))


def _seconds_between(start: str, end: str) -> Optional[int]:
    """round((end − start) / 1 s), or None when either is not an ISO 8601 time."""
    from catalyst_dsl.runtime.machine import parse_time

    try:
        return round((parse_time(end) - parse_time(start)).total_seconds())
    except (ValueError, TypeError, AttributeError):
        return None


# -- reading -----------------------------------------------------------------------------------


def read_session(directory: Path) -> Session:
    path = directory / "session.yaml"
    root = _load(path)
    if not isinstance(root, YMap):
        raise SessionFileError(
            path,
            "a session file is a mapping of fields",
            _line(root),
            fix="restore it from git, or remove the session folder",
        )
    values: dict = {}
    for key, value in root.pairs:
        if key.text not in SESSION_FIELDS:
            continue  # a field a later kai adds: kept out, not fatal
        if key.text == "args":
            values["args"] = _args(path, value)
        else:
            values[key.text] = _string(path, key.text, value)
    for field in ("session_id", "playbook", "feature", "status"):
        if not values.get(field):
            raise SessionFileError(
                path,
                f"the field {field} is missing or empty",
                _line(root),
                fix="restore it from git, or remove the session folder",
            )
    if values["status"] not in SESSION_STATUSES:
        raise SessionFileError(
            path,
            f"unknown status {values['status']!r}",
            _line(root.get("status")),
            fix=f"use one of: {', '.join(SESSION_STATUSES)}",
        )
    return Session(**values)


def read_journal(directory: Path) -> tuple[JournalEntry, ...]:
    path = directory / "journal.yaml"
    root = _load(path)
    entries = root.get("entries") if isinstance(root, YMap) else None
    if not isinstance(entries, YSeq):
        raise SessionFileError(
            path,
            "a journal is `entries:` with a list of entries",
            _line(root),
            fix="restore it from git; `entries: []` is an empty journal",
        )
    found = []
    for item in entries.items:
        if not isinstance(item, YMap):
            raise SessionFileError(
                path, "a journal entry is a mapping of fields", _line(item), fix="restore it from git"
            )
        values: dict = {}
        for key, value in item.pairs:
            if key.text == "duration_seconds":
                if not (
                    isinstance(value, YScalar)
                    and isinstance(value.value, int)
                    and not isinstance(value.value, bool)
                    and value.value >= 0
                ):
                    raise SessionFileError(
                        path,
                        "duration_seconds is a whole number of seconds",
                        _line(value),
                        fix="write it as a bare number, or remove it",
                    )
                values["duration_seconds"] = value.value
            elif key.text in ENTRY_FIELDS:
                values[key.text] = _string(path, key.text, value)
        for field in ("step_id", "status", "decision", "started_at"):
            if not values.get(field):
                raise SessionFileError(path, f"a journal entry has no {field}", _line(item), fix="restore it from git")
        if values["status"] not in ENTRY_STATUSES:
            raise SessionFileError(
                path,
                f"unknown entry status {values['status']!r}",
                _line(item.get("status")),
                fix=f"use one of: {', '.join(ENTRY_STATUSES)}",
            )
        if values["decision"] not in DECISIONS:
            raise SessionFileError(
                path,
                f"unknown decision {values['decision']!r}",
                _line(item.get("decision")),
                fix=f"use one of: {', '.join(DECISIONS)}",
            )
        found.append(JournalEntry(**values))
    return tuple(found)


def _load(path: Path) -> YNode:
    from catalyst_dsl.syntax.yaml_loader import decode, load_yaml

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SessionFileError(
            path, f"cannot be read: {exc.strerror or exc}", fix="check that the session folder is complete"
        ) from None
    sink = DiagnosticSink()
    source = decode(data, str(path), sink)
    root = load_yaml(source, sink) if source is not None else None
    errors = [d for d in sink.sorted() if d.severity.value == "error"]
    if errors:
        first = errors[0]
        raise SessionFileError(
            path,
            f"is damaged: {first.message}",
            first.span.line if first.span else None,
            fix="restore it from git, or remove the session folder",
        )
    if root is None:
        raise SessionFileError(path, "is empty", fix="restore it from git, or remove the session folder")
    return root


def _string(path: Path, field: str, node: YNode) -> str:
    if isinstance(node, YScalar):
        return "" if node.value is None else node.text
    raise SessionFileError(path, f"{field} is text, not a {node.kind}", _line(node), fix="write it as a quoted string")


def _args(path: Path, node: YNode) -> dict:
    if isinstance(node, YScalar) and node.value is None:
        return {}
    if not isinstance(node, YMap):
        raise SessionFileError(
            path,
            "args is a mapping of arg names to text",
            _line(node),
            fix="write `args: {}` or one `  name: \"value\"` line per arg",
        )
    return {key.text: _string(path, f"the arg {key.text}", value) for key, value in node.pairs}


def _line(node: YNode | None) -> Optional[int]:
    return head_span(node).line if node is not None else None
