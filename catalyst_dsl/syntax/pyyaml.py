"""PyYAML, imported without compiling the pure-Python reader's character check.

Importing PyYAML compiles `yaml.reader.Reader.NON_PRINTABLE`, a character class of
nearly all of Unicode: 4 to 8 ms, the largest single cost of importing it (a tenth of a
what-if that writes front matter). Only PyYAML's pure-Python `Reader` reads that pattern,
and catalyst uses it only where libyaml is missing: playbooks are read with
`CSafeLoader`, which checks characters in C, and front matter is written by the
emitter, which does not read it. So it is compiled on first use instead, as catalyst's
own patterns are (lazy_pattern.py): while PyYAML is imported, `re.compile` of that one
pattern gives a `LazyPattern`; any other pattern compiles as always.

Every module of catalyst that needs PyYAML imports it from here (`from
catalyst_dsl.syntax.pyyaml import yaml`), so whichever comes first imports it this way.
"""

from __future__ import annotations

import re
import sys

from catalyst_dsl.lazy_pattern import LazyPattern

#: The pattern as yaml/reader.py writes it (PyYAML 5.1 to 6.x). A version that writes it
#: otherwise has it compiled at import, as before: slower, never wrong.
NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"


def _import_yaml():
    compile_now = re.compile

    def compile_or_defer(pattern, flags=0):
        if flags == 0 and pattern == NON_PRINTABLE:
            return LazyPattern(pattern)
        return compile_now(pattern, flags)

    # Imported once, under this module's import lock; another thread compiling a pattern
    # meanwhile goes through compile_or_defer, which compiles it as re.compile would.
    re.compile = compile_or_defer
    try:
        import yaml
    finally:
        re.compile = compile_now
    return yaml


yaml = sys.modules.get("yaml") or _import_yaml()
