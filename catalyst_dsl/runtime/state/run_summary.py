"""One line of `catalyst runs list` (`RunSummary`), apart from the store in store.py.

Still an attrs class: `runs list --json` turns it into JSON with `attrs.asdict`. It lives
here so that the store, which every run imports, does not import attrs; only listing
runs does (store.py imports this module there).
"""

from __future__ import annotations

from pathlib import Path

import attrs


@attrs.frozen
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
