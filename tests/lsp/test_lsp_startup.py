"""The language server's start on a library checked before: the whole-library check kept in
the check cache and given back while every fact it rests on holds; files read from the
cache's entries."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.helpers.lsp_session import session

from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.lsp import incremental, startup
from catalyst_dsl.project.check import check_project
from catalyst_dsl.project.config import load_project
from catalyst_dsl.project.library import Library

LOOSE = "name: loose\ndescription: loose\nowner: Engineer\nsteps:\n  - display: '{{ missing }}'\n"
CALLER = "name: caller\ndescription: caller\nowner: Engineer\nsteps:\n  - playbook: loose\n"


def _project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "loose.yaml").write_text(LOOSE, encoding="utf-8")
    (tmp_path / "playbooks" / "caller.yaml").write_text(CALLER, encoding="utf-8")
    return tmp_path


def _found(result) -> list[tuple[str, str, int]]:
    return sorted((d.code, Path(d.span.file).name, d.span.line) for d in result.diagnostics)


def test_a_whole_library_check_is_given_back_while_its_facts_hold(tmp_path: Path) -> None:
    root = _project(tmp_path)
    project = load_project(root, DiagnosticSink())
    cache = startup.disk_cache(project)
    files = sorted(str(p) for p in (root / "playbooks").glob("*.yaml"))
    loose = str(root / "playbooks" / "loose.yaml")
    assert startup.replayed(cache, project, files, {}) is None  # nothing kept yet

    compilations = incremental.Compilations()
    compilations.disk = cache
    buffers = {loose: LOOSE.encode()}  # open, as on disk
    compilations.buffers = buffers
    with startup.recording(cache, buffers) as facts:
        result = check_project(project, files, library=Library(project, files, builtin_catalog(), cache=compilations))
    startup.remember(cache, project, files, result, facts)
    assert ("C501", "loose.yaml", 5) in _found(result)

    assert _found(startup.replayed(cache, project, files, buffers)) == _found(result)
    # A buffer edited since (unlike its file): checked, not given back.
    assert startup.replayed(cache, project, files, {loose: LOOSE.replace("missing", "x").encode()}) is None
    # A file changed on disk: the same.
    (root / "playbooks" / "caller.yaml").write_text(CALLER + "  - display: more\n", encoding="utf-8")
    assert startup.replayed(cache, project, files, buffers) is None

    # The file not open was kept as an entry of the cache: a new session reads it.
    again = incremental.Compilations()
    again.disk = cache
    (root / "playbooks" / "caller.yaml").write_text(CALLER, encoding="utf-8")
    hits = cache.hits
    again.compiled(str(root / "playbooks" / "caller.yaml"), builtin_catalog())
    assert cache.hits == hits + 1


def test_no_record_is_kept_while_a_buffer_differs_from_its_file(tmp_path: Path) -> None:
    root = _project(tmp_path)
    project = load_project(root, DiagnosticSink())
    cache = startup.disk_cache(project)
    with startup.recording(cache, {str(root / "playbooks" / "loose.yaml"): b"name: other\n"}) as facts:
        assert facts is None


async def _two_sessions(project: Path) -> list[list[tuple[str, int]]]:
    seen = []
    for _ in range(2):
        async with session(project) as editor:
            editor.open(project / "playbooks" / "caller.yaml")
            loose = (project / "playbooks" / "loose.yaml").as_uri()
            found = await editor.until(loose, lambda ds: len(ds) > 0)
            seen.append([(d.code, d.range.start.line) for d in found])
            # The session after a replay still checks edits incrementally.
            editor.change((project / "playbooks" / "caller.yaml").as_uri(), CALLER.replace("loose", "lose"))
            await editor.until((project / "playbooks" / "caller.yaml").as_uri(), lambda ds: len(ds) > 0)
    return seen


def test_a_second_session_gives_the_same_findings(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first, second = asyncio.run(_two_sessions(project))
    assert first == second == [("C501", 4)]
    assert any((project / ".xe" / "cache").iterdir())  # the entries and the record, in the project
