"""A check that replays from the cache knows that an action name is no plugin's without
listing the installed distributions, and still sees a plugin installed or removed since."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def _catalyst(project: Path, site: Path, cache_home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "catalyst_dsl", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _listed(result: subprocess.CompletedProcess) -> bool:
    """Whether the process imported importlib.metadata (what listing the distributions takes)."""
    return any(line.rstrip().endswith("| importlib.metadata") for line in result.stderr.splitlines())


def _install(site: Path) -> Path:
    (site / "custom_thing_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "custom_thing_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: custom-thing-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[catalyst.actions]\ncustom-thing = custom_thing_plugin\n", encoding="utf-8")
    return info


def test_a_name_no_plugin_declares_is_known_without_listing_until_one_is_installed(tmp_path: Path) -> None:
    project, site, cache_home = tmp_path / "project", tmp_path / "site", tmp_path / "cache"
    for folder in (project, site, cache_home):
        folder.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    (project / "uses.yaml").write_text(PLAYBOOK, encoding="utf-8")

    first = _catalyst(project, site, cache_home, "check", ".")
    assert first.returncode == 1 and "C404" in first.stdout and _listed(first)
    again = _catalyst(project, site, cache_home, "check", ".")
    assert again.stdout == first.stdout and not _listed(again)
    refused = _catalyst(project, site, cache_home, "run", "uses.yaml", "--what-if")
    assert refused.returncode == 1 and "C404" in refused.stderr and not _listed(refused)

    info = _install(site)
    found = _catalyst(project, site, cache_home, "check", ".")
    assert found.returncode == 0, found.stdout
    assert "C404" not in found.stdout and _listed(found)
    planned = _catalyst(project, site, cache_home, "run", "uses.yaml", "--what-if")
    assert planned.returncode == 0, planned.stderr[-2000:]

    for child in info.iterdir():
        child.unlink()
    info.rmdir()
    gone = _catalyst(project, site, cache_home, "check", ".")
    assert gone.stdout == first.stdout


def test_the_environment_changes_with_the_distributions_on_the_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    before = plugins.environment()
    assert plugins.environment() == before
    (tmp_path / "unrelated.txt").write_text("x", encoding="utf-8")
    assert plugins.environment() == before  # only distributions' metadata counts
    info = tmp_path / "thing-1.0.dist-info"
    info.mkdir()
    with_one = plugins.environment()
    assert with_one != before
    os.utime(info, ns=(1, 1))  # a file added to it or removed: no entry point declared
    assert plugins.environment() == with_one
    os.utime(tmp_path, ns=(1, 1))  # the folder remade by a reinstall: its place changes
    remade = plugins.environment()
    assert remade not in (before, with_one)
    (info / "entry_points.txt").write_text("[catalyst.actions]\n", encoding="utf-8")
    declaring = plugins.environment()
    assert declaring != remade
    os.utime(tmp_path, ns=(1, 1))
    (info / "entry_points.txt").write_text("[catalyst.actions]\nx = y:z\n", encoding="utf-8")  # rewritten in place
    assert plugins.environment() != declaring
    (info / "entry_points.txt").unlink()
    info.rmdir()
    assert plugins.environment() == before


def test_a_place_on_the_path_without_metadata_leaves_the_environment_as_it_is(tmp_path: Path, monkeypatch) -> None:
    # `python -m catalyst_dsl` puts the working folder first on the path, the `catalyst`
    # program its own folder: neither holds distributions, so both see one environment
    # (and a what-if run one way reads the plugin names a check run the other way kept).
    before = plugins.environment()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "catalyst").write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "bin"), str(tmp_path / "missing"), *sys.path])
    assert plugins.environment() == before
    (tmp_path / "bin" / "Thing-1.0.DIST-INFO").mkdir()  # importlib.metadata matches names without case
    assert plugins.environment() != before


def test_a_damaged_list_of_plugin_names_is_ignored(tmp_path: Path) -> None:
    from catalyst_dsl.project.cache.store import CheckCache

    cache = CheckCache(tmp_path / "cache", b"k" * 32, "fingerprint")
    name = cache._plugins_entry(plugins.environment())
    for body in (b"not json", b'{"a": 1}', b"[1, 2]", b'"text"'):
        cache.write_sealed(name, body)
        assert CheckCache(tmp_path / "cache", b"k" * 32, "fingerprint")._read_plugin_names() is None
    cache.write_sealed(name, b'["one", "two"]')
    assert CheckCache(tmp_path / "cache", b"k" * 32, "fingerprint")._read_plugin_names() == frozenset({"one", "two"})
    forged = CheckCache(tmp_path / "cache", b"x" * 32, "fingerprint")  # another user's key: the seal fails
    assert forged._read_plugin_names() is None


def test_entry_points_rewritten_in_place_are_seen(tmp_path: Path) -> None:
    """A develop install run again (or a hand edit) rewrites `entry_points.txt` in its
    folder, whose own time stays as it was: the kept names are listed again."""
    project, site, cache_home = tmp_path / "project", tmp_path / "site", tmp_path / "cache"
    for folder in (project, site, cache_home):
        folder.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    (project / "uses.yaml").write_text(PLAYBOOK, encoding="utf-8")
    (site / "custom_thing_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "custom_thing_plugin-1.0.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: custom-thing-plugin\nVersion: 1.0\n", encoding="utf-8")
    points = info / "entry_points.txt"
    points.write_text("[catalyst.actions]\nother-thing = custom_thing_plugin\n", encoding="utf-8")
    first = _catalyst(project, site, cache_home, "check", ".")
    assert first.returncode == 1 and "C404" in first.stdout
    folder_time = info.stat().st_mtime_ns
    points.write_text(
        "[catalyst.actions]\nother-thing = custom_thing_plugin\ncustom-thing = custom_thing_plugin\n", encoding="utf-8"
    )
    os.utime(info, ns=(folder_time, folder_time))  # the folder itself is as it was
    found = _catalyst(project, site, cache_home, "check", ".")
    assert "C404" not in found.stdout and _listed(found)
