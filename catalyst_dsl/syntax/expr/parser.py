"""The expression parser: one LALR grammar, errors mapped to our own.

Lark builds the parser's tables from grammar/expressions.lark when the package is built
(`parser_tables.py`); `lalr.py` parses with them, so a first use costs no grammar build,
writes nothing, and imports no Lark.
"""

from __future__ import annotations

import functools

from catalyst_dsl.diagnostics import ids
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.expr import parser_tables
from catalyst_dsl.syntax.expr.grammar import grammar_path
from catalyst_dsl.syntax.expr.lalr import END, ParseError, Token, Tree, UnexpectedCharacter, UnexpectedToken


@functools.lru_cache(maxsize=1)
def _parser():
    """The parser: from the tables shipped in the package (parser_tables.py), else,
    when they were made from another grammar or are damaged, built in memory with Lark.
    Never cached on disk."""
    text = grammar_path().read_text(encoding="utf-8")
    shipped = parser_tables.load(text)
    if shipped is not None:
        return shipped
    return parser_tables.from_grammar(text)


class ExpressionSyntaxError(Exception):
    def __init__(self, error: ast.TemplateError) -> None:
        super().__init__(error.message)
        self.error = error


_STRING_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unquote(token: str) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            e = body[i + 1]
            digits = body[i + 2 : i + 6]
            if e == "u" and len(digits) == 4 and all(ch in "0123456789abcdefABCDEF" for ch in digits):
                out.append(chr(int(digits, 16)))
                i += 6
                continue
            out.append(_STRING_ESCAPES.get(e, e))
            i += 2
            continue
        out.append(c)
        i += 1
    text = "".join(out)
    try:  # \ud83d\ude00 written as two escapes is one character; half of a pair is no text at all
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        raise _LoneSurrogate() from None


class _LoneSurrogate(ValueError):
    """A string literal whose \\u escapes leave half of a UTF-16 surrogate pair."""


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _text_of(token: str, start: int, end: int) -> str:
    try:
        return _unquote(token)
    except _LoneSurrogate:
        raise ExpressionSyntaxError(
            ast.TemplateError(
                ids.EXPRESSION_SYNTAX,
                "this string holds half of a UTF-16 surrogate pair "
                "(a \\ud800-\\udfff escape without its partner), which is not text",
                start,
                end,
                "write the character itself, or both halves of the pair (\\ud83d\\ude00)",
            )
        ) from None


def _build(tree, offset: int):
    """Parse tree into AST nodes; iterative enough for the depths a guard allows."""

    def pos(node):
        return node.start_pos + offset, node.end_pos + offset

    def conv(node):
        if isinstance(node, Token):  # `?primary` passes bare tokens through only via rules
            raise AssertionError(node.type)
        kind = node.data
        start, end = pos(node)
        c = node.children
        if kind == "expression":
            return conv(c[0])
        if kind == "number":
            return ast.Literal(_number(str(c[0])), "number", start=start, end=end)
        if kind == "string":
            return ast.Literal(_text_of(str(c[0]), start, end), "string", start=start, end=end)
        if kind in ("true", "false"):
            return ast.Literal(kind == "true", "boolean", start=start, end=end)
        if kind == "null":
            return ast.Literal(None, "null", start=start, end=end)
        if kind == "undefined":
            return ast.Literal(None, "undefined", start=start, end=end)
        if kind == "name":
            return ast.Name(str(c[0]), start=start, end=end)
        if kind == "member":
            return ast.Member(conv(c[0]), str(c[1]), start=start, end=end)
        if kind == "index":
            return ast.Index(conv(c[0]), conv(c[1]), start=start, end=end)
        if kind == "call":
            return ast.Call(conv(c[0]), tuple(conv(a) for a in c[1:] if a is not None), start=start, end=end)
        if kind == "unary":
            return ast.Unary(str(c[0]), conv(c[1]), start=start, end=end)
        if kind == "binary":
            return ast.Binary(str(c[1]), conv(c[0]), conv(c[2]), start=start, end=end)
        if kind in ("logic_or", "logic_and", "nullish"):
            op = {"logic_or": "||", "logic_and": "&&", "nullish": "??"}[kind]
            return ast.Binary(op, conv(c[0]), conv(c[1]), start=start, end=end)
        if kind == "conditional":
            return ast.Conditional(conv(c[0]), conv(c[1]), conv(c[2]), start=start, end=end)
        if kind == "array":
            return ast.ArrayExpr(tuple(conv(a) for a in c if a is not None), start=start, end=end)
        if kind == "object":
            entries = []
            for pair in c:
                if pair is None:
                    continue
                key_token, value = pair.children
                ps, pe = pos(pair)
                key = _text_of(str(key_token), ps, pe) if key_token.type == "STRING" else str(key_token)
                entries.append(ast.ObjectEntry(key, conv(value), start=ps, end=pe))
            return ast.ObjectExpr(tuple(entries), start=start, end=end)
        if kind == "path_ref":
            return ast.PathRef(str(c[0]), tuple(str(t) for t in c[1:]), start=start, end=end)
        if kind == "protocol_ref":
            text = str(c[0])
            protocol, _, path = text.partition("://")
            return ast.ProtocolRef(protocol, path, start=start, end=end)
        raise AssertionError(f"unhandled grammar rule {kind}")  # a grammar/AST mismatch is our bug

    return conv(tree)


# Constructs people reach for that the subset leaves out, and what to write instead.
_OUTSIDE_SUBSET = (
    (
        "=>",
        "arrow functions are not part of the expression language",
        "compute the value in a `script` step and read it with get()",
    ),
    ("++", "increment operators are not allowed in expressions", "write `get('x') + 1`"),
    ("--", "decrement operators are not allowed in expressions", "write `get('x') - 1`"),
    (
        "`",
        "template literals are not supported in expressions",
        "use `+` to join strings, or {{ }} in the surrounding text",
    ),
    (
        ";",
        "a statement separator is not allowed: an expression is one value",
        "keep a single expression; use a `script` step for statements",
    ),
    ("new ", "`new` is not allowed in expressions", "use a `script` step for object construction"),
    ("=", "assignment is not allowed in expressions", "compare with `===`; set variables with a `var` step"),
    (
        "/",
        "regular expression literals are not supported in expressions",
        "use string methods such as includes() or startsWith()",
    ),
)


def _describe(error: ParseError, text: str) -> tuple[str, str | None, int, int]:
    pos = error.pos
    if isinstance(error, UnexpectedToken) and error.token.type == END:
        return (
            "the expression ends too early",
            "complete the expression or remove the dangling operator",
            len(text),
            len(text),
        )
    rest = text[pos:]
    for needle, message, help_text in _OUTSIDE_SUBSET:
        if rest.startswith(needle) and not (needle == "=" and rest.startswith(("==", "=>"))):
            if needle == "/" and not isinstance(error, UnexpectedCharacter):
                continue
            return message, help_text, pos, pos + len(needle.strip())
    if isinstance(error, UnexpectedToken):
        token = error.token
        return f"unexpected '{token}' in expression", None, pos, pos + max(1, len(str(token)))
    if isinstance(error, UnexpectedCharacter):
        return f"unexpected character '{text[pos : pos + 1]}' in expression", None, pos, pos + 1
    return "invalid expression", None, pos, pos + 1


@functools.lru_cache(maxsize=16384)
def parse(text: str, start: str):
    """Parse `text` with the `reference` or `expression` start rule.

    Returns an AST node whose offsets are relative to `text`; raises
    ExpressionSyntaxError. Cached: the same text is parsed once per process.
    """
    parser = _parser()  # outside the try: a grammar error is our bug, not the user's
    try:
        tree = parser.parse(text, start)
    except ParseError as exc:
        message, help_text, s, e = _describe(exc, text)
        if start == "reference":
            code, help_text = ids.REFERENCE_SYNTAX, _reference_help(text)
            body = text.strip()
            if "\n" in body or len(body) > 40:
                message = "this {{ }} holds text, not a reference"
                help_text = "write \\{{ for literal braces, or put a single name between {{ and }}"
                s, e = 0, len(text)
            else:
                message = f"'{body}' is not a reference"
        else:
            code = ids.OUTSIDE_SUBSET if help_text and "not" in message else ids.EXPRESSION_SYNTAX
        raise ExpressionSyntaxError(ast.TemplateError(code, message, s, max(e, s + 1), help_text)) from None
    except RecursionError:
        raise ExpressionSyntaxError(
            ast.TemplateError(
                ids.EXPRESSION_SYNTAX,
                "the expression is too complex to read",
                0,
                len(text),
                "split it into smaller steps",
            )
        ) from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        raise ExpressionSyntaxError(
            ast.TemplateError(
                ids.EXPRESSION_SYNTAX,
                f"the expression nests {depth} operations deep; expressions may nest at most {MAX_DEPTH}",
                0,
                len(text),
                "split it into smaller steps: compute parts in `var` steps and combine them",
            )
        ) from None
    return _build(tree, 0)


#: How deep an expression may nest (parentheses, operators chained one after another,
#: calls inside calls). Real expressions stay far below it; the checker and the evaluator
#: walk the tree recursively, so a deeper one would exhaust Python's stack.
MAX_DEPTH = 100


def _depth(tree) -> int:
    """The depth of a parse tree, found without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return deepest


def _reference_help(text: str) -> str:
    body = text.strip()
    if not body:
        return "put a name between the braces, such as {{ feature-id }}"
    if any(op in body for op in ("==", "!=", "&&", "||", "(", "+", "?", "<", ">", "'", '"', " ")):
        # The fix offered must itself pass the check: `${{ … }}` only around text that parses.
        try:
            parse(body, "expression")
        except ExpressionSyntaxError as error:
            return (
                f"{{{{ }}}} takes a name or a dotted path, and `{body}` does not parse as an expression"
                f" either ({error.error.message})"
            )
        return f"{{{{ }}}} takes a name or a dotted path; for an expression write ${{{{ {body} }}}}"
    return "a reference is a name followed by .field or .0 segments, or a protocol path such as xe://spec"
