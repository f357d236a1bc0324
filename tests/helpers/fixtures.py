"""Fixtures for the tests that run playbooks: `project` (a throwaway project driven through
the CLI, see run_helpers.py), `plugin_wheel` (the wheel-building helpers), `fake` (the
local fake of GitHub's REST API) and `waits` (retry waits recorded instead of slept).

tests/conftest.py loads this module as a plugin (`pytest_plugins`), so the fixtures serve
every folder of tests.
"""

import os

import pytest

from tests.helpers import fake_github
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
    catalyst settings leaking in from the environment."""
    for key in [k for k in os.environ if k.startswith("CATALYST_")]:
        monkeypatch.delenv(key)
    return run_helpers.RunProject(tmp_path / "project", monkeypatch)


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
