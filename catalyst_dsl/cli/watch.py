"""`catalyst check --watch`: check, then check again whenever a file the check read, a
playbook in the folders it scanned or the project's settings change.

Changes are found by polling each file's modification time and size (no dependency, the
same on every system); a check runs once the files have stopped changing for one poll, so
an editor's save in several writes is checked once. Ctrl-C (or SIGTERM) ends the watch
with exit 0: stopping is how a watch ends, not a failure.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from typing import Callable, Iterable

import click

#: Seconds between two looks at the files.
POLL_SECONDS = 0.3
#: The stamp of a file that is not there.
_GONE = (-1, -1)
#: What clears a terminal and puts the cursor at its top.
_CLEAR = "\x1b[2J\x1b[H"


def watch(check_once: Callable[[], tuple[int, list[str]]], roots: Iterable[str], settings: str | None) -> int:
    """Run `check_once` now and after each change; it returns its exit status and the files
    it read. Returns 0 when interrupted."""
    from catalyst_dsl._internal.terminal_text import is_terminal
    from catalyst_dsl.cli.run import _terminate_as_interrupt

    _terminate_as_interrupt()  # SIGTERM (a supervisor, a test's kill) stops it as Ctrl-C does
    terminal = is_terminal(sys.stdout)
    roots = [os.path.abspath(r) for r in roots]
    extra = [settings] if settings else []
    try:
        read: list[str] = []
        first = True
        while True:
            if terminal and not first:
                click.echo(_CLEAR, nl=False)
            # The files as the check found them: a change made while it runs is a change too.
            before = _stamps([*read, *extra], roots)
            read = _one_run(check_once, read)
            first = False
            click.echo(f"[{datetime.now():%H:%M:%S}] watching for changes (Ctrl-C to stop)")
            sys.stdout.flush()  # a pipe or a file gets each run as it ends, not when a buffer fills
            # A file the check read that was not looked at before it (one it called from
            # outside the folders) counts as changed once, so the next run has it in `before`.
            _wait_for_change(lambda: _stamps([*read, *extra], roots), before)
            if not terminal:
                click.echo("-" * 40)
    except KeyboardInterrupt:
        click.echo("stopped watching", err=True)
        return 0


def _one_run(check_once, read: list[str]) -> list[str]:
    """One check; a mistake in how it was asked (a folder emptied since) is printed, and the
    watch goes on looking at what it read before."""
    try:
        _, read = check_once()
    except click.UsageError as mistake:
        click.echo(f"error: {mistake.format_message()}", err=True)
    return read


def _wait_for_change(stamps: Callable[[], dict], seen: dict) -> None:
    # A file gone when the check started and no longer read by it (a playbook renamed) is
    # no change: only files that are there, or were there, count.
    seen = _present(seen)
    while True:
        time.sleep(POLL_SECONDS)
        now = _present(stamps())
        if now != seen:
            # Let a save of several writes finish before checking.
            while True:
                time.sleep(POLL_SECONDS)
                settled = _present(stamps())
                if settled == now:
                    return
                now = settled


def _present(stamps: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    return {path: stamp for path, stamp in stamps.items() if stamp != _GONE}


def _stamps(files: list[str], roots: list[str]) -> dict[str, tuple[int, int]]:
    """Modification time and size of each file read and of every playbook-like file under
    the folders watched (a new or removed playbook is a change too)."""
    found: dict[str, tuple[int, int]] = {}
    for path in files:
        _stamp(path, found)
    for root in roots:
        if os.path.isdir(root):
            for folder, dirs, names in os.walk(root):
                dirs[:] = [d for d in dirs if not d.startswith(".") or d == ".xe"]
                for name in names:
                    if name.endswith((".yaml", ".yml", ".md", ".cantbook")):
                        _stamp(os.path.join(folder, name), found)
        else:
            _stamp(root, found)
    return found


def _stamp(path: str, found: dict) -> None:
    try:
        status = os.stat(path)
    except OSError:
        found[path] = _GONE  # gone: its coming back is a change too
        return
    found[path] = (status.st_mtime_ns, status.st_size)
