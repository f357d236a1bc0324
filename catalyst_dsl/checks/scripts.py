"""Values in scripts: placeholders that cannot be escaped (C822), raw() on untrusted values
(C821), and values pasted into JavaScript, which is not escaped (C823).

The runtime escapes every value for the quoting context it stands in
(`runtime/escaping.py`); these checks report, before a run, the places where it would
have to refuse, and the places where the author turned escaping off for a value that
comes from outside the playbook.
"""

from __future__ import annotations

from typing import Callable

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax import expr_ast as ast
from catalyst_dsl.syntax.shell import JAVASCRIPT, JS_HELP, Context, raw_argument, script_slots

#: Says where a value comes from when it is untrusted ("the input 'name'"), else None.
Origin = Callable[[ast.Expr], "str | None"]


def check_script(tmpl: ir.Tmpl, language: str, sink: DiagnosticSink, origin: Origin) -> None:
    placeholders = [p for p in tmpl.parts if not isinstance(p, ast.TextPart)]
    # The slots of the parts the runtime escapes (runtime/escaping.py reads the same).
    for part, slot in zip(placeholders, script_slots(tmpl.text, language, tmpl.parts or None)):
        span = tmpl.smap.span(part.start, part.end) if tmpl.smap is not None else tmpl.span
        trusted = raw_argument(part)
        if trusted is not None:
            source = origin(trusted)
            if source is not None:
                sink.report("C821", f"raw() lets {source} into this script unescaped, so its text runs as code", span,
                            help="drop raw() so the value is escaped as data, or compare it with the allowed values first (an enum input, an `if`)")
        elif language == JAVASCRIPT:
            sink.report("C823", "this value is pasted into the JavaScript code as it is, without escaping", span, help=JS_HELP)
        elif slot.context is Context.UNSAFE:
            sink.report("C822", f"this value stands {slot.problem}; it cannot be escaped there", span,
                        help=f"{slot.help}; ${{{{ raw(x) }}}} opts out for a trusted value")
