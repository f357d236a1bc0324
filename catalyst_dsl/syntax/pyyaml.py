"""PyYAML, imported without compiling its regular expressions until they are used.

Importing PyYAML compiles about ten patterns: the pure-Python reader's check of
printable characters (a class of nearly all of Unicode: 4 to 8 ms alone), the implicit
resolvers' (booleans, numbers, null, timestamps…) and the constructor's timestamp. That
was half the cost of importing it, paid by every what-if that writes front matter or
compiles a playbook it writes. Most of them are never used by catalyst, which reads YAML
with libyaml and its own scalar rules (yaml_loader.py) and only dumps small mappings. So
they are compiled where first used, as catalyst's own patterns are (lazy_pattern.py):
while PyYAML's modules are imported, a `re.compile` called from one of them gives a
`LazyPattern`. PyYAML only calls `match` and `search` on them, which a `LazyPattern`
answers as the compiled pattern would (tests/syntax/test_pyyaml_import.py compares the two).

Every module of catalyst that needs PyYAML imports it from here (`from
catalyst_dsl.syntax.pyyaml import yaml`), so whichever comes first imports it this way.
"""

from __future__ import annotations

import re
import sys

from catalyst_dsl._internal.lazy_pattern import LazyPattern


def _import_yaml():
    compile_now = re.compile

    def compile_or_defer(pattern, flags=0):
        # Only PyYAML's own modules get a deferred pattern; any other caller (a module it
        # imports, another thread compiling meanwhile) gets what re.compile gives.
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller == "yaml" or caller.startswith("yaml."):
            return LazyPattern(pattern, flags)
        return compile_now(pattern, flags)

    re.compile = compile_or_defer
    try:
        import yaml
    finally:
        re.compile = compile_now
    return yaml


if "yaml" in sys.modules:
    # Imported already (a plugin's), or being imported by another thread: the import
    # statement waits for that import to finish, where sys.modules may hold it half made.
    import yaml
else:
    yaml = _import_yaml()
