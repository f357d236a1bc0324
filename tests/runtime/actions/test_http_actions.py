"""The http-* actions against a real local server (tests/helpers/http_servers.py).

Most tests call the actions directly with an ActionContext over a real gateway; the
`test_cli_*` tests run playbooks through `catalyst run` and need the actions registered
in catalyst_dsl/runtime/actions/__init__.py.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess

import pytest

from catalyst_dsl.runtime.actions import http as http_actions
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.simulation.recording import RecordingPerformer, Unknowable

from tests.helpers import http_servers as servers

GET, POST = http_actions.ACTIONS["http-get"], http_actions.ACTIONS["http-post"]


@pytest.fixture
def server():
    with servers.LocalServer() as running:
        yield running


def context(tmp_path, action="http-get", **kw):
    return servers.action_context(tmp_path, action, **kw)


def failure(run, ctx, config) -> StepError:
    with pytest.raises(StepError) as caught:
        run(ctx, config)
    return caught.value


# -- requests and results ------------------------------------------------------------------------------


def test_get_returns_status_headers_body_and_json(tmp_path, server):
    ctx, log = context(tmp_path)
    result = GET(ctx, {"url": f"{server.url}/echo?x=1"})
    assert set(result) == {"status", "headers", "body", "bodyAsJson"}
    assert result["status"] == 200
    assert result["headers"]["Content-Type"] == "application/json"
    assert json.loads(result["body"]) == result["bodyAsJson"]
    assert result["bodyAsJson"]["method"] == "GET" and result["bodyAsJson"]["query"] == {"x": "1"}
    assert result["bodyAsJson"]["headers"]["User-Agent"].startswith("catalyst/")
    assert ("info", f"GET {server.url}/echo?x=1", None) in log


def test_a_body_that_is_not_json_has_null_body_as_json(tmp_path, server):
    ctx, _ = context(tmp_path)
    result = GET(ctx, {"url": f"{server.url}/text"})
    assert result["body"] == "hello, world" and result["bodyAsJson"] is None


def test_the_charset_of_the_answer_decodes_the_body(tmp_path, server):
    ctx, _ = context(tmp_path)
    assert GET(ctx, {"url": f"{server.url}/latin1"})["body"] == "café"


def test_a_mapping_body_is_sent_as_json(tmp_path, server):
    ctx, _ = context(tmp_path, "http-post")
    echoed = POST(ctx, {"url": f"{server.url}/echo", "body": {"name": "Ann", "tags": ["a", 1, None]}})["bodyAsJson"]
    assert echoed["method"] == "POST"
    assert echoed["headers"]["Content-Type"] == "application/json"
    assert echoed["json"] == {"name": "Ann", "tags": ["a", 1, None]}


def test_a_string_body_is_sent_as_text(tmp_path, server):
    ctx, _ = context(tmp_path, "http-post")
    echoed = POST(ctx, {"url": f"{server.url}/echo", "body": "plain words"})["bodyAsJson"]
    assert echoed["body"] == "plain words"
    assert echoed["headers"]["Content-Type"] == "text/plain; charset=utf-8"


def test_content_type_overrides_the_json_default(tmp_path, server):
    ctx, _ = context(tmp_path, "http-post")
    echoed = POST(
        ctx,
        {
            "url": f"{server.url}/echo",
            "body": {"a": 1},
            "contentType": "application/vnd.api+json",
            "headers": {"content-type": "text/ignored"},
        },
    )["bodyAsJson"]
    assert echoed["headers"]["Content-Type"] == "application/vnd.api+json"
    assert echoed["json"] == {"a": 1}


def test_a_mapping_body_with_the_form_content_type_is_sent_as_a_form(tmp_path, server):
    ctx, _ = context(tmp_path, "http-post")
    echoed = POST(
        ctx,
        {
            "url": f"{server.url}/echo",
            "body": {"q": "a b&c", "n": [1, 2]},
            "contentType": "application/x-www-form-urlencoded",
        },
    )["bodyAsJson"]
    assert echoed["body"] == "q=a+b%26c&n=1&n=2"


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_each_action_sends_its_method(tmp_path, server, method):
    ctx, _ = context(tmp_path, f"http-{method}")
    config = {"url": f"{server.url}/echo"}
    if method != "delete":
        config["body"] = {"m": method}
    echoed = http_actions.ACTIONS[f"http-{method}"](ctx, config)["bodyAsJson"]
    assert echoed["method"] == method.upper()
    assert echoed["json"] == (None if method == "delete" else {"m": method})


def test_header_values_are_sent_but_never_logged(tmp_path, server):
    ctx, log = context(tmp_path)
    echoed = GET(
        ctx, {"url": f"{server.url}/echo", "headers": {"Authorization": "Bearer tok-123-SECRET", "X-Count": 3}}
    )["bodyAsJson"]
    assert echoed["headers"]["Authorization"] == "Bearer tok-123-SECRET"
    assert echoed["headers"]["X-Count"] == "3"
    assert "tok-123-SECRET" not in log.text()
    assert log  # the request itself is logged


def test_credentials_in_the_url_become_basic_auth_and_stay_out_of_the_log(tmp_path, server):
    ctx, log = context(tmp_path)
    address = server.url.replace("http://", "http://ann:pa%40ss@")
    result = GET(ctx, {"url": f"{address}/echo"})
    assert result["bodyAsJson"]["headers"]["Authorization"] == "Basic YW5uOnBhQHNz"  # ann:pa@ss
    assert "pa%40ss" not in log.text() and "ann:" not in log.text()


def test_a_url_with_non_ascii_characters_is_percent_encoded(tmp_path, server):
    ctx, _ = context(tmp_path)
    echoed = GET(ctx, {"url": f"{server.url}/echo/café?q=ü"})["bodyAsJson"]
    assert echoed["path"] == "/echo/caf%C3%A9" and echoed["query"] == {"q": "ü"}


# -- statuses -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, code",
    [(401, "Unauthorized"), (403, "Forbidden"), (404, "NotFound"), (418, "HttpError"), (500, "HttpError")],
)
def test_an_unexpected_status_fails_with_its_code_and_the_result_as_metadata(tmp_path, server, status, code):
    ctx, _ = context(tmp_path)
    error = failure(GET, ctx, {"url": f"{server.url}/status/{status}"})
    assert error.code == code
    assert str(status) in error.message and f"status {status}" in error.message
    assert error.metadata["status"] == status
    assert error.metadata["bodyAsJson"] == {"message": f"status {status}"}


def test_an_expected_status_is_a_success(tmp_path, server):
    ctx, _ = context(tmp_path)
    assert GET(ctx, {"url": f"{server.url}/status/404", "expectedStatus": [200, 404]})["status"] == 404
    assert GET(ctx, {"url": f"{server.url}/status/202", "expectedStatus": 202})["status"] == 202


def test_a_2xx_that_is_not_the_expected_status_fails(tmp_path, server):
    ctx, _ = context(tmp_path)
    error = failure(GET, ctx, {"url": f"{server.url}/json", "expectedStatus": 201})
    assert error.code == "HttpError" and "expected 201" in error.message


# -- timeouts and retries -----------------------------------------------------------------------------------


def test_a_slow_answer_ends_at_the_steps_timeout(tmp_path, server):
    ctx, _ = context(tmp_path, timeout=0.3)
    error = failure(GET, ctx, {"url": f"{server.url}/slow?seconds=5", "retries": 3})
    assert error.code == "StepTimeout"
    # Once the step's time is up nothing is retried, although three retries were allowed.
    assert [hit["path"] for hit in server.hits] == ["/slow"]


def test_backoff_doubles_from_the_base_and_is_capped():
    assert [http_actions.backoff(n) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 4.0]
    assert http_actions.backoff(20) == http_actions.RETRY_CAP


def test_a_get_is_retried_after_5xx_until_it_succeeds(tmp_path, server, waits):
    ctx, log = context(tmp_path)
    result = GET(ctx, {"url": f"{server.url}/flaky/a?fail=2&status=503", "retries": 3})
    assert result["bodyAsJson"] == {"attempts": 3}
    assert waits == [0.5, 1.0]
    assert "retrying in 0.5s (1 of 3)" in log.text()


def test_the_retry_base_is_a_module_constant(tmp_path, server, monkeypatch, waits):
    monkeypatch.setattr(http_actions, "RETRY_BASE", 0.01)
    ctx, _ = context(tmp_path)
    assert GET(ctx, {"url": f"{server.url}/flaky/b?fail=2", "retries": 2})["status"] == 200
    assert waits == [0.01, 0.02]


def test_when_retries_run_out_the_last_status_fails(tmp_path, server, waits):
    ctx, _ = context(tmp_path)
    error = failure(GET, ctx, {"url": f"{server.url}/flaky/c?fail=9", "retries": 2})
    assert error.code == "HttpError" and error.metadata["status"] == 500
    assert len([h for h in server.hits if h["path"] == "/flaky/c"]) == 3


def test_a_post_is_not_retried_without_retry_mutation(tmp_path, server, waits):
    ctx, log = context(tmp_path, "http-post")
    error = failure(POST, ctx, {"url": f"{server.url}/flaky/d?fail=1", "retries": 3, "body": {}})
    assert error.code == "HttpError"
    assert len(server.hits) == 1 and waits == []
    assert "retryMutation" in log.text()


def test_a_post_is_retried_with_retry_mutation(tmp_path, server, waits):
    ctx, _ = context(tmp_path, "http-post")
    result = POST(ctx, {"url": f"{server.url}/flaky/e?fail=1", "retries": 1, "retryMutation": True, "body": {}})
    assert result["bodyAsJson"] == {"attempts": 2}


def test_a_429_waits_as_long_as_retry_after_says(tmp_path, server, waits):
    ctx, _ = context(tmp_path)
    result = GET(ctx, {"url": f"{server.url}/limited/f?times=1&after=2", "retries": 1})
    assert result["status"] == 200 and waits == [2.0]


def test_retry_after_is_capped(tmp_path, server, waits):
    ctx, _ = context(tmp_path)
    GET(ctx, {"url": f"{server.url}/limited/g?times=1&after=86400", "retries": 1})
    assert waits == [http_actions.RETRY_AFTER_CAP]


@pytest.mark.parametrize("after", ["%C2%B2", "9" * 5000])
def test_a_retry_after_python_cannot_read_as_a_number_is_ignored(tmp_path, server, waits, after):
    # A superscript two passes str.isdigit() but not float(); the server is not trusted.
    ctx, _ = context(tmp_path)
    result = GET(ctx, {"url": f"{server.url}/limited/j{len(after)}?times=1&after={after}", "retries": 1})
    assert result["status"] == 200 and len(waits) == 1 and waits[0] <= http_actions.RETRY_AFTER_CAP
    error = failure(GET, ctx, {"url": f"{server.url}/limited/k{len(after)}?times=1&after={after}"})
    assert error.code == "RateLimitExceeded"


def test_a_content_length_python_cannot_read_as_a_number_is_not_a_crash(tmp_path, server):
    ctx, _ = context(tmp_path)
    result = GET(ctx, {"url": f"{server.url}/odd-length"})
    assert result["status"] == 200 and result["bodyAsJson"] == {}


def test_a_429_without_retries_is_rate_limit_exceeded(tmp_path, server):
    ctx, _ = context(tmp_path)
    error = failure(GET, ctx, {"url": f"{server.url}/limited/h?times=1&after=7"})
    assert error.code == "RateLimitExceeded"
    assert "wait 7s" in error.message and "slow down" in error.message


def test_no_retry_waits_past_the_steps_timeout(tmp_path, server, waits):
    ctx, log = context(tmp_path, timeout=2)
    error = failure(GET, ctx, {"url": f"{server.url}/limited/i?times=1&after=30", "retries": 2})
    assert error.code == "RateLimitExceeded" and waits == []
    assert "no retry" in log.text()


def test_a_connection_dropped_mid_answer_is_a_connection_error(tmp_path, server, waits):
    ctx, _ = context(tmp_path)
    error = failure(GET, ctx, {"url": f"{server.url}/drop", "retries": 1})
    assert error.code == "ConnectionError"
    assert len([h for h in server.hits if h["path"] == "/drop"]) == 2  # a GET is retried


def test_a_hang_up_before_the_answer_is_a_connection_error(tmp_path, server):
    ctx, _ = context(tmp_path, "http-post")
    error = failure(POST, ctx, {"url": f"{server.url}/hangup", "retries": 2, "body": "x"})
    assert error.code == "ConnectionError"
    assert len(server.hits) == 1  # a POST is not


def test_a_refused_connection_is_a_connection_error(tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ctx, _ = context(tmp_path)
    assert failure(GET, ctx, {"url": f"http://127.0.0.1:{port}/x"}).code == "ConnectionError"


# -- redirects ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirected_post_is_not_followed(tmp_path, server, status):
    ctx, _ = context(tmp_path, "http-post")
    error = failure(POST, ctx, {"url": f"{server.url}/redirect/{status}", "body": {"a": 1}})
    assert error.code == "HttpError" and error.metadata["status"] == status
    assert "/echo" in error.message and "not followed" in error.guidance
    assert [(h["method"], h["path"]) for h in server.hits] == [("POST", f"/redirect/{status}")]


def test_an_expected_redirect_of_a_post_is_its_result(tmp_path, server):
    ctx, _ = context(tmp_path, "http-post")
    result = POST(ctx, {"url": f"{server.url}/redirect/303", "body": {}, "expectedStatus": 303})
    assert result["status"] == 303 and result["headers"]["Location"] == "/echo"


def test_a_redirected_get_is_followed(tmp_path, server):
    ctx, _ = context(tmp_path)
    result = GET(ctx, {"url": f"{server.url}/redirect/302"})
    assert result["status"] == 200 and result["bodyAsJson"]["path"] == "/echo"


# -- response schemas -------------------------------------------------------------------------------------


SCHEMA = {
    "type": "object",
    "required": ["name", "count"],
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


def test_a_body_matching_the_response_schema_passes(tmp_path, server):
    ctx, _ = context(tmp_path)
    assert GET(ctx, {"url": f"{server.url}/json", "responseSchema": SCHEMA})["bodyAsJson"]["count"] == 3


def test_a_body_not_matching_the_response_schema_names_the_json_path(tmp_path, server):
    ctx, _ = context(tmp_path)
    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "tags": {"type": "array", "items": {"type": "integer"}}}}
    error = failure(GET, ctx, {"url": f"{server.url}/json", "responseSchema": schema})
    assert error.code == "SchemaValidationFailed"
    assert "$.tags[0]" in error.message and "is not of type 'integer'" in error.message
    assert [e["path"] for e in error.metadata["schemaErrors"]] == ["$.tags[0]", "$.tags[1]"]
    assert error.metadata["status"] == 200


def test_a_body_that_is_not_json_fails_the_response_schema(tmp_path, server):
    ctx, _ = context(tmp_path)
    error = failure(GET, ctx, {"url": f"{server.url}/text", "responseSchema": SCHEMA})
    assert error.code == "SchemaValidationFailed" and "not JSON" in error.message


def test_an_invalid_response_schema_is_a_config_error(tmp_path, server):
    ctx, _ = context(tmp_path)
    assert failure(GET, ctx, {"url": f"{server.url}/json", "responseSchema": {"type": 12}}).code == "InvalidConfig"
    error = failure(
        GET, ctx, {"url": f"{server.url}/json", "responseSchema": {"$ref": "https://example.invalid/s.json"}}
    )
    assert error.code == "InvalidConfig" and "remote $refs" in error.guidance


# -- bad configs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config, code",
    [
        ({"url": "ftp://example.com/x"}, "InvalidUrl"),
        ({"url": "http://"}, "InvalidConfig"),
        ({"url": "http://127.0.0.1:1/x y"}, "InvalidConfig"),
        ({"url": "http://127.0.0.1:1/", "retries": -1}, "InvalidConfig"),
        ({"url": "http://127.0.0.1:1/", "retries": 1.5}, "InvalidConfig"),
        ({"url": "http://127.0.0.1:1/", "retries": 99}, "InvalidConfig"),
        ({"url": "http://127.0.0.1:1/", "expectedStatus": 99}, "InvalidConfig"),
        ({"url": "http://127.0.0.1:1/", "expectedStatus": []}, "InvalidConfig"),
        ({"url": "http://127.0.0.1:1/", "headers": {"Bad Name": "x"}}, "InvalidConfig"),
    ],
)
def test_a_bad_config_fails_before_anything_is_sent(tmp_path, config, code):
    ctx, log = context(tmp_path)
    assert failure(GET, ctx, config).code == code
    assert log == []


def test_a_header_value_with_a_line_break_is_refused_without_showing_it(tmp_path):
    ctx, _ = context(tmp_path)
    error = failure(
        GET, ctx, {"url": "http://127.0.0.1:1/", "headers": {"Authorization": "Bearer SECRET\r\nX-Injected: 1"}}
    )
    assert error.code == "InvalidConfig" and "Authorization" in error.message and "SECRET" not in error.message


def test_a_header_value_an_http_header_cannot_carry_is_refused(tmp_path):
    ctx, _ = context(tmp_path)
    error = failure(GET, ctx, {"url": "http://127.0.0.1:1/", "headers": {"X-Name": "naïve → no"}})
    assert error.code == "InvalidConfig" and "X-Name" in error.message


def test_a_body_that_is_not_json_serializable_is_a_config_error(tmp_path):
    ctx, _ = context(tmp_path, "http-post")
    assert failure(POST, ctx, {"url": "http://127.0.0.1:1/", "body": {"x": float("nan")}}).code == "InvalidConfig"


# -- the gateway ------------------------------------------------------------------------------------------


def test_a_what_if_records_a_post_instead_of_sending_it(tmp_path, server):
    ctx, _ = context(tmp_path, "http-post", performer=RecordingPerformer())
    with pytest.raises(Unknowable):
        POST(ctx, {"url": f"{server.url}/echo", "body": {"a": 1}, "retries": 2, "retryMutation": True})
    assert server.hits == []


def test_a_what_if_reads_nothing_from_the_network_unless_asked(tmp_path, server):
    ctx, _ = context(tmp_path, performer=RecordingPerformer())
    with pytest.raises(Unknowable, match="--refresh"):
        GET(ctx, {"url": f"{server.url}/json"})
    assert server.hits == []


def test_a_what_if_with_refresh_sends_a_get_once_and_never_waits(tmp_path, server, waits):
    ctx, _ = context(tmp_path, performer=RecordingPerformer(refresh=True))
    assert GET(ctx, {"url": f"{server.url}/json"})["status"] == 200
    # A failing read is not retried in a what-if, although the step allows retries.
    error = failure(GET, ctx, {"url": f"{server.url}/flaky/w?fail=5&status=503", "retries": 3})
    assert error.code == "HttpError"
    assert [hit["path"] for hit in server.hits] == ["/json", "/flaky/w"] and waits == []


def _plugin_head(ctx, config):
    """A plugin action's run: no built-in action sends a HEAD, a plugin may (through the gateway)."""
    from catalyst_dsl.runtime.effects.network import HttpRequest

    return ctx.gateway.send(HttpRequest(config["method"], config["url"])).status


@pytest.mark.parametrize("method", ["HEAD", "head", "Head"])
def test_a_what_if_sends_no_head_request_without_refresh(tmp_path, server, method):
    ctx, _ = context(tmp_path, performer=RecordingPerformer())
    with pytest.raises(Unknowable, match="--refresh"):
        _plugin_head(ctx, {"method": method, "url": f"{server.url}/json"})
    assert server.hits == []


def test_a_what_if_with_refresh_sends_a_head_request_once(tmp_path, server):
    ctx, _ = context(tmp_path, performer=RecordingPerformer(refresh=True))
    assert _plugin_head(ctx, {"method": "HEAD", "url": f"{server.url}/json"}) == 200
    assert [(hit["method"], hit["path"]) for hit in server.hits] == [("HEAD", "/json")]


def test_one_tls_context_serves_every_request(tmp_path, server, monkeypatch):
    import ssl

    from catalyst_dsl.runtime.effects import network

    made = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: made.append(1) or real(*a, **k))
    network.tls_context.cache_clear()
    ctx, _ = context(tmp_path)
    for _ in range(3):
        GET(ctx, {"url": f"{server.url}/json"})
    assert len(made) == 1
    network.tls_context.cache_clear()


# -- HTTPS ----------------------------------------------------------------------------------------------


@pytest.fixture
def self_signed(tmp_path):
    """A self-signed certificate for 127.0.0.1 and its key, made with openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed, so no self-signed certificate can be made")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context


def test_a_self_signed_certificate_is_refused_never_ignored(tmp_path, self_signed, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    _, tls = self_signed
    with servers.LocalServer(tls=tls) as secure:
        ctx, _ = context(tmp_path)
        error = failure(GET, ctx, {"url": f"{secure.url}/json", "retries": 2})
        assert error.code == "CertificateError"
        assert "not trusted" in error.message and "always verified" in error.guidance
        assert secure.hits == []


def test_a_certificate_from_a_trusted_authority_is_accepted(tmp_path, self_signed, monkeypatch):
    from catalyst_dsl.runtime.effects import network

    cert, tls = self_signed
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the trust store OpenSSL reads
    network.tls_context.cache_clear()  # the process reads its trust store once: read it anew
    try:
        with servers.LocalServer(tls=tls) as secure:
            ctx, _ = context(tmp_path)
            assert GET(ctx, {"url": f"{secure.url}/json"})["bodyAsJson"]["name"] == "widget"
    finally:
        network.tls_context.cache_clear()


# -- through `catalyst run` (needs the actions registered) -----------------------------------------------------


HEAD = """\
name: {name}
description: http
owner: Engineer
inputs:
  - string: base
{inputs}steps:
"""


def _playbook(project, name: str, steps: str, inputs: str = "") -> None:
    import textwrap

    project.playbook(
        name, HEAD.format(name=name, inputs=inputs) + textwrap.indent(textwrap.dedent(steps).lstrip("\n"), "  ")
    )


def test_cli_an_http_result_feeds_later_steps(project, server):
    _playbook(
        project,
        "fetch",
        """
        - name: item
          http-get: "{{base}}/json"
          responseSchema: {type: object, required: [name]}
        - name: sent
          http-post:
            url: "{{base}}/echo"
            body: {name: "${{ get('item').bodyAsJson.name }}", count: "${{ get('item').bodyAsJson.count + 1 }}"}
        - return:
            status: "${{ get('sent').status }}"
            echoed: "${{ get('sent').bodyAsJson.json }}"
    """,
    )
    result = project.run("fetch", base=server.url)
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"status": 200, "echoed": {"name": "widget", "count": 4}}
    assert f"GET {server.url}/json" in result.output


def test_cli_a_secret_header_reaches_the_server_but_no_file_or_output(project, server, monkeypatch):
    monkeypatch.setenv("CATALYST_SECRET_TOK", "S3CR3T-HTTP-TOKEN")
    _playbook(
        project,
        "auth",
        """
        - name: call
          http-get: "{{base}}/echo"
          headers: {Authorization: "Bearer {{tok}}"}
        - log-info: "${{ get('call').body }}"
    """,
        inputs="  - string: tok\n    secret: true\n",
    )
    result = project.run("auth", base=server.url)
    assert result.exit_code == 0, result.output
    assert server.hits[0]["headers"]["Authorization"] == "Bearer S3CR3T-HTTP-TOKEN"
    assert "S3CR3T-HTTP-TOKEN" not in result.output
    state = "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in project.state_dir.rglob("*") if p.is_file()
    )
    assert "S3CR3T-HTTP-TOKEN" not in state
    assert "***" in state


def test_cli_a_status_error_is_caught_by_its_code(project, server):
    _playbook(
        project,
        "missing",
        """
        - try:
            - http-get: "{{base}}/status/404"
          catch:
            - code: NotFound
              steps:
                - return:
                    caught: "${{ get('$error').code }}"
                    status: "${{ get('$error').metadata.status }}"
    """,
    )
    result = project.run("missing", base=server.url)
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"caught": "NotFound", "status": 404}


def test_cli_the_step_timeout_bounds_a_request(project, server):
    _playbook(
        project,
        "slow",
        """
        - name: wait
          http-get: "{{base}}/slow?seconds=5"
          timeout: 0.3s
    """,
    )
    result = project.run("slow", base=server.url)
    assert result.exit_code == 2, result.output  # an answer after 5 s would have passed
    assert project.snapshot()["error"]["code"] == "StepTimeout"


def test_cli_an_unexpected_status_fails_the_run(project, server):
    _playbook(
        project,
        "broken",
        """
        - name: call
          http-delete: "{{base}}/status/500"
    """,
    )
    result = project.run("broken", base=server.url)
    assert result.exit_code == 2, result.output
    assert project.snapshot()["failures"][0]["code"] == "HttpError"
    assert "500" in project.snapshot()["failures"][0]["message"]


def test_http_failures_also_answer_to_the_original_engines_codes(project):
    # Real playbooks catch HttpNetworkError / HttpInvalidStatus; ours raise ConnectionError /
    # NotFound, which answer to those names too.
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    project.playbook(
        "compat",
        f"""
        name: compat
        description: catches by the original engine's codes
        owner: Engineer
        steps:
          - try:
              steps:
                - http-get: "http://127.0.0.1:{port}/nothing-listens-here"
            catch:
              - code: HttpNetworkError
                steps:
                  - log-info: "caught {{{{$error.code}}}}"
    """,
    )
    result = project.run("compat")
    assert result.exit_code == 0, result.output
    assert "caught ConnectionError" in result.output


def test_cli_a_what_if_contacts_no_host_unless_refresh_is_given(project, server):
    _playbook(
        project,
        "peek",
        """
        - name: item
          http-get: "{{base}}/json"
          retries: 3
        - display: "${{ get('item').status }}"
    """,
    )
    plan = json.loads(project.run("peek", "--what-if", "--format", "json", base=server.url).output)
    assert server.hits == []
    assert plan["steps"][0]["change"] == "unknown" and "--refresh" in plan["steps"][0]["reason"]
    refreshed = json.loads(project.run("peek", "--what-if", "--refresh", "--format", "json", base=server.url).output)
    assert [hit["path"] for hit in server.hits] == ["/json"]
    assert refreshed["steps"][0]["change"] != "unknown"
    misused = project.run("peek", "--refresh", base=server.url)
    assert misused.exit_code == 2 and "add --what-if" in misused.output


def test_cli_a_value_in_the_path_stays_in_its_segment(project, server):
    _playbook(
        project,
        "segments",
        """
        - name: climb
          http-get: "{{base}}/echo/{{ item }}/tail"
        - name: dotted
          http-get: "{{base}}/echo/{{ dots }}/tail"
        - return:
            climbed: "${{ get('climb').bodyAsJson.path }}"
            dotted: "${{ get('dotted').bodyAsJson.path }}"
    """,
        inputs="  - string: item\n  - string: dots\n",
    )
    result = project.run("segments", base=server.url, item="../admin?all=1#x%41", dots="..")
    assert result.exit_code == 0, result.output
    assert [hit["path"] for hit in server.hits] == ["/echo/..%2Fadmin%3Fall%3D1%23x%2541/tail", "/echo/%2E%2E/tail"]
    assert project.snapshot()["outputs"]["dotted"] == "/echo/%2E%2E/tail"


def test_cli_a_value_in_the_query_is_one_value(project, server):
    _playbook(
        project,
        "query",
        """
        - name: call
          http-get: "{{base}}/echo?q={{ query }}&page=2#{{ query }}"
        - return:
            query: "${{ get('call').bodyAsJson.query }}"
    """,
        inputs="  - string: query\n",
    )
    result = project.run("query", base=server.url, query="a&page=9&b=c+d#e")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"]["query"] == {"q": "a&page=9&b=c+d#e", "page": "2"}


def test_cli_a_whole_url_value_and_raw_text_are_sent_as_they_are(project, server):
    _playbook(
        project,
        "prebuilt",
        """
        - name: given
          http-get: "{{ whole }}"
        - name: prepared
          http-get: "{{base}}/echo?${{ raw(query) }}"
        - return:
            whole: "${{ get('given').bodyAsJson.query }}"
            prepared: "${{ get('prepared').bodyAsJson.query }}"
    """,
        inputs="  - string: whole\n  - string: query\n",
    )
    result = project.run("prebuilt", base=server.url, whole=f"{server.url}/echo?a=1&b=2", query="c=3&d=4")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"whole": {"a": "1", "b": "2"}, "prepared": {"c": "3", "d": "4"}}


def test_cli_a_secret_encoded_into_a_url_is_masked_in_its_encoded_form(project, server, monkeypatch):
    monkeypatch.setenv("CATALYST_SECRET_TOK", "S3CR3T/HTTP+TOKEN")
    _playbook(
        project,
        "keyed",
        """
        - name: call
          http-get: "{{base}}/echo?key={{tok}}"
    """,
        inputs="  - string: tok\n    secret: true\n",
    )
    result = project.run("keyed", base=server.url)
    assert result.exit_code == 0, result.output
    assert server.hits[0]["path"] == "/echo"
    assert "S3CR3T%2FHTTP%2BTOKEN" not in result.output and "S3CR3T" not in result.output
    state = "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in project.state_dir.rglob("*") if p.is_file()
    )
    assert "S3CR3T" not in state
