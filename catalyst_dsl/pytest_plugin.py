"""Golden what-if plans as pytest items: each `*.plan.json` under the golden directory is re-planned and compared.

A golden plan (`golden/<name>.plan.json`, canonical JSON as `catalyst run NAME --what-if
--what-if-report FILE` writes it) names its playbook and the inputs it was planned with.
Its item plans that playbook again with those inputs and fails with what changed, step by
step (report/plan_diff.py), when they differ; a golden plan of an older plan format fails
with the command that regenerates it; `pytest --update-golden` rewrites the file instead, to be
reviewed as a diff. Settings (ini): `catalyst_playbook_dirs` (default `playbooks`): a
golden plan's playbook must lie under one of them; `catalyst_golden_dir` (default
`golden`): where golden plans are collected. Both are relative to the rootdir, and the
golden directory must be among the paths pytest collects (`testpaths`, or an argument).

Registered under the `pytest11` entry point as `catalyst`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from catalyst_dsl.report import plan_diff
from catalyst_dsl.runtime.lifecycle import golden as golden_plans
from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json, with_hash

UPDATE_OPTION = "--update-golden"
SUFFIX = ".plan.json"
HINT = "run pytest --update-golden to accept the new plan, after reviewing the changes above"

_REWRITTEN = pytest.StashKey[list]()


class GoldenPlanProblem(Exception):
    """A golden plan that does not hold: its message is the whole failure report (no traceback)."""


# -- options -------------------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    from catalyst_dsl.project.config import DEFAULT_PLAYBOOK_DIRS

    parser.addini(
        "catalyst_playbook_dirs",
        type="args",
        default=list(DEFAULT_PLAYBOOK_DIRS),
        help="catalyst: directories (relative to the rootdir) that golden plans' playbooks may be in",
    )
    parser.addini(
        "catalyst_golden_dir",
        default="golden",
        help="catalyst: directory (relative to the rootdir) of golden what-if plans, *.plan.json",
    )
    # Registered through the entry point or -p, this plugin adds its options before any
    # conftest.py is loaded, and a conftest.py that still defines --update-golden would
    # then fail; so the flag is added once the initial conftests are in (below). Loaded by
    # a conftest.py's pytest_plugins, the plugin arrives after that moment: add it now.
    if any(_is_conftest(plugin) for plugin in pluginmanager.get_plugins()):
        _add_update_option(parser)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(parser: pytest.Parser):
    result = yield
    _add_update_option(parser)
    return result


def _add_update_option(parser: pytest.Parser) -> None:
    """Add --update-golden unless a conftest.py (or another plugin) already has: both spell it alike."""
    if _defines(parser, UPDATE_OPTION):
        return
    try:
        parser.getgroup("catalyst", "catalyst golden plans").addoption(
            UPDATE_OPTION,
            action="store_true",
            default=False,
            dest="update_golden",
            help="rewrite golden expected files (golden what-if plans included) from the current output",
        )
    except (ValueError, argparse.ArgumentError):  # defined where _defines cannot see it
        pass


def _defines(parser: pytest.Parser, name: str) -> bool:
    # pytest has no public index of the options added so far; its groups hold them (the
    # anonymous group of Parser.addoption apart before pytest 9, among the groups since).
    groups = [getattr(parser, "_anonymous", None), *getattr(parser, "_groups", ())]
    return any(name in option.names() for group in groups if group is not None for option in group.options)


def _is_conftest(plugin: object) -> bool:
    return Path(getattr(plugin, "__file__", None) or "").name == "conftest.py"


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether --update-golden was given: a golden test then writes its expected file instead of comparing."""
    return bool(request.config.getoption("update_golden", default=False))


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_REWRITTEN] = []


# -- collection ----------------------------------------------------------------------------------------------


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not file_path.name.endswith(SUFFIX):
        return None
    golden_dir = (parent.config.rootpath / parent.config.getini("catalyst_golden_dir")).resolve()
    if golden_dir not in file_path.resolve().parents:
        return None
    return GoldenPlanFile.from_parent(parent, path=file_path)


class GoldenPlanFile(pytest.File):
    def collect(self):
        yield GoldenPlanItem.from_parent(self, name="what-if")


class GoldenPlanItem(pytest.Item):
    """One golden plan: its playbook planned again with its inputs must give the same bytes."""

    def runtest(self) -> None:
        config = self.config
        root = config.rootpath
        shown = self._shown(self.path)
        # Read with universal newlines: a checkout with CRLF line endings is the same plan.
        expected = self.path.read_text(encoding="utf-8")
        golden = _golden(expected, shown)
        update = config.getoption("update_golden", default=False)
        stale_format = plan_diff.format_problem(golden, shown)
        if stale_format and not update:
            raise GoldenPlanProblem(stale_format)
        _check_playbook(root, golden, config.getini("catalyst_playbook_dirs"), shown)
        try:
            actual = canonical_json(with_hash(golden_plans.replan(root, golden)))
        except golden_plans.ReplanError as problem:
            raise GoldenPlanProblem(f"{shown}: {golden['playbook']['file']} cannot be planned:\n{problem}") from None
        if actual == expected:
            return
        if update:
            self.path.write_text(actual, encoding="utf-8", newline="\n")
            config.stash[_REWRITTEN].append(shown)
            return
        changes = plan_diff.explain(expected, json.loads(actual), shown)
        raise GoldenPlanProblem(
            f"{shown}: the what-if plan of {golden['playbook']['file']} has changed\n\n"
            f"{changes}\n{_uncommitted_note(root, expected, actual)}{HINT}"
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None):
        if isinstance(excinfo.value, GoldenPlanProblem):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"golden plan {self._shown(self.path)}"

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.config.rootpath).as_posix()
        except ValueError:
            return str(path)


def _golden(text: str, shown: str) -> dict[str, Any]:
    """The golden plan, with the two fields a re-plan needs checked."""
    try:
        golden = json.loads(text)
    except ValueError as error:
        raise GoldenPlanProblem(
            f"{shown} is not valid JSON ({error}); restore it from version control, "
            "or write it again with `catalyst run NAME --what-if --what-if-report FILE`"
        ) from None
    wrong = golden_plans.problem(golden, shown)
    if wrong is not None:
        raise GoldenPlanProblem(wrong)
    return golden


def _check_playbook(root: Path, golden: dict[str, Any], dirs: list[str], shown: str) -> None:
    file = golden["playbook"]["file"]
    bases = [(root / d).resolve() for d in dirs]
    if not golden_plans.inside_any(root / file, bases):
        raise GoldenPlanProblem(
            f"{shown}: its playbook {file} is outside the playbook directories ({', '.join(dirs) or 'none'}); "
            "move the playbook there, or add its directory to the catalyst_playbook_dirs ini setting"
        )
    if not (root / file).is_file():
        raise GoldenPlanProblem(
            f"{shown}: its playbook {file} no longer exists; delete this golden plan, "
            "or restore the playbook (if it moved, set playbook.file and run pytest --update-golden)"
        )


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    rewritten = config.stash.get(_REWRITTEN, [])
    if rewritten:
        terminalreporter.write_sep(
            "-",
            f"catalyst: {len(rewritten)} golden plan{'s' if len(rewritten) != 1 else ''} rewritten, review the diff",
        )
        for shown in rewritten:
            terminalreporter.write_line(shown)


def _uncommitted_note(root: Path, expected: str, actual: str) -> str:
    """Why a plan may differ without any change to the playbook: a file it reads or writes
    is not as committed (a run left it there, say). Named, so the diff is not a puzzle."""
    import subprocess

    paths = sorted(_plan_paths(json.loads(expected)) | _plan_paths(json.loads(actual)))
    if not paths:
        return ""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", *paths],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        status = None
    if status is None or status.returncode != 0:
        present = [p for p in paths if (root / p).exists()]
        if not present:
            return ""
        return (
            "note: the plan reads or writes these files, which exist now; a golden plan is made against the "
            f"files as they were when it was written: {', '.join(present)}\n"
        )
    changed = []
    for line in status.stdout.splitlines():
        state, name = line[:2], line[3:]
        what = "not committed" if state == "??" else "deleted" if "D" in state else "changed since the last commit"
        changed.append(f"{name} ({what})")
    if not changed:
        return ""
    return (
        "note: files this plan reads or writes are not as committed, which changes the plan without any change "
        f"to the playbook: {', '.join(changed)}; restore them (or commit them) and run the tests again\n"
    )


def _plan_paths(plan: dict[str, Any]) -> set[str]:
    """The project paths a plan's steps read or write (their `path` settings and effects)."""
    found: set[str] = set()

    def visit(step: dict[str, Any]) -> None:
        config = step.get("config") if isinstance(step.get("config"), dict) else {}
        for value in (config.get("path"), *(e.get("path") for e in step.get("effects") or () if isinstance(e, dict))):
            if (
                isinstance(value, str)
                and value
                and "://" not in value
                and not value.startswith(("/", "<"))
                and ".." not in value.split("/")
            ):
                found.add(value)
        for inner in step.get("steps") or ():
            if isinstance(inner, dict):
                visit(inner)

    for step in plan.get("steps") or ():
        if isinstance(step, dict):
            visit(step)
    return found
