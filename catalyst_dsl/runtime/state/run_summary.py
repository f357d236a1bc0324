"""One line of `catalyst runs list` (`RunSummary`), apart from the store in store.py.

A record; `runs list --json` turns it into JSON with `records.asdict`. Only listing runs
needs it, so it is imported there (store.py), not by the store every run imports.
"""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl._internal.records import record


@record
class RunSummary:
    """One line of `catalyst runs list`; `status` is "corrupt" for an unreadable file
    ("missing" for one archived or pruned while the list was made)."""

    run_id: str
    playbook: str | None
    status: str
    started_at: str | None
    updated_at: str | None
    file: Path
    archived: bool
    #: Why the file could not be read, for corrupt ones.
    problem: str | None = None
