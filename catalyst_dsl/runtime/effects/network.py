"""HTTP as the gateway sends it: one request type, one response type, one real sender.

Certificates are always verified (the default SSL context); nothing here can turn that
off. Errors of the network (refused, reset, timed out, a bad certificate) become step
errors with codes error policies can match.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterator, Mapping

from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.runtime.errors import StepError

if TYPE_CHECKING:
    import ssl

# http.client, ssl, socket and urllib.request are imported when a request is sent: every
# run and what-if imports this module for its request and response types, and most
# never send anything (a what-if never does without --refresh).

#: Response bodies beyond this are refused: they would swell the state and the logs.
MAX_RESPONSE_BYTES = 20 * 1024 * 1024
#: A streamed line beyond this is refused (an AI stream's events are far shorter).
MAX_LINE_BYTES = 4 * 1024 * 1024


@record
class HttpRequest:
    method: str
    url: str
    headers: Mapping[str, str] = factory(dict)
    body: bytes | None = None
    timeout: float | None = None


@record
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes


@functools.lru_cache(maxsize=1)
def _redirect_handler() -> type:
    import urllib.request

    class NoRedirectForMutations(urllib.request.HTTPRedirectHandler):
        """Follow redirects for GET and HEAD only: a POST silently turned into a GET is a lie."""

        def redirect_request(self, req, fp, code, msg, headers, newurl):
            if req.get_method() not in ("GET", "HEAD"):
                return None
            follow = super().redirect_request(req, fp, code, msg, headers, newurl)
            if (
                follow is not None
                and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc
            ):
                # Credentials were meant for the host asked, never for the one it points to.
                for name in ("Authorization", "Cookie", "Proxy-authorization"):
                    follow.remove_header(name)
            return follow

    return NoRedirectForMutations


def open_response(request: HttpRequest) -> "StreamingResponse":
    """Send `request` and return the response before its body is read (close it after).

    Every status comes back as a response, an error status included: the caller judges
    it. Failing to connect is `ConnectionError`, no answer within `request.timeout` is
    `StepTimeout` (the timeout also bounds each read), an untrusted certificate is
    `CertificateError`.
    """
    import http.client
    import socket
    import ssl
    import urllib.error
    import urllib.request

    if not request.url.lower().startswith(("http://", "https://")):
        raise StepError("InvalidUrl", f"only http:// and https:// URLs can be requested, not {request.url[:80]!r}")
    opener = urllib.request.build_opener(_redirect_handler()(), urllib.request.HTTPSHandler(context=tls_context()))
    raw = urllib.request.Request(
        request.url, data=request.body, headers=dict(request.headers), method=request.method.upper()
    )
    what = f"{request.method.upper()} {request.url}"
    try:
        response = opener.open(raw, timeout=request.timeout)
    except urllib.error.HTTPError as error:
        return StreamingResponse(error.code, dict(error.headers.items()) if error.headers else {}, error, request.url)
    except (socket.timeout, TimeoutError):
        raise StepError(
            "StepTimeout", f"{what} got no answer within {request.timeout:g}s", aliases=("HttpTimeout",)
        ) from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise StepError(
                "CertificateError",
                f"{request.url}: the server's certificate is not trusted ({reason.verify_message})",
                guidance="certificates are always verified;"
                " install the CA the server uses into the system's trust store",
            ) from None
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise StepError(
                "StepTimeout", f"{what} got no answer within {request.timeout:g}s", aliases=("HttpTimeout",)
            ) from None
        dns = isinstance(reason, socket.gaierror)
        raise StepError(
            "ConnectionError",
            f"{what}: {_reason(reason) if isinstance(reason, BaseException) else reason}",
            aliases=("HttpDnsError",) if dns else ("HttpNetworkError",),
        ) from None
    except (http.client.HTTPException, OSError) as error:  # a broken status line, a reset
        raise StepError("ConnectionError", f"{what}: {_reason(error)}", aliases=("HttpNetworkError",)) from None
    return StreamingResponse(response.status, dict(response.headers.items()), response, request.url)


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The one TLS context of the process (verifying certificates, as by default): building
    one reads the system's certificate store, which costs more than most requests."""
    import ssl

    return ssl.create_default_context()


def send(request: HttpRequest) -> HttpResponse:
    """Send `request` and read its whole body (at most MAX_RESPONSE_BYTES)."""
    with open_response(request) as response:
        body = response.read(MAX_RESPONSE_BYTES + 1)
        if len(body) > MAX_RESPONSE_BYTES:
            raise StepError("ResponseTooLarge", f"the response is larger than {MAX_RESPONSE_BYTES // 1024 // 1024} MiB")
        # http.client returns a body cut short of its Content-Length without a word: check it.
        promised = (response.header("Content-Length") or "").strip()
        # ASCII digits only ("²" passes isdigit(), not int()); a length past the cap is past the body too.
        promised_bytes = (
            (int(promised) if len(promised) <= 18 else 10**18) if promised.isascii() and promised.isdigit() else None
        )
        if (
            promised_bytes is not None
            and len(body) < promised_bytes
            and request.method.upper() != "HEAD"
            and response.status not in (204, 304)
            and not response.header("Content-Encoding")
        ):
            raise StepError(
                "ConnectionError",
                f"{request.method.upper()} {request.url}: the connection broke before the answer was complete "
                f"({len(body)} of {promised} bytes)",
            )
        return HttpResponse(response.status, response.headers, body)


class StreamingResponse:
    """An HTTP response whose body is read as it arrives. Close it (or use `with`)."""

    def __init__(self, status: int, headers: Mapping[str, str], raw, url: str) -> None:
        self.status = status
        self.headers = headers
        self._raw = raw
        self._url = url

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((value for key, value in self.headers.items() if key.lower() == lowered), None)

    def lines(self) -> Iterator[str]:
        """The body's lines without their line ends; StepError when the connection fails."""
        import http.client  # imported already by open_response, which made this response
        import socket

        while True:
            try:
                raw = self._raw.readline(MAX_LINE_BYTES + 1)
            except (socket.timeout, TimeoutError):
                raise StepError(
                    "StepTimeout", f"{self._url} went silent for longer than the inactivity timeout"
                ) from None
            except (http.client.HTTPException, OSError, ValueError) as error:
                raise StepError(
                    "ConnectionError", f"the connection to {self._url} failed while reading: {_reason(error)}"
                ) from None
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES:
                raise StepError(
                    "ResponseTooLarge", f"{self._url} sent a line longer than {MAX_LINE_BYTES // 1024 // 1024} MiB"
                )
            yield raw.decode("utf-8", "replace").rstrip("\r\n")

    def read(self, limit: int) -> bytes:
        import http.client

        try:
            return self._raw.read(limit)
        except (http.client.HTTPException, OSError, ValueError) as error:
            raise StepError(
                "ConnectionError", f"the connection to {self._url} failed while reading: {_reason(error)}"
            ) from None

    def close(self) -> None:
        import http.client

        try:
            self._raw.close()
        except (OSError, http.client.HTTPException):
            pass

    def __enter__(self) -> "StreamingResponse":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


def _reason(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) < 300 else text[:300] + "…"
