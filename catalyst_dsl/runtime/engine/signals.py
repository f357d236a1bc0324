"""What stops a run rather than fails a step: a pause for a person, a cancel, a retry a
person asked for, and the deadline of an enclosing step's timeout."""

from __future__ import annotations

import contextvars
import time
from typing import Sequence

from catalyst_dsl.runtime.errors import StepError

#: When the innermost step with a timeout that runs other steps must have finished
#: (a monotonic time); per thread of a `parallel` group through the context it copies.
DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("catalyst_deadline", default=float("inf"))


class Paused(Exception):
    """The run must wait for a person: unwinds to the top, where the snapshot is saved."""

    def __init__(
        self,
        path: str,
        step_id: str,
        kind: str,
        message: str,
        roles: Sequence[str],
        options: list,
        subject: str | None = None,
        person: bool = False,
    ) -> None:
        super().__init__(message)
        self.path, self.step_id, self.kind, self.message, self.roles, self.options = (
            path,
            step_id,
            kind,
            message,
            list(roles),
            options,
        )
        self.subject = subject
        #: Only a person releases it (an approval policy, an Inquire): autonomous mode does not.
        self.person = person


class Cancelled(Exception):
    """The run ends `cancelled`: `catalyst cancel` asked this live run to stop (no `by`: the
    request file says who), or a person answered a checkpoint with an option that cancels."""

    def __init__(self, by: str | None = None, reason: str | None = None) -> None:
        super().__init__(reason or "cancelled")
        self.by, self.reason = by, reason


class RetryStep(Exception):
    """A person answered `retry` to a failure at the terminal: the step runs again."""


#: What stops a run rather than fails a step, strongest first: when parallel branches
#: end several ways, the group raises the first kind met in this order.
STOPS: tuple[type[BaseException], ...] = (Cancelled, KeyboardInterrupt, Paused)


def check_deadline() -> None:
    if time.monotonic() > DEADLINE.get():
        raise StepError("StepTimeout", "the enclosing step's timeout passed before this step could start")
