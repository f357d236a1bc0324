"""The built-in `openai` AI adapter: an OpenAI-compatible chat-completions endpoint,
its answer streamed as server-sent events.

It sends through `send_streaming` (network.py's one HTTP opener), which always verifies
certificates; an API key is never sent over plain http:// to another machine.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

from catalyst_dsl.project.addresses import CLEAR_TEXT_FIX, in_clear_text
from catalyst_dsl.runtime.adapters.attempts import (
    ATTEMPTS,
    BACKOFF_SECONDS,
    INACTIVITY_SECONDS,
    MAX_ERROR_BODY,
    RATE_LIMITED,
    TAIL_CHARS,
    Attempts,
    RateLimiter,
    Transient,
    deadline_of,
    seconds_of,
    tail,
)
from catalyst_dsl.runtime.adapters.interface import AI_ADAPTER_ERROR, AI_ADAPTER_UNAVAILABLE, AdapterError, Unusable
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.network import MAX_LINE_BYTES, HttpRequest, StreamingResponse, open_response

OPENAI = "openai"

#: The secret (from the secret providers) and the environment variable holding the API key.
API_KEY_SECRET = "openai-api-key"
API_KEY_ENV = "OPENAI_API_KEY"

#: An `openai` step with no model (checked at pre-flight too, see choice.py).
NO_MODEL = Unusable(
    "the openai AI adapter has no model: the step names none and openai-model is not set",
    "set openai-model in catalyst.toml, or `model:` on the step",
)


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
        return tail(text) or "(no body)"
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


class OpenAIAdapter(Attempts):
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
                AI_ADAPTER_UNAVAILABLE, clear_text_problem(self.url), guidance=f"fix openai-base-url: {CLEAR_TEXT_FIX}"
            )
        model = options.get("model") or self.model
        if not model:
            raise AdapterError(AI_ADAPTER_UNAVAILABLE, NO_MODEL.problem, guidance=NO_MODEL.fix)
        body = json.dumps(
            self.payload(prompt, tools, {**options, "model": model}), ensure_ascii=False, default=str
        ).encode("utf-8")
        inactivity = seconds_of(options.get("inactivityTimeout"))
        inactivity = self.inactivity_timeout if inactivity is None else inactivity
        return self._stream(
            lambda left: self._once(body, inactivity if left is None else max(0.001, min(inactivity, left))),
            deadline_of(options),
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
                raise Transient(error.message) from None
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
                    raise Transient(error.message) from None
                raise
            if not finished:
                raise Transient(f"{self.url} closed the stream before [DONE]")

    def _check_status(self, response: StreamingResponse) -> None:
        status = response.status
        if 200 <= status < 300:
            return
        message = _error_message(response.read(MAX_ERROR_BODY))
        said = f"{self.url} answered {status}: {message}"
        if status == 429:
            raise Transient(said, RATE_LIMITED, _retry_after(response.header("Retry-After")))
        if status >= 500 or status == 408:
            raise Transient(said)
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


def clear_text_problem(url: str) -> str:
    return (
        f"the OpenAI-compatible server at {in_clear_text(url)} is reached over plain http://, "
        "so the API key would cross the network unencrypted; it is not sent"
    )
