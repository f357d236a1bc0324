"""What a run is shown as, apart from the store in store.py: one line of `catalyst runs
list` (`RunSummary`) and the audit view of `catalyst runs export` (`audit_view`).

`RunSummary` is a record; `runs list --json` turns it into JSON with `records.asdict`.
Only listing and exporting runs need this, so it is imported there (store.py), not by
the store every run imports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


#: The keys of a run's snapshot an audit shows as they are.
_AUDITED = (
    "runId",
    "playbook",
    "status",
    "mode",
    "startedAt",
    "endedAt",
    "owner",
    "permissions",
    "locks",
    "approvals",
    "failures",
    "cancel",
    "error",
    "trustedEdits",
)


def audit_view(state, problems: list[str], *, results: bool = False) -> dict[str, Any]:
    """Who ran what, approvals, failures, and the journal (with each step's result when
    `results`); what did not verify under `unverified`."""
    from catalyst_dsl.runtime.state.snapshot import VERSION
    from catalyst_dsl.runtime.state.snapshot_codec import converter

    data = converter().unstructure(state)
    audit: dict[str, Any] = {"format": "catalyst-audit", "version": VERSION}
    for key in _AUDITED:
        audit[key] = data[key]
    audit["unverified"] = problems
    audit["steps"] = [
        entry if results else {k: v for k, v in entry.items() if k != "result"} for entry in data["steps"]
    ]
    return audit
