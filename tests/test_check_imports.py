"""What a `catalyst check` process loads: only what the file in hand and the cache need.

Each module a check imports is paid by every start (issue 16: a cold one-file check is
held to 1.3x `python -c "import yaml, click"`), so these tests name the modules that
must stay out of a check that does not need them. Each runs a real `catalyst check` in a
process of its own and lists the modules it ended with.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.corpus import SHARED_CORPUS

ROOT = Path(__file__).parents[1]


def _modules_after(args: list[str], cwd: Path, tmp_path: Path) -> set[str]:
    probe = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
        f"sys.argv = ['catalyst', *{args!r}]\n"
        "runpy.run_module('catalyst_dsl', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 error(s)" in done.stdout, done.stdout
    return set(done.stderr.rsplit("MODULES", 1)[1].split())


def test_a_check_without_the_cache_loads_neither_the_cache_nor_the_markdown_reader(
    tmp_path: Path, research_project: Path
) -> None:
    project = research_project
    modules = _modules_after(["check", "--no-cache", "research.yaml"], project, tmp_path)
    assert "catalyst_dsl.compiler" in modules and "catalyst_dsl.syntax.expr.lalr" in modules  # it did compile
    # The cache (and hashlib and json with it), the Markdown reader for a YAML file, the
    # JSON report for text output, the shell lexers for a playbook without scripts, RE2
    # for a plain pattern (`^[a-z][a-z0-9-]*$`), the plugins when every action is built
    # in, kai's commands, the table of diagnostic codes when nothing is reported, a TOML
    # parser for an empty catalyst.toml, the readers and writers of records as JSON (a check
    # writes none): none of them is needed here.
    unwanted = {
        "catalyst_dsl.project.cache.store",
        "catalyst_dsl._internal.record_fields",
        "catalyst_dsl._internal.serialization",
        "catalyst_dsl._internal.digests",
        "hashlib",
        "_hashlib",
        "json",
        "catalyst_dsl.dialects.native.markdown",
        "catalyst_dsl.checks.references.scripts",
        "catalyst_dsl.syntax.shell",
        "re2",
        "catalyst_dsl.actions.plugins",
        "catalyst_dsl.cli.kai",
        "catalyst_dsl.diagnostics.codes",
        "tomllib",
    }
    assert modules.isdisjoint(unwanted), sorted(modules & unwanted)
    assert not (project / ".xe").exists()


def test_a_replayed_check_loads_no_compiler(tmp_path: Path, research_project: Path) -> None:
    project = research_project
    first = _modules_after(["check", "research.yaml"], project, tmp_path)
    assert "catalyst_dsl.compiler" in first and "catalyst_dsl.project.cache.store" in first
    again = _modules_after(["check", "research.yaml"], project, tmp_path)
    assert "catalyst_dsl.project.cache.store" in again
    # The cache's digests and seals are BLAKE2b from CPython's own module (digests.py), not
    # hashlib's, whose import loads OpenSSL. No entry is read, so no record's fields are
    # worked out.
    unwanted = {
        "catalyst_dsl._internal.record_fields",
        "catalyst_dsl._internal.serialization",
        "catalyst_dsl.compiler",
        "catalyst_dsl.project.check",
        "catalyst_dsl.syntax.yaml_loader",
        "catalyst_dsl.syntax.expr.lalr",
        "hashlib",
        "_hashlib",
        "hmac",
    }
    assert again.isdisjoint(unwanted), sorted(again & unwanted)


def test_the_command_line_tunes_the_collector_and_leaves_its_objects_to_the_operating_system(
    tmp_path: Path, research_project: Path
) -> None:
    """cli.main raises the collector's thresholds before the command runs (about 3.5 ms
    of a one-file check went to collections that found nothing) and freezes what is alive
    when it is done, so Python's shutdown does not run the collector over it (about 13 ms);
    atexit handlers still run, and the output is whole."""
    probe = (
        "import atexit, gc, runpy, sys\n"
        "atexit.register(lambda: print('THRESHOLDS', *gc.get_threshold(), "
        "'FROZEN', gc.get_freeze_count(), file=sys.stderr))\n"
        "sys.argv = ['catalyst', 'check', '--no-cache', 'research.yaml']\n"
        "runpy.run_module('catalyst_dsl', run_name='__main__')\n"
    )
    project = research_project
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "checked 1 file(s): 0 error(s), 0 warning(s)\n"
    assert int(done.stderr.rsplit("FROZEN", 1)[1]) > 10_000, done.stderr
    # and its collector ran as a check's does (collector.py) from the start
    from catalyst_dsl._internal.collector import THRESHOLDS

    assert tuple(int(n) for n in done.stderr.rsplit("THRESHOLDS", 1)[1].split()[:3]) == THRESHOLDS, done.stderr


def test_the_program_tunes_the_collector_before_it_imports_the_command_line(research_project: Path) -> None:
    """`python -m catalyst_dsl` (and the console scripts, program.main) raise the
    collector's thresholds before click and catalyst's command line are imported, whose
    objects the default thresholds had the collector scan about ten times over."""
    probe = (
        "import gc, runpy, sys\n"
        "class Witness:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'click':\n"
        "            print('AT CLICK', *gc.get_threshold(), file=sys.stderr)\n"
        "            sys.meta_path.remove(self)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Witness())\n"
        "sys.argv = ['catalyst', '--version']\n"
        "runpy.run_module('catalyst_dsl', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=research_project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    from catalyst_dsl._internal.collector import THRESHOLDS

    assert tuple(int(n) for n in done.stderr.rsplit("AT CLICK", 1)[1].split()[:3]) == THRESHOLDS, done.stderr


KAI_CORPUS = SHARED_CORPUS / "kai"


@pytest.mark.skipif(not KAI_CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")
def test_a_kai_playbook_is_checked_without_attrs_or_the_native_front_end(tmp_path: Path) -> None:
    """kai's reader makes records, as the native one does: importing attrs alone cost
    about 10 ms of a one-file check of a kai playbook; the native lowerer about 1 ms."""
    project = tmp_path / "project"
    (project / ".playbooks" / "playbooks").mkdir(parents=True)
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    shutil.copy(
        KAI_CORPUS / "auto-feature.yaml",
        project / ".playbooks" / "playbooks" / "auto-feature.yaml",
    )
    modules = _modules_after(["check", "--no-cache", ".playbooks/playbooks/auto-feature.yaml"], project, tmp_path)
    assert "catalyst_dsl.dialects.kai.reader" in modules
    assert not {"attr", "attrs"} & modules, sorted({"attr", "attrs"} & modules)
    assert not {"catalyst_dsl.dialects.native.lowerer", "catalyst_dsl.dialects.native.checks"} & modules


def test_a_cleo_cantbook_is_checked_without_attrs(tmp_path: Path) -> None:
    """cleo's model, graph and approval rules are records: as attrs classes they made a
    check of a cantbook import attrs, about 11 ms of it."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    shutil.copy(
        ROOT / "tests" / "dialects" / "cleo" / "examples" / "release-lite.cantbook", project / "release-lite.cantbook"
    )
    modules = _modules_after(["check", "--no-cache", "release-lite.cantbook"], project, tmp_path)
    assert {"catalyst_dsl.dialects.cleo.model", "catalyst_dsl.dialects.cleo.policy"} <= modules
    assert not {"attr", "attrs"} & modules, sorted({"attr", "attrs"} & modules)


def test_the_language_server_collects_as_python_does(tmp_path: Path) -> None:
    """A long-lived process gets Python's thresholds back: each compile of an editor's
    text leaves some garbage in cycles, which rare full collections let pile up."""
    probe = (
        "import atexit, gc, runpy, sys\n"
        "atexit.register(lambda: print('THRESHOLDS', *gc.get_threshold(), file=sys.stderr))\n"
        "sys.argv = ['catalyst', 'lsp']\n"
        "runpy.run_module('catalyst_dsl', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    python_s = subprocess.run(
        [sys.executable, "-c", "import gc; print(*gc.get_threshold())"], capture_output=True, text=True
    ).stdout.split()
    assert done.stderr.rsplit("THRESHOLDS", 1)[1].split() == python_s


def test_batches_of_compilations_nest_and_overlap() -> None:
    """The language server's library check is one batch holding the check's own; an edit
    on another thread may open a batch while one is under way. The collector stays tuned
    until the last batch ends, then the thresholds from before come back."""
    import gc
    import threading

    from catalyst_dsl._internal.collector import THRESHOLDS
    from catalyst_dsl.compiler import collector_tuned_for_checking

    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        outer_entered, inner_done = threading.Event(), threading.Event()

        def other_thread() -> None:
            outer_entered.wait()
            with collector_tuned_for_checking():
                pass
            inner_done.set()

        worker = threading.Thread(target=other_thread)
        worker.start()
        with collector_tuned_for_checking():
            with collector_tuned_for_checking():
                assert gc.get_threshold() == THRESHOLDS
            assert gc.get_threshold() == THRESHOLDS, "an inner batch's end leaves the outer one tuned"
            outer_entered.set()
            inner_done.wait()
            assert gc.get_threshold() == THRESHOLDS, "another thread's batch ended inside this one"
            assert gc.get_freeze_count() > 0
        worker.join()
        assert gc.get_threshold() == (700, 10, 10)
        assert gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*before)
