"""PyYAML is imported through catalyst_dsl.syntax.pyyaml, which leaves the pure-Python
reader's character class (4 to 8 ms to compile) to its first use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _python(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_deferred_pattern_is_the_one_pyyaml_compiles():
    """If PyYAML wrote the pattern otherwise, it would be compiled at import again (and
    this module's NON_PRINTABLE should follow it)."""
    seen = _python("import json, yaml\nfrom catalyst_dsl.syntax.pyyaml import NON_PRINTABLE\n"
                   "print(json.dumps([yaml.reader.Reader.NON_PRINTABLE.pattern == NON_PRINTABLE]))")
    assert seen == [True]


def test_catalyst_imports_pyyaml_without_compiling_it_and_the_python_reader_still_checks():
    seen = _python(
        "import json, re\n"
        "from catalyst_dsl.syntax import yaml_loader\n"
        "from catalyst_dsl.syntax.pyyaml import NON_PRINTABLE, yaml\n"
        "kind = type(yaml.reader.Reader.NON_PRINTABLE).__name__\n"
        "restored = re.compile.__module__ == 're' and re.compile.__name__ == 'compile'\n"
        "try:\n"
        "    yaml.load('a: \\x07', Loader=yaml.SafeLoader)\n"
        "    refused = None\n"
        "except yaml.reader.ReaderError as error:\n"
        "    refused = error.character\n"
        "print(json.dumps([kind, restored, refused, yaml.reader.Reader.NON_PRINTABLE.pattern == NON_PRINTABLE,\n"
        "                  yaml.load('a: é', Loader=yaml.SafeLoader)]))\n")
    assert seen == ["LazyPattern", True, 7, True, {"a": "é"}]  # 7: the code of the character refused
