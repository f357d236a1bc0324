"""Test options: `--update-golden` rewrites expected files instead of comparing."""

from pathlib import Path

import pytest

#: The fixtures of tests that run playbooks (`project`, `fake`, `waits`, `plugin_wheel`).
pytest_plugins = ["tests.helpers.fixtures"]


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden expected files from current output")


@pytest.fixture(scope="session")
def _config_home(tmp_path_factory):
    return tmp_path_factory.mktemp("config-home")


@pytest.fixture(autouse=True)
def _private_config_home(_config_home, monkeypatch):
    """Run keys (which seal snapshots) are made in a config directory of the tests' own,
    never in the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(_config_home))


@pytest.fixture(scope="session")
def _state_home(tmp_path_factory):
    return tmp_path_factory.mktemp("state-home")


@pytest.fixture(autouse=True)
def _private_state_home(_state_home, monkeypatch):
    """Runs' anchors (their latest saves, kept outside the state directory) are written in a
    state directory of the tests' own, never in the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(_state_home))


@pytest.fixture(autouse=True)
def _private_cache_home(tmp_path_factory, monkeypatch):
    """The check cache's key is made in a cache directory of the tests' own, never in the
    user's; projects inside this checkout (the golden cases, the sample playbooks) are
    checked without the cache, so the tests never write into the source tree."""
    from catalyst_dsl.project.cache.store import CheckCache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache-home"))
    for_project = CheckCache.for_project.__func__
    checkout = Path(__file__).resolve().parents[1]

    def outside_the_checkout(cls, project, **options):
        return None if Path(project.root).resolve().is_relative_to(checkout) else for_project(cls, project, **options)

    monkeypatch.setattr(CheckCache, "for_project", classmethod(outside_the_checkout))


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")


@pytest.fixture
def node_but_no_pwsh(tmp_path_factory, monkeypatch):
    """A PATH on which `node` and `git` are installed and `pwsh` is not, for output that C819
    (a program the machine lacks) would otherwise make depend on the machine the tests run on."""
    programs = tmp_path_factory.mktemp("programs")
    for name in ("node", "git"):
        program = programs / name
        program.write_text("#!/bin/sh\n", encoding="utf-8")
        program.chmod(0o755)
    monkeypatch.setenv("PATH", str(programs))
    return programs


@pytest.fixture(autouse=True)
def _plain_check_output(monkeypatch):
    """`catalyst check` picks its format and colour from the environment (GITHUB_ACTIONS,
    NO_COLOR, FORCE_COLOR) and its ShellCheck from CATALYST_SHELLCHECK; the tests set them
    where they test that, and nowhere else."""
    for name in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "CATALYST_SHELLCHECK"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def research_project(tmp_path):
    """A project (an empty catalyst.toml) holding a copy of playbooks/research.yaml, for
    tests that run `catalyst` in a process of its own."""
    import shutil

    project = tmp_path / "project"
    project.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    shutil.copy(Path(__file__).parents[1] / "playbooks" / "research.yaml", project / "research.yaml")
    return project
