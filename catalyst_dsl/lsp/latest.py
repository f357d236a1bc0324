"""Edits checked newest first: a storm of changes costs one check, not one per change.

The server applies every change to its copy of the document as it arrives (pygls does,
on the thread that reads the messages) and hands the text here. One worker thread checks
and publishes; while it checks, further edits of a document replace the text waiting for
it, so when it is done it takes the newest text, never the ones in between; and it starts
no check while more messages are waiting to be read (the rest of the burst). A check of a
text that is no longer the newest is not published (server.py compares versions), so the
diagnostics of the last edit of a burst arrive at most one check after it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

log = logging.getLogger("catalyst.lsp")


#: The longest a check waits for the messages still coming in to be read.
MAX_SETTLE = 0.5


class NewestText:
    """The text waiting to be checked, per document: only the newest."""

    def __init__(self, check: Callable[[str, int | None, str], None]) -> None:
        self._check = check
        #: Whether more messages are waiting to be read (framing.GuardedInput.pending).
        self.busy: Callable[[], bool] = lambda: False
        self._waiting: dict[str, tuple[int | None, str]] = {}
        self._wake = threading.Condition()
        self._worker: threading.Thread | None = None

    def put(self, uri: str, version: int | None, text: str) -> None:
        with self._wake:
            self._waiting[uri] = (version, text)
            if self._worker is None or not self._worker.is_alive():
                self._start_worker()
            self._wake.notify()

    def drop(self, uri: str) -> None:
        """A document closed: its waiting text is checked no more."""
        with self._wake:
            self._waiting.pop(uri, None)

    def _start_worker(self) -> None:
        """Called holding the lock."""
        self._worker = threading.Thread(target=self._run, name="catalyst-check", daemon=True)
        self._worker.start()

    def _run(self) -> None:
        try:
            self._loop()
        except Exception:
            # Without a worker no document would get diagnostics again for the rest of the
            # session, while hover and completion still answer: say so once, and go on.
            log.exception("the checking thread stopped on an error; a new one takes over")
            with self._wake:
                self._start_worker()

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._waiting:
                    self._wake.wait()
                # While messages are still coming in, they are read first (they may be
                # newer edits): a check started now would hold the interpreter while they
                # wait, and its result would be stale at once. A client that never pauses
                # still gets diagnostics every MAX_SETTLE seconds.
                settled = time.monotonic() + MAX_SETTLE
                while self.busy() and time.monotonic() < settled:
                    self._wake.wait(0.002)
                if not self._waiting:
                    continue  # the documents waiting were closed meanwhile (the wait lets go of the lock)
                uri = next(iter(self._waiting))
                version, text = self._waiting.pop(uri)
            try:
                self._check(uri, version, text)
            except Exception:  # a bug in a check must not stop every later check
                log.exception("the check of %s (version %s) failed", uri, version)
