"""A repository being checked cannot bring its own plugin: `python -m catalyst_dsl` looks
for plugins only in installed places, never in the working folder it runs in, and a
module in that folder does not shadow an installed plugin's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from catalyst_dsl.actions import plugins

ROOT = Path(__file__).resolve().parents[2]

PLAYBOOK = """\
name: uses-a-plugin
description: names an action only a plugin can declare
owner: Engineer
steps:
  - custom-thing: "hello"
"""

PLUGIN = """\
from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl._internal.records import replace

spec = replace(builtin_catalog().get("display"), name="custom-thing")


def run(ctx, config):
    return None
"""


def _hostile_module(marker: Path) -> str:
    """A module that leaves `marker` behind when anything imports it."""
    return f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n" + PLUGIN


def _declare(place: Path, module: str, source: str) -> None:
    """A distribution in `place` whose entry point makes `module` the action `custom-thing`."""
    (place / f"{module}.py").write_text(source, encoding="utf-8")
    info = place / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[catalyst.actions]\ncustom-thing = {module}\n", encoding="utf-8")


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    (project / "uses.yaml").write_text(PLAYBOOK, encoding="utf-8")
    return project


def _check(project: Path, *pythonpath: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(project.parent / "cache"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), *map(str, pythonpath)]),
    }
    return subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "check", "."],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_plugin_declared_in_the_working_folder_is_never_imported(tmp_path: Path) -> None:
    project = _project(tmp_path)
    marker = tmp_path / "imported.txt"
    _declare(project, "evil_plugin", _hostile_module(marker))

    result = _check(project)

    assert not marker.exists(), "a module of the checked repository was imported as a plugin"
    assert result.returncode == 1 and "C404" in result.stdout, result.stdout + result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def test_a_module_in_the_working_folder_does_not_shadow_an_installed_plugin(tmp_path: Path) -> None:
    project, installed = _project(tmp_path), tmp_path / "site"
    installed.mkdir()
    _declare(installed, "custom_thing_plugin", PLUGIN)
    marker = tmp_path / "imported.txt"
    (project / "custom_thing_plugin.py").write_text(_hostile_module(marker), encoding="utf-8")

    result = _check(project, installed)

    assert not marker.exists(), "the checked repository's module was imported instead of the installed plugin's"
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]


def test_a_site_directory_counts_even_as_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), "/elsewhere"])
    assert plugins.metadata_places() == ["/elsewhere"]

    monkeypatch.setattr(plugins.site, "getsitepackages", lambda: [str(tmp_path)])
    assert plugins.metadata_places() == [str(tmp_path), "/elsewhere"]


def test_the_listing_skips_the_working_folder_whatever_put_it_on_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `python -c` and embedders put '' first; the working folder may also be there by name.
    project = _project(tmp_path)
    marker = tmp_path / "imported.txt"
    _declare(project, "evil_plugin", _hostile_module(marker))
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", ["", str(project), *sys.path])
    monkeypatch.delitem(sys.modules, "evil_plugin", raising=False)

    found = plugins.Plugins()

    assert found.action("custom-thing") is None and found.problems() == []
    assert not marker.exists()
