"""The built-in `command` AI adapter: a local program, given the prompt on stdin, its
answer read from stdout as it comes.

It never starts a process itself: it gets a `Runner` (see attempts.gateway_runner), so
the program runs through the effects gateway like every other.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
from typing import Callable, Iterator, Mapping, Sequence

from catalyst_dsl.runtime.adapters.attempts import (
    ATTEMPTS,
    BACKOFF_SECONDS,
    EX_TEMPFAIL,
    Attempts,
    RateLimiter,
    Runner,
    Transient,
    deadline_of,
    tail,
)
from catalyst_dsl.runtime.adapters.interface import AI_ADAPTER_ERROR, AI_ADAPTER_UNAVAILABLE, AdapterError
from catalyst_dsl.runtime.errors import StepError

COMMAND = "command"


#: The environment variables that tell the program of the command adapter who answers
#: (lists comma-separated, like CATALYST_AI_TOOLS; an absent key sets none).
IDENTITY_ENV = {
    "command": "CATALYST_AI_COMMAND",
    "agent": "CATALYST_AI_AGENT",
    "skill": "CATALYST_AI_SKILL",
    "profile": "CATALYST_AI_PROFILE",
    "readPaths": "CATALYST_AI_READ_PATHS",
    "skills": "CATALYST_AI_SKILLS",
}


class CommandAdapter(Attempts):
    """Pipes the prompt to a program on stdin and streams its stdout, line by line.

    Each line is one chunk, with its newline. The program learns the rest from its
    environment: `CATALYST_AI_TOOLS` (granted tools, comma-separated; empty means
    read-only), `CATALYST_AI_MODEL` (when the step names one) and `CATALYST_AI_OPTIONS`
    (every option, as JSON). A non-zero exit is `AIAdapterError` quoting the end of its
    stderr; one after part of the answer is "the stream ended early". Killed by a signal,
    or exit 75, counts as transient and is tried again.

    If the caller stops reading early (its step timed out), the program is left to the
    runner's timeout (`options["timeout"]`), and its remaining output is dropped.
    """

    name = COMMAND
    #: Each is handed to the program, which enforces it (as it does `tools`): `command` as
    #: the prompt's first line, the others in IDENTITY_ENV; every call is a new process.
    identity_keys = frozenset({"command", "agent", "skill", "profile", "readPaths", "skills"})

    def __init__(
        self,
        argv: Sequence[str],
        runner: Runner,
        *,
        limiter: RateLimiter | None = None,
        attempts: int = ATTEMPTS,
        backoff: float = BACKOFF_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(limiter=limiter, attempts=attempts, backoff=backoff, sleep=sleep)
        argv = shlex.split(argv) if isinstance(argv, str) else [str(part) for part in argv]
        if not argv:
            raise AdapterError(
                AI_ADAPTER_UNAVAILABLE,
                "the command AI adapter has no program: the ai-command setting is empty",
                guidance="set ai-command in ~/.config/catalyst/config.toml, e.g. ai-command = [\"my-ai\", \"--quiet\"]",
            )
        self.argv = tuple(argv)
        self.runner = runner

    def __repr__(self) -> str:
        return f"CommandAdapter({list(self.argv)!r})"

    def invoke(self, prompt: str, tools: Sequence[str], options: Mapping[str, object]) -> Iterator[str]:
        env = {
            "CATALYST_AI_TOOLS": ",".join(str(tool) for tool in tools),
            "CATALYST_AI_OPTIONS": json.dumps(dict(options), ensure_ascii=False, default=str),
        }
        if options.get("model"):
            env["CATALYST_AI_MODEL"] = str(options["model"])
        for key, variable in IDENTITY_ENV.items():
            value = options.get(key)
            if value is not None:
                env[variable] = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
        deadline = deadline_of(options)
        return self._stream(lambda timeout: self._once(prompt, env, timeout), deadline)

    def _once(self, prompt: str, env: Mapping[str, str], timeout: float | None) -> Iterator[str]:
        import queue

        events: queue.Queue = queue.Queue()
        abandoned = threading.Event()

        def on_output(stream: str, line: str) -> None:
            if stream == "stdout" and not abandoned.is_set():
                events.put(("line", line))

        def work() -> None:
            try:
                events.put(("done", self.runner(self.argv, prompt, on_output, timeout, env)))
            except BaseException as exc:  # handed to the reading thread, which raises it
                events.put(("raised", exc))

        threading.Thread(target=work, name="catalyst-ai-command", daemon=True).start()
        sent = False
        try:
            while True:
                kind, value = events.get()
                if kind == "line":
                    sent = True
                    yield value + "\n"
                    continue
                if kind == "raised":
                    self._raise_start_failure(value)
                outcome = value
                break
        finally:
            abandoned.set()
        program = self.argv[0]
        if outcome.timed_out:
            raise AdapterError("StepTimeout", f"the AI program `{program}` was stopped after the step's timeout")
        code = outcome.exit_code
        if code == 0:
            return
        stderr = tail(outcome.stderr)
        said = f"; its stderr ends with:\n{stderr}" if stderr else " (no stderr)"
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        if sent or code < 0 or code == EX_TEMPFAIL:
            # Transient, or after part of the answer (then the stream ended early).
            raise Transient(f"the AI program `{program}` {how}{said}")
        raise AdapterError(
            AI_ADAPTER_ERROR,
            f"the AI program `{program}` {how}{said}",
            metadata={"exitCode": code, "stderr": stderr},
            guidance="run the program by hand with the same prompt on stdin to see why",
        )

    def _raise_start_failure(self, exc: BaseException) -> None:
        if isinstance(exc, StepError):
            raise exc
        if isinstance(exc, OSError):
            raise AdapterError(
                AI_ADAPTER_UNAVAILABLE,
                f"the AI program `{self.argv[0]}` cannot be started: {exc.strerror or exc}",
                guidance="check the ai-command setting: the program must be installed and on PATH",
            ) from None
        raise exc
