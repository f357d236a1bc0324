"""What `catalyst check` reports: the findings after suppressions and the rule settings.

Comments in the files silence findings first (diagnostics/suppressions.py); then the
project's `severity`, `select` and `ignore` settings apply. A run's pre-flight does not
pass through here: a silenced error still stops a run.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from catalyst_dsl.diagnostics.ids import (
    BAD_SETTINGS,
    CALL_INPUT_TYPE,
    MISSING_CALL_INPUT,
    SHELLCHECK_UNAVAILABLE,
    UNKNOWN_CALL_INPUT,
    UNKNOWN_SUPPRESSION_CODE,
    UNUSED_SUPPRESSION,
)
from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.selection import is_selected
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.diagnostics.suppressions import apply_suppressions
from catalyst_dsl.project.config import ProjectConfig
from catalyst_dsl._internal.records import replace
from catalyst_dsl.syntax.source import SourceFile


def reported(
    diagnostics: Sequence[Diagnostic],
    sources: Iterable[SourceFile],
    config: ProjectConfig,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> list[Diagnostic]:
    """The findings to show for files whose texts are `sources`. `select` (when given)
    takes the place of the settings' `select`; `ignore` adds to the settings' `ignore`:
    what `catalyst check --select/--ignore` say."""
    # Without ShellCheck (turned off, missing or failing: C648) its findings are unknown,
    # and so is whether a comment silencing one is used.
    shellcheck_ran = config.shellcheck != "off" and not any(d.code == SHELLCHECK_UNAVAILABLE for d in diagnostics)
    kept = apply_suppressions(diagnostics, sources, shellcheck_ran)
    chosen = config.select if select is None else tuple(select)
    dropped = (*config.ignore, *ignore)
    return [_with_severity(d, config) for d in kept if _selected(d.code, chosen, dropped)]


def reported_for_files(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    files: Sequence[str],
    config: ProjectConfig,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> list[Diagnostic]:
    """The findings `catalyst check` of `files` shows. A call into them from a file not
    checked (checks/rules/calls.check_callers) is silenced by that caller's comments too;
    the caller's other comments are its own business, reported when it is checked.
    `select`, `ignore`: as for `reported`."""
    checked = set(files)
    callers = {
        d.span.file
        for d in diagnostics
        if d.code in (MISSING_CALL_INPUT, UNKNOWN_CALL_INPUT, CALL_INPUT_TYPE)
        and d.span is not None
        and d.span.file not in checked
        and d.span.file in sources
    }
    read = [sources[f] for f in [*files, *sorted(callers)] if f in sources]
    kept = reported(diagnostics, read, config, select, ignore)
    about_comments = (UNUSED_SUPPRESSION, UNKNOWN_SUPPRESSION_CODE)
    return [d for d in kept if not (d.code in about_comments and d.span is not None and d.span.file in callers)]


def _selected(code: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    # Bad settings are always shown: ignoring C801 would hide why the other settings
    # do not do what their author thinks.
    return code == BAD_SETTINGS or is_selected(code, select, ignore)


def _with_severity(d: Diagnostic, config: ProjectConfig) -> Diagnostic:
    level = config.severity.get(d.code)
    return d if level is None else replace(d, severity=Severity(level))
