"""Which store a project's runs are kept in: the state directory's files (store.py), or the
shared store in PostgreSQL when a state URL is given (shared/settings.py says where from)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from catalyst_dsl.runtime.state.shared.settings import state_url

if TYPE_CHECKING:
    from catalyst_dsl.project.config import Project
    from catalyst_dsl.runtime.state.store import StateStore


def open_store(project: Project, state_dir: Path) -> StateStore:
    """The store of `project`'s runs. The shared store (and its driver) is imported only
    when one is configured: a run kept in files never loads them."""
    url = state_url(project.config.state_url)
    if url is None:
        from catalyst_dsl.runtime.state.store import StateStore

        return StateStore(state_dir)
    from catalyst_dsl.runtime.state.shared.lease import lease_seconds
    from catalyst_dsl.runtime.state.shared.repository import current_commit, repository_name
    from catalyst_dsl.runtime.state.shared.store import SharedStore

    root = Path(project.root)
    return SharedStore(state_dir, url, repository_name(root), current_commit(root), lease_seconds(), root)
