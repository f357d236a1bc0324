"""Script templates: the quoting context of every `{{ }}` / `${{ }}` in a script.

A value pasted into a script as text can end a quote, start a command substitution or
a new line and run commands of its own. As Go's html/template does for HTML, the script
template is lexed once (cached by its text) and each placeholder gets the context it
stands in: an unquoted word, double quotes, single quotes, or the body of a quoted or
unquoted here-document. The runtime escapes each value for exactly that context
(`runtime/escaping.py`); the checker reports a placeholder whose context cannot be
escaped with certainty (C822) instead of guessing.

The lexers know the quoting rules of bash and PowerShell, not their whole grammars.
Where they cannot prove what a character means (backticks, `${...}`, arithmetic, a
comment, the name of the command to run) the slot is UNSAFE with the reason and the fix.
"""

from __future__ import annotations

import functools

from catalyst_dsl.syntax import expr_ast as ast
from catalyst_dsl.syntax.shell.bash import BashLexer
from catalyst_dsl.syntax.shell.powershell import PowerShellLexer
from catalyst_dsl.syntax.shell.slots import Context, Slot
from catalyst_dsl.syntax.templates import parse_template

BASH = "bash"
POWERSHELL = "powershell"
JAVASCRIPT = "javascript"

__all__ = ["BASH", "POWERSHELL", "JAVASCRIPT", "JS_HELP", "Context", "Slot", "raw_argument", "script_slots"]


def raw_argument(part: ast.Part) -> ast.Expr | None:
    """The argument of `${{ raw(x) }}`: the author's opt-out from escaping, or None."""
    if isinstance(part, ast.ExprPart):
        expr = part.expr
        if isinstance(expr, ast.Call) and isinstance(expr.callee, ast.Name) and expr.callee.name == "raw" and len(expr.args) == 1:
            return expr.args[0]
    return None


def script_slots(text: str, language: str, parts: tuple[ast.Part, ...] | None = None) -> tuple[Slot, ...]:
    """One Slot per placeholder of the template `text`, in order, for a script in `language`.

    Lexed once per script (cached). `parts`: the template's parts as the compiler read
    them (a compiled step holds them), so the text is not parsed again; by default, its
    parts as `parse_template` reads it. They are part of the key: a dialect may build
    parts that reading the text again would not give (text it means literally)."""
    return _lexed(text, language, parse_template(text).parts if parts is None else parts)


@functools.lru_cache(maxsize=4096)
def _lexed(text: str, language: str, parts: tuple[ast.Part, ...]) -> tuple[Slot, ...]:
    if language == BASH:
        return BashLexer(text, parts).run()
    if language == POWERSHELL:
        return PowerShellLexer(text, parts).run()
    return tuple(Slot(Context.UNSAFE, p.start, p.end, "in JavaScript code, which is not escaped", JS_HELP)
                 for p in parts if not isinstance(p, ast.TextPart))


JS_HELP = "read the value inside the script with get('name') instead of pasting it into the code"
