"""How `catalyst run` and its siblings end on a busy lock or an abort: an error line with
the fix and the documented exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.run import _aborts
from catalyst_dsl.runtime.errors import EXIT_FAILED, EXIT_INVALID, RunAbort
from catalyst_dsl.runtime.state.locks import LockConflict, LockInfo


def _command(error: Exception) -> click.Command:
    @click.command()
    @_aborts
    def command() -> None:
        raise error

    return command


def test_a_busy_lock_is_an_error_with_its_fix() -> None:
    owner = LockInfo(
        resource="file:out/**", run_id="r-1", pid=42, host="box", since="2026-11-26T10:00:00Z", file=Path("x")
    )
    result = CliRunner().invoke(_command(LockConflict("file:out/**", owner)))
    assert result.exit_code == EXIT_FAILED
    assert "error: file:out/** is locked by run r-1 (process 42 on box" in result.output
    assert "help: try again once the other catalyst process is done" in result.output


def test_a_run_abort_prints_its_details_and_exits_with_its_code() -> None:
    result = CliRunner().invoke(_command(RunAbort(EXIT_INVALID, "no good", details=("one", "two"), help="do this")))
    assert result.exit_code == EXIT_INVALID
    assert result.output.splitlines() == ["error: no good", "  one", "  two", "  help: do this"]


def test_other_errors_are_not_taken_for_a_busy_lock() -> None:
    result = CliRunner().invoke(_command(KeyError("other")))
    assert isinstance(result.exception, KeyError)


@pytest.mark.parametrize("code", [EXIT_FAILED, EXIT_INVALID])
def test_the_exit_code_is_the_abort_s(code: int) -> None:
    assert CliRunner().invoke(_command(RunAbort(code, "x"))).exit_code == code
