"""A program's streams, read and written in the step's own thread (one poll loop, no reader
threads), and a step's script file: lines as they were written whatever pieces they came
in, a stdin larger than a pipe while the program talks, a timeout that holds while a
program never reads its stdin, and a script that only its owner can touch and that is
gone after the step."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from catalyst_dsl.runtime.effects.gateway import EffectsGateway, RealPerformer
from catalyst_dsl.runtime.effects.grants import Grants
from catalyst_dsl.runtime.effects.process import _Capture, run_streaming
from catalyst_dsl.runtime.errors import StepError


def test_lines_are_passed_on_whole_whatever_pieces_they_were_read_in():
    captured: dict[str, list[str]] = {"stdout": [], "stderr": []}
    said: list[str] = []
    capture = _Capture(captured, lambda name, line: said.append(line))
    for piece in (b"ab", b"c\nd", b"e\n", b"\n", b"\xff", b"f", b""):
        capture.take("stdout", piece)
    assert said == ["abc", "de", "", "\ufffdf"]
    assert "".join(captured["stdout"]) == "abc\nde\n\n\ufffdf"


def test_both_streams_arrive_and_the_last_line_needs_no_newline(tmp_path):
    said: list[tuple[str, str]] = []
    outcome = run_streaming(
        ["bash", "-c", "printf 'a\\nb'; printf 'e1\\ne2\\n' >&2"],
        cwd=tmp_path,
        env={},
        timeout=30,
        on_output=lambda name, line: said.append((name, line)),
    )
    assert (outcome.exit_code, outcome.stdout, outcome.stderr, outcome.timed_out) == (0, "a\nb", "e1\ne2\n", False)
    assert [line for name, line in said if name == "stdout"] == ["a", "b"]
    assert [line for name, line in said if name == "stderr"] == ["e1", "e2"]


def test_a_stdin_larger_than_a_pipe_reaches_a_program_that_writes_before_it_reads(tmp_path):
    # 300 KB out before a byte is read, then 1 MB in: one thread writing all of stdin first
    # would wait on a full pipe while the program waits on its full stdout.
    outcome = run_streaming(
        ["bash", "-c", "head -c 300000 /dev/zero | tr '\\0' y; echo; wc -c"],
        cwd=tmp_path,
        env={},
        timeout=60,
        on_output=lambda name, line: None,
        stdin="x" * 1_000_000,
    )
    assert outcome.exit_code == 0, outcome.stderr
    assert outcome.stdout.split("\n")[1].strip() == "1000000"


def test_the_timeout_holds_while_a_program_never_reads_its_stdin(tmp_path):
    started = time.monotonic()
    outcome = run_streaming(
        ["bash", "-c", "sleep 30"],
        cwd=tmp_path,
        env={},
        timeout=1,
        on_output=lambda name, line: None,
        stdin="x" * 1_000_000,
    )
    assert outcome.timed_out
    assert time.monotonic() - started < 15


def _gateway(root: Path) -> EffectsGateway:
    return EffectsGateway(root, root / ".scratch", (Grants.of("test", None),), RealPerformer())


def test_a_step_script_is_its_owners_alone_and_gone_after_the_step(tmp_path):
    gateway = _gateway(tmp_path)
    with gateway.script("temp://bash/s.sh", b"true\n") as target:
        status = os.lstat(target.path)
        assert stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) == 0o600
        assert target.path.read_bytes() == b"true\n"
    assert not target.path.exists()


def test_a_step_script_is_never_written_over_a_file_or_through_a_link(tmp_path):
    gateway = _gateway(tmp_path)
    (tmp_path / ".scratch" / "bash").mkdir(parents=True)
    (tmp_path / ".scratch" / "bash" / "there.sh").write_text("echo kept\n")
    with pytest.raises(FileExistsError):
        with gateway.script("temp://bash/there.sh", b"true\n"):
            pass
    assert (tmp_path / ".scratch" / "bash" / "there.sh").read_text() == "echo kept\n"
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / ".scratch" / "linked").symlink_to(outside)
    with pytest.raises(StepError):
        with gateway.script("temp://linked/s.sh", b"true\n"):
            pass
    assert not list(outside.iterdir())
