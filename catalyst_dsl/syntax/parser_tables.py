"""The expression parser's tables, built from grammar/expressions.lark and shipped as JSON.

A cold start then costs no grammar build, and nothing is written to or read from a
temporary folder (a shared folder another user could plant a file in). The tables are
plain JSON, never pickle: loading them runs no code. Lark builds them (here, at build
time, and in the tests as the reference); `lalr.py` parses with them without importing
Lark, whose import was a fifth of a cold `catalyst check`.

Regenerate after editing the grammar: `python -m catalyst_dsl.syntax.parser_tables`
(the test suite fails while the shipped tables were made from another grammar).
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path

TABLES_FILE = "expressions.tables.json"
#: Built with these options; `expressions.py` parses with the same.
OPTIONS = dict(parser="lalr", start=["reference", "expression"], propagate_positions=True, maybe_placeholders=False)


def grammar_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build(grammar_text: str) -> str:
    """The tables' JSON for a grammar (with its digest and the Lark version that built them),
    in the shape `lalr.Parser` reads: everything Lark works out from the grammar (the LALR
    table, the terminals in its lexer's order, each rule's tree shape) and nothing it would
    run."""
    from catalyst_dsl.syntax import lalr

    lark = import_lark()
    parser = lark.Lark(grammar_text, **OPTIONS)
    table = parser.parser.parser.parser.parse_table
    # Lark's lexers try terminals in this order and take the first that matches.
    terminals = sorted(parser.lexer_conf.terminals,
                       key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    rules = list(parser.rules)
    number = {rule: index for index, rule in enumerate(rules)}

    def tree_shape(rule):
        keep_all = rule.options.keep_all_tokens
        keep = [[index, int(not symbol.is_term and symbol.name.startswith("_"))]
                for index, symbol in enumerate(rule.expansion)
                if keep_all or not (symbol.is_term and symbol.filter_out)]
        name = rule.alias or rule.options.template_source or rule.origin.name
        return [str(name), len(rule.expansion), int(bool(rule.options.expand1) and not rule.alias), keep]

    # Lark numbers states in an order that changes with Python's string hashing; number
    # them in the order a walk from the start states meets them, so a build is repeatable.
    renumber: dict[int, int] = {}
    walk = [table.start_states[start] for start in sorted(table.start_states)]
    while walk:
        state = walk.pop(0)
        if state in renumber:
            continue
        renumber[state] = len(renumber)
        walk += [step[1] for _symbol, step in sorted(table.states[state].items()) if step[0].name == "Shift"]
    if len(renumber) != len(table.states):
        raise ValueError("the parse table has states no start reaches")

    def encoded(action, argument):
        # a shift (or a goto) is the next state, a reduce is -1 - the rule's number
        return renumber[argument] if action.name == "Shift" else -1 - number[argument]

    # A literal that a regex terminal of the same priority matches in full (`true`, IDENT)
    # is lexed as that regex and renamed when the text is the literal, where both are
    # acceptable (Lark's rule; `lalr._Scanner` applies it per state).
    keywords = {}
    for regex in terminals:
        if regex.pattern.type != "re":
            continue
        pairs = []
        for literal in terminals:
            if literal.pattern.type != "str" or literal.priority != regex.priority:
                continue
            if literal.pattern.flags or regex.pattern.flags:  # Lark's rule then also weighs flags
                raise ValueError(f"terminals with flags ({literal.name}, {regex.name}): lalr.py does not weigh them")
            whole = re.match(regex.pattern.to_regexp(), literal.pattern.value)
            if whole is not None and whole.group(0) == literal.pattern.value:
                pairs.append([literal.pattern.value, literal.name])
        if pairs:  # in lexer order: where two literals have one text, the first wins
            keywords[regex.name] = pairs

    by_number = sorted(renumber, key=renumber.get)
    states = [{str(symbol): encoded(*step) for symbol, step in sorted(table.states[state].items())}
              for state in by_number]
    document = {
        "format": lalr.FORMAT,
        "grammarSha256": grammar_digest(grammar_text),
        "lark": lark.__version__,
        "terminals": [[t.name, t.pattern.type, t.pattern.value, t.pattern.to_regexp(), t.priority] for t in terminals],
        "ignore": sorted(parser.lexer_conf.ignore),
        "keywords": keywords,
        "rules": [tree_shape(rule) for rule in rules],
        "origins": [rule.origin.name for rule in rules],
        "states": states,
        "start": {start: renumber[state] for start, state in sorted(table.start_states.items())},
        "end": {start: renumber[state] for start, state in sorted(table.end_states.items())},
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n"


def from_grammar(grammar_text: str):
    """The parser built from the grammar with Lark (when the shipped tables are stale)."""
    from catalyst_dsl.syntax import lalr

    return lalr.Parser(json.loads(build(grammar_text)))


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
    another grammar or are damaged (the caller then builds them from the grammar)."""
    from catalyst_dsl.syntax import lalr

    try:
        text = resources.files("catalyst_dsl.syntax").joinpath(TABLES_FILE).read_text(encoding="utf-8")
        document = json.loads(text)
        if not isinstance(document, dict) or document.get("grammarSha256") != grammar_digest(grammar_text):
            return None
        return lalr.Parser(document)
    except (OSError, ValueError):  # missing, not JSON, or not tables this driver reads
        return None


def main() -> None:
    from catalyst_dsl.syntax.expressions import grammar_path

    target = Path(__file__).with_name(TABLES_FILE)
    target.write_text(build(grammar_path().read_text(encoding="utf-8")), encoding="utf-8", newline="\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
