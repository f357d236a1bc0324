"""Values in scripts: placeholders a run refuses (C822), raw() on untrusted values (C821),
and values pasted into JavaScript, which is not escaped (C823).

A run passes bash values by reference and escapes PowerShell values for their context
(`runtime/values/escaping.py`); these checks report, before a run, every place where it would
refuse, from the same analysis, and the places where the author turned escaping off for
a value that comes from outside the playbook.
"""

from __future__ import annotations

from typing import Callable

from catalyst_dsl.diagnostics.ids import RAW_UNTRUSTED_IN_SCRIPT, UNESCAPABLE_SCRIPT_VALUE, UNESCAPED_JAVASCRIPT_VALUE
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.shell.bash.refs import argv_analysis
from catalyst_dsl.syntax.shell import (
    ARGV,
    BASH,
    JAVASCRIPT,
    JS_HELP,
    Context,
    bash_analysis,
    raw_argument,
    script_slots,
)

#: Says where a value comes from when it is untrusted ("the input 'name'"), else None.
Origin = Callable[[ast.Expr], "str | None"]


def check_script(
    tmpl: ir.Value, language: str, sink: DiagnosticSink, origin: Origin, given: frozenset = frozenset()
) -> None:
    """`given`: the names of the step's `env:` entries that hold a value (`ir.nodes.computed_keys`)."""
    if language == ARGV:
        _check_argv(tmpl, sink, origin)
        return
    if isinstance(tmpl, ir.Lit) and isinstance(tmpl.value, str) and given and language == BASH:
        # no placeholder, but values in `env:`: the script's uses of them are checked
        for finding in bash_analysis(tmpl.value, given=given).refusals:
            sink.report(
                UNESCAPABLE_SCRIPT_VALUE, f"{finding.problem}; it cannot be used there", tmpl.span, help=finding.help
            )
        return
    if not isinstance(tmpl, ir.Tmpl):
        return

    def span_of(start: int, end: int):
        return tmpl.smap.span(start, end) if tmpl.smap is not None else tmpl.span

    placeholders = [p for p in tmpl.parts if not isinstance(p, ast.TextPart)]
    if language == BASH:
        _check_bash(tmpl, placeholders, sink, origin, span_of, given)
        return
    # The slots of the parts the runtime escapes (runtime/values/escaping.py reads the same).
    for part, slot in zip(placeholders, script_slots(tmpl.text, language, tmpl.parts or None)):
        span = span_of(part.start, part.end)
        trusted = raw_argument(part)
        if trusted is not None:
            source = origin(trusted)
            if source is not None:
                sink.report(
                    RAW_UNTRUSTED_IN_SCRIPT,
                    f"raw() lets {source} into this script unescaped, so its text runs as code",
                    span,
                    help="drop raw() so the value is escaped as data, or compare it with the allowed values "
                    "first (an enum input, an `if`)",
                )
        elif language == JAVASCRIPT:
            sink.report(
                UNESCAPED_JAVASCRIPT_VALUE,
                "this value is pasted into the JavaScript code as it is, without escaping",
                span,
                help=JS_HELP,
            )
        elif slot.context is Context.UNSAFE:
            sink.report(
                UNESCAPABLE_SCRIPT_VALUE,
                f"this value stands {slot.problem}; it cannot be escaped there",
                span,
                help=f"{slot.help}; ${{{{ raw(x) }}}} opts out for a trusted value",
            )


def _check_bash(
    tmpl: ir.Tmpl,
    placeholders: list[ast.Part],
    sink: DiagnosticSink,
    origin: Origin,
    span_of,
    given: frozenset = frozenset(),
) -> None:
    """What a run refuses in a bash script, from the analysis the run makes
    (`syntax/shell/bash/`): each value and each use of a variable that holds one."""
    for part in placeholders:
        trusted = raw_argument(part)
        source = origin(trusted) if trusted is not None else None
        if source is not None:
            sink.report(
                RAW_UNTRUSTED_IN_SCRIPT,
                f"raw() lets {source} into this script unescaped, so its text runs as code",
                span_of(part.start, part.end),
                help="drop raw() so the value reaches the script as data, or compare it with the allowed "
                "values first (an enum input, an `if`)",
            )
    if not given and not any(raw_argument(p) is None for p in placeholders):
        return
    analysis = bash_analysis(tmpl.text, tmpl.parts or None, given=given)
    for finding in analysis.slots:
        if finding.context is Context.UNSAFE:
            sink.report(
                UNESCAPABLE_SCRIPT_VALUE,
                f"this value is {finding.problem}; it cannot be used there",
                span_of(finding.start, finding.end),
                help=f"{finding.help}; ${{{{ raw(x) }}}} opts out for a trusted value",
            )
    for finding in analysis.uses:
        sink.report(
            UNESCAPABLE_SCRIPT_VALUE,
            f"{finding.problem}; it cannot be used there",
            span_of(finding.start, finding.end),
            help=finding.help,
        )


def _check_argv(argv: ir.Value, sink: DiagnosticSink, origin: Origin) -> None:
    """An argv step: a value is refused where its program reads it as code or a program
    (runtime/values/escaping.render_argv reads the same); the code of `bash -c` is a bash script."""
    if not isinstance(argv, ir.ListV):
        return
    _, refused, code = argv_analysis(map(ir.text_or_parts, argv.items))
    for i, item in enumerate(argv.items):
        if not isinstance(item, ir.Tmpl):
            continue
        if i == code:
            check_script(item, BASH, sink, origin)
        elif i in refused:
            sink.report(
                UNESCAPABLE_SCRIPT_VALUE,
                f"this value is {refused[i]}; it cannot be used there",
                item.span,
                help="a value cannot be code or name the program that runs: pass it as an argument of the "
                "program, or in `env:`",
            )
