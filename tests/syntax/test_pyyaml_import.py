"""PyYAML is imported through catalyst_dsl.syntax.pyyaml, which leaves the patterns its
modules compile at import (4 to 8 ms for the reader's alone) to their first use: YAML
read and written through it must be what a plain `import yaml` reads and writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]

#: Scalars each implicit resolver claims (and some none does), which the dumper must quote
#: as before; a document the pure-Python loader reads through the resolvers and the
#: constructor's timestamp; and a control character its reader refuses.
_PROBE = """
import datetime, json, sys
{importing}
plain = ["yes", "No", "on", "1.5", ".inf", "-.NaN", "0x1F", "0b101", "0o17", "190:20:30", "1_000", \
"<<", "~", "null", "",
         "2001-12-14", "2001-12-14t21:59:43.10-05:00", "=", "!", "&a", "*b", "plain text", "é", "a: b", "- x"]
dumped = yaml.safe_dump({{"values": plain}}, sort_keys=False, allow_unicode=True)
loaded = yaml.load("a: yes\\nb: 1_000\\nc: 2001-12-14 21:59:43.10 -5\\nd: ~\\ne: 0o17\\nf: .5\\n", \
Loader=yaml.SafeLoader)
try:
    yaml.load("a: \\x07", Loader=yaml.SafeLoader)
    refused = None
except yaml.reader.ReaderError as error:
    refused = error.character
kinds = sorted({{type(r).__name__ for rs in yaml.SafeDumper.yaml_implicit_resolvers.values() for _, r in rs}})
print(json.dumps([dumped, repr(loaded), refused, kinds, type(yaml.reader.Reader.NON_PRINTABLE).__name__]))
"""


def _run(importing: str) -> list:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(importing=importing)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_yaml_imported_by_catalyst_reads_and_writes_as_plain_pyyaml_without_compiling_at_import():
    plain = _run("import yaml")
    ours = _run("from catalyst_dsl.syntax.pyyaml import yaml")
    assert ours[:3] == plain[:3]
    assert ours[2] == 7  # the code of the control character the reader refused
    assert plain[3:] == [["Pattern"], "Pattern"]
    assert ours[3:] == [["LazyPattern"], "LazyPattern"]


def test_only_pyyaml_s_own_modules_get_deferred_patterns(tmp_path):
    """A pattern compiled by anyone else while PyYAML is imported (a module it imports,
    another thread) is a real one, and re.compile is given back."""
    (tmp_path / "yaml").mkdir()
    (tmp_path / "yaml" / "__init__.py").write_text(
        "import re, other\nP = re.compile('a+')\nfrom yaml import sub\n", encoding="utf-8"
    )
    (tmp_path / "yaml" / "sub.py").write_text("import re\nQ = re.compile('b+', re.I)\n", encoding="utf-8")
    (tmp_path / "other.py").write_text("import re\nR = re.compile('c+')\n", encoding="utf-8")
    probe = (
        "import json, re, sys\n"
        "from catalyst_dsl.syntax.pyyaml import yaml\n"  # imports `other` too
        "print(json.dumps([type(yaml.P).__name__, type(yaml.sub.Q).__name__, type(sys.modules['other'].R).__name__,\n"
        "                  yaml.sub.Q.match('BB').group(0), isinstance(re.compile('x'), re.Pattern)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["LazyPattern", "LazyPattern", "Pattern", "BB", True]


_RACE = r"""
import importlib.abc, importlib.util, sys, threading, time

class SlowYaml(importlib.abc.MetaPathFinder):
    # PyYAML's import, slowed: while it runs, sys.modules holds the module half made.
    def find_spec(self, name, path, target=None):
        if name != "yaml":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("yaml")
        real = spec.loader

        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return real.create_module(spec)

            def exec_module(self, module):
                time.sleep(0.5)
                real.exec_module(module)

        spec.loader = Loader()
        return spec

sys.meta_path.insert(0, SlowYaml())
threading.Thread(target=lambda: __import__("yaml")).start()  # a plugin's thread
time.sleep(0.1)
from catalyst_dsl.syntax.pyyaml import yaml
print(hasattr(yaml, "SafeDumper"))
"""


def test_pyyaml_waits_for_an_import_of_yaml_under_way_in_another_thread():
    """PyYAML imported by another thread (a plugin's) at the same time: catalyst waits for
    that import to finish instead of taking the half-made module from sys.modules."""
    done = subprocess.run(
        [sys.executable, "-c", _RACE],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
