"""`catalyst worker`: runs of the repository that are ready to go on, taken and run here.

With the shared store (runtime/state/shared/), a run that paused in one job and was
approved from another (a person, a webhook review) waits for someone to resume it. A
worker, started in a checkout of the repository, does that: it takes the lease of one
runnable run at its checkout's commit (shared/lease.py says which runs are runnable, and
why two workers never take the same one), resumes it as `catalyst resume` would, and
looks again. Each run is resumed in a session of its own, so nothing of one run (its
secrets, its events) reaches the next.
"""

from __future__ import annotations

import threading
from typing import Callable

from catalyst_dsl.runtime.errors import EXIT_OK, RunAbort


class Worker:
    """`make_session()`: a fresh session of the project, for each look and each run;
    `say(text)`: where the worker's own lines go."""

    def __init__(self, make_session: Callable[[], object], say: Callable[[str], None]) -> None:
        self.make_session = make_session
        self.say = say

    def work(self, *, once: bool, poll: float, stop: threading.Event | None = None) -> int:
        """Take and run runs until stopped; with `once`, at most one, and its exit code
        (0 when none was ready)."""
        stop = stop or threading.Event()
        while not stop.is_set():
            session = self.make_session()
            run_id = session.store.claim_next()
            if run_id is None:
                if once:
                    self.say("worker: no run is ready to go on")
                    return EXIT_OK
                stop.wait(poll)
                continue
            self.say(f"worker: took run {run_id}")
            try:
                code = session.resume(run_id, {})
            except RunAbort as refused:
                # One run that cannot go on here (its playbook gone, a snapshot that does
                # not verify) must not stop the worker: said, and left for a person.
                self.say(f"worker: run {run_id} cannot go on: {refused.message}")
                if refused.help:
                    self.say(f"  help: {refused.help}")
                code = refused.exit_code
            self.say(f"worker: run {run_id} stopped with exit {code}")
            if once:
                return code
        return EXIT_OK
