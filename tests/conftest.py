"""Test options: `--update-golden` rewrites expected files instead of comparing."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden expected files from current output")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")
