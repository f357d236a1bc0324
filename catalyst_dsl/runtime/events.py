"""What a run tells the person watching it: console progress or one JSON object per event.

Every line passes the run's `Masker` first, so a secret value never reaches the
terminal or a log, whatever step printed it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, TextIO

from catalyst_dsl._internal.terminal_text import is_terminal, safe_text

if TYPE_CHECKING:
    from catalyst_dsl.runtime.status_line import StatusLine

LEVELS = ("error", "warning", "info", "display", "verbose", "debug", "trace")

_MARKS = {"completed": "✓", "failed": "✗", "skipped": "↷", "running": "▶", "paused": "⏸", "continued": "!"}


#: The last whole second stamped, and its text: every log entry is stamped (a what-if's
#: too, for `logs()`), and formatting the date and time is most of a stamp's cost.
_second: tuple[int, str] = (-1, "")


def utc_now() -> str:
    """Now in UTC, `2026-11-27T02:45:33.123456Z` (microseconds cut, not rounded, as
    `datetime.now` does); the date and time are formatted once per second."""
    global _second
    whole, nanos = divmod(time.time_ns(), 1_000_000_000)
    second, text = _second
    if whole != second:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _second = (whole, text)  # one tuple, replaced whole: threads see a pair that belongs together
    return f"{text}.{nanos // 1000:06d}Z"


def discard_stdout() -> None:
    """Send what is still written to standard output nowhere, once its reader has closed
    the pipe: Python would otherwise fail again on the flush at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # no real descriptor behind stdout (a test's capture, none at all): nothing to redirect


class Events:
    """Reports run events as text (`log_format="text"`) or JSON lines (`"json"`)."""

    def __init__(
        self,
        *,
        log_format: str = "text",
        out: TextIO | None = None,
        mask: Callable[[Any], Any] = lambda v: v,
        verbose: bool = False,
        silent: bool = False,
        environ: dict[str, str] | None = None,
    ) -> None:
        self.log_format = log_format
        #: A what-if's: nothing is written (no one reads a plan's progress lines), while the
        #: log entries are kept as in a run, for `logs()`.
        self.silent = silent
        self.out = out or sys.stdout
        self.mask = mask
        self.verbose = verbose
        self.run_id: str | None = None
        self.playbook: str | None = None
        #: Entries of the log-* actions, for the `logs()` expression function.
        self.entries: list[dict] = []
        #: listener(event, status, step, message, fields) for each event a run emits, whatever
        #: is printed, the message masked (runtime/telemetry.py makes traces and metrics of them).
        self.listeners: list[Callable[[str, str | None, str | None, str, dict], None]] = []
        self._lock = threading.Lock()
        #: No output at all (`catalyst run ... >&-` leaves Python no standard output): the
        #: run goes on to its end, its state saved as always, and tells nobody.
        self._closed = self.out is None
        #: Marks and outcomes in colour: on a terminal, unless NO_COLOR; anywhere with FORCE_COLOR.
        self.colour = False
        #: The live line naming the running step: a terminal's only, never a CI log's.
        self.status: "StatusLine | None" = None
        if log_format == "text" and not silent:  # a what-if's events write nothing: no terminal to ask about
            from catalyst_dsl.diagnostics.text import wants_colour

            environ = os.environ if environ is None else environ
            terminal = is_terminal(self.out)
            self.colour = wants_colour(terminal, environ)
            if terminal and not environ.get("CI") and environ.get("TERM") != "dumb":
                from catalyst_dsl.runtime.status_line import StatusLine

                self.status = StatusLine(self.out, self._lock, colour=self.colour)

    # -- the one writer ------------------------------------------------------------------------------

    def _emit(
        self, event: str, level: str, status: str | None, message: str, step: str | None = None, **extra: Any
    ) -> None:
        if self.silent:
            return
        message = self.mask(message)
        for listener in self.listeners:
            listener(event, status, step, message, extra)
        with self._lock:
            if self._closed:
                return
            try:
                if self.log_format == "json":
                    record = {
                        "timestamp": utc_now(),
                        "runId": self.run_id,
                        "playbookId": self.playbook,
                        "stepId": step,
                        "event": event,
                        "level": level,
                        "status": status,
                        "message": message,
                    }
                    record.update({k: self.mask(v) for k, v in extra.items() if v is not None})
                    self.out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
                else:
                    if self.status is not None:
                        self.status.clear_locked()
                    text = "\n".join(safe_text(line) for line in message.split("\n"))
                    # Painted after it is made safe: colour is ours, never the text's.
                    self.out.write((paint(text, event, status, level) if self.colour else text) + "\n")
                self.out.flush()
            except BrokenPipeError:
                # Whoever read the run's output has gone (`| head -1`): the run goes on to
                # its end, its state saved as always; only the telling stops.
                self._closed = True
                if self.out is sys.stdout:
                    discard_stdout()

    # -- events ---------------------------------------------------------------------------------------

    def run_started(self, run_id: str, playbook: str, resumed: bool) -> None:
        self.run_id, self.playbook = run_id, playbook
        verb = "resuming" if resumed else "running"
        self._emit("run-started", "info", "running", f"{verb} {playbook} · run {run_id}")

    @contextmanager
    def holding(self) -> Iterator[None]:
        """While a person is asked something: no live status line over the prompt."""
        if self.status is None:
            yield
        else:
            with self.status.holding():
                yield

    def step_started(self, step: str, action: str, depth: int) -> None:
        if self.status is not None:
            self.status.started(self.mask(f"{step} ({action})"), depth)
        if self.log_format == "json" or self.verbose:
            self._emit(
                "step-started",
                "debug",
                "running",
                f"{'  ' * depth}▶ {safe_text(step)} ({action})",
                step=step,
                action=action,
            )

    def step_finished(self, step: str, action: str, status: str, seconds: float, depth: int, detail: str = "") -> None:
        if self.status is not None:
            self.status.ended(depth)
        mark = _MARKS.get(status, "·")
        tail = f": {detail}" if detail else ""
        self._emit(
            "step-finished",
            "error" if status == "failed" else "info",
            status,
            f"{'  ' * depth}{mark} {safe_text(step)} ({action}) {_duration(seconds)}{tail}",
            step=step,
            action=action,
            duration=round(seconds, 6),
        )

    def step_skipped(self, step: str, action: str, reason: str, depth: int) -> None:
        if self.status is not None:
            self.status.ended(depth)
        self._emit(
            "step-skipped",
            "info",
            "skipped",
            f"{'  ' * depth}{_MARKS['skipped']} {safe_text(step)} ({action}) skipped: {reason}",
            step=step,
            action=action,
        )

    def message(self, level: str, text: str, step: str | None = None, data: Any = None, depth: int = 0) -> None:
        if level in ("error", "warning", "info", "verbose", "debug", "trace"):
            self.entries.append(
                {
                    "level": level,
                    "message": self.mask(text),
                    "action": None,
                    "source": step,
                    "data": self.mask(data),
                    "timestamp": utc_now(),
                }
            )
        if self.silent or (level in ("verbose", "debug", "trace") and not self.verbose and self.log_format == "text"):
            return
        prefix = "" if level == "display" else f"[{level}] "
        self._emit(
            "message", "info" if level == "display" else level, None, f"{'  ' * (depth + 1)}{prefix}{text}", step=step
        )

    def notice(self, text: str) -> None:
        """A fact about the whole run the reader should know (not a log entry of a step)."""
        self._emit("notice", "info", None, f"note: {text}")

    def output(self, step: str, stream: str, line: str, depth: int) -> None:
        self._emit("output", "info", None, f"{'  ' * (depth + 1)}│ {line}", step=step, stream=stream)

    def paused(self, step: str, message: str, roles: list[str], run_id: str, options: list | None = None) -> None:
        if self.status is not None:
            self.status.stop()
        who = f" (one of: {', '.join(roles)})" if roles else ""
        keys = [str(o.get("key")) for o in options or () if isinstance(o, dict)]
        select = f" [--select {'|'.join(keys)}]" if keys else ""
        self._emit(
            "paused",
            "warning",
            "paused",
            f"⏸ paused at {safe_text(step)}: {message}\n"
            f"  approve{who}: catalyst approve {run_id} --as ROLE{select}\n"
            f"  then continue: catalyst resume {run_id}",
            step=step,
        )

    def run_finished(self, status: str, seconds: float, detail: str = "", fix: str | None = None) -> None:
        """The last line. A failure's fix follows it in text (indented, like a diagnostic's
        help) and is the `guidance` field in JSON, so the line itself keeps the error."""
        if self.status is not None:
            self.status.stop()
        tail = f": {detail}" if detail else ""
        text_fix = "" if self.log_format == "json" or not fix else "\n  fix: " + fix.strip().replace("\n", "\n       ")
        self._emit(
            "run-finished",
            "error" if status == "failed" else "info",
            status,
            f"{status} in {_duration(seconds)}{tail}{text_fix}",
            duration=round(seconds, 6),
            guidance=fix if self.log_format == "json" else None,
        )


#: SGR colours: green, red, yellow, dim; the end of a colour.
_GREEN, _RED, _YELLOW, _DIM, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[2m", "\x1b[0m"
_MARK_COLOURS = {"completed": _GREEN, "failed": _RED, "skipped": _DIM, "paused": _YELLOW, "continued": _YELLOW}
_OUTCOME_COLOURS = {"completed": _GREEN, "failed": _RED, "cancelled": _YELLOW, "interrupted": _YELLOW}
_LEVEL_COLOURS = {"error": _RED, "warning": _YELLOW}


def paint(text: str, event: str, status: str | None, level: str) -> str:
    """A line of a run's text log in colour: a step's mark by its outcome, the run's last
    line by how it ended, an error's or warning's level. Only our own words are painted:
    `text` has been made safe, and nothing it holds can open or close a colour."""
    if event in ("step-finished", "step-skipped", "paused") and status in _MARK_COLOURS:
        indent = len(text) - len(text.lstrip(" "))
        mark = text[indent : indent + 1]
        return f"{text[:indent]}{_MARK_COLOURS[status]}{mark}{_RESET}{text[indent + 1 :]}"
    if event == "run-finished" and status in _OUTCOME_COLOURS:
        word, _, rest = text.partition(" ")
        return f"\x1b[1m{_OUTCOME_COLOURS[status]}{word}{_RESET} {rest}"
    if event == "message" and level in _LEVEL_COLOURS:
        prefix = f"[{level}]"
        at = text.find(prefix)
        if at >= 0 and not text[:at].strip():
            return f"{text[:at]}{_LEVEL_COLOURS[level]}{prefix}{_RESET}{text[at + len(prefix) :]}"
    if event == "notice":
        return f"{_DIM}{text}{_RESET}"
    return text


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms" if seconds >= 0.001 else f"{seconds * 1000:.1f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
