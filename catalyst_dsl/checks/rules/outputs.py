"""Declared outputs that no `return` sets, returned values nobody declared, artifacts
of code that no `test` step tests, and artifacts that name no path."""

from __future__ import annotations

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.control.return_ import playbook_returns
from catalyst_dsl.diagnostics.ids import BAD_PATH, OUTPUT_NEVER_SET, UNDECLARED_RETURN, UNTESTED_CODE_ARTIFACTS
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


#: What makes an artifact code or a test: its extension (source files of the common
#: languages; documents, data and configuration are not code).
CODE_EXTENSIONS = frozenset(
    ".py .pyi .js .jsx .mjs .cjs .ts .tsx .go .rs .java .kt .kts .scala .rb .php .cs .fs .swift .c .h .cc .cpp "
    ".hpp .m .mm .ex .exs .erl .clj .dart .lua .sh .bash .zig".split()
)


def check_untested_code(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog | None = None) -> None:
    """Artifacts that are code want their tests run before the run calls itself done: a
    `test` step (which fails the run when tests fail or coverage falls short). A playbook
    that calls others is left alone: the test may be theirs, and a file's own rules do not
    see them."""
    code = [value for value in playbook.artifacts if _is_code(value)]
    if not code:
        return
    actions = {step.action for step in ir.all_steps(playbook)}
    if "test" in actions or "playbook" in actions:
        return
    first = code[0]
    shown = first.text if isinstance(first, ir.Tmpl) else str(getattr(first, "value", ""))
    sink.report(
        UNTESTED_CODE_ARTIFACTS,
        f"the artifact '{shown}' is code, but no `test` step runs its tests before the run ends",
        first.span,
        help="add a `test` step after the steps that write it (`- test: pytest -q` with `writes: []`), "
        "which fails the run when the tests fail",
    )


def check_artifact_paths(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog | None = None) -> None:
    """An artifact written as a path that names no file nor pattern in the project (`""`,
    `"."`, `/abs`, `../x`) fails its run only when the run ends (InvalidArtifact): said
    here, as the run would say it. A playbook with `allowedWritePaths` has its artifacts
    read among its grants, where the library's write check says the same (C812)."""
    if not playbook.artifacts or playbook.allowed_write_paths is not None:
        return
    literal = [v for v in playbook.artifacts if isinstance(v, ir.Lit) and isinstance(v.value, str)]
    if not literal:
        return
    # Imported here, as the run does: the glob machinery is for a playbook that lists artifacts.
    from catalyst_dsl.paths.globs import Glob, GlobError
    from catalyst_dsl.paths.protocols import literal_leaving_base, place

    for value in literal:
        path = place(value.value).path
        if path is None or literal_leaving_base(value.value):
            continue  # temp:// or catalyst://, which the run does not look for; `xe://../x` is C106
        try:
            Glob.compile(path)
        except GlobError as error:
            sink.report(
                BAD_PATH,
                f"the artifact '{value.value}' is not a file or a pattern in the project: {error.message}",
                value.span,
                help="list each artifact as a path or a glob relative to the project, e.g. out/report.md",
            )


def _is_code(value: ir.Value) -> bool:
    text = value.text if isinstance(value, ir.Tmpl) else getattr(value, "value", None)
    if not isinstance(text, str):
        return False
    name = text.rstrip("/").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in CODE_EXTENSIONS
