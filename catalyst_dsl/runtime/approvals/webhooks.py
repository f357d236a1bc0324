"""GitHub webhooks: a pull-request review approves the runs that wait for it.

A run paused by `github-pr-create` with `waitForReview: true` waits at `<step>/review`
with the pull request's URL as the pause's subject. `catalyst webhooks serve` receives
GitHub's `pull_request_review` deliveries, checks their signature (X-Hub-Signature-256,
HMAC-SHA256 of the body with the webhook's secret) and records the review on each such
run (Session.review_received): `approved` approves, `changes_requested` requests changes,
`commented` is a comment. Deliveries are acknowledged quickly, as GitHub asks; resuming
the runs stays with whoever resumes them (`catalyst resume`).

Nothing here trusts the network: an unsigned or wrongly signed delivery is refused
before its body is parsed, and bodies are limited in size. A review counts once per run,
known by its id, repository and pull request inside the signed body; the unsigned
X-GitHub-Delivery header is only logged, so a new delivery id cannot replay a review.
Slow or numerous clients are held within the limits of `webhook_server.py`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from typing import Any, Callable

from catalyst_dsl._internal.records import record, replace
from catalyst_dsl.runtime.approvals.webhook_server import Limits, ReceiverServer, Request, Response

#: What Session.review_received says of a review a run has recorded already.
ALREADY_RECORDED = "this review was recorded already"

#: The secret's name in the secret providers (CATALYST_SECRET_GITHUB_WEBHOOK_SECRET, secrets-file).
SECRET_NAME = "github-webhook-secret"

#: GitHub's review states, as approval decisions.
DECISIONS = {"approved": "approve", "changes_requested": "request-changes", "commented": "comment"}


def signature_valid(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is `sha256=` and the HMAC-SHA256 of `body` with `secret` (64 hex
    digits), compared in constant time."""
    if not header or not header.startswith("sha256="):
        return False
    given = header[len("sha256=") :].strip().lower()
    if not _HEX64.fullmatch(given):
        return False
    expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, given)


_HEX64 = re.compile(r"[0-9a-f]{64}")


@record
class Review:
    url: str
    login: str
    decision: str
    comment: str | None
    #: When it was submitted (ISO 8601, as GitHub gives it), if the delivery says.
    submitted_at: str | None = None
    #: The review's identity inside the signed body: GitHub's review id, the repository
    #: and the pull request's number. A review is recorded once per run, whatever delivery
    #: brings it (see `key`).
    review_id: int | None = None
    repository: str | None = None
    number: int | None = None
    #: GitHub's delivery id (X-GitHub-Delivery): unsigned, so it is only logged.
    delivery: str | None = None

    @property
    def key(self) -> str:
        """What makes this review single-use on a run: signed fields only, never a header."""
        return (
            f"github-review:{self.repository or '-'}#{self.number if self.number is not None else '-'}:{self.review_id}"
        )


def review_of(event: str | None, payload: Any) -> Review | None:
    """The review a delivery reports, or None for any other event or action."""
    if event != "pull_request_review" or not isinstance(payload, dict) or payload.get("action") != "submitted":
        return None
    review, pull = payload.get("review"), payload.get("pull_request")
    if not isinstance(review, dict) or not isinstance(pull, dict):
        return None
    decision = DECISIONS.get(str(review.get("state", "")).lower())
    user = review.get("user") if isinstance(review.get("user"), dict) else {}
    url, login, review_id = pull.get("html_url"), user.get("login"), review.get("id")
    if decision is None or not isinstance(url, str) or not isinstance(login, str) or not _whole_number(review_id):
        return None  # without its id a review could not be told from its replay
    body, submitted = review.get("body"), review.get("submitted_at")
    repository = payload.get("repository") if isinstance(payload.get("repository"), dict) else {}
    name, number = repository.get("full_name"), pull.get("number")
    return Review(
        url,
        login,
        decision,
        body if isinstance(body, str) and body else None,
        submitted if isinstance(submitted, str) else None,
        review_id=review_id,
        repository=name if isinstance(name, str) else None,
        number=number if _whole_number(number) else None,
    )


def _whole_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def handle(
    secret: str,
    event: str | None,
    signature: str | None,
    body: bytes,
    received: Callable[[Review], list[dict[str, Any]]],
    delivery: str | None = None,
) -> Response:
    """One delivery: checked, then recorded through `received` (Session.review_received)."""
    if not signature_valid(secret, body, signature):
        return Response(
            401, {"error": "the signature (X-Hub-Signature-256) is missing or does not match the webhook's secret"}
        )
    if event == "ping":
        return Response(200, {"ok": "pong"})
    try:
        payload = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Response(400, {"error": "the body is not JSON this receiver can read"})
    review = review_of(event, payload)
    if review is None:
        return Response(202, {"ignored": f"{event or 'an event'} that is not a submitted pull-request review"})
    review = replace(review, delivery=delivery)
    return Response(
        200,
        {
            "pullRequest": review.url,
            "review": review.review_id,
            "by": review.login,
            "decision": review.decision,
            "runs": received(review),
        },
    )


def _shown(header: str | None) -> str:
    """A header as the log may show it: on one line, short."""
    return json.dumps((header or "-")[:80])


def make_server(
    host: str,
    port: int,
    secret: str,
    received: Callable[[Review], list[dict[str, Any]]],
    log: Callable[[str], None] = lambda line: None,
    limits: Limits | None = None,
) -> ReceiverServer:
    """The receiver, bound but not serving yet (`serve_forever`); port 0 picks a free one.
    Connections are held by one event loop within `limits` (webhook_server.py); deliveries
    are handled one at a time: each rewrites run snapshots."""
    one_at_a_time = threading.Lock()

    def respond(request: Request) -> Response:
        event, delivery = request.header("X-GitHub-Event"), request.header("X-GitHub-Delivery")
        with one_at_a_time:
            answer = handle(secret, event, request.header("X-Hub-Signature-256"), request.body, received, delivery)
        if answer.status == 401:
            log(f"refused an unsigned or wrongly signed delivery from {request.client}")
            return answer
        for run in answer.body.get("runs", ()):
            if run.get("ignored") == ALREADY_RECORDED:
                # The unsigned delivery id is new, the signed review is not: a replay (or GitHub redelivering).
                log(
                    f"refused a replay of review {answer.body.get('review')} on run {run.get('run')}: "
                    "it was recorded already "
                    f"(delivery {_shown(delivery)})"
                )
        log(f"{_shown(event)} {_shown(delivery)}: {answer.status} {json.dumps(answer.body)}")
        return answer

    return ReceiverServer(host, port, respond, log=log, limits=limits)
