"""Fixtures for runtime tests: `plugin_wheel` gives the wheel-building helpers.

The helper module is loaded from its file, so it works without `__init__.py` and under
any pytest import mode.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

_MODULE = "catalyst_tests_plugin_wheel"


def _load_plugin_wheel():
    if _MODULE not in sys.modules:
        spec = importlib.util.spec_from_file_location(_MODULE, Path(__file__).with_name("plugin_wheel.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[_MODULE] = module
        spec.loader.exec_module(module)
    return sys.modules[_MODULE]


@pytest.fixture(scope="session")
def plugin_wheel():
    """The `plugin_wheel` module: build_wheel, install_wheel, plugin_env."""
    return _load_plugin_wheel()
