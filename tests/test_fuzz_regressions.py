"""Inputs that once broke a fuzz target (tests/data/fuzz/TARGET/, kept by fuzz/run.py or
written from an issue's finding) go through that target again: each must now be taken
without a traceback. The targets are plain functions (fuzz/targets.py): no fuzzer is
needed here."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.lsp_session import close_shared_session
from fuzz.seeds import seeds
from fuzz.targets import TARGETS

CASES = Path(__file__).parent / "data" / "fuzz"


@pytest.fixture(scope="module", autouse=True)
def _language_server_ended():
    """The `lsp` target's server runs in this process: its input is ended after the tests,
    or the interpreter would wait at exit for the thread reading it."""
    yield
    close_shared_session()


FOUND = sorted(p for p in CASES.glob("*/*") if p.is_file())


def test_every_folder_of_cases_names_a_target() -> None:
    strays = sorted(p.name for p in CASES.iterdir() if p.name not in TARGETS)
    assert not strays, f"folders of {CASES} that name no fuzz target: {strays}"


@pytest.mark.parametrize("case", FOUND, ids=[f"{p.parent.name}/{p.name}" for p in FOUND])
def test_an_input_that_broke_a_target_is_taken_now(case: Path) -> None:
    TARGETS[case.parent.name](case.read_bytes())


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_seed_is_taken(target: str) -> None:
    """The fuzzers start from these (the repository's cases): a seed that fails stops a
    fuzz run before it begins."""
    for seed in seeds(target):
        TARGETS[target](seed)
