"""Templates: a string split into text, `{{ reference }}` and `${{ expression }}` parts.

The split is a small scanner over the host string (it only finds the braces); what is
inside the braces is read by `parser.py` (grammar/expressions.lark, parsed by
lalr.py). Results are cached by text, so a template written many times is split
and parsed once.
"""

from __future__ import annotations

import functools

from catalyst_dsl.diagnostics import ids
from catalyst_dsl._internal.lazy_module import lazy_module
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl._internal.records import record, replace

_TextPart = ast.TextPart

#: Longer template text is not something a person wrote by hand; refuse it quickly.
MAX_TEMPLATE_LENGTH = 1_000_000


@record
class ParsedTemplate:
    text: str
    parts: tuple[ast.Part, ...]
    errors: tuple[ast.TemplateError, ...] = ()

    @property
    def has_templates(self) -> bool:
        # A loop, not any() over a generator: asked of every string a playbook holds.
        for part in self.parts:
            if not isinstance(part, _TextPart):
                return True
        return False

    @property
    def single(self) -> ast.RefPart | ast.ExprPart | None:
        """The one part of a string that is exactly one `{{ }}` or `${{ }}`, if it is."""
        return single_part(self.parts)


def single_part(parts: tuple[ast.Part, ...]) -> ast.RefPart | ast.ExprPart | None:
    """The one part of a template that is exactly one `{{ }}` or `${{ }}` (its value then
    keeps its type), if it is."""
    if len(parts) == 1 and not isinstance(parts[0], ast.TextPart):
        return parts[0]  # type: ignore[return-value]
    return None


def might_be_template(text: str) -> bool:
    return "{{" in text or "\\{" in text or "\\}" in text


@functools.lru_cache(maxsize=32768)
def parse_template(text: str) -> ParsedTemplate:
    if not might_be_template(text):
        return ParsedTemplate(text, (ast.TextPart(text, start=0, end=len(text)),) if text else ())
    if len(text) > MAX_TEMPLATE_LENGTH:
        return ParsedTemplate(
            text,
            (ast.TextPart(text, start=0, end=len(text)),),
            (
                ast.TemplateError(
                    ids.EXPRESSION_SYNTAX,
                    "this text is too long to hold templates",
                    0,
                    1,
                    "keep templates in strings under 1 MB",
                ),
            ),
        )
    return _Splitter(text).run()


#: The expression parser (with lalr.py, ~0.5 ms to import), only for a template whose
#: inside is read: a run from the check cache gets its templates parsed.
_parser = lazy_module("catalyst_dsl.syntax.expr.parser")

#: The characters that may start `\\{{`, `\\}}`, `\\${{`, `${{` or `{{`; the text between is text.
_MARKER_START = LazyPattern(r"[\\${]")


class _Splitter:
    def __init__(self, text: str) -> None:
        self.text = text
        self.parts: list[ast.Part] = []
        self.errors: list[ast.TemplateError] = []
        self.buffer: list[str] = []
        self.buffer_start = 0

    def flush(self, at: int) -> None:
        if self.buffer:
            self.parts.append(ast.TextPart("".join(self.buffer), start=self.buffer_start, end=at))
            self.buffer = []
        self.buffer_start = at

    def run(self) -> ParsedTemplate:
        text = self.text
        n = len(text)
        i = 0
        while i < n:
            c = text[i]
            if c == "\\" and text.startswith(("{{", "}}", "${{"), i + 1):
                # \{{ \}} and \${{ are the literal characters, not template markers.
                if not self.buffer:
                    self.buffer_start = i
                skip = 4 if text.startswith("${{", i + 1) else 3
                self.buffer.append(text[i + 1 : i + skip])
                i += skip
                continue
            if c == "$" and text.startswith("${{", i):
                i = self.expression(i)
                continue
            if c == "{" and text.startswith("{{", i):
                i = self.reference(i)
                continue
            # Text, up to the next character that may start a marker, copied at once.
            marker = _MARKER_START.search(text, i + 1)
            stop = n if marker is None else marker.start()
            if not self.buffer:
                self.buffer_start = i
            self.buffer.append(text[i:stop])
            i = stop
        self.flush(n)
        return ParsedTemplate(text, tuple(self.parts), tuple(self.errors))

    def reference(self, open_at: int) -> int:
        text = self.text
        close = text.find("}}", open_at + 2)
        if close == -1:
            self.errors.append(
                ast.TemplateError(
                    ids.UNCLOSED_TEMPLATE,
                    "this {{ is never closed",
                    open_at,
                    open_at + 2,
                    "close it with }}, or write \\{{ for literal braces",
                )
            )
            self.buffer_start = open_at if not self.buffer else self.buffer_start
            self.buffer.append(text[open_at:])
            return len(text)
        self.flush(open_at)
        base = open_at + 2
        inner = text[base:close]
        end = close + 2
        nested = inner.find("{{")
        if nested != -1:
            self.errors.append(
                ast.TemplateError(
                    ids.NESTED_TEMPLATE,
                    "{{ cannot start inside another {{ }}",
                    base + nested,
                    base + nested + 2,
                    "close the first reference before opening another",
                )
            )
            self.buffer_start = end
            return end
        parser = _parser()
        try:
            ref = parser.parse(inner, "reference")
        except parser.ExpressionSyntaxError as exc:
            err = exc.error
            self.errors.append(
                replace(err, start=base + err.start, end=base + err.end)
                if inner.strip()
                else replace(err, start=open_at, end=end)
            )
            self.buffer_start = end
            return end
        self.parts.append(ast.RefPart(ref, start=open_at, end=end, base=base))
        self.buffer_start = end
        return end

    def expression(self, open_at: int) -> int:
        text = self.text
        base = open_at + 3
        close = find_expression_end(text, base)
        if close == -1:
            self.errors.append(
                ast.TemplateError(
                    ids.UNCLOSED_TEMPLATE, "this ${{ is never closed", open_at, open_at + 3, "close it with }}"
                )
            )
            if not self.buffer:
                self.buffer_start = open_at
            self.buffer.append(text[open_at:])
            return len(text)
        self.flush(open_at)
        inner = text[base:close]
        end = close + 2
        nested = _find_outside_strings(inner, "{{")
        if nested != -1:
            self.errors.append(
                ast.TemplateError(
                    ids.NESTED_TEMPLATE,
                    "{{ }} cannot be used inside ${{ }}",
                    base + nested,
                    base + nested + 2,
                    "inside ${{ }}, read values with get('name')",
                )
            )
            self.buffer_start = end
            return end
        if not inner.strip():
            self.errors.append(
                ast.TemplateError(
                    ids.EXPRESSION_SYNTAX,
                    "the expression is empty",
                    open_at,
                    end,
                    "write an expression between ${{ and }}",
                )
            )
            self.buffer_start = end
            return end
        parser = _parser()
        try:
            expr = parser.parse(inner, "expression")
        except parser.ExpressionSyntaxError as exc:
            err = exc.error
            self.errors.append(replace(err, start=base + err.start, end=base + err.end))
            self.buffer_start = end
            return end
        self.parts.append(ast.ExprPart(expr, start=open_at, end=end, base=base))
        self.buffer_start = end
        return end


def find_expression_end(text: str, i: int) -> int:
    """The index of the `}}` closing an expression, skipping strings and object braces."""
    depth = 0
    quote = ""
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote or c == "\n":
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            if depth == 0 and text.startswith("}}", i):
                return i
            depth = max(0, depth - 1)
        i += 1
    return -1


def _find_outside_strings(text: str, needle: str) -> int:
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif text.startswith(needle, i):
            return i
        i += 1
    return -1
