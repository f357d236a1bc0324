"""The expression parser's tables, built from grammar/expressions.lark and shipped as JSON.

A cold start then costs no grammar build, and nothing is written to or read from a
temporary folder (a shared folder another user could plant a file in). The tables are
Lark's own serialized form, written as JSON, never pickle: loading them runs no code.
JSON keys are strings, and the tables key their states by number, so a mapping with other
keys is written as a list of pairs under PAIRS.

Regenerate after editing the grammar: `python -m catalyst_dsl.syntax.parser_tables`
(the test suite fails while the shipped tables were made from another grammar).
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

TABLES_FILE = "expressions.tables.json"
#: Built with these options; `expressions.py` parses with the same.
OPTIONS = dict(parser="lalr", start=["reference", "expression"], propagate_positions=True, maybe_placeholders=False)
PAIRS = "\u0000pairs"


def grammar_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build(grammar_text: str) -> str:
    """The tables' JSON for a grammar (with its digest and the Lark version that built them)."""
    import lark
    from lark import Lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = Lark(grammar_text, **OPTIONS).memo_serialize([TerminalDef, Rule])
    document = {"grammarSha256": grammar_digest(grammar_text), "lark": lark.__version__, "data": data, "memo": memo}
    return json.dumps(_encoded(document), sort_keys=True, separators=(",", ":")) + "\n"


def import_lark():
    """Lark, imported without the `regex` module when nothing has imported either yet.

    Lark imports `regex` whenever it is installed (about 8 ms of a cold check), only to
    measure the width of terminals that use Unicode categories (`\\p{...}`), which
    grammar/expressions.lark does not (a test keeps it so); Lark then measures with the
    standard library. `regex` stays importable for everyone else afterwards."""
    import sys

    if "lark" in sys.modules or "regex" in sys.modules:
        import lark

        return lark
    sys.modules["regex"] = None  # type: ignore[assignment]  # `import regex` raises ImportError
    try:
        import lark
    finally:
        if "regex" in sys.modules and sys.modules["regex"] is None:
            del sys.modules["regex"]
    return lark


def load(grammar_text: str):
    """The parser from the shipped tables, or None when they are missing, were made from
    another grammar or do not load (the caller then builds it from the grammar)."""
    Lark = import_lark().Lark

    try:
        text = resources.files("catalyst_dsl.syntax").joinpath(TABLES_FILE).read_text(encoding="utf-8")
        document = json.loads(text, object_hook=_decoded)
        if document.get("grammarSha256") != grammar_digest(grammar_text):
            return None
        return Lark.load({"data": document["data"], "memo": document["memo"]})
    except Exception:  # tables from another Lark version, or damaged: build instead
        return None


def _encoded(value):
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return {key: _encoded(item) for key, item in value.items()}
        return {PAIRS: [[_encoded(key), _encoded(item)] for key, item in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_encoded(item) for item in value]
    return value


def _decoded(obj: dict):
    if PAIRS in obj:
        return {(tuple(key) if isinstance(key, list) else key): item for key, item in obj[PAIRS]}
    return obj


def main() -> None:
    from catalyst_dsl.syntax.expressions import grammar_path

    target = Path(__file__).with_name(TABLES_FILE)
    target.write_text(build(grammar_path().read_text(encoding="utf-8")), encoding="utf-8", newline="\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
