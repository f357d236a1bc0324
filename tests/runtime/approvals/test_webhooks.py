"""GitHub pull-request reviews received as webhooks approve the runs that wait for them.

The runs are real: a playbook opens a pull request on the local fake of GitHub's API with
`waitForReview: true` and pauses; the receiver is the real HTTP server, and deliveries are
signed as GitHub signs them.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import select
import selectors
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.config import load_project
from catalyst_dsl.runtime.lifecycle.context import RunOptions
from catalyst_dsl.runtime.lifecycle.session import Session
from catalyst_dsl.runtime.approvals.webhooks import Limits, Review, handle, make_server, review_of, signature_valid

from tests.helpers import fake_github as fakes
from tests.helpers.run_helpers import PROPOSE

SECRET = "webhook-secret-for-tests"


def signed(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


_REVIEW_IDS = iter(range(1000, 10**9))


def review_payload(url: str, login: str, state: str, body: str = "", review_id: int | None = None) -> dict:
    """A `pull_request_review` delivery's body, as GitHub sends it; each review a new id unless given."""
    return {
        "action": "submitted",
        "review": {
            "id": next(_REVIEW_IDS) if review_id is None else review_id,
            "state": state,
            "body": body,
            "user": {"login": login},
        },
        "pull_request": {"html_url": url, "number": 1},
        "repository": {"full_name": "acme/widgets"},
    }


# -- the pieces ----------------------------------------------------------------------------------------


def test_signatures_are_checked_in_full():
    body = b'{"a": 1}'
    assert signature_valid(SECRET, body, signed(body))
    assert not signature_valid(SECRET, body, signed(body, "other"))
    assert not signature_valid(SECRET, body + b" ", signed(body))
    assert not signature_valid(SECRET, body, None)
    assert not signature_valid(SECRET, body, signed(body).replace("sha256=", "sha1="))
    assert not signature_valid(SECRET, body, "sha256=\xe9" * 3)  # not hex: refused, not a TypeError
    assert signature_valid(SECRET, body, signed(body).upper().replace("SHA256=", "sha256="))


@pytest.mark.parametrize(
    "state, decision", [("approved", "approve"), ("CHANGES_REQUESTED", "request-changes"), ("commented", "comment")]
)
def test_a_submitted_review_becomes_a_decision(state, decision):
    review = review_of(
        "pull_request_review", review_payload("https://github.com/a/b/pull/1", "alice", state, "ok", review_id=7)
    )
    assert review == Review(
        "https://github.com/a/b/pull/1", "alice", decision, "ok", review_id=7, repository="acme/widgets", number=1
    )
    assert review.key == "github-review:acme/widgets#1:7"


@pytest.mark.parametrize(
    "event, payload",
    [
        ("push", review_payload("u", "alice", "approved")),
        ("pull_request_review", {**review_payload("u", "alice", "approved"), "action": "dismissed"}),
        ("pull_request_review", review_payload("u", "alice", "pending")),
        ("pull_request_review", {"action": "submitted", "review": "not an object"}),
        ("pull_request_review", ["not", "an", "object"]),
        (
            "pull_request_review",
            {**review_payload("u", "alice", "approved"), "review": {"state": "approved", "user": {"login": "alice"}}},
        ),
        (
            "pull_request_review",
            {
                **review_payload("u", "alice", "approved"),
                "review": {"id": "7", "state": "approved", "user": {"login": "alice"}},
            },
        ),
    ],
)
def test_other_events_and_malformed_reviews_are_not_reviews(event, payload):
    assert review_of(event, payload) is None


def test_a_delivery_is_refused_unsigned_and_parsed_only_once_signed():
    never = lambda review: pytest.fail("nothing should be recorded")  # noqa: E731
    body = json.dumps(review_payload("u", "alice", "approved")).encode()
    assert handle(SECRET, "pull_request_review", None, body, never).status == 401
    assert handle(SECRET, "pull_request_review", signed(body, "wrong"), body, never).status == 401
    assert handle(SECRET, "ping", signed(b"{}"), b"{}", never).status == 200
    assert handle(SECRET, "pull_request_review", signed(b"{nope"), b"{nope", never).status == 400
    assert handle(SECRET, "push", signed(b"{}"), b"{}", never).status == 202
    deep = b"[" * 100000 + b"]" * 100000
    assert handle(SECRET, "pull_request_review", signed(deep), deep, never).status == 400


# -- against real runs ---------------------------------------------------------------------------------


@contextlib.contextmanager
def serving(project, limits: Limits | None = None, log: list[str] | None = None):
    """The receiver of `catalyst webhooks serve` for the project, on a free port: its URL and the server."""
    session = Session(load_project(project.root, DiagnosticSink()), RunOptions())
    server = make_server(
        "127.0.0.1",
        0,
        SECRET,
        lambda r: session.review_received(r.url, r.login, r.decision, r.comment, r.submitted_at, r.key),
        log=(log if log is not None else []).append,
        limits=limits,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/github", server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def receiver_log() -> list[str]:
    return []


@pytest.fixture
def receiver(project, receiver_log):
    with serving(project, log=receiver_log) as (url, _server):
        yield url


def deliver(
    url: str, event: str, payload, signature: str | None = None, delivery: str | None = None
) -> tuple[int, dict]:
    body = json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-Hub-Signature-256": signature or signed(body),
    }
    if delivery:
        headers["X-GitHub-Delivery"] = delivery
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def waiting(project, fake, monkeypatch):
    """A run paused for the review of the pull request it opened: (run id, its URL)."""
    project.settings('[github-reviewers]\nalice = "Architect"\nbob = "Intern"\n')
    project.user_settings(f'github-api-url = "{fake.url}"\n')
    monkeypatch.setenv("CATALYST_SECRET_GITHUB_TOKEN", fakes.TOKEN)
    project.playbook("propose", PROPOSE)
    assert project.run("propose").exit_code == 4
    return project.run_id(), "https://github.com/acme/widgets/pull/1"


def test_an_approving_review_from_a_required_role_releases_the_run(project, waiting, receiver):
    run_id, pr = waiting
    status, said = deliver(receiver, "pull_request_review", review_payload(pr, "alice", "approved", "ship it"))
    assert status == 200
    assert said["runs"] == [{"run": run_id, "step": "steps/0/review", "decision": "approve", "released": True}]
    approval = project.snapshot(run_id)["approvals"][-1]
    assert (approval["by"], approval["role"], approval["via"], approval["comment"]) == (
        "alice",
        "Architect",
        "webhook",
        "ship it",
    )
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert "merged after review" in resumed.output


def test_a_review_from_a_login_without_a_required_role_is_recorded_only(project, waiting, receiver):
    run_id, pr = waiting
    for login in ("bob", "mallory"):
        status, said = deliver(receiver, "pull_request_review", review_payload(pr, login, "approved"))
        assert status == 200 and said["runs"][0]["released"] is False
    assert project.cli("resume", run_id).exit_code == 4  # still waiting


def test_changes_requested_fails_the_step_on_resume(project, waiting, receiver):
    run_id, pr = waiting
    deliver(receiver, "pull_request_review", review_payload(pr, "alice", "changes_requested", "split it"))
    failed = project.cli("resume", run_id)
    assert failed.exit_code == 2
    assert project.snapshot(run_id)["error"]["code"] == "ChangesRequested"


def test_a_review_of_another_pull_request_or_unsigned_touches_nothing(project, waiting, receiver):
    run_id, pr = waiting
    status, said = deliver(receiver, "pull_request_review", review_payload(pr.replace("/1", "/2"), "alice", "approved"))
    assert status == 200 and said["runs"] == []
    status, _ = deliver(receiver, "pull_request_review", review_payload(pr, "alice", "approved"), signature="sha256=00")
    assert status == 401
    assert project.snapshot(run_id)["approvals"] == []


def test_serve_needs_the_webhook_secret(project):
    result = project.cli("webhooks", "serve", "--port", "0")
    assert result.exit_code == 1
    assert "the secret 'github-webhook-secret' is not set" in result.output


def test_a_review_counts_once_and_a_review_from_before_the_pause_not_at_all(project, waiting, receiver):
    run_id, pr = waiting
    comment = review_payload(pr, "alice", "commented", "looks fine")
    assert deliver(receiver, "pull_request_review", comment, delivery="d-1")[1]["runs"][0]["decision"] == "comment"
    _, again = deliver(receiver, "pull_request_review", comment, delivery="d-1")
    assert again["runs"] == [{"run": run_id, "ignored": "this review was recorded already"}]
    old = review_payload(pr, "alice", "approved")
    old["review"]["submitted_at"] = "2000-01-01T00:00:00Z"
    _, stale = deliver(receiver, "pull_request_review", old, delivery="d-2")
    assert stale["runs"] == [{"run": run_id, "ignored": "the review was submitted before the run paused for it"}]
    assert len(project.snapshot(run_id)["approvals"]) == 1


@pytest.fixture
def open_review(project, fake, monkeypatch):
    """A run paused for a review, of a playbook that requires no reviewer role."""
    project.settings('[github-reviewers]\nAlice = "Engineer"\n')
    project.user_settings(f'github-api-url = "{fake.url}"\n')
    monkeypatch.setenv("CATALYST_SECRET_GITHUB_TOKEN", fakes.TOKEN)
    project.playbook(
        "open",
        PROPOSE.replace("name: propose", "name: open").replace("    reviewers:\n      required: [Architect]\n", ""),
    )
    assert project.run("open").exit_code == 4
    return "https://github.com/acme/widgets/pull/1"


def test_only_listed_logins_release_even_when_no_role_is_required(project, open_review, receiver):
    pr = open_review
    _, said = deliver(receiver, "pull_request_review", review_payload(pr, "mallory", "approved"))
    assert said["runs"][0]["released"] is False
    _, said = deliver(receiver, "pull_request_review", review_payload(pr, "alice", "approved"))  # logins ignore case
    assert said["runs"][0]["released"] is True


def test_a_delivery_without_a_length_is_refused(receiver):
    request = urllib.request.Request(
        receiver, data=iter([b"{}"]), headers={"X-GitHub-Event": "ping", "Transfer-Encoding": "chunked"}, method="POST"
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open(request, timeout=10)
    assert refused.value.code == 411


def test_a_signed_review_replayed_under_a_new_delivery_id_is_refused(project, waiting, receiver, receiver_log):
    run_id, pr = waiting
    approval = review_payload(pr, "alice", "approved", "ship it", review_id=4242)
    status, said = deliver(receiver, "pull_request_review", approval, delivery="d-original")
    assert status == 200 and said["runs"][0]["released"] is True
    # The same signed body again: the delivery header is new (it is not signed), the review is not.
    status, said = deliver(receiver, "pull_request_review", approval, delivery="d-forged-new-id")
    assert status == 200 and said["runs"] == [{"run": run_id, "ignored": "this review was recorded already"}]
    approvals = project.snapshot(run_id)["approvals"]
    assert len(approvals) == 1 and approvals[0]["token"] == "github-review:acme/widgets#1:4242"
    assert [line for line in receiver_log if line.startswith("refused a replay")] == [
        f'refused a replay of review 4242 on run {run_id}: it was recorded already (delivery "d-forged-new-id")'
    ]
    # Another review of the same pull request (a new id) is a new decision.
    status, said = deliver(
        receiver,
        "pull_request_review",
        review_payload(pr, "alice", "commented", "one more thing"),
        delivery="d-original",
    )
    assert said["runs"][0]["decision"] == "comment"
    assert len(project.snapshot(run_id)["approvals"]) == 2


# -- limits: slow and numerous clients -------------------------------------------------------------------


def _connect(server, source: str = "127.0.0.1") -> socket.socket:
    """A client socket from `source` (any 127.x address is this machine), closing itself after 30 s at most."""
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.settimeout(30)
    client.bind((source, 0))
    client.connect(server.server_address)
    return client


def _answer_of(client: socket.socket) -> bytes:
    """Everything the server sent until it closed the connection."""
    data = b""
    while True:
        try:
            chunk = client.recv(4096)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def _until(condition, tries: int = 300) -> bool:
    """Whether `condition()` becomes true within `tries` looks, 0.05 s apart (the server's loop is another thread)."""
    for _ in range(tries):
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.slow
def test_a_thousand_slow_clients_take_a_bounded_number_of_threads_and_a_delivery_still_gets_through(project, waiting):
    run_id, pr = waiting
    log: list[str] = []
    before = threading.active_count()
    limits = Limits(head_seconds=60, per_client=16, max_connections=256)
    clients: list[socket.socket] = []
    with serving(project, limits, log) as (url, server):
        try:
            for index in range(1000):
                # Ten addresses, a hundred clients each: each sends part of a head and hangs.
                client = _connect(server, f"127.0.0.{2 + index % 10}")
                client.sendall(b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Len")
                clients.append(client)
            # Each address holds at most 16 connections; the others were answered 503 and closed.
            assert _until(lambda: server._total == 160)
            refused = []
            pending = set(clients)
            with selectors.DefaultSelector() as watch:  # select() cannot watch descriptors above 1023
                for client in clients:
                    watch.register(client, selectors.EVENT_READ)
                while len(refused) < 840:
                    ready = watch.select(10)
                    if not ready:
                        break
                    for key, _ in ready:
                        watch.unregister(key.fileobj)
                        pending.discard(key.fileobj)
                        refused.append(_answer_of(key.fileobj))
            assert len(refused) == 840 and all(answer.startswith(b"HTTP/1.1 503 ") for answer in refused)
            assert len(pending) == 160
            # The hanging clients cost no thread: the loop's, one worker at most, nothing per connection.
            assert threading.active_count() <= before + 2
            # A genuine delivery from another address is answered while they hang.
            status, said = deliver(url, "pull_request_review", review_payload(pr, "alice", "approved", "ship it"))
            assert status == 200 and said["runs"][0]["released"] is True
            assert threading.active_count() <= before + 2
            assert _until(lambda: server._total == 160)  # the delivery's own connection has closed
            with selectors.DefaultSelector() as watch:
                for client in pending:
                    watch.register(client, selectors.EVENT_READ)
                assert watch.select(0) == []  # nothing was answered to the hanging clients: they still hang
        finally:
            for client in clients:
                client.close()
    assert project.snapshot(run_id)["approvals"][-1]["by"] == "alice"
    assert sorted(line for line in log if line.startswith("refusing")) == sorted(
        f"refusing connections from 127.0.0.{n}: 16 connections from it are open (at most 16)" for n in range(2, 12)
    )


@pytest.mark.parametrize("part", ["head", "body"])
def test_a_client_sending_a_byte_at_a_time_is_cut_at_the_deadline(project, part):
    head = b"POST /github HTTP/1.1\r\nHost: receiver\r\nX-GitHub-Event: ping\r\nContent-Length: 300\r\n\r\n"
    trickled = head if part == "head" else b"{" + b" " * 298 + b"}"
    with serving(project, Limits(head_seconds=1, body_seconds=1)) as (_url, server):
        client = _connect(server)
        try:
            if part == "body":
                client.sendall(head)
            sent = 0
            # At most one byte every 0.1 s: the whole part would take 8 s or more, the deadline is 1 s.
            for byte in trickled:
                if select.select([client], [], [], 0.1)[0]:
                    break  # the server answered: it stopped reading
                try:
                    client.sendall(bytes([byte]))
                except (BrokenPipeError, ConnectionResetError):
                    break
                sent += 1
            answer = _answer_of(client)
        finally:
            client.close()
    assert sent < len(trickled)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"did not arrive within 1s" in answer


def test_connections_beyond_the_overall_limit_are_refused_at_once(project):
    log: list[str] = []
    with serving(project, Limits(max_connections=3, per_client=16), log) as (url, server):
        held = [_connect(server, f"127.0.0.{n}") for n in (2, 3, 4)]
        try:
            assert _until(lambda: server._total == 3)
            extra = _connect(server, "127.0.0.5")
            assert _answer_of(extra).startswith(b"HTTP/1.1 503 ")
            extra.close()
            assert log == ["refusing connections from 127.0.0.5: 3 connections are open (at most 3)"]
            held.pop().close()  # one leaves: there is room again
            assert _until(lambda: server._total == 2)
            assert deliver(url, "ping", {})[0] == 200
        finally:
            for client in held:
                client.close()


@pytest.mark.parametrize(
    "request_bytes, status",
    [
        (b"GET /github HTTP/1.1\r\nHost: receiver\r\n\r\n", 405),
        (b"POST /elsewhere HTTP/1.1\r\nHost: receiver\r\nContent-Length: 2\r\n\r\n{}", 404),
        (b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: 2000000\r\n\r\n", 413),
        (b"POST /github HTTP/1.1\r\nHost: receiver\r\nX-Long: " + b"a" * 20000 + b"\r\n\r\n", 431),
        (b"nonsense\r\n\r\n", 400),
        (b"POST /github HTTP/1.1\r\nHost: receiver\r\nno colon here\r\n\r\n", 400),
        # HTTP/1.1 requires Host.
        (b"POST /github HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 400),
        # A length that is not ASCII digits is a malformed request (RFC 9112, 6.3): a
        # superscript two, which str.isdigit() passes and int() refuses, and more digits
        # than Python converts.
        ("POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: \u00b2\r\n\r\n".encode("latin-1"), 400),
        (b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n", 400),
        # Digits that are many, but within what a length may be written with: too long a body.
        (b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: " + b"9" * 19 + b"\r\n\r\n", 413),
    ],
)
def test_malformed_or_oversized_requests_get_their_status(project, request_bytes, status):
    with serving(project) as (_url, server):
        client = _connect(server)
        try:
            client.sendall(request_bytes)
            answer = _answer_of(client)
        finally:
            client.close()
    assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer


def test_bodies_being_read_at_once_stay_within_their_budget(project):
    head = b"POST /github HTTP/1.1\r\nHost: receiver\r\nX-GitHub-Event: ping\r\nContent-Length: 600\r\n\r\n"
    with serving(project, Limits(bodies_in_flight=1000, body_seconds=30)) as (_url, server):
        first, second = _connect(server, "127.0.0.2"), _connect(server, "127.0.0.3")
        try:
            first.sendall(head + b"{")  # 600 bytes promised, one sent: the budget holds 600 of 1000
            assert _until(lambda: server._body_bytes == 600)
            second.sendall(head)
            assert _answer_of(second).startswith(b"HTTP/1.1 503 ")
        finally:
            first.close()
            second.close()


# -- clients that leave early ----------------------------------------------------------------------------


def _reset(client: socket.socket) -> None:
    """Close with a reset (RST) instead of an orderly end, as a client that crashes does."""
    import struct

    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()


def test_clients_that_leave_early_leave_no_traceback(capfd, caplog):
    from catalyst_dsl.runtime.approvals.webhook_server import ReceiverServer, Response

    # A long answer keeps the server writing while clients reset; the race between a reset
    # and the end of the answer is what used to escape as a traceback.
    log: list[str] = []
    server = ReceiverServer(
        "127.0.0.1",
        0,
        lambda request: Response(200, {"pad": "x" * 300_000}),
        log=log.append,
        limits=Limits(head_seconds=2, body_seconds=2),
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    caplog.set_level("DEBUG", logger="asyncio")
    try:
        # Headers that promise a body, then gone: with an orderly close and with a reset.
        for leave in (socket.socket.close, _reset):
            client = _connect(server)
            client.sendall(b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: 100\r\n\r\nabc")
            leave(client)
        # Whole requests, the client gone before it reads the answer.
        for index in range(200):
            client = _connect(server)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            client.sendall(b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: 2\r\n\r\n{}")
            if index % 2:
                client.shutdown(socket.SHUT_WR)
            time.sleep((index % 10) / 1000)
            _reset(client)
        assert _until(lambda: server._total == 0)
        # The server still answers.
        client = _connect(server)
        client.sendall(b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: 2\r\n\r\n{}")
        assert _answer_of(client).startswith(b"HTTP/1.1 200 ")
        client.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
    errors = capfd.readouterr().err
    assert "Traceback" not in errors and "Unhandled exception" not in errors, errors[-3000:]
    assert not [r for r in caplog.records if r.exc_info or r.levelname in ("ERROR", "CRITICAL")], caplog.text[-3000:]
    assert log == []


# -- serving as a service ----------------------------------------------------------------------------------


def test_the_health_endpoint_answers_while_serving(project):
    with serving(project) as (url, _server):
        health = url.rsplit("/", 1)[0] + "/healthz"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(health, timeout=10) as answer:
            assert answer.status == 200 and json.loads(answer.read()) == {"ok": True}


def test_a_stop_lets_the_delivery_being_answered_finish():
    from catalyst_dsl.runtime.approvals.webhook_server import ReceiverServer, Response

    answering = threading.Event()

    def slow(request):
        answering.set()
        time.sleep(1.0)
        return Response(200, {"answered": True})

    server = ReceiverServer("127.0.0.1", 0, slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    answers: list[bytes] = []
    try:
        client = _connect(server)
        client.sendall(b"POST /github HTTP/1.1\r\nHost: receiver\r\nContent-Length: 2\r\n\r\n{}")
        reading = threading.Thread(target=lambda: answers.append(_answer_of(client)))
        reading.start()
        assert answering.wait(10)
        server.shutdown()  # returns once the answer is sent
        reading.join(10)
        client.close()
    finally:
        server.server_close()
        thread.join(10)
    assert answers and answers[0].startswith(b"HTTP/1.1 200 ") and b'"answered": true' in answers[0]


@pytest.mark.slow
def test_serve_stops_on_sigterm_and_says_so(project):
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    env = {
        **os.environ,
        "CATALYST_SECRET_GITHUB_WEBHOOK_SECRET": SECRET,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "webhooks", "serve", "--port", "0"],
        cwd=project.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), line
        health = line.split()[2].rsplit("/", 1)[0] + "/healthz"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(health, timeout=10) as answer:
            assert answer.status == 200
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, rest
    assert rest.strip().endswith("stopped") and "Traceback" not in rest, rest


def test_a_review_reaches_a_run_kept_in_the_shared_store_and_a_worker_takes_it_on(
    project, shared_store, fake, monkeypatch
):
    project.settings('[github-reviewers]\nalice = "Architect"\n')
    project.user_settings(f'github-api-url = "{fake.url}"\n')
    monkeypatch.setenv("CATALYST_SECRET_GITHUB_TOKEN", fakes.TOKEN)
    project.playbook("propose", PROPOSE)
    assert project.run("propose").exit_code == 4
    assert not project.live_snapshots()  # the run is in the database, not in this checkout's files
    [run] = json.loads(project.cli("runs", "list", "--json").output)["runs"]
    pr = "https://github.com/acme/widgets/pull/1"
    with serving(project) as (url, _server):
        status, said = deliver(url, "pull_request_review", review_payload(pr, "alice", "approved", "ship it"))
    assert status == 200
    assert said["runs"] == [{"run": run["runId"], "step": "steps/0/review", "decision": "approve", "released": True}]
    worked = project.cli("worker", "--once")
    assert worked.exit_code == 0, worked.output
    assert f"took run {run['runId']}" in worked.output and "merged after review" in worked.output
