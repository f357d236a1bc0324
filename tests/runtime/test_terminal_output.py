"""What a run shows on a terminal: colour (NO_COLOR and FORCE_COLOR honoured, and only our
own words painted) and the live status line of a step that runs silently. The status
line is driven here by a clock the test moves; `test_run_on_a_terminal` runs a real one."""

from __future__ import annotations

import io
import threading
import unicodedata

import pytest

from catalyst_dsl._internal.terminal_text import cut_to_columns
from catalyst_dsl.runtime.events import Events, paint
from catalyst_dsl.runtime.status_line import ERASE, StatusLine, elapsed_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _line(out: io.StringIO | None = None, **kw) -> tuple[StatusLine, io.StringIO, Clock]:
    out = out or io.StringIO()
    clock = Clock()
    line = StatusLine(out, threading.Lock(), clock=clock, **kw)
    return line, out, clock


def _draw(line: StatusLine) -> None:
    with line.lock:
        line.draw_locked()


def test_the_line_waits_a_second_of_silence_then_names_the_step_and_its_time() -> None:
    line, out, clock = _line()
    line._thread = object()  # no drawing thread: the test draws
    line.started("tests (bash)", 0)
    clock.now += 0.5
    _draw(line)
    assert out.getvalue() == ""  # a step that ends quickly never shows one
    clock.now += 11.7
    _draw(line)
    assert out.getvalue().startswith(ERASE) and out.getvalue().endswith("running tests (bash) · 12s")
    with line.lock:
        line.clear_locked()
    assert out.getvalue().endswith(ERASE)  # cleared before the next line is written
    assert not line.shown


def test_the_line_names_the_step_started_last_and_drops_ended_ones() -> None:
    line, out, clock = _line()
    line._thread = object()
    line.started("loop (for-each)", 0)
    line.started("inner (bash)", 1)
    clock.now += 2
    _draw(line)
    assert out.getvalue().endswith("running inner (bash) · 2s")
    line.ended(1)
    _draw(line)
    assert out.getvalue().endswith("running loop (for-each) · 2s")
    line.started("set (var)", 1)  # a step that reports no end ...
    line.started("next (bash)", 1)  # ... is ended by the next at its depth
    assert [label for label, _ in line.running.values()] == ["loop (for-each)", "next (bash)"]
    line.ended(0)
    assert not line.running


def test_output_and_questions_hold_the_line_back() -> None:
    line, out, clock = _line()
    line._thread = object()
    line.started("tests (bash)", 0)
    clock.now += 5
    with line.lock:
        line.clear_locked()  # a line of the step's output was written: silence starts again
    _draw(line)
    assert out.getvalue() == ""
    with line.holding():
        clock.now += 10
        _draw(line)
        assert out.getvalue() == ""  # never over a prompt
    clock.now += 1
    _draw(line)
    assert "running tests (bash) · 16s" in out.getvalue()


def test_a_long_name_is_cut_to_the_terminal_and_untrusted_text_is_escaped(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    line, out, clock = _line()
    line._thread = object()
    line.started("x\x1b[31m" + "y" * 100, 0)
    clock.now += 3
    _draw(line)
    shown = out.getvalue().removeprefix(ERASE)
    assert len(shown) <= 39 and "…" in shown and "\x1b[31m" not in shown and "\\x1b" in shown


def test_elapsed_time() -> None:
    assert [elapsed_text(s) for s in (0.4, 12.9, 65, 3600)] == ["0s", "12s", "1m05s", "60m00s"]


def _events(environ: dict[str, str]) -> tuple[Events, io.StringIO]:
    out = io.StringIO()
    return Events(out=out, environ=environ), out


def test_colour_follows_no_color_and_force_color() -> None:
    plain, out = _events({})
    plain.step_finished("build", "bash", "completed", 0.5, 0)
    assert "\x1b" not in out.getvalue()  # not a terminal, nothing forced
    forced, out = _events({"FORCE_COLOR": "1"})
    forced.step_finished("build", "bash", "completed", 0.5, 0)
    forced.step_finished("check", "bash", "failed", 0.5, 1, "exit 1")
    forced.run_finished("failed", 1.0, "CommandFailed")
    assert out.getvalue().splitlines() == [
        "\x1b[32m✓\x1b[0m build (bash) 500 ms",
        "  \x1b[31m✗\x1b[0m check (bash) 500 ms: exit 1",
        "\x1b[1m\x1b[31mfailed\x1b[0m in 1.0 s: CommandFailed",
    ]
    assert forced.status is None  # colour is forced; a status line never is (not a terminal)
    refused, out = _events({"FORCE_COLOR": "1", "NO_COLOR": "1"})
    refused.step_finished("build", "bash", "completed", 0.5, 0)
    assert "\x1b" not in out.getvalue()  # NO_COLOR wins


def test_only_our_words_are_painted() -> None:
    events, out = _events({"FORCE_COLOR": "1"})
    events.message("warning", "\x1b[31mfake red\x1b[0m [error] not a level")
    text = out.getvalue()
    assert text == "  \x1b[33m[warning]\x1b[0m \\x1b[31mfake red\\x1b[0m [error] not a level\n"
    assert paint("plain words", "output", None, "info") == "plain words"


def test_json_logs_and_what_ifs_have_neither_colour_nor_status_line() -> None:
    for events in (
        Events(out=io.StringIO(), log_format="json", environ={"FORCE_COLOR": "1"}),
        Events(out=io.StringIO(), silent=True, environ={"FORCE_COLOR": "1"}),
    ):
        assert not events.colour and events.status is None


def test_a_step_name_is_one_line_whatever_it_holds() -> None:
    # A cleo node's id (shown for its step and its route) may hold a newline and an escape:
    # C965 only warns. It must not start a line of its own, nor reach the terminal.
    events, out = _events({})
    name = "a\x1b[31m\nerror: forged"
    events.step_started(name, "route", 0)
    events.step_finished(name, "route", "failed", 0.5, 0, "RoutingFailed: no branch holds")
    events.step_skipped(name, "route", "its condition is false", 1)
    events.paused(name, "ok?", [], "run-1")
    lines = out.getvalue().splitlines()
    assert not any(line.startswith("error: forged") for line in lines), lines
    assert "✗ a\\x1b[31m\\x0aerror: forged (route) 500 ms: RoutingFailed: no branch holds" in lines


@pytest.mark.parametrize("columns", [80, 30, 12, 4])
def test_the_line_fits_the_terminal_in_columns_whatever_its_width(monkeypatch, columns: int) -> None:
    # Wide characters take two columns: a line cut by characters wrapped, and each redraw
    # (a carriage return to the last row) left a row of it behind.
    monkeypatch.setenv("COLUMNS", str(columns))
    line, out, clock = _line()
    line._thread = object()
    line.started("部署" * 30 + " (bash)", 0)
    clock.now += 75
    _draw(line)
    shown = out.getvalue().removeprefix(ERASE)
    width = sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in shown)
    assert width <= columns - 1, shown
    if columns >= 30:
        assert shown.endswith(" · 1m15s") and "…" in shown


def test_cut_to_columns() -> None:
    assert cut_to_columns("abc", 3) == "abc"
    assert cut_to_columns("abcd", 3) == "ab…"
    assert cut_to_columns("部署部", 5) == "部署…"
    assert cut_to_columns("部署", 4) == "部署"
    assert cut_to_columns("e\u0301" * 5, 5) == "e\u0301" * 5  # combining accents take no column
