"""The built-in real AI adapters: a local program (`command`) and an OpenAI-compatible endpoint (`openai`).

Both follow the `AIAdapter` protocol of `adapters.py`: `invoke(prompt, tools, options)`
returns an iterator of text chunks, streamed as they arrive, and failures are
`AdapterError`s with codes error policies can match.

What they share:

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

The command adapter never starts a process itself: it gets a `Runner` (see
`gateway_runner`), so the program runs through the effects gateway like every other.
The OpenAI adapter sends through `send_streaming`, which always verifies certificates.
"""

from __future__ import annotations

import json
import os
import shlex
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from catalyst_dsl.runtime.adapters import (
    AI_ADAPTER_ERROR,
    AI_ADAPTER_UNAVAILABLE,
    AdapterError,
    AdapterFactory,
    Unusable,
)
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.project.addresses import CLEAR_TEXT_FIX, in_clear_text, on_this_machine
from catalyst_dsl.runtime.effects.network import MAX_LINE_BYTES, HttpRequest, StreamingResponse, open_response

COMMAND = "command"
OPENAI = "openai"

#: The secret (from the secret providers) and the environment variable holding the API key.
API_KEY_SECRET = "openai-api-key"
API_KEY_ENV = "OPENAI_API_KEY"

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

#: An `openai` step with no model (checked at pre-flight too, see ai_choice.py).
NO_MODEL = Unusable(
    "the openai AI adapter has no model: the step names none and openai-model is not set",
    "set openai-model in catalyst.toml, or `model:` on the step",
)


# --- the process runner ----------------------------------------------------------------------------


class Runner(Protocol):
    """Runs a program to its end, feeding it `stdin` and calling `on_output(stream, line)` for
    each line of its stdout and stderr as it comes. Returns an object with `exit_code`,
    `stdout`, `stderr` and `timed_out` (an `effects.performing.ProcessOutcome`)."""

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


class _Transient(Exception):
    """A failure another attempt may not meet; `code` is raised when attempts run out."""

    def __init__(self, message: str, code: str = AI_ADAPTER_ERROR, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.retry_after = retry_after


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _deadline(options: Mapping[str, object]) -> float | None:
    seconds = _seconds(options.get("timeout"))
    return None if seconds is None else time.monotonic() + seconds


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    from catalyst_dsl.dialects.values import parse_duration

    seconds = parse_duration(value)
    if seconds is None:
        raise AdapterError(AI_ADAPTER_ERROR, f"{value!r} is not a duration (seconds, or a text such as 30s or 5m)")
    return seconds


class _Attempts:
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
            stream = once(_left(deadline))
            try:
                for chunk in stream:
                    sent = True
                    yield chunk
                return
            except _Transient as problem:
                if sent:
                    raise AdapterError(
                        AI_ADAPTER_ERROR,
                        f"the {self.name} AI adapter failed: the stream ended early, after part of the answer ({problem.message})",
                        guidance="the partial answer was not kept; retry the step (errorPolicy retryCount) to ask again",
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
                        guidance=_transient_help(problem.code),
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


def _transient_help(code: str) -> str:
    if code == RATE_LIMITED:
        return "the provider limits requests: lower ai-rate-limit, or let errorPolicy retry later (RateLimitExceeded: {action: Continue, retryCount: 3})"
    return "the provider or the program failed repeatedly; check that it is up, then resume the run"


def _tail(text: str) -> str:
    lines = text.strip().splitlines()[-TAIL_LINES:]
    joined = "\n".join(lines)
    return joined[-TAIL_CHARS:]


# --- the command adapter ----------------------------------------------------------------------------

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


class CommandAdapter(_Attempts):
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
        deadline = _deadline(options)
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
        stderr = _tail(outcome.stderr)
        said = f"; its stderr ends with:\n{stderr}" if stderr else " (no stderr)"
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        if sent or code < 0 or code == EX_TEMPFAIL:
            # Transient, or after part of the answer (then the stream ended early).
            raise _Transient(f"the AI program `{program}` {how}{said}")
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


# --- HTTP streaming --------------------------------------------------------------------------------

# The streaming response and its sender live in network.py, with the one HTTP opener.
send_streaming = open_response


# --- the OpenAI-compatible adapter -----------------------------------------------------------------

_DONE = object()


def _events(lines: Iterator[str]) -> Iterator[Any]:
    """The `data` of each Server-Sent Event, parsed from JSON, or `_DONE` for `[DONE]`.

    An event is dispatched at its blank line, or as soon as its data is complete JSON
    (some servers leave out the blank lines). Comments, `event:`, `id:` and `retry:`
    fields are skipped.
    """
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield _event("\n".join(data))
                data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field != "data":
            continue
        data.append(value[1:] if value.startswith(" ") else value)
        joined = "\n".join(data)
        if joined.strip() == "[DONE]":
            data = []
            yield _DONE
            continue
        try:
            parsed = json.loads(joined)
        except ValueError:
            continue  # not complete yet: wait for more lines or the blank line
        data = []
        yield parsed
    if data:
        yield _event("\n".join(data))


def _event(text: str) -> Any:
    if text.strip() == "[DONE]":
        return _DONE
    try:
        return json.loads(text)
    except ValueError:
        raise AdapterError(AI_ADAPTER_ERROR, f"the server sent an event that is not JSON: {text[:200]!r}") from None


def _error_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        document = json.loads(text)
    except ValueError:
        return _tail(text) or "(no body)"
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:TAIL_CHARS]
    if isinstance(error, str):
        return error[:TAIL_CHARS]
    return text[:TAIL_CHARS]


def chat_completions_url(base_url: str) -> str:
    """`…/v1/chat/completions` under `base_url`, which may end in `/v1` or not."""
    base = base_url.rstrip("/")
    return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


class OpenAIAdapter(_Attempts):
    """An OpenAI-compatible `/v1/chat/completions` endpoint, streamed (`stream: true`).

    The prompt is the user message; `role` and `context` become system messages, `return`
    a system line saying what the answer must hold; `maxTokens` and `temperature` are
    sent as `max_tokens` and `temperature`. Tool grants go in the request's `metadata`
    (`catalyst_tools`, comma-separated) only when there are some: a chat completion
    cannot use tools, so none is the default. The API key (None for servers that need
    none) is sent as a bearer token and never appears in a message or a repr.
    """

    name = OPENAI

    #: A chat completion reads no files and uses no skills, so those restrictions hold; it
    #: has no agents, skills or profiles to choose, so it refuses `agent`, `skill`, `profile`.
    identity_keys = frozenset({"command", "readPaths", "skills"})

    def __init__(
        self,
        base_url: str,
        model: str | None,
        api_key: str | None = None,
        *,
        send: Callable[[HttpRequest], StreamingResponse] = send_streaming,
        limiter: RateLimiter | None = None,
        attempts: int = ATTEMPTS,
        backoff: float = BACKOFF_SECONDS,
        inactivity_timeout: float = INACTIVITY_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(limiter=limiter, attempts=attempts, backoff=backoff, sleep=sleep)
        self.url = chat_completions_url(base_url)
        self.model = model
        self._api_key = api_key
        self._send = send
        self.inactivity_timeout = inactivity_timeout

    def __repr__(self) -> str:
        return f"OpenAIAdapter({self.url!r}, model={self.model!r}, api_key={'***' if self._api_key else None})"

    def invoke(self, prompt: str, tools: Sequence[str], options: Mapping[str, object]) -> Iterator[str]:
        if self._api_key and in_clear_text(self.url):
            raise AdapterError(
                AI_ADAPTER_UNAVAILABLE, _clear_text_problem(self.url), guidance=f"fix openai-base-url: {CLEAR_TEXT_FIX}"
            )
        model = options.get("model") or self.model
        if not model:
            raise AdapterError(AI_ADAPTER_UNAVAILABLE, NO_MODEL.problem, guidance=NO_MODEL.fix)
        body = json.dumps(
            self.payload(prompt, tools, {**options, "model": model}), ensure_ascii=False, default=str
        ).encode("utf-8")
        inactivity = _seconds(options.get("inactivityTimeout"))
        inactivity = self.inactivity_timeout if inactivity is None else inactivity
        return self._stream(
            lambda left: self._once(body, inactivity if left is None else max(0.001, min(inactivity, left))),
            _deadline(options),
        )

    def payload(self, prompt: str, tools: Sequence[str], options: Mapping[str, object]) -> dict[str, Any]:
        """The JSON body of the request (without the key, which is a header)."""
        messages = []
        if options.get("role"):
            messages.append({"role": "system", "content": str(options["role"])})
        if options.get("context") is not None:
            context = options["context"]
            shown = (
                context if isinstance(context, str) else json.dumps(context, ensure_ascii=False, indent=2, default=str)
            )
            messages.append({"role": "system", "content": f"Context:\n{shown}"})
        if options.get("return"):
            messages.append({"role": "system", "content": f"Your answer must contain: {options['return']}"})
        messages.append({"role": "user", "content": prompt})
        payload: dict[str, Any] = {"model": str(options["model"]), "messages": messages, "stream": True}
        if options.get("maxTokens") is not None:
            payload["max_tokens"] = int(options["maxTokens"])
        if options.get("temperature") is not None:
            payload["temperature"] = options["temperature"]
        if tools:
            payload["metadata"] = {"catalyst_tools": ",".join(str(tool) for tool in tools)}
        return payload

    def _once(self, body: bytes, timeout: float) -> Iterator[str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            response = self._send(HttpRequest("POST", self.url, headers, body, timeout))
        except StepError as error:
            if error.code in ("ConnectionError", "StepTimeout"):
                raise _Transient(error.message) from None
            raise
        with response:
            self._check_status(response)
            kind = (response.header("Content-Type") or "").split(";")[0].strip().lower()
            if kind == "application/json":
                # The server ignored `stream: true`: the whole answer in one document.
                yield from self._whole(response)
                return
            finished = False
            try:
                for event in _events(response.lines()):
                    if event is _DONE:
                        return
                    content, done = self._delta(event)
                    if content:
                        yield content
                    finished = finished or done
            except StepError as error:
                if error.code in ("ConnectionError", "StepTimeout"):
                    raise _Transient(error.message) from None
                raise
            if not finished:
                raise _Transient(f"{self.url} closed the stream before [DONE]")

    def _check_status(self, response: StreamingResponse) -> None:
        status = response.status
        if 200 <= status < 300:
            return
        message = _error_message(response.read(MAX_ERROR_BODY))
        said = f"{self.url} answered {status}: {message}"
        if status == 429:
            raise _Transient(said, RATE_LIMITED, _retry_after(response.header("Retry-After")))
        if status >= 500 or status == 408:
            raise _Transient(said)
        guidance = {
            401: f"check the API key (the secret '{API_KEY_SECRET}' or ${API_KEY_ENV})",
            403: f"check the API key (the secret '{API_KEY_SECRET}' or ${API_KEY_ENV}) and what it may use",
            404: "check openai-base-url and the model name",
        }.get(status, "check the request the step makes")
        raise AdapterError(AI_ADAPTER_ERROR, said, metadata={"status": status}, guidance=guidance)

    @staticmethod
    def _delta(event: Any) -> tuple[str | None, bool]:
        if not isinstance(event, dict):
            raise AdapterError(
                AI_ADAPTER_ERROR, f"the server sent an event that is not a JSON object: {str(event)[:200]!r}"
            )
        if event.get("error"):
            error = event["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise AdapterError(
                AI_ADAPTER_ERROR, f"the server reported an error in the stream: {str(message)[:TAIL_CHARS]}"
            )
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return None, False
        delta = choices[0].get("delta")
        content = delta.get("content") if isinstance(delta, dict) else None
        return (content if isinstance(content, str) else None), bool(choices[0].get("finish_reason"))

    def _whole(self, response: StreamingResponse) -> Iterator[str]:
        text = response.read(MAX_LINE_BYTES)
        try:
            document = json.loads(text)
            content = document["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise AdapterError(
                AI_ADAPTER_ERROR, f"{self.url} sent JSON that is not a chat completion: {text[:200]!r}"
            ) from None
        if isinstance(content, str) and content:
            yield content


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: use the normal backoff


# --- what a project has ----------------------------------------------------------------------------


def available_adapters(
    settings,
    secret: Callable[[str], str | None],
    *,
    runner: Runner | None = None,
    environ: Mapping[str, str] | None = None,
    mask: Callable[[str], None] | None = None,
) -> dict[str, AdapterFactory]:
    """The built-in adapters the project's settings configure, as factories for `select_adapter`:
    `command` when `ai-command` is set, `openai` when `openai-base-url` is.

    `runner` runs the command adapter's program (use `gateway_runner(gateway)`). The API
    key is looked up when an adapter is made: the secret `openai-api-key`, else
    `$OPENAI_API_KEY`, else none. A key from the environment is handed to `mask` (the
    run's masker), as `secret` does for the keys it finds.
    """
    environ = os.environ if environ is None else environ
    found: dict[str, AdapterFactory] = {}
    rate = getattr(settings, "ai_rate_limit", None)
    argv = getattr(settings, "ai_command", None)
    if argv:

        def command(options: Mapping[str, object]) -> CommandAdapter:
            if runner is None:
                raise AdapterError(
                    AI_ADAPTER_UNAVAILABLE, "the command AI adapter cannot run programs here (no runner was given)"
                )
            return CommandAdapter(argv, runner, limiter=shared_limiter(rate))

        found[COMMAND] = command
    base_url = getattr(settings, "openai_base_url", None)
    if base_url:

        def openai(options: Mapping[str, object]) -> OpenAIAdapter:
            key = secret(API_KEY_SECRET)
            if not key:
                key = environ.get(API_KEY_ENV) or None
                if key and mask is not None:
                    mask(key)
            return OpenAIAdapter(base_url, getattr(settings, "openai_model", None), key, limiter=shared_limiter(rate))

        found[OPENAI] = openai
    return found


def precedence(settings) -> tuple[str, ...]:
    """The adapters a step without `provider` gets, in order: `ai-adapters`, else the built-in
    ones the settings configure (`ai-command`: command, `openai-*`: openai). Empty: nothing is
    configured, and the mock answers."""
    listed = tuple(getattr(settings, "ai_adapters", ()) or ())
    if listed:
        return listed
    implied = []
    if getattr(settings, "ai_command", None):
        implied.append(COMMAND)
    if getattr(settings, "openai_base_url", None) or getattr(settings, "openai_model", None):
        implied.append(OPENAI)
    return tuple(implied)


def unusable_adapters(
    settings,
    secret: Callable[[str], str | None],
    *,
    environ: Mapping[str, str] | None = None,
    root: os.PathLike[str] | str | None = None,
) -> dict[str, Unusable]:
    """The built-in adapters that cannot be used with these settings, each with what is
    missing and where to set it. What only the provider can tell (a model it does not know,
    a key it refuses) is an error of the step that asks it."""
    environ = os.environ if environ is None else environ
    found: dict[str, Unusable] = {}
    argv = getattr(settings, "ai_command", None)
    if not argv:
        found[COMMAND] = Unusable(
            "the ai-command setting is not set",
            'set ai-command in ~/.config/catalyst/config.toml, e.g. ai-command = ["llm", "-m", "gpt-4o"]',
        )
    else:
        words = shlex.split(argv) if isinstance(argv, str) else [str(part) for part in argv]
        program = words[0] if words else ""
        if not _runnable(program, root, environ):
            found[COMMAND] = Unusable(
                f"its program `{program}` (the first word of ai-command) is not found on PATH or is not executable",
                "install the program, or fix ai-command in ~/.config/catalyst/config.toml",
            )
    base_url = getattr(settings, "openai_base_url", None)
    if not base_url:
        found[OPENAI] = Unusable(
            "the openai-base-url setting is not set",
            'set openai-base-url in ~/.config/catalyst/config.toml, e.g. openai-base-url = "https://api.openai.com/v1"',
        )
    else:
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            found[OPENAI] = Unusable(
                f"openai-base-url is {base_url!r}, which is not an http(s) URL",
                'fix openai-base-url in ~/.config/catalyst/config.toml, e.g. openai-base-url = "https://api.openai.com/v1"',
            )
        elif not (secret(API_KEY_SECRET) or environ.get(API_KEY_ENV)):
            if not on_this_machine(parts.hostname):
                found[OPENAI] = Unusable(
                    f"it has no API key for {parts.hostname}",
                    f"set the secret '{API_KEY_SECRET}' (CATALYST_SECRET_OPENAI_API_KEY, or secrets-file) or ${API_KEY_ENV}; "
                    f"only a server on this machine (localhost) is asked without a key",
                )
        elif in_clear_text(base_url):
            found[OPENAI] = Unusable(
                _clear_text_problem(base_url),
                f"fix openai-base-url in ~/.config/catalyst/config.toml: {CLEAR_TEXT_FIX}",
            )
    return found


def _clear_text_problem(url: str) -> str:
    return (
        f"the OpenAI-compatible server at {in_clear_text(url)} is reached over plain http://, "
        "so the API key would cross the network unencrypted; it is not sent"
    )


def _runnable(program: str, root: os.PathLike[str] | str | None, environ: Mapping[str, str]) -> bool:
    import shutil

    if not program:
        return False
    if os.sep in program or (os.altsep and os.altsep in program):
        # A path: the gateway starts programs in the project root.
        path = os.path.join(root, program) if root is not None and not os.path.isabs(program) else program
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return shutil.which(program, path=environ.get("PATH", os.defpath)) is not None
