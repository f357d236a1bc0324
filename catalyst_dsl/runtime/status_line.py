"""The live line under a run's output on a terminal: which step is running and for how long.

A step that prints nothing for a while (a test suite, an AI's answer) would leave the
terminal looking stuck; after a second of silence this line names it and counts
(`⠋ running tests (bash) · 12s`), redrawn in place with a carriage return. It is cleared
before any other line is written, held while a person is asked something, and never
drawn when the output is not a terminal (a pipe, a file, a CI log).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from catalyst_dsl._internal.terminal_text import cut_to_columns, safe_text

#: A braille spinner: one frame per tick, so the line shows life even between seconds.
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: Erase the line the cursor is on and go back to its start.
ERASE = "\r\x1b[2K"


def elapsed_text(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


class StatusLine:
    """Shares the run's output and its lock with the other lines (`Events`): every draw and
    every clear happens under that lock, so a line is never written into the middle of it."""

    def __init__(
        self,
        out: TextIO,
        lock: threading.Lock,
        *,
        colour: bool = False,
        delay: float = 1.0,
        tick: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out, self.lock, self.colour = out, lock, colour
        self.delay, self.tick, self.clock = delay, tick, clock
        #: The steps running, by (thread, depth): a parallel group's branches run in threads.
        self.running: dict[tuple[int, int], tuple[str, float]] = {}
        self.quiet_since = clock()
        self.shown = False
        self.held = 0
        self.frame = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- what the run tells it (each call holds no lock; the dict is changed under ours) --

    def started(self, label: str, depth: int) -> None:
        me = threading.get_ident()
        with self.lock:
            # A step starting at a depth ends what this thread ran at that depth and below
            # (a `var` or a `return` reports no finish).
            for key in [k for k in self.running if k[0] == me and k[1] >= depth]:
                del self.running[key]
            self.running[(me, depth)] = (safe_text(label), self.clock())
            self.quiet_since = self.clock()
        if self._thread is None:
            import atexit

            # A run ended by an error the run does not report itself (a state it cannot
            # write) leaves no line behind when the process exits.
            atexit.register(self.stop)
            self._thread = threading.Thread(target=self._loop, name="catalyst-status", daemon=True)
            self._thread.start()

    def ended(self, depth: int) -> None:
        me = threading.get_ident()
        with self.lock:
            for key in [k for k in self.running if k[0] == me and k[1] >= depth]:
                del self.running[key]

    def clear_locked(self) -> None:
        """Erase the line before another is written (the caller holds the lock)."""
        self.quiet_since = self.clock()
        if self.shown:
            self.out.write(ERASE)
            self.shown = False

    @contextmanager
    def holding(self) -> Iterator[None]:
        """No line while a person is asked something: the prompt stays as it was written."""
        with self.lock:
            self.held += 1
            self.clear_locked()
            self.out.flush()
        try:
            yield
        finally:
            with self.lock:
                self.held -= 1
                self.quiet_since = self.clock()

    def stop(self) -> None:
        self._stop.set()
        with self.lock:
            self.running.clear()
            self.clear_locked()
            try:
                self.out.flush()
            except (OSError, ValueError):
                pass

    # -- the drawing thread -----------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.wait(self.tick):
            with self.lock:
                try:
                    self.draw_locked()
                except (OSError, ValueError):
                    return  # the terminal went away: nothing more to draw on

    def draw_locked(self) -> None:
        now = self.clock()
        if self.held or not self.running or now - self.quiet_since < self.delay:
            return
        label, since = list(self.running.values())[-1]  # the step started last
        self.frame = (self.frame + 1) % len(FRAMES)
        spinner = f"\x1b[36m{FRAMES[self.frame]}\x1b[0m" if self.colour else FRAMES[self.frame]
        tail = f" · {elapsed_text(now - since)}"
        import shutil  # here: a run that never shows the line (a pipe, a what-if) does not import it

        # Columns, not characters: a wide name that wrapped left a row behind at each redraw.
        columns = shutil.get_terminal_size((80, 24)).columns - 1
        room = max(1, columns - 2)  # after the spinner and its space
        line = cut_to_columns(f"running {label}{tail}", room)
        if not line.endswith(tail):
            line = cut_to_columns(cut_to_columns(f"running {label}", max(1, room - len(tail))) + tail, room)
        self.out.write(f"{ERASE}{spinner} {line}")
        self.out.flush()
        self.shown = True
