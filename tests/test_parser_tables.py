"""The expression parser ships prebuilt: made from the grammar in the repository, loaded
without pickle, and nothing is read from or written to a temporary folder."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from lark import Lark

from catalyst_dsl.syntax import parser_tables
from catalyst_dsl.syntax.expressions import grammar_path

ROOT = Path(__file__).parents[1]
SHIPPED = ROOT / "catalyst_dsl" / "syntax" / parser_tables.TABLES_FILE
SAMPLES = ["a.b", "x[0].y", "inputs.feature-id", "1 + get('x') * (2 - 3) ? 'a' : 'b'", "!a && b || c >= 2",
           "[1, 2, {a: 1}]", "f(", "a ===", "items.map(i => i.name).join(', ')", "'\\u00e9' + `t`", ""]


def test_the_shipped_tables_were_made_from_this_grammar() -> None:
    text = grammar_path().read_text(encoding="utf-8")
    document = parser_tables.json.loads(SHIPPED.read_text(encoding="utf-8"), object_hook=parser_tables._decoded)
    assert document["grammarSha256"] == parser_tables.grammar_digest(text), \
        "the grammar changed: run python -m catalyst_dsl.syntax.parser_tables and commit the tables"


def test_the_shipped_parser_parses_as_the_grammar_does() -> None:
    text = grammar_path().read_text(encoding="utf-8")
    shipped = parser_tables.load(text)
    assert shipped is not None, "the shipped tables do not load with this Lark: regenerate them"
    built = Lark(text, **parser_tables.OPTIONS)

    def outcome(parser, source, start):
        try:
            return "tree", parser.parse(source, start=start)
        except Exception as error:  # the same error at the same place expecting the same tokens
            return type(error).__name__, getattr(error, "line", None), getattr(error, "column", None), \
                sorted(getattr(error, "expected", None) or getattr(error, "allowed", None) or ())

    for source in SAMPLES:
        for start in ("reference", "expression"):
            assert outcome(shipped, source, start) == outcome(built, source, start), (source, start)


def test_tables_for_another_grammar_are_not_used() -> None:
    assert parser_tables.load("start: \"x\"\n") is None


def test_checking_reads_and_writes_nothing_in_the_temporary_folder(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    # A file where an older version kept a pickled parser cache: a planted pickle that
    # would leave a marker if anything unpickled it.
    old = temp / f"catalyst-lark-{os.getuid()}"
    old.mkdir()
    marker = tmp_path / "unpickled"

    class Plant:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (old / "expressions.cache").write_bytes(pickle.dumps(Plant()))
    playbook = tmp_path / "p.yaml"
    playbook.write_text("name: p\ndescription: d\nowner: Engineer\nsteps:\n  - display: \"${{ 1 + 2 }}\"\n", encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "catalyst_dsl", "check", "--no-cache", str(playbook)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not marker.exists()
    assert sorted(p.name for p in temp.rglob("*")) == ["catalyst-lark-%d" % os.getuid(), "expressions.cache"]


def test_the_grammar_needs_no_regex_module() -> None:
    """parser_tables.import_lark keeps Lark from importing `regex`, which Lark needs only
    for terminals with Unicode categories; the grammar must not use them."""
    text = grammar_path().read_text(encoding="utf-8")
    assert "\\p{" not in text and "\\P{" not in text


def test_importing_lark_leaves_regex_importable() -> None:
    import sys

    from catalyst_dsl.syntax.parser_tables import import_lark

    import_lark()
    assert sys.modules.get("regex", "absent") is not None
