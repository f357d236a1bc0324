"""kai's session files: written in kai's layout, atomically, and read back defensively."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from catalyst_dsl.integrations.kai_sessions import (
    JournalEntry,
    Session,
    SessionFileError,
    journal_text,
    new_session_id,
    read_journal,
    read_session,
    session_text,
    write_journal,
    write_session,
)

SESSION = Session(
    "20261124-a7x",
    "auto-feature",
    "012-login",
    {"feature": "012-login", "reviewer": 'Ann "A" O\\Neil'},
    "in_progress",
    "2026-11-24T09:00:00.000Z",
    "",
    "plan",
    "",
)


def test_session_file_layout() -> None:
    assert session_text(SESSION) == (
        'session_id: "20261124-a7x"\n'
        'playbook: "auto-feature"\n'
        'feature: "012-login"\n'
        "args:\n"
        '  feature: "012-login"\n'
        '  reviewer: "Ann \\"A\\" O\\\\Neil"\n'
        'status: "in_progress"\n'
        'started_at: "2026-11-24T09:00:00.000Z"\n'
        'completed_at: ""\n'
        'current_step: "plan"\n'
        'worktree: ""\n'
    )
    assert "args: {}\n" in session_text(Session("20261124-a7x", "p", "f"))


def test_journal_file_layout_omits_absent_fields_and_computes_the_duration() -> None:
    entries = [
        JournalEntry("plan", "done", "auto", "2026-11-24T09:00:00Z", "2026-11-24T09:01:30.400Z"),
        JournalEntry(
            "tasks",
            "failed",
            "escalated",
            "2026-11-24T09:02:00Z",
            trigger="postcondition_fail",
            human_response="abort",
            error="tasks.md\nmissing\ttoo",
        ),
    ]
    assert journal_text(entries) == (
        "entries:\n"
        '  - step_id: "plan"\n'
        '    status: "done"\n'
        '    decision: "auto"\n'
        '    started_at: "2026-11-24T09:00:00Z"\n'
        '    completed_at: "2026-11-24T09:01:30.400Z"\n'
        "    duration_seconds: 90\n"
        '  - step_id: "tasks"\n'
        '    status: "failed"\n'
        '    decision: "escalated"\n'
        '    started_at: "2026-11-24T09:02:00Z"\n'
        '    trigger: "postcondition_fail"\n'
        '    human_response: "abort"\n'
        '    error: "tasks.md\\nmissing\\ttoo"\n'
    )
    assert journal_text([]) == "entries: []\n"


def test_written_files_read_back_the_same(tmp_path: Path) -> None:
    odd = Session("20261124-a7x", "p", "f", {"x": "bell\x07 line\u2028sep \r\n end"}, "completed")
    entries = (
        JournalEntry("plan", "done", "auto", "2026-11-24T09:00:00Z", "2026-11-24T09:00:05Z", 5),
        JournalEntry("qa", "skipped", "skipped", "2026-11-24T09:00:06Z"),
    )
    for session in (SESSION, odd):
        write_session(tmp_path, session)
        assert read_session(tmp_path) == session
    write_journal(tmp_path, entries)
    assert read_journal(tmp_path) == entries
    write_journal(tmp_path, ())
    assert read_journal(tmp_path) == ()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.yaml", "session.yaml"]  # no temporary left


def test_an_arg_name_kai_could_not_read_back_is_refused() -> None:
    with pytest.raises(SessionFileError, match="cannot be written"):
        session_text(Session("20261124-a7x", "p", "f", {"a: b": "x"}))


@pytest.mark.parametrize(
    "file,text,message,line",
    [
        ("session.yaml", 'session_id: "x\nplaybook: "p"\n', "is damaged", None),
        ("session.yaml", "- a\n", "a session file is a mapping", 1),
        (
            "session.yaml",
            'session_id: "20261124-a7x"\nplaybook: "p"\nfeature: "f"\nstatus: "paused"\n',
            "unknown status 'paused'",
            4,
        ),
        (
            "session.yaml",
            'session_id: "20261124-a7x"\nplaybook: "p"\nstatus: "completed"\n',
            "the field feature is missing",
            1,
        ),
        (
            "session.yaml",
            'session_id: "20261124-a7x"\nplaybook: "p"\nfeature: "f"\nargs: [a]\nstatus: "completed"\n',
            "args is a mapping",
            4,
        ),
        ("session.yaml", "", "is empty", None),
        ("session.yaml", b"\xff\xfe", "is damaged", None),
        ("journal.yaml", "entries:\n  - step_id: \"plan\"\n    status: \"done\"\n", "has no decision", 2),
        (
            "journal.yaml",
            (
                "entries:\n  - step_id: \"plan\"\n    status: \"finished\"\n"
                "    decision: \"auto\"\n    started_at: \"t\"\n"
            ),
            "unknown entry status",
            3,
        ),
        (
            "journal.yaml",
            (
                "entries:\n  - step_id: \"plan\"\n    status: \"done\"\n"
                "    decision: \"auto\"\n    started_at: \"t\"\n    duration_seconds: \"5\"\n"
            ),
            "whole number",
            6,
        ),
        ("journal.yaml", "entries: 3\n", "a journal is `entries:`", 1),
        ("journal.yaml", "entries:\n  - plain\n", "a journal entry is a mapping", 2),
    ],
)
def test_a_damaged_file_is_a_clear_error(tmp_path: Path, file: str, text, message: str, line) -> None:
    (tmp_path / file).write_bytes(text if isinstance(text, bytes) else text.encode())
    reader = read_session if file == "session.yaml" else read_journal
    with pytest.raises(SessionFileError, match=message) as caught:
        reader(tmp_path)
    if line is not None:
        assert caught.value.line == line
    assert caught.value.fix


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="cannot be read"):
        read_journal(tmp_path)


def test_session_ids() -> None:
    import re

    today = datetime.date(2026, 11, 24)
    assert re.fullmatch(r"20261124-[a-z0-9]{3}", new_session_id(today))
    seen: list[str] = []
    assert new_session_id(today, taken=lambda i: seen.append(i) or len(seen) < 3) == seen[-1]
    with pytest.raises(SessionFileError, match="no free session id"):
        new_session_id(today, taken=lambda i: True)
