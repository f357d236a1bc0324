"""A whole-library check split across processes finds what one process finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalyst_dsl.cli.check_command import project_files
from catalyst_dsl.project import shards
from catalyst_dsl.project.check import check_project

LIBRARY = Path(__file__).parents[1] / "golden" / "library"
PROJECTS = sorted(p.name for p in LIBRARY.iterdir() if p.is_dir())


def _both(root: Path, monkeypatch: pytest.MonkeyPatch, **split_options):
    monkeypatch.chdir(root)
    project, settings, files, scanned = project_files(())
    whole = check_project(project, files, settings=settings, scanned=scanned, callers=True)
    split = shards.check_split(project, files, settings=settings, scanned=scanned, use_cache=False, **split_options)
    if split is not None:
        shards.finish(split)
    return whole, split


@pytest.mark.parametrize("name", PROJECTS)
def test_a_split_check_finds_what_one_process_finds(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every golden library project, each file a share of its own where it has several:
    the same files, the same findings, in the same order."""
    monkeypatch.setenv("CATALYST_SHELLCHECK", "no-shellcheck-here") if name.startswith("C648") else None
    whole, split = _both(LIBRARY / name, monkeypatch, jobs=8, min_share=1)
    if split is None:  # one file, or a file of the library the check leaves out (`exclude`)
        return
    assert sorted(split.files) == sorted(whole.files)
    assert split.diagnostics == whole.diagnostics
    assert {p: s.text for p, s in split.sources.items() if p in whole.files} == {
        p: s.text for p, s in whole.sources.items() if p in whole.files
    }


def _playbook(name: str, steps: str, extra: str = "") -> str:
    return f"name: {name}\ndescription: {name}\nowner: Engineer\n{extra}steps:\n{steps}"


def _library(root: Path, count: int) -> None:
    """`count` playbooks calling the next ones, with mistakes whose finding needs another
    share's file: a cycle from the last back to the first, a duplicate name at both ends, a
    call that leaves out a required input, a child that writes beyond its caller."""
    (root / "catalyst.toml").write_text("")
    folder = root / "playbooks"
    folder.mkdir()
    for i in range(count):
        callee = (i + 1) % count
        steps = f"  - display: step {i}\n  - playbook: flow-{callee}\n    inheritPermissions: true\n"
        if i % 7 == 3:
            steps += f"    inputs:\n      wrong-{i}: x\n"
        extra = "inputs:\n  - string: topic\n    required: true\n" if i % 11 == 5 else ""
        extra += f"allowedWritePaths: ['out/flow-{i}/**']\n"
        if i % 13 == 0:
            steps += f"  - file-write: out/flow-{i}/notes.md\n    content: x\n"
        (folder / f"flow-{i}.yaml").write_text(_playbook(f"flow-{i}", steps, extra))
    (folder / "twin.yaml").write_text(_playbook("flow-0", "  - display: twin\n"))


def test_findings_across_shares_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _library(tmp_path, 60)
    whole, split = _both(tmp_path, monkeypatch, jobs=3, min_share=5)
    assert split is not None and len(split.children) == 2
    codes = {d.code for d in split.diagnostics}
    assert {"C802", "C809", "C805", "C816"} <= codes, codes
    assert split.diagnostics == whole.diagnostics


def test_a_share_whose_process_fails_is_checked_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _library(tmp_path, 30)
    monkeypatch.setattr(shards, "_START", "import sys; sys.exit(3)")
    whole, split = _both(tmp_path, monkeypatch, jobs=2, min_share=5)
    assert split is not None and split.diagnostics == whole.diagnostics


def test_a_library_not_checked_whole_is_not_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls into the files checked from those not checked are only found in one process."""
    _library(tmp_path, 30)
    monkeypatch.chdir(tmp_path)
    project, settings, files, scanned = project_files(())
    assert shards.check_split(project, files[:20], jobs=2, min_share=5) is None
    assert shards.check_split(project, files, jobs=2, min_share=100) is None, "too few files for two shares"
    assert shards.check_split(project, files, jobs=1, min_share=5) is None, "one processor"


def test_runs_of_files() -> None:
    assert shards.split(list(range(10)), 3, 3) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert shards.split(list(range(10)), 8, 4) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert shards.split(list(range(5)), 2, 4) == [[0, 1, 2, 3, 4]]


def test_every_share_keeps_its_files_in_the_check_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A share's process writes its entries after it has answered; the check ends once they
    are written, so the next check reads every file from the cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    root = tmp_path / "project"
    root.mkdir()
    _library(root, 40)
    monkeypatch.chdir(root)
    project, settings, files, scanned = project_files(())
    split = shards.check_split(project, files, settings=settings, scanned=scanned, jobs=2, min_share=5)
    assert split is not None and len(split.children) == 1
    shards.finish(split)
    entries = [p for p in (root / ".xe" / "cache").glob("*/*") if p.is_file()]
    assert len(entries) >= len(files)


def test_a_share_whose_process_hangs_is_stopped_and_checked_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that never answers is waited for a bounded time, then stopped."""
    import time

    _library(tmp_path, 30)
    monkeypatch.setattr(shards, "_START", "import time; time.sleep(600)")
    monkeypatch.setattr(shards, "WAIT_LEAST", 1.0)
    started = time.monotonic()
    whole, split = _both(tmp_path, monkeypatch, jobs=2, min_share=5)
    assert time.monotonic() - started < 30
    assert split is not None and split.diagnostics == whole.diagnostics
    assert split.children[0]._process.returncode is not None, "stopped, not left behind"


def test_what_a_share_prints_does_not_spoil_its_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard output is the answer's alone: what else the share's process prints there
    (a library, a program the check runs) goes with its errors."""
    _library(tmp_path, 30)
    noisy = (
        "import json, sys; sys.path[:] = json.loads(sys.argv[1]); from catalyst_dsl.project import shards; "
        "real = shards.check_share; "
        "shards.check_share = lambda r: (print('noise ' * 1000), sys.stdout.flush(), real(r))[-1]; shards.serve()"
    )
    monkeypatch.setattr(shards, "_START", noisy)
    whole, split = _both(tmp_path, monkeypatch, jobs=2, min_share=5)
    assert split is not None and split.diagnostics == whole.diagnostics
    assert split.children[0]._answer is not None, "the share's own answer, not checked again here"


class _Planted:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.mkdir, (self.marker,))


def test_an_answer_is_read_as_catalyst_records_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes on the share's standard output that would call a function when unpickled are
    refused, and the share is checked here."""
    import pickle

    _library(tmp_path, 30)
    marker = tmp_path / "planted"
    planted = pickle.dumps(_Planted(str(marker)))
    monkeypatch.setattr(shards, "_START", f"import sys; sys.stdout.buffer.write({planted!r})")
    whole, split = _both(tmp_path, monkeypatch, jobs=2, min_share=5)
    assert not marker.exists()
    assert split is not None and split.diagnostics == whole.diagnostics


def test_a_split_check_with_its_facts_uses_every_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`catalyst check` notes the facts the shares looked at (for its cache): they are read
    back, not refused."""
    from catalyst_dsl.project import observed

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    root = tmp_path / "project"
    root.mkdir()
    _library(root, 30)
    monkeypatch.chdir(root)
    project, settings, files, scanned = project_files(())
    with observed.recording():
        split = shards.check_split(project, files, settings=settings, scanned=scanned, jobs=3, min_share=5)
    assert split is not None
    shards.finish(split)
    assert all(child._answer is not None for child in split.children)
