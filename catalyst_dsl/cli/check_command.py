"""What `catalyst check` does once its options are read (main.py declares them): find the
files, check them, fix what `--fix` may fix, and print the findings in the chosen format,
to standard output or `--output-file`. `--watch` (watch.py) calls it again on each change."""

from __future__ import annotations

import os
import sys

import click

from catalyst_dsl._internal.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:  # fixing loads the compiler, which a check answered from the cache never needs
    from catalyst_dsl.cli import fixing


@record
class CheckOptions:
    paths: tuple[str, ...]
    fmt: str
    strict: bool = False
    quiet: bool = False
    no_cache: bool = False
    #: Replaces the settings' `select` when given (codes or prefixes).
    select: tuple[str, ...] | None = None
    #: Added to the settings' `ignore`.
    ignore: tuple[str, ...] = ()
    output_file: str | None = None
    statistics: bool = False
    #: The kinds of fixes to make ("safe", "unsafe", "suppression": fixing.SAFE…); none: only check.
    fixes: frozenset[str] = frozenset()
    #: Show the fixes as a diff instead of writing them.
    diff: bool = False


def run_check(options: CheckOptions) -> tuple[int, list[str]]:
    """Check (and fix) once; the exit status (0 clean, 1 findings that fail) and the files
    the check read, which a watch looks at for changes."""
    from catalyst_dsl.diagnostics.severity import Severity

    project, settings, files, scanned = project_files(options.paths)
    _not_a_playbook(options.output_file, files)
    cache = check_cache(project, options.no_cache)
    failing = {Severity.ERROR, Severity.WARNING} if options.strict else {Severity.ERROR}
    here = os.getcwd()
    if options.fixes:
        from catalyst_dsl.cli import fixing

        check = _checker(project, files, scanned, settings, cache, options)
        outcome = fixing.fix_project(check, files, set(options.fixes), str(project.root))
        notes = _fix_notes(outcome, options, here)
        if options.diff:  # the files stay as they are, and so does the check's result
            before = outcome.first
            click.echo(_diff(outcome.texts, before.sources, here) + "\n".join(notes), nl=True)
            return _status(before.diagnostics, failing), sorted({*files, *before.sources})
        changed = []
        for path, text in outcome.texts.items():
            try:
                fixing.write(path, text, outcome.originals.get(path))
            except fixing.ChangedMeanwhile:
                changed.append(path)
        if changed:  # what the fixes found no longer holds: nothing of those files is reported as fixed
            from catalyst_dsl._internal.terminal_text import safe_text
            from catalyst_dsl.diagnostics.text import display_path

            for path in changed:
                click.echo(
                    safe_text(
                        f"error: {display_path(path, here)} changed while it was being fixed: its fixes were not "
                        "written, so the change is kept; run the command again"
                    ),
                    err=True,
                )
            sys.exit(1)
        final = outcome.checked
        diagnostics, sources, checked_files = final.diagnostics, final.sources, final.files
    else:
        from catalyst_dsl.project.cache import replay
        from catalyst_dsl.project.rules import reported_for_files

        notes = []
        result = replay.check(project, files, scanned, settings, cache)
        sources, checked_files = result.sources, result.files
        diagnostics = reported_for_files(
            result.diagnostics, sources, checked_files, project.config, options.select, options.ignore
        )
    shown = [d for d in diagnostics if d.severity in failing] if options.quiet else diagnostics
    to_file = options.output_file is not None
    # What was fixed goes where people read: beside the text report, or on standard error
    # when standard output is JSON or SARIF for a program.
    notes_to_stderr = options.fmt in ("json", "sarif") and not to_file
    for line in notes[:-1]:
        click.echo(line, err=notes_to_stderr)
    report = _report(options, shown, diagnostics, sources, checked_files, here, colour=not to_file, root=project.root)
    if to_file:
        _not_a_playbook(options.output_file, [*files, *sources])  # a playbook the check read
        with open(options.output_file, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(report)
    else:
        click.echo(report, nl=False, color=_colour() if options.fmt == "text" else None)
    if notes:
        click.echo(notes[-1], err=notes_to_stderr)
    return _status(diagnostics, failing), sorted({*files, *sources})


def _not_a_playbook(output_file: str | None, files) -> None:
    from catalyst_dsl.cli.outputs import refuse_nowhere, refuse_replacing

    refuse_nowhere(output_file, "'--output-file'")
    refuse_replacing(output_file, files, "'--output-file'", "the report", "this check reads")


def _status(diagnostics, failing) -> int:
    return 1 if any(d.severity in failing for d in diagnostics) else 0


def _report(options: CheckOptions, shown, diagnostics, sources, files, here: str, colour: bool, root) -> str:
    from catalyst_dsl.diagnostics.text import render_text, summary_line

    if options.fmt in ("sarif", "github"):
        from catalyst_dsl.project.config import repository_root

        # A code-scanning service names files from the repository's root, wherever in it
        # the check ran (the Action's `working-directory`).
        scanning_root = str(repository_root(root) or here)

    if options.fmt == "json":
        from catalyst_dsl.report.diagnostics import render_json

        return render_json(shown, files, relative_to=here, counted=diagnostics)
    if options.fmt == "sarif":
        from catalyst_dsl.report.sarif import render_sarif

        return render_sarif(shown, sources, relative_to=scanning_root)
    body = ""
    if options.statistics:
        body = statistics(shown)
    elif options.fmt == "github":
        from catalyst_dsl.report.github import render_github

        body = render_github(shown, relative_to=scanning_root)
    elif shown:
        body = render_text(shown, sources, relative_to=here, colour=colour and _colour()) + "\n"
    return body + summary_line(diagnostics, len(files)) + "\n"


def statistics(diagnostics) -> str:
    """How many findings of each code, most first: count, code, name and severity."""
    from collections import Counter

    from catalyst_dsl.diagnostics.codes import CODES

    counts = Counter(d.code for d in diagnostics)
    severities = {d.code: d.severity.value for d in diagnostics}
    width = len(str(max(counts.values()))) if counts else 1
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(f"{count:>{width}}  {code}  {CODES[code].name} ({severities[code]})\n" for code, count in rows)


def _colour() -> bool:
    from catalyst_dsl._internal.terminal_text import is_terminal
    from catalyst_dsl.diagnostics.text import wants_colour

    return wants_colour(is_terminal(sys.stdout), os.environ)


def _checker(project, files, scanned, settings, cache, options: CheckOptions):
    """A check of the project with some texts in place of the files' (fixing.fix_project)."""
    from catalyst_dsl.cli import fixing
    from catalyst_dsl.project.check import check_project
    from catalyst_dsl.project.rules import reported_for_files

    def check(overlay: dict[str, str]) -> fixing.Checked:
        result = check_project(
            project,
            files,
            settings=settings,
            scanned=scanned,
            # The bytes the file would hold, byte-order mark and line ends kept: what the
            # check of the written file reports (C003 for the mark) is what this reports.
            overlay={path: fixing.encoded(path, text) for path, text in overlay.items()},
            cache=cache,
        )
        sources = result.sources
        diagnostics = reported_for_files(
            result.diagnostics, sources, result.files, project.config, options.select, options.ignore
        )
        narrowed = options.select is not None or bool(options.ignore)
        everything = reported_for_files(result.diagnostics, sources, result.files, project.config) if narrowed else None

        def playbook(path: str):
            return result.library.compiled(path).playbook

        return fixing.Checked(diagnostics, sources, playbook, result.files, everything)

    return check


def _fix_notes(outcome: fixing.Outcome, options: CheckOptions, here: str) -> list[str]:
    """A line per fix made (or refused, or file left alone), then the count: "Fixed 3
    findings (2 remaining)." The last line is the count."""
    from catalyst_dsl.cli import fixing
    from catalyst_dsl._internal.terminal_text import safe_text
    from catalyst_dsl.diagnostics.text import display_path

    lines = []
    for fix in sorted(outcome.applied, key=lambda f: (f.path, f.line, f.col)):
        where = f"{display_path(fix.path, here)}:{fix.line}:{fix.col}"
        silences = fix.kind == fixing.SUPPRESSION
        verb = ("would silence" if silences else "would fix") if options.diff else ("silenced" if silences else "fixed")
        lines.append(safe_text(f"{verb} {where} {fix.code}: {fix.title}"))
    for fix, codes in outcome.refused:
        where = f"{display_path(fix.path, here)}:{fix.line}:{fix.col}"
        lines.append(
            safe_text(
                f"not fixed {where} {fix.code}: the fix ({fix.title}) would add {', '.join(codes)}; fix it by hand"
            )
        )
    for path, reason in outcome.skipped:
        lines.append(safe_text(f"not fixed {display_path(path, here)}: {reason}"))
    remaining = len(outcome.checked.diagnostics)
    silenced = sum(1 for f in outcome.applied if f.kind == fixing.SUPPRESSION)
    fixed = len(outcome.applied) - silenced
    done = [("Would fix" if options.diff else "Fixed", fixed)] if fixed or not silenced else []
    done += [("Would silence" if options.diff else "Silenced", silenced)] if silenced else []
    counts = " and ".join(
        f"{verb if i == 0 else verb.lower()} {count} finding{'' if count == 1 else 's'}"
        for i, (verb, count) in enumerate(done)
    )
    lines.append(f"{counts} ({remaining} remaining).")
    hidden = 0 if fixing.UNSAFE in options.fixes else _unsafe_left(outcome)
    if hidden:
        lines[-1] += f" {hidden} more with --unsafe-fixes."
    if outcome.unfinished:
        lines[-1] += f" Stopped after {fixing.MAX_PASSES} passes: run it again to fix more."
    return lines


def _unsafe_left(outcome: fixing.Outcome) -> int:
    from catalyst_dsl.cli import fixing

    checked = outcome.checked
    count = 0
    for d in checked.diagnostics:
        source = checked.sources.get(d.span.file) if d.span is not None else None
        if source is not None and d.span.file.endswith((".yaml", ".yml", ".md")):
            count += sum(1 for f in fixing.fixes_for(d, source, None) if f.kind == fixing.UNSAFE)
    return count


def _diff(texts: dict[str, str], sources, here: str) -> str:
    """The fixes as a unified diff of each changed file (a/ and b/ paths, as git prints)."""
    from catalyst_dsl.diagnostics.text import display_path

    from catalyst_dsl._internal.line_diff import unified_text
    from catalyst_dsl._internal.terminal_text import safe_text

    out = []
    for path in sorted(texts):
        # A line break in a file name would start a line of its own (a workflow command
        # on GitHub): the name is written with its escapes, as everywhere else.
        name = safe_text(display_path(path, here))
        out.append(unified_text(sources[path].text, texts[path], f"a/{name}", f"b/{name}"))
    return "\n".join(safe_text(line) for line in "".join(out).split("\n"))


def project_files(paths: tuple[str, ...]):
    """The project around the first PATH (or here), its settings findings, the files, and
    which of them a directory scan found (rather than being named)."""
    from pathlib import Path

    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import load_project
    from catalyst_dsl.project.discovery import discover
    from catalyst_dsl.project.scan import ScanFilter

    sink = DiagnosticSink()
    project = load_project(Path(paths[0]) if paths else Path.cwd(), sink)
    targets = list(paths) or [
        str(project.resolve(d)) for d in project.config.playbook_dirs if project.resolve(d).is_dir()
    ]
    if not targets:
        dirs = ", ".join(f"{d}/" for d in project.config.playbook_dirs)
        raise click.UsageError(f"no PATH given and no playbook directory ({dirs}) in the project at {project.root}")
    scan = ScanFilter(project)
    found = discover(targets, scan.skipped)
    if not found:
        raise click.UsageError(f"no playbooks (*.yaml, *.yml, *.md) under {', '.join(targets)}")
    # A file named on the command line is still subject to `exclude` (a pre-commit hook
    # names every changed file); with everything excluded there is nothing to check.
    files = [f for f in found if not scan.excluded(f)]
    named = {os.path.abspath(p) for p in targets if not os.path.isdir(p)}
    scanned = frozenset(f for f in files if os.path.abspath(f) not in named)
    return project, sink.sorted(), files, scanned


def check_cache(project, no_cache: bool):
    """The project's check cache, unless `--no-cache` or the `check-cache` setting says no."""
    if no_cache:
        return None
    from catalyst_dsl.project.cache.store import CheckCache

    return CheckCache.for_project(project)
