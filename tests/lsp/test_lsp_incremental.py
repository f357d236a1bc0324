"""The language server's incremental library check: what a change touches, and the same
findings as a whole-library check for the files it re-checks."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import session

from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.lsp import incremental
from catalyst_dsl.project.check import check_project
from catalyst_dsl.project.config import load_project
from catalyst_dsl.project.library import Library


def _playbook(name: str, *steps: str, inputs: str = "", writes: str = "") -> str:
    head = f"name: {name}\ndescription: {name}\nowner: Engineer\n" + writes
    return head + (f"inputs:\n{inputs}" if inputs else "") + "steps:\n" + "".join(steps)


RELEASE = _playbook(
    "release", "  - playbook: publish\n    inheritPermissions: true\n    inputs:\n      version: '1.0'\n"
)
NIGHTLY = _playbook("nightly", "  - playbook: release\n    inheritPermissions: true\n")
PUBLISH = _playbook("publish", "  - display: '{{ version }}'\n", inputs="  - string: version\n")
LOOSE = _playbook("loose", "  - display: '{{ missing }}'\n")


def _project(tmp_path: Path) -> Path:
    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    for name, text in (("release", RELEASE), ("nightly", NIGHTLY), ("publish", PUBLISH), ("loose", LOOSE)):
        (tmp_path / "playbooks" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return tmp_path


class _Checker:
    """What the server does on each library check, without the protocol."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.compilations = incremental.Compilations()
        self.last: incremental.Snapshot | None = None

    def check(self) -> tuple[set[str], dict[str, list]]:
        project = load_project(self.root, DiagnosticSink())
        files = sorted(str(p) for p in (self.root / "playbooks").glob("*.yaml"))
        library = Library(project, files, builtin_catalog(), cache=self.compilations)
        now = incremental.snapshot(library, project.config)
        checked = incremental.to_check(now, self.last, self.compilations.take_changed())
        self.last = now
        result = check_project(project, sorted(checked), library=library)
        return {Path(p).stem for p in checked}, _by_file(result.diagnostics, checked)


def _by_file(diagnostics, files) -> dict[str, list]:
    return {
        Path(f).stem: sorted(
            (d.code, d.message, d.span.line, d.span.col) for d in diagnostics if d.span is not None and d.span.file == f
        )
        for f in files
    }


def _whole(root: Path) -> dict[str, list]:
    files = sorted(str(p) for p in (root / "playbooks").glob("*.yaml"))
    return _by_file(check_project(load_project(root, DiagnosticSink()), files).diagnostics, files)


def test_a_change_rechecks_the_file_its_callees_and_all_its_callers(tmp_path: Path) -> None:
    root = _project(tmp_path)
    checker = _Checker(root)
    checked, found = checker.check()
    assert checked == {"release", "nightly", "publish", "loose"}  # the first check: everything
    assert checker.check()[0] == set()  # nothing changed

    def edit(name: str, text: str) -> tuple[set[str], dict[str, list]]:
        (root / "playbooks" / f"{name}.yaml").write_text(text, encoding="utf-8")
        checked, found = checker.check()
        whole = _whole(root)
        assert found == {stem: whole[stem] for stem in found}, "an incremental check must find what a whole check finds"
        return checked, found

    # The called playbook drops its input: its callers, through any number of calls, are
    # re-checked (release now passes an unknown input); the unrelated file is not.
    checked, found = edit("publish", _playbook("publish", "  - display: done\n"))
    assert checked == {"publish", "release", "nightly"}
    assert [code for code, *_ in found["release"]] == ["C806"]
    # A caller changes: it and what it calls; not its own callers' callers' callees.
    checked, _ = edit("nightly", NIGHTLY.replace("description: nightly", "description: the nightly build"))
    assert checked == {"nightly", "release"}
    # The called playbook now writes: permissions flow up to every caller.
    checked, found = edit(
        "publish",
        _playbook(
            "publish", "  - file-write: out/notes.md\n    content: x\n", writes="allowedWritePaths: ['out/**']\n"
        ),
    )
    assert checked == {"publish", "release", "nightly"}
    # A cycle made by an edit is found from each file on it, and goes with the edit.
    checked, found = edit("publish", PUBLISH + "  - playbook: nightly\n    inheritPermissions: true\n")
    assert checked == {"publish", "release", "nightly"}
    assert any(code == "C809" for stem in found for code, *_ in found[stem])
    checked, found = edit("publish", PUBLISH)
    assert not any(code == "C809" for stem in found for code, *_ in found[stem])
    # A renamed playbook, a new file: the whole library.
    assert edit("publish", PUBLISH.replace("name: publish", "name: published"))[0] == {
        "release",
        "nightly",
        "publish",
        "loose",
    }
    assert edit("extra", _playbook("extra", "  - display: hi\n"))[0] == {
        "release",
        "nightly",
        "publish",
        "loose",
        "extra",
    }


async def _session(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "playbooks" / "publish.yaml")
        release = (project / "playbooks" / "release.yaml").as_uri()
        loose = (project / "playbooks" / "loose.yaml").as_uri()
        # The first check: every file, each with its own findings as it is compiled (loose's
        # C501), then with the library's.
        await editor.until(loose, lambda ds: [d.code for d in ds] == ["C501"])
        await editor.until(loose, lambda ds: editor.publications[loose] == 2)
        before = editor.publications[loose]

        # Dropping the input in the open buffer: release, not open, gets its finding.
        editor.change(uri, _playbook("publish", "  - display: done\n"))
        await editor.until(release, lambda ds: [d.code for d in ds] == ["C806"])
        assert editor.publications[loose] == before, "a file the change does not touch is not checked again"
        editor.change(uri, PUBLISH)
        await editor.until(release, lambda ds: len(ds) == 0)


def test_the_server_rechecks_what_an_edit_touches(tmp_path: Path) -> None:
    asyncio.run(_session(_project(tmp_path)))


async def _watching(project: Path) -> None:
    watching = lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
        )
    )
    async with session(project, watching) as editor:
        editor.open(project / "playbooks" / "publish.yaml")
        loose = project / "playbooks" / "loose.yaml"
        await editor.until(loose.as_uri(), lambda ds: [d.code for d in ds] == ["C501"])
        [registration] = editor.registrations
        assert registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES

        # A file not open is fixed outside the editor (a pull, another tool): when the editor
        # says so, the library is checked again and the finding goes.
        loose.write_text(LOOSE.replace("{{ missing }}", "fixed"), encoding="utf-8")
        editor.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(
                changes=[lsp.FileEvent(uri=loose.as_uri(), type=lsp.FileChangeType.Changed)]
            )
        )
        await editor.until(loose.as_uri(), lambda ds: len(ds) == 0)


def test_files_changed_outside_the_editor_are_checked_again(tmp_path: Path) -> None:
    asyncio.run(_watching(_project(tmp_path)))


def test_a_change_recorded_while_another_thread_takes_the_changes_is_not_lost():
    # The edit worker records a compilation while the library check takes the changed
    # set. Here the taking thread is let in at the worst moment: between the recorder's
    # look at the changed set and its adding to it.
    import threading

    from catalyst_dsl.lsp.incremental import Compilations

    kept = Compilations()
    taken: list[set[str]] = []

    class Interrupted(set):
        taker: threading.Thread

        def add(self, path):
            # The check reads what it took at once: a copy stands for that reading.
            self.taker = threading.Thread(target=lambda: taken.append(set(kept.take_changed())))
            self.taker.start()
            self.taker.join(timeout=0.3)  # with the set guarded, the taker waits for this add
            super().add(path)

    interrupted = Interrupted()
    kept._changed = interrupted
    kept.keep("/w/a.yaml", b"x", None)
    interrupted.taker.join(timeout=5)
    taken.append(kept.take_changed())
    assert set().union(*taken) == {"/w/a.yaml"}


def test_a_file_kept_as_a_check_saw_it_is_no_change_since_that_check():
    # A split first check compiles in other processes; this one loads their files after
    # it. Those loads are not changes, unless the text differs from what the check saw
    # (the file changed on disk, or its buffer was edited, meanwhile).
    from catalyst_dsl.compiler import Compiled
    from catalyst_dsl.lsp.incremental import Compilations
    from catalyst_dsl.syntax.source import SourceFile

    def compiled(path: str, text: str) -> Compiled:
        return Compiled(path, SourceFile(path, text), None, [])

    kept = Compilations()
    kept.keep("/w/a.yaml", b"a", compiled("/w/a.yaml", "a"))
    kept.keep("/w/b.yaml", b"b2", compiled("/w/b.yaml", "b2"))
    kept.keep("/w/c.yaml", b"c", compiled("/w/c.yaml", "c"))
    seen = {"/w/a.yaml": SourceFile("/w/a.yaml", "a"), "/w/b.yaml": SourceFile("/w/b.yaml", "b1")}
    kept.settle(seen)
    assert kept.take_changed() == {"/w/b.yaml", "/w/c.yaml"}


def test_a_change_after_a_line_separator_lands_where_the_editor_made_it(tmp_path: Path) -> None:
    # U+2028 is no line break to LSP or an editor; pygls's own documents broke lines there,
    # and a change to the line after it was applied one line too low.
    from catalyst_dsl.lsp.documents import Document

    (tmp_path / "catalyst.toml").write_text("", encoding="utf-8")
    (tmp_path / "playbooks").mkdir()
    path = tmp_path / "playbooks" / "greet.yaml"
    text = (
        'name: greet\ndescription: "a\u2028b"\nowner: Engineer\ninputs:\n  - string: other\n'
        "steps:\n  - display: '{{ topic }}'\n"
    )
    path.write_text(text, encoding="utf-8")
    assert Document(path.as_uri(), source=text).lines[6] == "  - display: '{{ topic }}'\n"

    async def run() -> list[str]:
        async with session(tmp_path) as editor:
            uri = editor.open(path)
            await editor.until(uri, lambda ds: [d.code for d in ds] == ["C501"])
            editor.versions[uri] = 2
            where = lsp.Range(start=lsp.Position(line=6, character=17), end=lsp.Position(line=6, character=22))
            editor.client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
                    content_changes=[lsp.TextDocumentContentChangePartial(range=where, text="other")],
                )
            )
            return [d.message for d in await editor.settled(uri)]

    assert asyncio.run(run()) == []
