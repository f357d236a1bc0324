"""GitHub webhooks: a pull-request review approves the runs that wait for it.

A run paused by `github-pr-create` with `waitForReview: true` waits at `<step>/review`
with the pull request's URL as the pause's subject. `catalyst webhooks serve` receives
GitHub's `pull_request_review` deliveries, checks their signature (X-Hub-Signature-256,
HMAC-SHA256 of the body with the webhook's secret) and records the review on each such
run (Session.review_received): `approved` approves, `changes_requested` requests changes,
`commented` is a comment. Deliveries are acknowledged quickly, as GitHub asks; resuming
the runs stays with whoever resumes them (`catalyst resume`).

Nothing here trusts the network: an unsigned or wrongly signed delivery is refused
before its body is parsed, and bodies are limited in size.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import attrs

#: GitHub's deliveries are at most 25 MB; a review's is a few KB.
MAX_BODY = 1024 * 1024

#: The secret's name in the secret providers (CATALYST_SECRET_GITHUB_WEBHOOK_SECRET, secrets-file).
SECRET_NAME = "github-webhook-secret"

#: GitHub's review states, as approval decisions.
DECISIONS = {"approved": "approve", "changes_requested": "request-changes", "commented": "comment"}


def signature_valid(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is `sha256=` and the HMAC-SHA256 of `body` with `secret` (64 hex
    digits), compared in constant time."""
    if not header or not header.startswith("sha256="):
        return False
    given = header[len("sha256="):].strip().lower()
    if not _HEX64.fullmatch(given):
        return False
    expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, given)


_HEX64 = re.compile(r"[0-9a-f]{64}")


@attrs.frozen
class Review:
    url: str
    login: str
    decision: str
    comment: str | None
    #: When it was submitted (ISO 8601, as GitHub gives it), if the delivery says.
    submitted_at: str | None = None
    #: GitHub's delivery id (X-GitHub-Delivery): a delivery is recorded once per run.
    delivery: str | None = None


def review_of(event: str | None, payload: Any) -> Review | None:
    """The review a delivery reports, or None for any other event or action."""
    if event != "pull_request_review" or not isinstance(payload, dict) or payload.get("action") != "submitted":
        return None
    review, pull = payload.get("review"), payload.get("pull_request")
    if not isinstance(review, dict) or not isinstance(pull, dict):
        return None
    decision = DECISIONS.get(str(review.get("state", "")).lower())
    user = review.get("user") if isinstance(review.get("user"), dict) else {}
    url, login = pull.get("html_url"), user.get("login")
    if decision is None or not isinstance(url, str) or not isinstance(login, str):
        return None
    body, submitted = review.get("body"), review.get("submitted_at")
    return Review(url, login, decision, body if isinstance(body, str) and body else None,
                  submitted if isinstance(submitted, str) else None)


@attrs.frozen
class Answer:
    status: int
    body: dict[str, Any]


def handle(secret: str, event: str | None, signature: str | None, body: bytes,
           received: Callable[[Review], list[dict[str, Any]]], delivery: str | None = None) -> Answer:
    """One delivery: checked, then recorded through `received` (Session.review_received)."""
    if not signature_valid(secret, body, signature):
        return Answer(401, {"error": "the signature (X-Hub-Signature-256) is missing or does not match the webhook's secret"})
    if event == "ping":
        return Answer(200, {"ok": "pong"})
    try:
        payload = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Answer(400, {"error": "the body is not JSON this receiver can read"})
    review = review_of(event, payload)
    if review is None:
        return Answer(202, {"ignored": f"{event or 'an event'} that is not a submitted pull-request review"})
    review = attrs.evolve(review, delivery=delivery)
    return Answer(200, {"pullRequest": review.url, "by": review.login, "decision": review.decision, "runs": received(review)})


def _shown(header: str | None) -> str:
    """A header as the log may show it: on one line, short."""
    return json.dumps((header or "-")[:80])


def make_server(host: str, port: int, secret: str, received: Callable[[Review], list[dict[str, Any]]],
                log: Callable[[str], None] = lambda line: None) -> ThreadingHTTPServer:
    """The receiver, bound but not serving yet (`serve_forever`); port 0 picks a free one.
    Deliveries are handled one at a time: each rewrites run snapshots."""
    one_at_a_time = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        server_version = "catalyst-webhooks"
        #: Seconds a client may take to send its request: a stalled one loses its thread, not the server.
        timeout = 15

        def log_message(self, *args):
            pass  # requests are logged below, without their bodies

        def do_POST(self):
            if self.path.split("?", 1)[0] != "/github":
                return self._answer(Answer(404, {"error": "deliveries go to /github"}))
            stated = (self.headers.get("Content-Length") or "").strip()
            if not stated.isdigit():
                return self._answer(Answer(411, {"error": "a delivery must state its length (Content-Length)"}))
            if int(stated) > MAX_BODY:
                return self._answer(Answer(413, {"error": f"a delivery may be at most {MAX_BODY} bytes"}))
            body = self.rfile.read(int(stated))
            with one_at_a_time:
                answer = handle(secret, self.headers.get("X-GitHub-Event"), self.headers.get("X-Hub-Signature-256"), body, received,
                                self.headers.get("X-GitHub-Delivery"))
            if answer.status == 401:
                log(f"refused an unsigned or wrongly signed delivery from {self.client_address[0]}")
            else:
                log(f"{_shown(self.headers.get('X-GitHub-Event'))} {_shown(self.headers.get('X-GitHub-Delivery'))}: {answer.status} {json.dumps(answer.body)}")
            self._answer(answer)

        def _not_allowed(self):
            self._answer(Answer(405, {"error": "GitHub posts deliveries to /github"}))

        do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = _not_allowed

        def _answer(self, answer: Answer) -> None:
            data = json.dumps(answer.body).encode("utf-8")
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return ThreadingHTTPServer((host, port), Handler)
