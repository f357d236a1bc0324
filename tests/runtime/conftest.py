"""Fixtures for runtime tests: `project` (a throwaway project driven through the CLI,
see run_helpers.py) and `plugin_wheel` (the wheel-building helpers).

Helper modules are loaded from their files, so they work without `__init__.py` and under
any pytest import mode.
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

def _load(name: str, file: str):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(file))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def plugin_wheel():
    """The `plugin_wheel` module: build_wheel, install_wheel, plugin_env."""
    return _load("catalyst_tests_plugin_wheel", "plugin_wheel.py")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A throwaway project (catalyst.toml, playbooks/) as the current directory, with no
    catalyst settings leaking in from the environment."""
    for key in [k for k in os.environ if k.startswith("CATALYST_")]:
        monkeypatch.delenv(key)
    return _load("catalyst_tests_run_helpers", "run_helpers.py").RunProject(tmp_path / "project", monkeypatch)
