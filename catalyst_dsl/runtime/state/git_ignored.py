"""The run state keeps itself out of git: a `.gitignore` of `*` in the state directory.

Snapshots, the snapshot ledger, locks, views and scratch files are this machine's records
of its runs; committed, they would leak a run's inputs into the repository and make every
`git add -A` after a run a mistake. Written when the folder is made for the first run (and
by `catalyst init`), or into a folder that holds nothing but run state. A `state-dir`
pointed at a folder the project shares (its root, `.xe`, a folder of playbooks) holds
other names, and a `*` there would hide them from git and from every scan: it is left as
it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from catalyst_dsl.runtime.state import durable

IGNORE_TEXT = b"# catalyst's run state: this machine's records of its runs, kept out of git.\n*\n"
#: The names the run state writes at the top of its folder (store.py, layout.py, locks.py,
#: the journal's reserve, big results, a run key kept there, the lifecycle's views,
#: scratch space and process records).
_OWN_NAMES = frozenset(
    {".gitignore", ".lock", "locks", "views", "history", "tmp", "results", "step-cache", "journal-reserve", "run-key"}
)
_OWN_PREFIXES = ("run-", "snapshot-ledger", ".run-", ".snapshot-ledger", ".journal-reserve")


def keep_out_of_git(state_dir: Path) -> None:
    """Make the state directory if needed and put the `.gitignore` in it, when the folder
    holds nothing but run state; never replaces a `.gitignore` that is there. A folder the
    file system refuses is said by the first save (a run state error), not here."""
    try:
        made = not state_dir.exists()
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if made or _only_run_state(state_dir):
            durable.create(state_dir / ".gitignore", IGNORE_TEXT, mode=0o644)
    except OSError:
        pass


def _only_run_state(state_dir: Path) -> bool:
    try:
        names = os.listdir(state_dir)
    except OSError:
        return False
    return ".gitignore" not in names and all(n in _OWN_NAMES or n.startswith(_OWN_PREFIXES) for n in names)
