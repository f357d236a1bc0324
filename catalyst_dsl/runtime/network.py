"""HTTP as the gateway sends it: one request type, one response type, one real sender.

Certificates are always verified (the default SSL context); nothing here can turn that
off. Errors of the network (refused, reset, timed out, a bad certificate) become step
errors with codes error policies can match.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Mapping

import attrs

from catalyst_dsl.runtime.errors import StepError

#: Response bodies beyond this are refused: they would swell the state and the logs.
MAX_RESPONSE_BYTES = 20 * 1024 * 1024


@attrs.frozen
class HttpRequest:
    method: str
    url: str
    headers: Mapping[str, str] = attrs.field(factory=dict)
    body: bytes | None = None
    timeout: float | None = None


@attrs.frozen
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes


class _NoRedirectForMutations(urllib.request.HTTPRedirectHandler):
    """Follow redirects for GET and HEAD only: a POST silently turned into a GET is a lie."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if req.get_method() not in ("GET", "HEAD"):
            return None
        follow = super().redirect_request(req, fp, code, msg, headers, newurl)
        if follow is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            # Credentials were meant for the host asked, never for the one it points to.
            for name in ("Authorization", "Cookie", "Proxy-authorization"):
                follow.remove_header(name)
        return follow


def send(request: HttpRequest) -> HttpResponse:
    if not request.url.lower().startswith(("http://", "https://")):
        raise StepError("InvalidUrl", f"only http:// and https:// URLs can be requested, not {request.url[:80]!r}")
    opener = urllib.request.build_opener(_NoRedirectForMutations(), urllib.request.HTTPSHandler(context=ssl.create_default_context()))
    raw = urllib.request.Request(request.url, data=request.body, headers=dict(request.headers), method=request.method.upper())
    try:
        with opener.open(raw, timeout=request.timeout) as response:
            return HttpResponse(response.status, dict(response.headers.items()), _read(response))
    except urllib.error.HTTPError as error:
        # A status the server chose (4xx, 5xx): a response, for the action to judge.
        return HttpResponse(error.code, dict(error.headers.items()) if error.headers else {}, _read(error))
    except (socket.timeout, TimeoutError):
        raise StepError("StepTimeout", f"{request.method} {request.url} got no answer within {request.timeout:g}s") from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise StepError("CertificateError", f"{request.url}: the server's certificate is not trusted ({reason.verify_message})",
                            guidance="certificates are always verified; install the CA the server uses into the system's trust store") from None
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise StepError("StepTimeout", f"{request.method} {request.url} got no answer within {request.timeout:g}s") from None
        raise StepError("ConnectionError", f"{request.method} {request.url}: {reason}") from None
    except http.client.HTTPException as error:  # a response cut short, a malformed status line
        raise StepError("ConnectionError", f"{request.method} {request.url}: the response was broken ({type(error).__name__})") from None
    except (ConnectionError, OSError) as error:
        raise StepError("ConnectionError", f"{request.method} {request.url}: {error}") from None


def _read(response) -> bytes:
    data = response.read(MAX_RESPONSE_BYTES + 1)
    if len(data) > MAX_RESPONSE_BYTES:
        raise StepError("ResponseTooLarge", f"the response is larger than {MAX_RESPONSE_BYTES // 1024 // 1024} MiB")
    return data
