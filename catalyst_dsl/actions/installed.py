"""The catalog of this installation: the built-in actions, then the installed plugins'.

It sits above both actions/builtin.py and actions/plugins.py, so neither needs the other
through the catalog. The plugins module is imported only when a name is not built in: a
check that meets none does without it (and without scanning the entry points).
"""

from __future__ import annotations

import functools

from catalyst_dsl.actions.builtin import BUILTIN_ACTIONS
from catalyst_dsl.actions.catalog import ActionSpec, Catalog, InstalledPlugins


class _Installed(InstalledPlugins):
    """The plugins of this environment (`plugins.installed()`), asked lazily."""

    def __call__(self, name: str) -> ActionSpec | None:
        from catalyst_dsl.actions.plugins import plugin_spec

        return plugin_spec(name)

    def why_missing(self, name: str) -> str | None:
        from catalyst_dsl.actions.plugins import installed

        problems = [str(p) for p in installed().problems() if p.name == name]
        return problems[0] if problems else None


@functools.lru_cache(maxsize=1)
def builtin_catalog() -> Catalog:
    """The built-in actions; a name they do not declare is asked of the installed plugins."""
    return Catalog(BUILTIN_ACTIONS, fallback=_Installed())
