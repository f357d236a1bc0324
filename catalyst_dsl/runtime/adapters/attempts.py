"""What the built-in real AI adapters share: the runner of programs, the rate limit, and
the attempts with backoff on transient failures:

* Three attempts with exponential backoff (0.5 s, then 1 s) on transient failures: a
  connection that fails or drops, HTTP 429 (whose `Retry-After` is honoured) and 5xx, a
  program killed by a signal or exiting with 75 (EX_TEMPFAIL). A stream that dies is
  transient only while nothing of the answer has been yielded: the caller has already
  shown those chunks, so a second attempt would repeat or contradict them. After the
  first chunk such a death is `AIAdapterError` "the stream ended early".
* A rate limit (`ai-rate-limit`, requests per minute): one token bucket per process and
  rate, shared by every adapter and every `parallel` branch. Each attempt takes a token.
* Options: `timeout` (seconds left for the whole answer; the step's remaining time),
  `inactivityTimeout` (seconds or "30s": the longest silence of an HTTP stream),
  `model`, `role`, `context`, `maxTokens`, `temperature`, `return`.
* Tool grants are passed through as given and are empty unless the step lists some.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from catalyst_dsl.runtime.adapters.interface import AI_ADAPTER_ERROR, AI_ADAPTER_UNAVAILABLE, AdapterError

ATTEMPTS = 3
BACKOFF_SECONDS = 0.5
#: No wait between attempts is longer than this, whatever a `Retry-After` asks.
MAX_BACKOFF_SECONDS = 30.0
#: The longest an HTTP stream may stay silent, unless `inactivityTimeout` says otherwise.
INACTIVITY_SECONDS = 120.0
#: Exit code of a program that says "try again later" (sysexits.h EX_TEMPFAIL).
EX_TEMPFAIL = 75
#: How much of a program's stderr, or a server's error body, an error message quotes.
TAIL_LINES = 20
TAIL_CHARS = 2000
MAX_ERROR_BODY = 64 * 1024

RATE_LIMITED = "RateLimitExceeded"


# --- the process runner ----------------------------------------------------------------------------


class Runner(Protocol):
    """Runs a program to its end, feeding it `stdin` and calling `on_output(stream, line)` for
    each line of its stdout and stderr as it comes. Returns an object with `exit_code`,
    `stdout`, `stderr` and `timed_out` (a `gateway.ProcessOutcome`)."""

    def __call__(
        self,
        argv: Sequence[str],
        stdin: str,
        on_output: Callable[[str, str], None],
        timeout: float | None,
        env: Mapping[str, str],
    ) -> Any: ...


def gateway_runner(gateway) -> Runner:
    """A runner that runs programs through an `EffectsGateway` (in the project root),
    confined: an agent whose step grants writing tools (`CATALYST_AI_TOOLS`) may write
    where the playbook's grants allow; any other agent only scratch and temp."""
    from catalyst_dsl.actions.builtin import writing_tools

    def run(
        argv: Sequence[str],
        stdin: str,
        on_output: Callable[[str, str], None],
        timeout: float | None,
        env: Mapping[str, str],
    ):
        tools = [tool for tool in str(env.get("CATALYST_AI_TOOLS", "")).split(",") if tool]
        writes = gateway.granted_patterns() if writing_tools(tools) else ()
        return gateway.run_process(
            argv, declared_writes=writes, cwd=None, env=env, timeout=timeout, on_output=on_output, stdin=stdin
        )

    return run


# --- the rate limit ----------------------------------------------------------------------------------


class RateLimiter:
    """A token bucket: `per_minute` requests a minute, `burst` of them back to back.

    A caller that finds the bucket empty reserves the next token (the count goes below
    zero) and sleeps until it is due, so concurrent callers are served in turn.
    """

    def __init__(
        self,
        per_minute: float,
        burst: int = 1,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not per_minute > 0:
            raise ValueError(f"a rate limit must be more than 0 requests a minute, not {per_minute!r}")
        self.per_minute = float(per_minute)
        self.burst = max(1, int(burst))
        self._per_second = self.per_minute / 60.0
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self, deadline: float | None = None) -> float:
        """Take a token, sleeping until one is due; the seconds waited.

        StepTimeout (nothing taken) when the token would come after `deadline`.
        """
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self._per_second)
            self._last = now
            wait = 0.0 if self._tokens >= 1 else (1 - self._tokens) / self._per_second
            if deadline is not None and now + wait > deadline:
                raise AdapterError(
                    "StepTimeout",
                    f"the AI rate limit ({self.per_minute:g} requests a minute) allows the next "
                    f"request in {wait:.1f}s, after the step's timeout",
                )
            self._tokens -= 1
        if wait > 0:
            self._sleep(wait)
        return wait


_LIMITERS: dict[float, RateLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def shared_limiter(per_minute: float | None) -> RateLimiter | None:
    """The process's bucket for this rate (None: no limit)."""
    if per_minute is None:
        return None
    if isinstance(per_minute, bool) or not isinstance(per_minute, (int, float)) or not per_minute > 0:
        raise AdapterError(
            AI_ADAPTER_UNAVAILABLE,
            f"the ai-rate-limit setting is {per_minute!r}; it must be a number of requests a minute above 0",
            guidance="fix ai-rate-limit in catalyst.toml, or remove it for no limit",
        )
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(float(per_minute))
        if limiter is None:
            limiter = _LIMITERS[float(per_minute)] = RateLimiter(per_minute)
        return limiter


# --- attempts --------------------------------------------------------------------------------------


class Transient(Exception):
    """A failure another attempt may not meet; `code` is raised when attempts run out."""

    def __init__(self, message: str, code: str = AI_ADAPTER_ERROR, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.retry_after = retry_after


def time_left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def deadline_of(options: Mapping[str, object]) -> float | None:
    seconds = seconds_of(options.get("timeout"))
    return None if seconds is None else time.monotonic() + seconds


def seconds_of(value: object) -> float | None:
    if value is None:
        return None
    from catalyst_dsl.dialects.values import parse_duration

    seconds = parse_duration(value)
    if seconds is None:
        raise AdapterError(AI_ADAPTER_ERROR, f"{value!r} is not a duration (seconds, or a text such as 30s or 5m)")
    return seconds


class Attempts:
    """Retries, backoff and the rate limit around one adapter's single attempts."""

    name = "ai"

    def __init__(
        self, *, limiter: RateLimiter | None, attempts: int, backoff: float, sleep: Callable[[float], None]
    ) -> None:
        self.limiter = limiter
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self._sleep = sleep

    def _stream(self, once: Callable[[float | None], Iterator[str]], deadline: float | None) -> Iterator[str]:
        for number in range(1, self.attempts + 1):
            if self.limiter is not None:
                self.limiter.acquire(deadline)
            sent = False
            stream = once(time_left(deadline))
            try:
                for chunk in stream:
                    sent = True
                    yield chunk
                return
            except Transient as problem:
                if sent:
                    raise AdapterError(
                        AI_ADAPTER_ERROR,
                        f"the {self.name} AI adapter failed: the stream ended early, "
                        f"after part of the answer ({problem.message})",
                        guidance="the partial answer was not kept; "
                        "retry the step (errorPolicy retryCount) to ask again",
                    ) from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise AdapterError(
                        "StepTimeout",
                        f"the {self.name} AI adapter did not answer within the step's timeout ({problem.message})",
                    ) from None
                if number == self.attempts:
                    raise AdapterError(
                        problem.code,
                        f"the {self.name} AI adapter failed {number} times; the last time: {problem.message}",
                        guidance=transient_help(problem.code),
                    ) from None
                delay = self.backoff * 2 ** (number - 1) if problem.retry_after is None else problem.retry_after
                delay = min(max(0.0, delay), MAX_BACKOFF_SECONDS)
                if deadline is not None and time.monotonic() + delay >= deadline:
                    raise AdapterError(
                        "StepTimeout",
                        f"the {self.name} AI adapter failed ({problem.message}) and the step's timeout "
                        f"leaves no time to try again",
                    ) from None
                self._sleep(delay)
            finally:
                stream.close()  # the caller stopped reading: the attempt lets go of its stream


def transient_help(code: str) -> str:
    if code == RATE_LIMITED:
        return (
            "the provider limits requests: lower ai-rate-limit, or let errorPolicy retry later "
            "(RateLimitExceeded: {action: Continue, retryCount: 3})"
        )
    return "the provider or the program failed repeatedly; check that it is up, then resume the run"


def tail(text: str) -> str:
    lines = text.strip().splitlines()[-TAIL_LINES:]
    joined = "\n".join(lines)
    return joined[-TAIL_CHARS:]
