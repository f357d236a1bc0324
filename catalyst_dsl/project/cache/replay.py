"""A library check answered whole from the check cache: the findings of a check, kept with
every fact they depend on, given back while each fact still holds.

The per-file entries of the `store` spare the parsing, but a check that reads them still
rebuilds every file's IR and runs the library checks on it. Here, after a check, one more
entry keeps what `catalyst check` prints from: the files checked, the findings (before the
suppressions and rules of the settings, which are applied again) and the facts the check
looked at (`observed`: each file's bytes by digest, the playbook folders' listing, the
files probed for, the programs on PATH, what the plugins say about names not built in).
The next check of the same files from the same place, with the same settings and the same
build of catalyst, asks each question again; only when every answer is unchanged are the
findings given back, without loading the compiler. One changed byte, a new playbook in a
folder, a program installed: the library is checked again.

The entry's name covers the build (the cache's fingerprint), the working directory
(findings name folders relative to it), the project with its settings and the files asked
for. It is sealed and written like every entry of the cache; one that does not decode
into exactly this shape is ignored, never trusted.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable

from catalyst_dsl._internal.reading import read_file
from catalyst_dsl.diagnostics.model import Diagnostic, DiagnosticSink, Label
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.project import observed
from catalyst_dsl.project.config import Project, settings_source
from catalyst_dsl.project.discovery import MAX_FILE_BYTES, discover_folders
from catalyst_dsl.syntax.decoding import decode
from catalyst_dsl.syntax.source import SourceFile, Span

if TYPE_CHECKING:  # the store (with its digests and json) is imported only by a check that keeps a cache
    from catalyst_dsl.project.cache.store import CheckCache

#: Changes whenever the layout of a record, or what a check covers, does (2: the calls
#: into the files checked from the library's other files).
FORMAT = 2
#: What a damaged or foreign record raises while it is read (codec.CacheEntryError is a ValueError).
_BROKEN = (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, UnicodeError)


class Replayed:
    """What `catalyst check` prints from, as `project.check.LibraryCheck` gives it."""

    def __init__(self, files: list[str], diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> None:
        self.files = files
        self.diagnostics = diagnostics
        self.sources = sources


def check(
    project: Project, files: list[str], scanned: frozenset[str], settings: list[Diagnostic], cache: CheckCache | None
):
    """`catalyst check`'s findings: replayed when the cache holds them and nothing they
    depend on changed, else found by checking (and then kept for next time)."""
    if cache is not None:
        replayed = replay(cache, project, files, scanned, settings)
        if replayed is not None:
            return replayed
    from catalyst_dsl.project.check import check_project  # the compiler: not loaded by a replay

    from catalyst_dsl.project import shards

    def checked():
        split = shards.check_split(project, files, settings=settings, scanned=scanned, use_cache=cache is not None)
        if split is not None:
            return split
        return check_project(project, files, settings=settings, scanned=scanned, cache=cache, callers=True)

    if cache is None:  # nothing to keep: no fact is noted (nor a file hashed)
        result = checked()
    else:
        with observed.recording() as facts:
            result = checked()
        remember(cache, project, files, scanned, settings, result, facts)
    shards.finish(result)  # the shares' cache entries written
    return result


def record_name(cache: CheckCache, project: Project, files: Iterable[str], scanned: Iterable[str]) -> str:
    text = "\0".join([f"check {FORMAT}", os.getcwd(), repr(project), "\1".join(files), "\1".join(sorted(scanned))])
    return cache.entry_name(text.encode("utf-8", "surrogatepass"))


def replay(
    cache: CheckCache, project: Project, files: list[str], scanned: frozenset[str], settings: list[Diagnostic]
) -> Replayed | None:
    """The findings kept for this check when every fact they depend on still holds, else None."""
    body = cache.read_sealed(record_name(cache, project, files, scanned))
    if body is None:
        return None
    import json

    try:
        return _replayed(json.loads(body), settings, project, cache)
    except _BROKEN:
        return None  # damaged or foreign: checked again, and the record replaced


def remember(
    cache: CheckCache,
    project: Project,
    files: list[str],
    scanned: frozenset[str],
    settings: list[Diagnostic],
    result,
    facts: dict[tuple[str, str], object],
) -> None:
    """Keep `result` (a `LibraryCheck` or a `shards.SplitCheck`, made while
    `observed.recording()` filled `facts`)."""
    import json

    kept = []
    for (kind, question), answer in facts.items():
        if kind == "plugin":
            answer = cache.plugin_digest(result.catalog, question)
        kept.append([kind, question, answer])
    sources = sorted(
        {
            *result.compiled_sources,
            *result.other_sources,
        }
    )
    found = result.diagnostics[len(settings) :]  # the settings' own are found again when they are read
    record = {
        "format": FORMAT,
        "files": result.files,
        "sources": sources,
        "facts": kept,
        "diagnostics": [_diagnostic(d) for d in found],
    }
    try:
        body = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, UnicodeEncodeError):
        return  # something this format does not hold: the next check runs in full
    cache.write_sealed(record_name(cache, project, files, scanned), body)


# -- giving a record back ----------------------------------------------------------------


def _refused(why: str) -> Exception:
    """The error a record that does not decode raises (imported here, not at the top: a
    check without a cache never loads the cache's codec)."""
    from catalyst_dsl.project.cache.codec import CacheEntryError

    return CacheEntryError(why)


def _replayed(record, settings: list[Diagnostic], project: Project, cache: CheckCache) -> Replayed | None:
    if (
        type(record) is not dict
        or record.get("format") != FORMAT
        or set(record) != {"format", "files", "sources", "facts", "diagnostics"}
    ):
        raise _refused("a record of another shape")
    read: dict[str, bytes | None] = {}
    for fact in _list(record["facts"]):
        if type(fact) is not list or len(fact) != 3 or type(fact[0]) is not str or type(fact[1]) is not str:
            raise _refused("a fact is [kind, question, answer]")
        if not _holds(*fact, read, cache):
            return None
    sources: dict[str, SourceFile] = {}
    for path in _list(record["sources"]):
        data = read.get(_text(path))
        source = None if data is None else decode(data, path, DiagnosticSink())
        if source is None:
            raise _refused("a source the check read")
        sources[path] = source
    shown = settings_source(project)
    if shown is not None:
        sources[shown.path] = shown
    files = [_text(f) for f in _list(record["files"])]
    return Replayed(files, [*settings, *(_finding(d) for d in _list(record["diagnostics"]))], sources)


def _holds(kind: str, question: str, answer, read: dict[str, bytes | None], cache: CheckCache | None = None) -> bool:
    """Whether asking `question` again gives `answer` (`cache`: where the names the
    installed plugins declare may be kept)."""
    if kind == "bytes":
        try:
            data = read_file(question, MAX_FILE_BYTES + 1)[0]
        except OSError:
            data = None
        if data is not None and len(data) > MAX_FILE_BYTES:
            return False  # its finding (C015) gives a size that only the file system knows
        read[question] = data
        return observed.digest(data) == answer
    if kind == "is-file":
        return os.path.isfile(question) == answer
    if kind == "which":
        import shutil

        return shutil.which(question) == answer
    if kind == "resolved":
        return observed.resolved(question) == answer
    if kind == "listdir":
        return observed.listdir(question) == answer
    if kind == "listing":
        return discover_folders(question.split("\0") if question else []) == answer
    if kind == "shellcheck":
        from catalyst_dsl.project.shellcheck import installed_version

        return installed_version() == answer
    if kind == "plugin":
        from catalyst_dsl.actions.installed import builtin_catalog
        from catalyst_dsl.project.cache.facts import _plugin_digest

        catalog = builtin_catalog()
        return (
            cache.plugin_digest(catalog, question) if cache is not None else _plugin_digest(catalog, question)
        ) == answer
    raise _refused(f"an unknown fact {kind!r}")


# -- findings as JSON ------------------------------------------------------------------------


def _diagnostic(d: Diagnostic) -> list:
    return [
        d.code,
        d.severity.value,
        d.message,
        _span(d.span),
        [[_span(label.span), label.message] for label in d.labels],
        list(d.notes),
        d.help,
    ]


def _span(span: Span | None) -> list | None:
    return None if span is None else [span.file, span.line, span.col, span.end_line, span.end_col]


def _finding(value) -> Diagnostic:
    if type(value) is not list or len(value) != 7:
        raise _refused("a finding has seven fields")
    code, severity, message, span, labels, notes, help_ = value
    from catalyst_dsl.diagnostics.codes import (
        CODES,
    )  # loaded here only when a finding is given back: printing it looks its name up

    if _text(code) not in CODES:
        raise _refused("a finding's code is one of the table")
    return Diagnostic(
        code=code,
        severity=Severity(severity),
        message=_text(message),
        span=_position(span),
        labels=tuple(_label(label) for label in _list(labels)),
        notes=tuple(_text(n) for n in _list(notes)),
        help=None if help_ is None else _text(help_),
    )


def _label(value) -> Label:
    if type(value) is not list or len(value) != 2 or value[0] is None:
        raise _refused("a label is a span and a message")
    return Label(_position(value[0]), _text(value[1]))


def _position(value) -> Span | None:
    if value is None:
        return None
    if (
        type(value) is not list
        or len(value) != 5
        or type(value[0]) is not str
        or any(type(n) is not int or n < 0 for n in value[1:])
    ):
        raise _refused("a span is a file and four whole numbers")
    return Span(*value)


def _list(value) -> list:
    if type(value) is not list:
        raise _refused("a list was expected")
    return value


def _text(value) -> str:
    if type(value) is not str:
        raise _refused("text was expected")
    return value
