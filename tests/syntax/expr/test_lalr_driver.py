"""Our LALR driver (catalyst_dsl/syntax/expr/lalr.py) against Lark, its reference: the same
tree (rule names, token types and values, start/end positions) or the same error (kind,
position, token, expected terminals) for every template in the repository and the shared
corpus, and for thousands of generated texts; and `catalyst check` imports no Lark."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from catalyst_dsl.syntax.expr import lalr, parser_tables
from catalyst_dsl.syntax.expr.grammar import grammar_path
from tests.helpers.corpus import SHARED_CORPUS

ROOT = Path(__file__).parents[3]
CORPUS = SHARED_CORPUS
STARTS = ("reference", "expression")
TEMPLATE = re.compile(r"\$?\{\{(.{0,400}?)\}\}", re.S)


@pytest.fixture(scope="module")
def parsers():
    text = grammar_path().read_text(encoding="utf-8")
    ours = parser_tables.load(text)
    assert ours is not None, "the shipped tables do not load: python -m catalyst_dsl.syntax.expr.parser_tables"
    return ours, Lark(text, **parser_tables.OPTIONS)


def _flat(node, token_class, describe) -> list[tuple]:
    """The tree in preorder, each node with its depth: comparable without recursion, as
    generated texts nest deeper than Python's recursion allows."""
    out, stack = [], [(node, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, token_class):
            out.append((depth, "token", item.type, str(item), item.start_pos, item.end_pos))
        else:
            out.append((depth, *describe(item)))
            stack.extend((child, depth + 1) for child in reversed(item.children))
    return out


def _lark_shape(node):
    return _flat(node, Token, lambda t: (t.data, getattr(t.meta, "start_pos", None), getattr(t.meta, "end_pos", None)))


def _our_shape(node):
    return _flat(node, lalr.Token, lambda t: (t.data, t.start_pos, t.end_pos))


def _lark_outcome(parser, text, start):
    try:
        return _lark_shape(parser.parse(text, start=start))
    except UnexpectedToken as error:
        token = error.token
        return ("unexpected token", token.type, str(token), error.pos_in_stream, frozenset(error.expected))
    except UnexpectedCharacters as error:
        return ("unexpected character", error.pos_in_stream, frozenset(error.allowed))
    except UnexpectedEOF:  # pragma: no cover - Lark's LALR parser reports END as a token
        return ("unexpected end",)


def _our_outcome(parser, text, start):
    try:
        return _our_shape(parser.parse(text, start))
    except lalr.UnexpectedToken as error:
        return ("unexpected token", error.token.type, error.token.value, error.pos, error.expected)
    except lalr.UnexpectedCharacter as error:
        return ("unexpected character", error.pos, error.allowed)


def _assert_same(parsers, texts) -> int:
    ours, lark = parsers
    count = 0
    for text in texts:
        for start in STARTS:
            assert _our_outcome(ours, text, start) == _lark_outcome(lark, text, start), (text, start)
            count += 1
    return count


def _repository_templates() -> list[str]:
    files = [
        p
        for folder in ("playbooks", "docs", "tests", "examples")
        if (ROOT / folder).is_dir()
        for p in (ROOT / folder).rglob("*")
        if p.is_file()
    ]
    files += [ROOT / "README.md"]
    if CORPUS.is_dir():
        files += [p for p in CORPUS.rglob("*") if p.is_file()]
    found = set()
    for path in files:
        if path.suffix not in (".yaml", ".yml", ".md", ".py", ".json", ".txt", ".js", ".ts"):
            continue
        try:
            body = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found.update(match.group(1) for match in TEMPLATE.finditer(body))
    return sorted(found)


def test_every_template_in_the_repository_and_corpus_parses_as_lark_parses_it(parsers) -> None:
    texts = _repository_templates()
    assert len(texts) > 200, "the scan found too few templates to compare"
    _assert_same(parsers, texts)


# Pieces of text a generated expression is made of: the grammar's terminals (valid and
# near misses), keywords, escapes, unicode, whitespace, and characters outside the language.
PIECES = [
    "a",
    "b",
    "_x",
    "$y",
    "get",
    "inputs",
    "feature-id",
    "x1",
    "true",
    "false",
    "null",
    "undefined",
    "trueish",
    "nullx",
    "é",
    "日本",
    "😀",
    "0",
    "12",
    "3.5",
    ".5",
    "1e3",
    "2E-4",
    "1.",
    "07",
    "'s'",
    '"d"',
    "'a\\'b'",
    '"\\u00e9"',
    "'\\ud83d\\ude00'",
    "'\\n\\t'",
    "'open",
    '"x',
    "''",
    '""',
    ".",
    "?",
    ":",
    "??",
    "||",
    "&&",
    "===",
    "!==",
    "==",
    "!=",
    "<=",
    ">=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    "=>",
    "++",
    "--",
    "`",
    ";",
    "=",
    "new ",
    "@",
    "#",
    "\\",
    "&",
    "|",
    "xe://spec",
    "https://h/p",
    "a+b://c",
    "://",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\u00a0",
    "\u2028",
]


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(("", "", " ")) for _ in range(rng.randint(0, 12)))


def _valid_expression(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.25:
        return rng.choice(["a", "b.c", "1", "2.5", "'s'", '"t\\"u"', "true", "null", "undefined", "$x", "x.true"])
    form = rng.randrange(9)
    sub = lambda: _valid_expression(rng, depth - 1)  # noqa: E731
    if form == 0:
        return f"{sub()} {rng.choice(['+', '-', '*', '/', '%', '===', '!=', '<', '>=', '&&', '||', '??'])} {sub()}"
    if form == 1:
        return f"{sub()} ? {sub()} : {sub()}"
    if form == 2:
        return f"{rng.choice(['!', '-', '+'])}{sub()}"
    if form == 3:
        return f"({sub()})"
    if form == 4:
        return f"f({', '.join(sub() for _ in range(rng.randint(0, 3)))}{rng.choice(['', ','])})"
    if form == 5:
        return f"[{', '.join(sub() for _ in range(rng.randint(0, 3)))}]"
    if form == 6:
        keys = ("k", "'q'", '"r s"')
        return "{" + ", ".join(f"{rng.choice(keys)}: {sub()}" for _ in range(rng.randint(0, 3))) + "}"
    if form == 7:
        return f"({sub()}).m[{sub()}]"
    return f"{sub()}.{rng.choice(['n', 'true', 'null'])}"


def test_generated_texts_parse_as_lark_parses_them(parsers) -> None:
    rng = random.Random(16)
    texts = [_random_text(rng) for _ in range(2500)]
    texts += [_valid_expression(rng, rng.randint(1, 6)) for _ in range(1500)]
    # and broken versions of valid ones: a piece cut out or a piece put in
    for _ in range(500):
        text = _valid_expression(rng, 4)
        at = rng.randint(0, len(text))
        texts.append(text[:at] + rng.choice(PIECES) + text[at:] if rng.random() < 0.5 else text[:at] + text[at + 2 :])
    assert _assert_same(parsers, texts) == 2 * len(texts)


@pytest.mark.parametrize("compile_after", [0, 10**9])
def test_terminals_tried_one_by_one_and_as_one_alternation_read_the_same(parsers, monkeypatch, compile_after) -> None:
    """A state reads its first tokens trying its terminals one by one, then through one
    compiled alternation (lalr.COMPILE_AFTER): each way alone parses as Lark does."""
    monkeypatch.setattr(lalr, "COMPILE_AFTER", compile_after)
    fresh = parser_tables.load(grammar_path().read_text(encoding="utf-8"))
    rng = random.Random(61)
    texts = [_random_text(rng) for _ in range(800)] + [_valid_expression(rng, rng.randint(1, 5)) for _ in range(400)]
    _assert_same((fresh, parsers[1]), texts)
    assert fresh._scanners and all(
        (scanner.regex is None) == bool(compile_after) for scanner in fresh._scanners.values()
    )


def test_deep_empty_and_odd_texts_parse_as_lark_parses_them(parsers) -> None:
    texts = [
        "",
        " ",
        "\n",
        "a" * 5000,
        "(" * 300 + "a" + ")" * 300,
        "(" * 300 + "a",
        "[" * 200 + "]" * 200,
        "!" * 500 + "a",
        "-" * 400 + "1",
        " + ".join(["a"] * 600),
        "a" + ".b" * 500,
        "f" + "()" * 300,
        "{a: " * 100 + "1" + "}" * 100,
        "'" + "\\" * 50 + "'",
        "'é😀\\u0041'",
        "\u00e9",
        "a\u2028b",
    ]
    _assert_same(parsers, texts)


def test_a_literal_that_an_identifier_also_matches_is_a_keyword_only_where_one_may_stand(parsers) -> None:
    ours, _lark = parsers
    assert _our_shape(ours.parse("x.true", "expression")) == [
        (0, "expression", 0, 6),
        (1, "member", 0, 6),
        (2, "name", 0, 1),
        (3, "token", "IDENT", "x", 0, 1),
        (2, "token", "IDENT", "true", 2, 6),
    ]
    assert _our_shape(ours.parse("true", "expression")) == [(0, "expression", 0, 4), (1, "true", 0, 4)]


def test_damaged_tables_are_refused_not_used() -> None:
    import json

    from catalyst_dsl.syntax.expr.expressions_tables import TABLES

    good = json.loads(json.dumps(TABLES))
    lalr.Parser(good)
    for damage in (
        lambda d: d.pop("states"),
        lambda d: d["states"][0].update({"IDENT": 10_000}),
        lambda d: d.update(format=99),
        lambda d: d["terminals"][0].__setitem__(1, "glob"),
        lambda d: d["rules"][0].__setitem__(3, [[7, 0]]),
    ):
        document = json.loads(json.dumps(good))
        damage(document)
        with pytest.raises(lalr.TablesError):
            lalr.Parser(document)
    # a pattern is compiled when a state first needs it, and refused then
    document = json.loads(json.dumps(good))
    for terminal in document["terminals"]:
        terminal[3] = "(unclosed"
    with pytest.raises(lalr.TablesError):
        lalr.Parser(document).parse("a", "expression")


def test_checking_a_playbook_imports_no_lark(tmp_path: Path) -> None:
    playbook = tmp_path / "p.yaml"
    playbook.write_text(
        "name: p\ndescription: d\nowner: Engineer\nsteps:\n"
        "  - display: \"${{ 1 + 2 * (3 - 1) > 4 ? 'big' : 'small' }}\"\n",
        encoding="utf-8",
    )
    probe = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('MODULES', sorted(m for m in sys.modules if m.split('.')[0] in "
        "('lark', 'catalyst_dsl') and m.split('.')[-1] in ('lark', 'lalr', 'parser')), file=sys.stderr))\n"
        f"sys.argv = ['catalyst', 'check', '--no-cache', {str(playbook)!r}]\n"
        "runpy.run_module('catalyst_dsl', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    modules = done.stderr.rsplit("MODULES", 1)[1].strip()
    # the parser ran (so the check did read expressions) and Lark was never imported
    assert modules == "['catalyst_dsl.syntax.expr.lalr', 'catalyst_dsl.syntax.expr.parser']", done.stderr
