"""Modules imported at their first use, not at start-up, without an import statement at
every use.

A function-level `from catalyst_dsl.x import y` keeps a module out of start-up, but runs
the import system each time it is reached: a look-up in `sys.modules`, then for a module
that is no package an AttributeError formatted and dropped (its `__path__`), for a
package `importlib._bootstrap._handle_fromlist` in Python. That is about 6,000 machine
instructions, more than typing a value or placing a write costs, and in the loops over
every step of every playbook it was 2-3% of a library's check.

`lazy_module(name)` is a function that imports the module the first time it is called
and then returns it. Callers read the module's attributes at each use (`_globs().Glob`),
so a name patched in the module (as tests do) is seen, as it was with the import.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Callable


def lazy_module(name: str) -> Callable[[], ModuleType]:
    """A function giving the module `name`, imported when it is first called."""
    return functools.cache(functools.partial(importlib.import_module, name))
