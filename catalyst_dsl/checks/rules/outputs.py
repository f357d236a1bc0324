"""Declared outputs that no `return` sets, and returned values nobody declared."""

from __future__ import annotations

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.control.return_ import playbook_returns
from catalyst_dsl.diagnostics.ids import OUTPUT_NEVER_SET, UNDECLARED_RETURN
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.dialects.values import suggest
from catalyst_dsl.ir import nodes as ir


#: `code` and `message` of a return describe how the run ended; they are not outputs.
RETURN_STATUS_KEYS = ("result", "code", "message")


def check_outputs(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog | None = None) -> None:
    if not playbook.outputs:
        return
    returned: dict[str, ir.Entry] = {}
    returns = list(playbook_returns(playbook))
    for ret in returns:
        entries = ret.config.entries
        if len(entries) == 1 and entries[0].key == "result" and isinstance(entries[0].value, ir.Tmpl):
            return  # the whole result is computed at run time; its keys are unknown here
        for entry in entries:
            returned.setdefault(entry.key, entry)
    declared = {o.name for o in playbook.outputs}
    undeclared = [k for k in returned if k not in declared]
    for output in playbook.outputs:
        if output.name in returned:
            continue
        hint = suggest(output.name, undeclared)
        labels = []
        if hint:
            close = next(k for k in undeclared if f"'{k}'" in hint)
            labels.append(Label(returned[close].span, f"the return sets '{close}'"))
        where = "no step returns it" if returns else "the playbook has no `return` step"
        sink.report(
            OUTPUT_NEVER_SET,
            f"the output '{output.name}' is declared but never set: {where}",
            output.span,
            labels=labels,
            help=hint or f"set it in a `return` step (`- return: {{{output.name}: ...}}`) or remove the declaration",
        )
    for key in undeclared:
        if key in RETURN_STATUS_KEYS:
            continue
        sink.report(
            UNDECLARED_RETURN,
            f"the return sets '{key}', which is not a declared output",
            returned[key].span,
            help=suggest(key, declared) or f"declare it under `outputs:` ({key}: <type>) or drop it from the return",
        )
