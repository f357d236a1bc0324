"""`http-get`, `http-post`, `http-put`, `http-patch`, `http-delete`.

Every request goes through the effects gateway (`ctx.gateway.send`), so a what-if
records what a run would send. The result is `{status, headers, body, bodyAsJson}`.

- A dict or list `body` is sent as JSON (`application/json` unless `contentType` says
  otherwise; a dict with `application/x-www-form-urlencoded` is sent as a form); a
  string is sent as text.
- `retries` retries GET, PUT and DELETE after a connection error, a timeout, a 5xx or
  a 429, waiting RETRY_BASE seconds, then twice as long each time (at most RETRY_CAP);
  a 429's or 503's `Retry-After` is honoured up to RETRY_AFTER_CAP. POST and PATCH are
  retried only with `retryMutation: true`: a repeated POST may create twice.
- A status outside `expectedStatus` (default: any 2xx) fails the step: 401
  `Unauthorized`, 403 `Forbidden`, 404 `NotFound`, 429 `RateLimitExceeded`, any other
  `HttpError`; the error's metadata is the result, so a catch block can read it.
- `responseSchema` validates `bodyAsJson` with jsonschema: `SchemaValidationFailed`
  names the JSON path of the first problem.
- The log shows the method and the URL (without user:password), never header values.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any, Mapping

from catalyst_dsl import __version__
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.jsvalues import as_written
from catalyst_dsl.runtime.effects.network import HttpRequest, HttpResponse

#: The first wait before a retry, in seconds; each further wait is twice as long.
RETRY_BASE = 0.5
#: No wait between retries is longer than this.
RETRY_CAP = 30.0
#: A server's Retry-After is honoured up to this many seconds.
RETRY_AFTER_CAP = 60.0
#: Seconds a request may take when its step has no timeout.
DEFAULT_TIMEOUT = 60.0
#: `retries` above this is refused as a mistake.
MAX_RETRIES = 10
#: How the action waits between attempts (tests replace it to record the delays).
sleep = time.sleep

USER_AGENT = f"catalyst/{__version__}"
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE"})
#: Step error codes of the sender that a retry may cure.
TRANSIENT_ERRORS = frozenset({"ConnectionError", "StepTimeout"})
#: Statuses with codes of their own; any other unexpected status is `HttpError`.
STATUS_CODES = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 429: "RateLimitExceeded"}

_TOKEN = LazyPattern(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


# -- sending, with retries (the GitHub actions use it too) ----------------------------------------------


def shown_url(url: str) -> str:
    """The URL as logs and messages show it: without a user name or password."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.username is None and parts.password is None:
            return url
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = host + (f":{parts.port}" if parts.port is not None else "")
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:
        return url.split("@", 1)[-1] if "@" in url else url


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value, whatever the case of its name."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def backoff(retry: int) -> float:
    """The wait before retry number `retry` (1, 2, …): RETRY_BASE doubled each time, capped."""
    return min(RETRY_CAP, RETRY_BASE * (2 ** (retry - 1)))


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a `Retry-After` header asks to wait (seconds or an HTTP date), or None."""
    value = header(headers, "Retry-After")
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # not "²", which isdigit() passes and float() refuses
        return float(value)
    try:
        import email.utils  # only a Retry-After date needs it

        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def exchange(
    ctx: ActionContext,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: bytes | None,
    retries: int,
    retry_mutation: bool = False,
    retry_rate_limit: bool = True,
) -> HttpResponse:
    """Send a request through the gateway, retrying what may be retried; the last response.

    Only errors of the network a retry may cure (ConnectionError, StepTimeout) are
    retried, with 5xx answers and (unless `retry_rate_limit` is False) 429s; a
    certificate error or a bad URL is raised at once.
    """
    method = method.upper()
    shown = shown_url(url)
    allowed = retries if (method in IDEMPOTENT or retry_mutation) else 0
    if getattr(ctx.gateway.performer, "simulated", False):
        allowed = 0  # a what-if makes one attempt and never waits
    attempt = 0
    while True:
        attempt += 1
        timeout = _request_timeout(ctx, method, shown)
        ctx.log("info", f"{method} {shown}" + (f" (retry {attempt - 1} of {allowed})" if attempt > 1 else ""), None)
        started = time.monotonic()
        try:
            response = ctx.gateway.send(HttpRequest(method, url, dict(headers), body, timeout))
        except StepError as error:
            if error.code not in TRANSIENT_ERRORS or attempt > allowed:
                raise
            delay, why = backoff(attempt), f"{error.code}: {error.message}"
            if not _wait(ctx, delay, f"{method} {shown} failed ({why})", attempt, allowed):
                raise
            continue
        ctx.log(
            "verbose",
            f"{method} {shown} answered {response.status} in {(time.monotonic() - started) * 1000:.0f} ms",
            None,
        )
        if not _transient(response.status, retry_rate_limit) or attempt > allowed:
            return response
        asked = retry_after(response.headers) if response.status in (429, 503) else None
        delay = min(asked, RETRY_AFTER_CAP) if asked is not None else backoff(attempt)
        if not _wait(ctx, delay, f"{method} {shown} answered {response.status}", attempt, allowed):
            return response


def _transient(status: int, rate_limit: bool) -> bool:
    return (status == 429 and rate_limit) or 500 <= status <= 599


def _request_timeout(ctx: ActionContext, method: str, shown: str) -> float:
    left = ctx.remaining()
    if left is None:
        return DEFAULT_TIMEOUT
    if left <= 0:
        raise StepError(
            "StepTimeout", f"{method} {shown} was not sent: the step's timeout of {ctx.timeout:g}s has passed"
        )
    return left


def _wait(ctx: ActionContext, delay: float, what: str, attempt: int, allowed: int) -> bool:
    """Wait before the next attempt; False when the step's timeout leaves no time for it."""
    left = ctx.remaining()
    if left is not None and delay >= left:
        ctx.log(
            "warning", f"{what}; no retry: the step's timeout leaves {left:.1f}s, less than the {delay:g}s wait", None
        )
        return False
    ctx.log("warning", f"{what}; retrying in {delay:g}s ({attempt} of {allowed})", None)
    sleep(delay)
    return True


# -- the request a step describes ---------------------------------------------------------------------


def _invalid(message: str, guidance: str | None = None) -> StepError:
    return StepError("InvalidConfig", message, guidance=guidance)


def _target(written: Any) -> tuple[str, str | None]:
    """The URL to send to, and the Basic credentials it carried (user:password@), if any."""
    if not isinstance(written, str) or not written.strip():
        raise _invalid(f"`url` should be an http:// or https:// URL, got {written!r}")
    url = written.strip()
    try:
        parts = urllib.parse.urlsplit(url)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError as error:
        raise _invalid(f"`url` is not a valid URL ({error}): {shown_url(url)[:200]}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise StepError("InvalidUrl", f"only http:// and https:// URLs can be requested, not {shown_url(url)[:80]!r}")
    if not parts.hostname or not port_ok:
        raise _invalid(f"`url` names no host (or a bad port): {shown_url(url)[:200]}")
    if any(c in url for c in "\r\n\0 \t"):
        raise _invalid(
            "`url` holds whitespace or control characters",
            (
                "values placed after the host are percent-encoded for you; "
                "encode the text you wrote and a base URL given as a value"
            ),
        )
    if not url.isascii():
        url = _ascii(parts)
    if parts.username is None and parts.password is None:
        return url, None
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    import base64  # basic authentication only

    credentials = base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")
    return shown_url(url), f"Basic {credentials}"


def _ascii(parts: urllib.parse.SplitResult) -> str:
    """A URL with non-ASCII characters as HTTP sends it: the host in IDNA, the rest percent-encoded."""
    try:
        host = (parts.hostname or "").encode("idna").decode("ascii")
    except UnicodeError:
        raise _invalid(f"`url` has a host name that cannot be encoded: {parts.hostname!r}") from None
    if ":" in host:
        host = f"[{host}]"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = (
        (urllib.parse.quote(userinfo, safe=":%") + "@" if userinfo else "")
        + host
        + (f":{parts.port}" if parts.port is not None else "")
    )
    keep = "/:@!$&'()*+,;=%~-._?"
    return urllib.parse.urlunsplit(
        (
            parts.scheme,
            netloc,
            urllib.parse.quote(parts.path, safe=keep),
            urllib.parse.quote(parts.query, safe=keep),
            urllib.parse.quote(parts.fragment, safe=keep),
        )
    )


def _text(value: Any) -> str:
    from catalyst_dsl.runtime.values.evaluate import to_text

    return to_text(value)


def _headers(config: dict) -> dict[str, str]:
    given = config.get("headers") or {}
    if not isinstance(given, dict):
        raise _invalid(f"`headers` should be a mapping of header names to values, got {type(given).__name__}")
    headers: dict[str, str] = {}
    for name, value in given.items():
        name = str(name)
        if not _TOKEN.match(name):
            raise _invalid(f"{name!r} is not a valid HTTP header name")
        if value is None:
            continue
        text = _text(value)
        if any(c in text for c in "\r\n\0"):
            # The value is not shown: headers often hold tokens.
            raise _invalid(
                f"the value of the header {name} holds a line break or NUL character", "headers are one line each"
            )
        try:
            text.encode("latin-1")
        except UnicodeEncodeError:
            raise _invalid(
                f"the value of the header {name} holds characters an HTTP header cannot carry",
                "encode it first, e.g. with encodeURIComponent()",
            ) from None
        headers[name] = text
    return headers


def _set(headers: dict[str, str], name: str, value: str, *, replace: bool) -> None:
    present = [key for key in headers if key.lower() == name.lower()]
    if present and not replace:
        return
    for key in present:
        del headers[key]
    headers[name] = value


def _media(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _body(config: dict, headers: dict[str, str]) -> bytes | None:
    """The bytes to send, setting Content-Type (contentType wins over a header, which wins over the default)."""
    body = config.get("body")
    content_type = config.get("contentType")
    if content_type is not None:
        if not isinstance(content_type, str) or any(c in content_type for c in "\r\n\0") or not content_type.strip():
            raise _invalid(f"`contentType` should be a media type such as application/json, got {content_type!r}")
        _set(headers, "Content-Type", content_type.strip(), replace=True)
    if body is None:
        return None
    chosen = header(headers, "Content-Type")
    if isinstance(body, str):
        _set(headers, "Content-Type", "text/plain; charset=utf-8", replace=False)
        return body.encode("utf-8")
    if isinstance(body, dict) and chosen is not None and _media(chosen) == "application/x-www-form-urlencoded":
        pairs = []
        for key, value in body.items():
            for item in value if isinstance(value, list) else [value]:
                pairs.append((str(key), _text(item)))
        return urllib.parse.urlencode(pairs).encode("utf-8")
    _set(headers, "Content-Type", "application/json", replace=False)
    try:
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise _invalid(f"`body` cannot be sent as JSON: {error}") from None


def _retries(config: dict) -> int:
    value = config.get("retries")
    if value is None:
        return 0
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value != value
        or value < 0
        or value != int(value)
    ):
        raise _invalid(f"`retries` should be a whole number of retries (0 or more), got {as_written(value)}")
    if value > MAX_RETRIES:
        raise _invalid(
            f"`retries` is at most {MAX_RETRIES}, got {int(value)}",
            "use the step's errorPolicy with retryCount for longer waits",
        )
    return int(value)


def _expected(config: dict) -> tuple[int, ...] | None:
    value = config.get("expectedStatus")
    if value is None:
        return None
    values = value if isinstance(value, list) else [value]
    statuses = []
    for item in values:
        if isinstance(item, bool) or not isinstance(item, (int, float)) or item != int(item) or not 100 <= item <= 599:
            given = as_written(value)
            raise _invalid(f"`expectedStatus` should be an HTTP status (100-599) or a list of them, got {given}")
        statuses.append(int(item))
    if not statuses:
        raise _invalid("`expectedStatus` is an empty list: no answer could succeed")
    return tuple(statuses)


# -- the answer -----------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is JSON, else (False, None). NaN and Infinity are not JSON."""
    if not text.strip():
        return False, None
    try:
        return True, json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False, None


def decode(response: HttpResponse) -> str:
    """The body as text, in the charset the Content-Type names (else UTF-8); bad bytes replaced."""
    charset = "utf-8"
    content_type = header(response.headers, "Content-Type") or ""
    for parameter in content_type.split(";")[1:]:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        return response.body.decode(charset, errors="replace")
    except LookupError:
        return response.body.decode("utf-8", errors="replace")


def result_of(response: HttpResponse) -> dict[str, Any]:
    text = decode(response)
    _, value = parse_json(text)
    return {
        "status": response.status,
        "headers": {str(k): str(v) for k, v in response.headers.items()},
        "body": text,
        "bodyAsJson": value,
    }


def _phrase(status: int) -> str:
    import http  # its HTTPStatus enum costs a millisecond that a run without responses does not need

    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _detail(result: dict[str, Any]) -> str:
    """A short hint of what the server said: its JSON `message`/`error`, else the body's first line."""
    data = result["bodyAsJson"]
    if isinstance(data, dict):
        for key in ("message", "error_description", "error", "detail", "title"):
            if isinstance(data.get(key), str) and data[key].strip():
                return data[key].strip()[:200]
    lines = result["body"].strip().splitlines()
    return lines[0][:200] if lines else ""


def _judge(
    method: str, shown: str, response: HttpResponse, result: dict[str, Any], expected: tuple[int, ...] | None
) -> None:
    status = response.status
    if (status in expected) if expected is not None else 200 <= status <= 299:
        return
    code = STATUS_CODES.get(status, "HttpError")
    message = f"{method} {shown} answered {status}" + (f" {_phrase(status)}" if _phrase(status) else "")
    if expected is not None:
        message += f" (expected {' or '.join(str(s) for s in expected)})"
    guidance = None
    if 300 <= status <= 399:
        location = header(response.headers, "Location")
        if location:
            message += f", redirecting to {shown_url(location)}"
        if method not in ("GET", "HEAD"):
            guidance = (
                f"redirects of a {method} are not followed (it would be resent as a GET); send it to the new address"
            )
    else:
        detail = _detail(result)
        if detail:
            message += f": {detail}"
    if status == 429:
        wait = retry_after(response.headers)
        if wait is not None:
            message += f" (the server asks to wait {wait:.0f}s)"
        guidance = "set `retries` on the step, or an errorPolicy for RateLimitExceeded with retryCount"
    elif status in (401, 403):
        guidance = "check the credentials in the request's headers (give tokens through a `secret: true` input)"
    elif status == 404:
        guidance = "check the URL"
    # The original engine calls every unexpected status HttpInvalidStatus: its handlers match too.
    raise StepError(code, message, guidance=guidance, metadata=result, aliases=("HttpInvalidStatus",))


def _check_schema(schema: Any, result: dict[str, Any], method: str, shown: str) -> None:
    import jsonschema
    from jsonschema import validators
    from referencing.exceptions import Unresolvable

    if not isinstance(schema, (dict, bool)):
        raise _invalid(f"`responseSchema` should be a JSON Schema object, got {type(schema).__name__}")
    cls = validators.validator_for(schema) if isinstance(schema, dict) else validators.Draft202012Validator
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as error:
        raise _invalid(
            f"`responseSchema` is not a valid JSON Schema: {error.message[:300]} (at {error.json_path})"
        ) from None
    is_json, data = parse_json(result["body"])
    if not is_json:
        raise StepError(
            "SchemaValidationFailed",
            f"the answer of {method} {shown} does not match responseSchema at $: the body is not JSON",
            metadata={**result, "schemaErrors": [{"path": "$", "message": "the body is not JSON"}]},
        )
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    try:
        errors = list(validator.iter_errors(data))
    except Unresolvable as error:  # a $ref to nowhere: the schema's fault, not the answer's
        raise _invalid(
            f"`responseSchema` cannot be used: {error}", "keep the schema self-contained: remote $refs are not fetched"
        ) from None
    if not errors:
        return
    # In document order (array indexes as numbers), so the first problem is the one named.
    errors.sort(
        key=lambda e: ([(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.absolute_path], e.message)
    )
    first, listed = errors[0], errors[:10]
    raise StepError(
        "SchemaValidationFailed",
        f"the answer of {method} {shown} does not match responseSchema at {first.json_path}: {first.message[:300]}"
        + (f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""),
        metadata={**result, "schemaErrors": [{"path": e.json_path, "message": e.message[:300]} for e in listed]},
    )


# -- the actions -------------------------------------------------------------------------------------


def request(ctx: ActionContext, method: str, config: dict) -> dict[str, Any]:
    method = method.upper()
    url, basic = _target(config.get("url"))
    shown = shown_url(url)
    headers = _headers(config)
    if basic is not None:
        _set(headers, "Authorization", basic, replace=False)
    _set(headers, "User-Agent", USER_AGENT, replace=False)
    body = _body(config, headers) if method not in ("GET", "HEAD", "DELETE") else None
    retries = _retries(config)
    expected = _expected(config)
    retry_mutation = config.get("retryMutation") is True
    if retries and method not in IDEMPOTENT and not retry_mutation:
        ctx.log(
            "info",
            f"{method} is not retried (a repeated {method} may act twice); set retryMutation: true to retry it",
            None,
        )
    response = exchange(ctx, method, url, headers=headers, body=body, retries=retries, retry_mutation=retry_mutation)
    result = result_of(response)
    _judge(method, shown, response, result, expected)
    schema = config.get("responseSchema")
    if schema is not None:
        _check_schema(schema, result, method, shown)
    return result


def _action(method: str):
    def run(ctx: ActionContext, config: dict) -> dict[str, Any]:
        return request(ctx, method, config)

    run.__name__ = run.__qualname__ = f"http_{method.lower()}"
    run.__doc__ = f"`http-{method.lower()}`: send an HTTP {method} request."
    return run


ACTIONS = {f"http-{method.lower()}": _action(method) for method in ("GET", "POST", "PUT", "PATCH", "DELETE")}
