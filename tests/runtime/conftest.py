"""Fixtures for runtime tests: `project` (a throwaway project driven through the CLI,
see run_helpers.py) and `plugin_wheel` (the wheel-building helpers).

Helper modules sit beside the tests and are imported by name (pyproject's pytest
`pythonpath` adds this directory), so they work without `__init__.py` and under any
pytest import mode.
"""

import os

import pytest

import plugin_wheel as wheel_helpers
import run_helpers


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
