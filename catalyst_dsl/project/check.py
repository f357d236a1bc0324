"""`catalyst check` over a project: each file's own checks, then the library's.

The files asked for are compiled with everything they call; findings are reported for
the files asked for, and for every cycle that passes through one of them.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.checks.rules.calls import check_callers
from catalyst_dsl.checks.rules.library_rules import ADVICE_RULES, LIBRARY_RULES
from catalyst_dsl.compiler import collector_tuned_for_checking
from catalyst_dsl.diagnostics.model import Diagnostic, DiagnosticSink
from catalyst_dsl.project.config import Project, settings_source
from catalyst_dsl.project.library import Library, absolute
from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.syntax.source import SourceFile


class CheckedFiles:
    """What a check's result is read by, from its `project`, `diagnostics`,
    `compiled_sources` and `other_sources`: one process's (`LibraryCheck`) or a split
    check's (`shards.SplitCheck`)."""

    __slots__ = ()

    @property
    def sources(self) -> dict[str, SourceFile]:
        found = {**self.compiled_sources, **self.other_sources}
        settings = settings_source(self.project)
        if settings is not None:
            found[settings.path] = settings
        return found

    @property
    def has_errors(self) -> bool:
        return any(d.severity.value == "error" for d in self.diagnostics)


@record(frozen=False)
class LibraryCheck(CheckedFiles):
    library: Library
    files: list[str]
    diagnostics: list[Diagnostic]
    #: Files reported on that are not playbooks (kai's `_index.yaml`).
    other_sources: dict[str, SourceFile] = factory(dict)

    @property
    def project(self) -> Project:
        return self.library.project

    @property
    def catalog(self):
        return self.library.catalog

    @property
    def compiled_sources(self) -> dict[str, SourceFile]:
        """Every file compiled for the check that has a source, by path."""
        return {p: c.source for p, c in self.library.loaded().items() if c.source is not None}


def check_project(
    project: Project,
    files: list[str],
    catalog: Catalog | None = None,
    settings: list[Diagnostic] = (),
    scanned: frozenset[str] = frozenset(),
    overlay: dict[str, bytes] | None = None,
    cache=None,
    library: Library | None = None,
    callers: bool = False,
    advice: bool = True,
    rules: tuple | None = None,
    checked_elsewhere: frozenset[str] = frozenset(),
) -> LibraryCheck:
    """Check `files` with what they call. Files in `scanned` were found by a directory scan,
    not named: those that are ordinary YAML, not playbooks, are left out without a finding.
    `overlay`: text to check instead of files on disk (an editor's buffers). `cache`: a
    `check_cache.CheckCache` to read unchanged files' results from (and to keep new ones
    in); the findings are the same with it and without. `library`: one already loaded to
    check in (the language server keeps its library between checks), holding `files`.
    `callers`: also check the calls into `files` from the library's other playbooks (what a
    change to them breaks; `catalyst check`, not a run's pre-flight). `advice`: False for a
    run's own check, which leaves out the rules that advise on what its steps run
    (`ADVICE_RULES`: ShellCheck). `rules` and `checked_elsewhere`: a share of a check split
    across processes (`project.shards`) runs its own rules and loads no further than the
    files the other shares check."""
    scanned = frozenset(absolute(f) for f in scanned)
    files = [absolute(f) for f in files]
    library = library or Library(project, files, catalog, overlay, cache)
    files = [f for f in files if f not in scanned or not library.compiled(f).not_a_playbook]
    sink = DiagnosticSink()
    with collector_tuned_for_checking():
        library.load_closure(files, checked_elsewhere)
        for path in files:
            sink.extend(library.compiled(path).diagnostics)
        others: dict[str, SourceFile] = {}
        if rules is None:
            rules = (*LIBRARY_RULES, *ADVICE_RULES) if advice else LIBRARY_RULES
        for rule in rules:
            others.update(rule(library, files, sink) or {})
        if callers:
            check_callers(library, files, sink)
    return LibraryCheck(library, files, [*settings, *sink.sorted()], others)
