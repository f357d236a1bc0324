"""Fixtures for the tests that run playbooks: `project` (a throwaway project driven through
the CLI, see run_helpers.py), `plugin_wheel` (the wheel-building helpers), `fake` (the
local fake of GitHub's REST API), `waits` (retry waits recorded instead of slept) and
`postgres_server` / `shared_store` (runs kept in a real PostgreSQL server).

tests/conftest.py loads this module as a plugin (`pytest_plugins`), so the fixtures serve
every folder of tests.
"""

import itertools
import os

import pytest

from tests.helpers import fake_github
from tests.helpers import postgres
from tests.helpers import plugin_wheel as wheel_helpers
from tests.helpers import run_helpers

from catalyst_dsl.runtime.actions import http as http_actions


@pytest.fixture(scope="session")
def plugin_wheel():
    """The `plugin_wheel` module: build_wheel, install_wheel, plugin_env."""
    return wheel_helpers


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A throwaway project (catalyst.toml, playbooks/) as the current directory, with no
    catalyst settings leaking in from the environment, nor an AI adapter the machine
    offers (runtime/adapters/detection.py): its AI steps get the mock unless a test says otherwise."""
    for key in [k for k in os.environ if k.startswith(("CATALYST_", "OPENAI_", "OTEL_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PATH", without_ai_programs(os.environ.get("PATH", os.defpath)))
    return run_helpers.RunProject(tmp_path / "project", monkeypatch)


def without_ai_programs(path: str) -> str:
    """PATH without the directories that hold a program the AI adapter detection looks for."""
    from catalyst_dsl.runtime.adapters.detection import PROGRAMS

    def offers(entry: str) -> bool:
        return any(os.access(os.path.join(entry, program), os.X_OK) for program, _ in PROGRAMS)

    return os.pathsep.join(entry for entry in path.split(os.pathsep) if entry and not offers(entry))


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for the session (tests/helpers/postgres.py)."""
    if postgres.bin_dir() is None:
        pytest.skip("PostgreSQL is not installed on this machine (no initdb)")
    with postgres.running_server() as server:
        yield server


_repositories = itertools.count(1)


@pytest.fixture
def shared_store(postgres_server, monkeypatch):
    """Runs kept in the PostgreSQL server, under a repository name of this test's own (so
    tests share one database and never see each other's runs); its URL."""
    monkeypatch.setenv("CATALYST_STATE_URL", postgres_server.url)
    monkeypatch.setenv("CATALYST_REPOSITORY", f"tests/repository-{os.getpid()}-{next(_repositories)}")
    return postgres_server.url


@pytest.fixture
def fake():
    """The local fake of GitHub's REST API, running."""
    with fake_github.FakeGitHub() as running:
        yield running


@pytest.fixture
def waits(monkeypatch):
    """The waits between HTTP retries, recorded instead of slept."""
    delays: list[float] = []
    monkeypatch.setattr(http_actions, "sleep", delays.append)
    return delays
