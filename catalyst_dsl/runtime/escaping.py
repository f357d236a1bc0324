"""Escaping values into shell scripts: each value quoted for exactly the context it stands in.

`syntax/shell/` finds, once per script text, where every placeholder stands;
`render_script` renders the script with each value escaped for that place, so the value
is data and the command the author wrote is the command that runs. A plain word is left
as it is, so benign values render as they always did.

Values are first turned into text as everywhere else (`to_text`: numbers as JavaScript
writes them, true/false, null, arrays joined with commas, objects as JSON), then escaped.
`${{ raw(x) }}` is the author's opt-out: the text goes in unescaped.
"""

from __future__ import annotations

import re

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.evaluate import Env, EvaluationError, materialize, part_value, template_of
from catalyst_dsl.lazy_pattern import LazyPattern
from catalyst_dsl.runtime.jsvalues import UNKNOWN, is_number, to_text
from catalyst_dsl.syntax import expr_ast as ast
from catalyst_dsl.syntax.shell import BASH, POWERSHELL, Context, Slot, raw_argument, script_slots
from catalyst_dsl.syntax.source import LONE_SURROGATE

# The patterns are compiled on first use, not at import: every run imports this module,
# and a what-if escapes few values, if any.
#: Words bash reads as themselves: no quoting, globbing, expansion or word splitting.
_bash_plain = LazyPattern(r"[A-Za-z0-9_@%+=:,./-]+", re.ASCII)
# The characters each quoting context escapes, one by one (str.translate: no pattern to
# compile, and one pass over the text).
#: Inside bash double quotes, and in an unquoted here-document: a backslash before each.
_bash_double = str.maketrans({c: "\\" + c for c in '\\"$`'})
_bash_heredoc = str.maketrans({c: "\\" + c for c in "\\$`"})
#: PowerShell's quote characters include the typographic ones: doubled in single quotes,
#: a backtick before each in double quotes and in a here-string.
_ps_single = str.maketrans({c: c + c for c in "'\u2018\u2019\u201a\u201b"})
_ps_double = str.maketrans({c: "`" + c for c in '`$"\u201c\u201d\u201e'})
_ps_heredoc = str.maketrans({c: "`" + c for c in "`$"})
#: A number PowerShell reads as one (NaN and Infinity would be command names).
_ps_number = LazyPattern(r"-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?", re.ASCII)


def escape(value: object, slot: Slot, language: str) -> str:
    """`value` as text that stands for exactly itself in `slot` of a `language` script."""
    text = to_text(value)
    _representable(text)
    context = slot.context
    if context is Context.UNSAFE:
        raise StepError("UnsafeTemplate", f"a value stands {slot.problem}; it cannot be escaped there",
                        guidance=slot.help + " (`catalyst check` reports this as C822)")
    if context in (Context.HEREDOC, Context.HEREDOC_QUOTED):
        _inside_body(text, slot, language)
    if language == POWERSHELL:
        if context is Context.WORD:
            number = is_number(value) and not isinstance(value, bool) and _ps_number.fullmatch(text)
            return text if number else "'" + text.translate(_ps_single) + "'"
        if context is Context.SINGLE:
            return text.translate(_ps_single)
        if context is Context.DOUBLE:
            return text.translate(_ps_double)
        return text.translate(_ps_heredoc) if context is Context.HEREDOC else text
    if context is Context.WORD:
        plain = _bash_plain.fullmatch(text) and not slot.always_quote
        return text if plain else "'" + text.replace("'", "'\\''") + "'"
    if context is Context.SINGLE:
        return text.replace("'", "'\\''")
    if context is Context.DOUBLE:
        return text.translate(_bash_double)
    return text.translate(_bash_heredoc) if context is Context.HEREDOC else text


def escaped_forms(text: str) -> set[str]:
    """Every way `escape` can write `text` inside its quotes, for the secret masker: a
    secret escaped into a script is still the secret."""
    return {
        text.replace("'", "'\\''"), text.translate(_bash_double), text.translate(_bash_heredoc),
        text.translate(_ps_single), text.translate(_ps_double), text.translate(_ps_heredoc),
    }


def _representable(text: str) -> None:
    if "\0" in text:
        raise StepError("UnsafeValue", "a value for a script holds a NUL character, which no shell string can hold",
                        guidance="pass binary data through a file (file-write, then read it in the script)")
    if not text.isascii() and LONE_SURROGATE.search(text):  # ASCII holds no surrogate: no pattern to compile
        raise StepError("UnsafeValue", "a value for a script is not valid Unicode text (it holds a lone surrogate)",
                        guidance="pass the value through a file, or fix its source")


def _inside_body(text: str, slot: Slot, language: str) -> None:
    """Refuse a value that would end its here-document early (a line that is the delimiter)."""
    lines = text.split("\n")
    if slot.strip_tabs and "\n\t" in text:
        raise StepError("UnsafeValue", "a value in a <<- here-document has lines that start with a tab, which bash would remove",
                        guidance="use << instead of <<-, or pass the value in `env:`")
    if slot.before is None or slot.after is None:
        # Another placeholder shares the line, so its whole text is not known here: any
        # line holding the delimiter might end the body.
        candidates = [slot.delimiter] if any(slot.delimiter in line for line in lines) else []
    else:
        candidates = [slot.before + lines[0], *lines[1:]]
        candidates[-1] += slot.after
    for line in candidates:
        if language == POWERSHELL:
            ends = line.lstrip().startswith(slot.delimiter)
        else:
            ends = (line.lstrip("\t") if slot.strip_tabs else line) == slot.delimiter
        if ends:
            raise StepError("UnsafeValue", f"a value would end its here-document early: it holds a line '{slot.delimiter}'",
                            guidance="choose a delimiter the value cannot contain, or pass the value in `env:`")


class Script(str):
    """A rendered script that knows where its values are: `values` holds the (start, end)
    offsets of each escaped value, so later rewriting of the author's text (`temp://`
    paths, `actions/process.scratch_paths`) leaves the values alone."""

    values: tuple[tuple[int, int], ...]

    def __new__(cls, pieces: list[tuple[str, bool]]) -> "Script":
        script = super().__new__(cls, "".join(text for text, _ in pieces))
        spans, at = [], 0
        for text, is_value in pieces:
            if is_value:
                spans.append((at, at + len(text)))
            at += len(text)
        script.values = tuple(spans)
        return script


def render_script(value: ir.Value, env: Env, language: str) -> object:
    """The script of a step with every placeholder escaped for where it stands."""
    if not isinstance(value, ir.Tmpl) or language not in (BASH, POWERSHELL):
        return materialize(value, env)
    parsed = template_of(value)
    if parsed.errors:
        error = parsed.errors[0]
        raise EvaluationError(error.message, error.start, error.end)
    slots: tuple[Slot, ...] | None = None  # lexed once a value is to be escaped (a what-if may know none)
    placed = 0
    pieces: list[tuple[str, bool]] = []
    for part in parsed.parts:
        if isinstance(part, ast.TextPart):
            pieces.append((part.text, False))
            continue
        got = part_value(part, env)
        if got is UNKNOWN:
            return UNKNOWN  # what-if: the script is not known until the value is
        if raw_argument(part) is not None:
            pieces.append((to_text(got), False))  # trusted: it is the author's text
        else:
            if slots is None:
                slots = script_slots(value.text, language, parsed.parts)
            pieces.append((escape(got, slots[placed], language), True))
        placed += 1
    return Script(pieces)
