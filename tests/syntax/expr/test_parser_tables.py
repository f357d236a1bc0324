"""The expression parser ships prebuilt: made from the grammar in the repository, loaded
without pickle, and nothing is read from or written to a temporary folder."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from catalyst_dsl.syntax.expr import parser_tables
from catalyst_dsl.syntax.expr.grammar import grammar_path

ROOT = Path(__file__).parents[3]
SHIPPED = ROOT / "catalyst_dsl" / "syntax" / "expr" / parser_tables.TABLES_FILE


def test_the_shipped_tables_were_made_from_this_grammar() -> None:
    from catalyst_dsl.syntax.expr.expressions_tables import TABLES

    text = grammar_path().read_text(encoding="utf-8")
    assert TABLES["grammar"] == text, (
        "the grammar changed: run python -m catalyst_dsl.syntax.expr.parser_tables and commit the tables"
    )


def test_the_shipped_tables_hold_only_literals() -> None:
    """Importing them builds data and runs nothing else: every statement of the module
    is its docstring or `TABLES = <literal>`."""
    import ast

    module = ast.parse(SHIPPED.read_text(encoding="utf-8"))
    docstring, assignment = module.body
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    assert isinstance(assignment, ast.Assign) and [t.id for t in assignment.targets] == ["TABLES"]
    ast.literal_eval(assignment.value)


def test_the_shipped_tables_are_what_lark_builds_from_the_grammar() -> None:
    """Not only the digest: the tables themselves (tests/syntax/expr/test_lalr_driver.py then holds
    the driver's trees and errors to Lark's)."""
    text = grammar_path().read_text(encoding="utf-8")
    assert SHIPPED.read_text(encoding="utf-8") == parser_tables.build(text), (
        "the shipped tables differ from what this Lark builds: python -m catalyst_dsl.syntax.expr.parser_tables"
    )
    assert parser_tables.load(text) is not None


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
    playbook.write_text(
        "name: p\ndescription: d\nowner: Engineer\nsteps:\n  - display: \"${{ 1 + 2 }}\"\n", encoding="utf-8"
    )
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "check", "--no-cache", str(playbook)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
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

    from catalyst_dsl.syntax.expr.parser_tables import import_lark

    import_lark()
    assert sys.modules.get("regex", "absent") is not None


def test_stale_tables_give_way_to_a_parser_built_from_the_grammar() -> None:
    """When the grammar was edited and the tables not regenerated, the expression parser
    (syntax/expr/parser.py) builds the tables in memory with Lark (parser_tables.from_grammar)
    instead of using them."""
    text = grammar_path().read_text(encoding="utf-8").replace('"??"', '"?!"')
    assert parser_tables.load(text) is None
    edited = parser_tables.from_grammar(text)
    tree = edited.parse("a ?! b", "expression")
    assert (tree.children[0].data, tree.children[0].start_pos, tree.children[0].end_pos) == ("nullish", 0, 6)
