"""Script templates: where every `{{ }}` / `${{ }}` of a script stands.

A value pasted into a script as text can end a quote, start a command substitution or
a new line and run commands of its own. In bash scripts (`bash`, `test`) no value is
pasted: each placeholder becomes a reference to an environment variable that carries
the value (`bash/`), and the places where bash or a program would read even that
as code are refused. PowerShell scripts are lexed for the quoting context of each
placeholder, and the runtime escapes the value for it (`runtime/values/escaping.py`). The
checker reports what the runtime would refuse (C822) before a run.
"""

from __future__ import annotations

import functools

from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.shell.bash.findings import Analysis, Hole
from catalyst_dsl.syntax.shell.bash.refs import analyze
from catalyst_dsl.syntax.shell.powershell import PowerShellLexer
from catalyst_dsl.syntax.shell.slots import Context, Slot
from catalyst_dsl.syntax.expr.templates import parse_template

BASH = "bash"
POWERSHELL = "powershell"
JAVASCRIPT = "javascript"
#: An argv step's words (`command`): each is one argument, checked for the program it is given to.
ARGV = "argv"

__all__ = [
    "ARGV",
    "BASH",
    "POWERSHELL",
    "JAVASCRIPT",
    "JS_HELP",
    "Analysis",
    "Context",
    "Slot",
    "bash_analysis",
    "raw_argument",
    "script_slots",
]

#: What a `${{ raw(x) }}` stands for when its text is not known (in `catalyst check`): an
#: expansion, so a command it may name is not taken for a known one.
RAW_UNKNOWN = "${CATALYST_RAW}"


def raw_argument(part: ast.Part) -> ast.Expr | None:
    """The argument of `${{ raw(x) }}`: the author's opt-out from escaping, or None."""
    if isinstance(part, ast.ExprPart):
        expr = part.expr
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.callee, ast.Name)
            and expr.callee.name == "raw"
            and len(expr.args) == 1
        ):
            return expr.args[0]
    return None


def bash_analysis(
    text: str,
    parts: tuple[ast.Part, ...] | None = None,
    raw: tuple[str, ...] | None = None,
    given: frozenset = frozenset(),
) -> Analysis:
    """The bash script `text` with its values by reference (`bash.refs.analyze`).

    `raw`: the text of each `${{ raw(x) }}`, in order, when it is known (a run); unknown
    (a check), each stands for an expansion the analysis cannot read. `given`: the names of
    the step's `env:` entries whose values are templates (they may hold a value;
    `ir.nodes.computed_keys`)."""
    pieces: list[str | Hole] = []
    holes = raws = 0
    for part in parse_template(text).parts if parts is None else parts:
        if isinstance(part, ast.TextPart):
            pieces.append(part.text)
        elif raw_argument(part) is not None:
            pieces.append(raw[raws] if raw is not None else RAW_UNKNOWN)
            raws += 1
        else:
            pieces.append(Hole(holes, part.start, part.end))
            holes += 1
    return analyze(tuple(pieces), given)


def script_slots(text: str, language: str, parts: tuple[ast.Part, ...] | None = None) -> tuple[Slot, ...]:
    """One Slot per placeholder of the template `text`, in order, for a PowerShell or
    JavaScript script (bash scripts: `bash_analysis`).

    Lexed once per script (cached). `parts`: the template's parts as the compiler read
    them (a compiled step holds them), so the text is not parsed again; by default, its
    parts as `parse_template` reads it. They are part of the key: a dialect may build
    parts that reading the text again would not give (text it means literally)."""
    return _lexed(text, language, parse_template(text).parts if parts is None else parts)


@functools.lru_cache(maxsize=4096)
def _lexed(text: str, language: str, parts: tuple[ast.Part, ...]) -> tuple[Slot, ...]:
    if language == POWERSHELL:
        return PowerShellLexer(text, parts).run()
    return tuple(
        Slot(Context.UNSAFE, p.start, p.end, "in JavaScript code, which is not escaped", JS_HELP)
        for p in parts
        if not isinstance(p, ast.TextPart)
    )


JS_HELP = "read the value inside the script with get('name') instead of pasting it into the code"
