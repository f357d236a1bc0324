"""Library checks on calls: targets that exist, inputs that fit (C804-C808).

`check_callers` looks the other way, for `catalyst check` of some files (a pre-commit
hook's, the changed ones): the calls into them from files not checked, whose inputs a
change may no longer fit (an input renamed, made required, given another type).
"""

from __future__ import annotations

from catalyst_dsl.diagnostics.ids import (
    CALL_INPUT_TYPE,
    DYNAMIC_CALL,
    MISSING_CALL_INPUT,
    UNKNOWN_CALL_INPUT,
    UNKNOWN_PLAYBOOK,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.diagnostics.suggest import suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.ir import types as t
from catalyst_dsl.checks.library_view import Edge, LibraryView


def check_calls(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    for path in files:
        _check_file(library, path, sink)


def check_callers(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    """The inputs of the calls into `files` from the library's other files, and the calls
    in those files to a playbook that is not there: a change that deletes or renames a
    playbook leaves no file of it to check, only its callers, which it did not change (a
    commit's hook names the files that are there). Only the calls are checked there: the
    rest of a caller is the caller's own, reported when it is checked."""
    checked = set(files)
    for path in files:
        for edge in library.callers(path):
            if edge.caller not in checked and edge.site is not None and not edge.dynamic:
                _check_inputs(library, edge, sink)
    for path in library.files:
        if path not in checked:
            for edge in library.edges(path):
                if edge.callee is None and not edge.dynamic:
                    _unknown_target(library, edge, sink)


def _check_file(library: LibraryView, path: str, sink: DiagnosticSink) -> None:
    for edge in library.edges(path):
        if edge.dynamic and place(edge.target).scratch:
            sink.report(
                DYNAMIC_CALL,
                f"the playbook called here ({edge.target}) is written during the run, so this call is not checked",
                edge.span,
                help="keep generated playbooks to a minimum: a playbook in the library is checked before it runs",
            )
        elif edge.dynamic:
            sink.report(
                DYNAMIC_CALL,
                f"the playbook called here is computed at run time ({edge.target}), so this call is not checked",
                edge.span,
                help="call a playbook by its name or path to have the call checked",
            )
        elif edge.callee is None:
            _unknown_target(library, edge, sink)
        elif edge.site is not None:
            _check_inputs(library, edge, sink)


def _unknown_target(library: LibraryView, edge: Edge, sink: DiagnosticSink) -> None:
    if edge.kind == "markdown-ref":
        rewritten = library.unalias(edge.target)
        shown = f"'{edge.target}'" + (f" (read as '{rewritten}' through an alias)" if rewritten != edge.target else "")
        hint = (
            "add an alias for its prefix in catalyst.toml, or fix the path"
            if rewritten == edge.target
            else "check the alias in catalyst.toml and the path"
        )
        sink.report(UNKNOWN_PLAYBOOK, f"no playbook at {shown}", edge.span, help=hint)
        return
    where = library.searched_folders()
    if library.is_path(edge.target):
        sink.report(
            UNKNOWN_PLAYBOOK,
            f"no playbook file at '{edge.target}'",
            edge.span,
            help=f"a path is looked up from the calling file, then from the project root and from {where}, and "
            "never outside the project",
        )
        return
    names = library.names()
    if edge.target in names:  # a file of that name, which holds no playbook that can be read
        hint = (
            f"a file named {edge.target} is in the library, but no playbook '{edge.target}' could be read from it "
            "(`catalyst check` on it says why)"
        )
    else:
        hint = suggest(edge.target, names)
    sink.report(
        UNKNOWN_PLAYBOOK,
        f"no playbook named '{edge.target}' in the library",
        edge.span,
        help=hint or f"playbooks are found by location in {where}; the file name must be the playbook's name",
    )


def _check_inputs(library: LibraryView, edge: Edge, sink: DiagnosticSink) -> None:
    child = library.compiled(edge.callee).playbook
    site = edge.site
    if child is None or site.input_types is None and site.step.config.get("inputs") is not None:
        return  # the child is reported in its own file; computed inputs cannot be checked by key
    given = site.step.config.get("inputs")
    entries = {e.key: e for e in given.entries} if isinstance(given, ir.MapV) else {}
    declared = {d.name: d for d in child.inputs}
    for name, entry in entries.items():
        decl = declared.get(name)
        if decl is None:
            hint = suggest(name, declared) or (
                f"'{child.name}' declares: {', '.join(declared)}" if declared else f"'{child.name}' declares no inputs"
            )
            sink.report(
                UNKNOWN_CALL_INPUT,
                f"'{child.name}' has no input '{name}'",
                entry.span,
                labels=[Label(child.span, f"'{child.name}' is declared here")] if child.span else (),
                help=hint,
            )
            continue
        actual = site.input_types.get(name, t.ANY) if site.input_types else t.ANY
        expected = t.input_type(decl)
        value = entry.value
        if decl.allowed and isinstance(value, ir.Lit) and value.value not in decl.allowed:
            choices = ", ".join(str(a) for a in decl.allowed)
            hint = suggest(str(value.value), [str(a) for a in decl.allowed])
            sink.report(
                CALL_INPUT_TYPE,
                f"the input '{name}' of '{child.name}' takes one of {choices}, not '{value.value}'",
                value.span or entry.span,
                labels=[Label(decl.span, "the input is declared here")] if decl.span else (),
                help=hint or f"pass one of {choices}",
            )
        elif not t.assignable(actual, expected):
            sink.report(
                CALL_INPUT_TYPE,
                f"the input '{name}' of '{child.name}' takes {t.a_type(expected)}, but this is {t.a_type(actual)}",
                entry.value.span or entry.span,
                labels=[Label(decl.span, "the input is declared here")] if decl.span else (),
                help=f"pass {t.a_type(expected)}",
            )
    for decl in child.inputs:
        if decl.required and decl.default is None and decl.name not in entries:
            sink.report(
                MISSING_CALL_INPUT,
                f"the call leaves out '{decl.name}', which '{child.name}' requires",
                edge.span,
                labels=[Label(decl.span, "required here")] if decl.span else (),
                help=f"add it under inputs: {decl.name}: …",
            )
