"""The built-in real AI adapters: a program on stdin/stdout, an OpenAI-compatible stream.

The command adapter runs a small Python program through a real effects gateway; the
OpenAI adapter talks to a local HTTP server that streams Server-Sent Events. Backoff is
shortened so retries cost milliseconds.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from catalyst_dsl.project.config import ProjectConfig
from catalyst_dsl.runtime.adapters import openai_compatible as ai_adapters
from catalyst_dsl.runtime.adapters.attempts import RateLimiter, gateway_runner, shared_limiter
from catalyst_dsl.runtime.adapters.builtin import available_adapters
from catalyst_dsl.runtime.adapters.choosing import select_adapter
from catalyst_dsl.runtime.adapters.command import CommandAdapter
from catalyst_dsl.runtime.adapters.interface import (
    AI_ADAPTER_ERROR,
    AI_ADAPTER_UNAVAILABLE,
    AdapterError,
    AIAdapter,
    collect,
)
from catalyst_dsl.runtime.adapters.openai_compatible import OpenAIAdapter, chat_completions_url
from catalyst_dsl.runtime.effects.gateway import EffectsGateway, RealPerformer
from catalyst_dsl.runtime.effects.grants import Grants

FAST = dict(backoff=0.01)

# --- the command adapter -----------------------------------------------------------------------------

PROGRAM = textwrap.dedent("""\
    import os, sys, time
    mode, state = sys.argv[1], sys.argv[2]
    prompt = sys.stdin.read()
    with open(os.path.join(state, "calls"), "a") as calls:
        calls.write(prompt.replace("\\n", " ") + "|" + os.environ.get("CATALYST_AI_TOOLS", "") + "|" \
+ os.environ.get("CATALYST_AI_MODEL", "-") + "\\n")
    count = len(open(os.path.join(state, "calls")).read().splitlines())
    with open(os.path.join(state, "pid"), "w") as pid:
        pid.write(str(os.getpid()))

    def say(line):
        print(line, flush=True)

    if mode == "echo":
        for word in prompt.split():
            say(word.upper())
    elif mode == "wait":  # the second line only once the test has read the first
        say("first")
        for _ in range(500):
            if os.path.exists(os.path.join(state, "go")):
                break
            time.sleep(0.01)
        open(os.path.join(state, "ended"), "w").close()
        say("second")
    elif mode == "dies":
        say("partial answer")
        print("segfault-ish", file=sys.stderr, flush=True)
        sys.exit(3)
    elif mode == "fails":
        print("bad flag --frobnicate", file=sys.stderr, flush=True)
        sys.exit(2)
    elif mode == "tempfail-once":
        if count == 1:
            print("busy, try later", file=sys.stderr, flush=True)
            sys.exit(75)
        say("fine now")
    elif mode == "tempfail":
        sys.exit(75)
    elif mode == "slow":
        say("thinking")
        time.sleep(10)
    """)


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie left unreaped counts as stopped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_until_stopped(pid: int) -> None:
    for _ in range(2000):  # a bound against a hang only; nothing here is a measurement
        if not _alive(pid):
            return
        time.sleep(0.01)
    raise AssertionError(f"the program {pid} is still running")


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "ai_program.py"
    path.write_text(PROGRAM, encoding="utf-8")
    state = tmp_path / "state"
    state.mkdir()
    gateway = EffectsGateway(tmp_path, tmp_path / "scratch", (Grants.of("test", None),), RealPerformer())
    runner = gateway_runner(gateway)

    def make(mode: str, **kw) -> CommandAdapter:
        return CommandAdapter([sys.executable, str(path), mode, str(state)], runner, **{**FAST, **kw})

    make.state = state
    make.calls = lambda: (state / "calls").read_text().splitlines() if (state / "calls").exists() else []
    make.runner = runner
    return make


def test_command_adapter_streams_stdout_lines_as_chunks(program):
    adapter = program("echo")
    assert isinstance(adapter, AIAdapter) and adapter.name == "command"
    chunks = list(adapter.invoke("hello there\nworld", ["read"], {"model": "small"}))
    assert chunks == ["HELLO\n", "THERE\n", "WORLD\n"]
    # The prompt came on stdin; the grants and the model in the environment.
    assert program.calls() == ["hello there world|read|small"]


def test_command_adapter_chunks_arrive_before_the_program_ends(program):
    stream = program("wait").invoke("q", (), {})
    assert next(stream) == "first\n"  # the program is still waiting for "go"
    assert len(program.calls()) == 1
    (program.state / "go").touch()
    assert list(stream) == ["second\n"]


def test_command_adapter_reader_that_stops_early_lets_go(program):
    stream = program("wait").invoke("q", (), {"timeout": 5})
    assert next(stream) == "first\n"
    stream.close()  # as when the step's deadline passes between chunks
    # The program was still waiting for "go", which never comes: it ends only by being stopped.
    _wait_until_stopped(int((program.state / "pid").read_text()))
    assert not (program.state / "ended").exists()


def test_command_adapter_tools_are_empty_by_default(program):
    collect(program("echo").invoke("x", (), {}))
    assert program.calls() == ["x||-"]


def test_command_adapter_non_zero_exit_quotes_stderr_and_is_not_retried(program):
    with pytest.raises(AdapterError) as caught:
        collect(program("fails").invoke("q", (), {}))
    error = caught.value
    assert error.code == AI_ADAPTER_ERROR
    assert "exited with code 2" in error.message and "bad flag --frobnicate" in error.message
    assert error.metadata["exitCode"] == 2
    assert len(program.calls()) == 1


def test_command_adapter_dying_mid_stream_is_an_early_end(program):
    seen = []
    with pytest.raises(AdapterError) as caught:
        for chunk in program("dies").invoke("q", (), {}):
            seen.append(chunk)
    assert seen == ["partial answer\n"]
    assert caught.value.code == AI_ADAPTER_ERROR
    assert "the stream ended early" in caught.value.message and "segfault-ish" in caught.value.message
    assert len(program.calls()) == 1  # never retried once part of the answer was out


def test_command_adapter_retries_a_temporary_failure(program):
    assert collect(program("tempfail-once").invoke("q", (), {})) == "fine now\n"
    assert len(program.calls()) == 2


def test_command_adapter_gives_up_after_three_attempts(program):
    with pytest.raises(AdapterError, match="failed 3 times") as caught:
        collect(program("tempfail").invoke("q", (), {}))
    assert caught.value.code == AI_ADAPTER_ERROR
    assert len(program.calls()) == 3


def test_command_adapter_timeout_stops_the_program(program):
    with pytest.raises(AdapterError) as caught:
        collect(program("slow").invoke("q", (), {"timeout": 0.5}))
    assert caught.value.code == "StepTimeout"
    _wait_until_stopped(int((program.state / "pid").read_text()))  # stopped, not left sleeping


def test_command_adapter_missing_program_is_unavailable(program):
    adapter = CommandAdapter(["no-such-ai-program-xyz"], program.runner, **FAST)
    with pytest.raises(AdapterError) as caught:
        collect(adapter.invoke("q", (), {}))
    assert caught.value.code == AI_ADAPTER_UNAVAILABLE and "no-such-ai-program-xyz" in caught.value.message


# --- a local OpenAI-compatible server ------------------------------------------------------------------


def _event(content: str | None = None, finish: str | None = None) -> bytes:
    delta = {} if content is None else {"content": content}
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class Server:
    """Answers each POST with the next planned reply; records every request."""

    def __init__(self) -> None:
        self.plan: list[tuple] = []
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                kind, *args = server.plan.pop(0) if server.plan else ("stream", ["ok"])
                try:
                    getattr(self, "_" + kind)(*args)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (a timeout test)

            def _stream(self, pieces, done=True, finish=True, delay=0.0):
                time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b": keep-alive comment\n\n")
                self.wfile.write(_event())  # the role delta, no content
                for piece in pieces:
                    self.wfile.write(_event(piece))
                    self.wfile.flush()
                if finish:
                    self.wfile.write(_event(None, "stop"))
                if done:
                    self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

            def _status(self, code, message, headers=None):
                data = json.dumps({"error": {"message": message, "type": "x"}}).encode()
                self.send_response(code)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _drop(self):
                self.close_connection = True  # no response at all

            def _json(self, content):
                data = json.dumps(
                    {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    running = Server()
    yield running
    running.close()


def _openai(server, **kw):
    return OpenAIAdapter(server.base_url, "test-model", kw.pop("api_key", "sk-test-secret"), **{**FAST, **kw})


def test_openai_streams_the_deltas(server):
    server.plan = [("stream", ["Hel", "lo", " world"])]
    adapter = _openai(server)
    assert isinstance(adapter, AIAdapter) and adapter.name == "openai"
    assert list(adapter.invoke("Say hello", (), {})) == ["Hel", "lo", " world"]
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test-secret"
    assert request["body"] == {
        "model": "test-model",
        "stream": True,
        "messages": [{"role": "user", "content": "Say hello"}],
    }


def test_openai_options_and_tools_reach_the_request(server):
    adapter = _openai(server)
    collect(
        adapter.invoke(
            "q",
            ["read", "write"],
            {"model": "other", "role": "You review code.", "context": {"a": 1}, "maxTokens": 50, "temperature": 0.2},
        )
    )
    body = server.requests[0]["body"]
    assert body["model"] == "other" and body["max_tokens"] == 50 and body["temperature"] == 0.2
    assert body["metadata"] == {"catalyst_tools": "read,write"}
    assert [m["role"] for m in body["messages"]] == ["system", "system", "user"]
    assert body["messages"][0]["content"] == "You review code." and '"a": 1' in body["messages"][1]["content"]


def test_openai_without_key_sends_no_authorization(server):
    collect(_openai(server, api_key=None).invoke("q", (), {}))
    assert "Authorization" not in server.requests[0]["headers"]


def test_openai_refuses_to_send_a_key_over_plain_http_to_another_machine():
    sent = []
    adapter = OpenAIAdapter("http://ai.example.test/v1", "test-model", "sk-test-secret", send=sent.append, **FAST)
    with pytest.raises(AdapterError) as caught:
        collect(adapter.invoke("q", (), {}))
    assert caught.value.code == AI_ADAPTER_UNAVAILABLE and "ai.example.test" in caught.value.message
    assert "https://" in caught.value.guidance and "sk-test-secret" not in caught.value.message
    assert sent == []


@pytest.mark.parametrize(
    "url, exposed",
    [
        ("http://ai.example.test/v1", "ai.example.test"),
        ("http://10.0.0.5:8080", "10.0.0.5"),
        ("HTTP://Example.com", "example.com"),
        ("https://ai.example.test/v1", None),
        ("http://localhost:11434", None),
        ("http://127.8.0.1/v1", None),
        ("http://[::1]:8000", None),
        ("http://models.localhost/v1", None),
    ],
)
def test_a_credential_is_in_clear_text_only_over_http_to_another_machine(url, exposed):
    from catalyst_dsl.project.addresses import in_clear_text

    assert in_clear_text(url) == exposed


def test_openai_retries_a_server_error(server):
    server.plan = [("status", 500, "overloaded"), ("stream", ["fine"])]
    assert collect(_openai(server).invoke("q", (), {})) == "fine"
    assert len(server.requests) == 2


def test_openai_retries_429_then_reports_rate_limit(server):
    server.plan = [("status", 429, "slow down", {"Retry-After": "0"})] * 3
    with pytest.raises(AdapterError) as caught:
        collect(_openai(server).invoke("q", (), {}))
    assert caught.value.code == "RateLimitExceeded"
    assert "429" in caught.value.message and "slow down" in caught.value.message
    assert len(server.requests) == 3


def test_openai_429_then_ok(server):
    server.plan = [("status", 429, "slow down", {"Retry-After": "0"}), ("stream", ["done"])]
    assert collect(_openai(server).invoke("q", (), {})) == "done"


def test_openai_client_errors_are_not_retried_and_hide_the_key(server):
    server.plan = [("status", 401, "Incorrect API key provided")]
    with pytest.raises(AdapterError) as caught:
        collect(_openai(server).invoke("q", (), {}))
    error = caught.value
    assert error.code == AI_ADAPTER_ERROR and "401" in error.message and "Incorrect API key" in error.message
    assert "openai-api-key" in error.guidance
    assert len(server.requests) == 1
    adapter = _openai(server)
    assert "sk-test-secret" not in repr(adapter) + error.message + str(error.guidance)


def test_openai_connection_dropped_before_any_chunk_is_retried(server):
    server.plan = [("drop",), ("stream", ["after the drop"])]
    assert collect(_openai(server).invoke("q", (), {})) == "after the drop"
    assert len(server.requests) == 2


def test_openai_stream_closed_before_done_with_nothing_sent_is_retried(server):
    server.plan = [("stream", [], False, False), ("stream", ["second try"])]
    assert collect(_openai(server).invoke("q", (), {})) == "second try"


def test_openai_stream_dropped_after_chunks_is_an_error(server):
    server.plan = [("stream", ["par", "tial"], False, False)]
    seen = []
    with pytest.raises(AdapterError) as caught:
        for chunk in _openai(server).invoke("q", (), {}):
            seen.append(chunk)
    assert seen == ["par", "tial"]
    assert caught.value.code == AI_ADAPTER_ERROR and "the stream ended early" in caught.value.message
    assert len(server.requests) == 1


def test_openai_refused_connection_fails_after_three_attempts():
    # A port nothing listens on: every attempt is refused.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = OpenAIAdapter(f"http://127.0.0.1:{port}/v1", "m", None, **FAST)
    with pytest.raises(AdapterError, match="failed 3 times") as caught:
        collect(adapter.invoke("q", (), {}))
    assert caught.value.code == AI_ADAPTER_ERROR


def test_openai_step_timeout(server):
    server.plan = [("stream", ["late"], True, True, 1.0)]
    with pytest.raises(AdapterError) as caught:
        collect(_openai(server).invoke("q", (), {"timeout": 0.3}))
    assert caught.value.code == "StepTimeout"


def test_openai_answer_without_streaming_is_accepted(server):
    server.plan = [("json", "all at once")]
    assert collect(_openai(server).invoke("q", (), {})) == "all at once"


def test_openai_needs_a_model(server):
    adapter = OpenAIAdapter(server.base_url, None, None, **FAST)
    with pytest.raises(AdapterError) as caught:
        adapter.invoke("q", (), {})
    assert caught.value.code == AI_ADAPTER_UNAVAILABLE and "openai-model" in caught.value.message
    assert collect(adapter.invoke("q", (), {"model": "given"})) == "ok"


def test_chat_completions_url():
    assert chat_completions_url("https://api.openai.com/v1") == "https://api.openai.com/v1/chat/completions"
    assert chat_completions_url("http://localhost:11434/") == "http://localhost:11434/v1/chat/completions"


def test_sse_events_without_blank_lines_and_multiline_data():
    lines = ['data: {"a": 1}', 'data: {"b":', "data: 2}", "", "event: ping", "data: [DONE]"]
    events = list(ai_adapters._events(iter(lines)))
    assert events[:2] == [{"a": 1}, {"b": 2}] and events[2] is ai_adapters._DONE


# --- the rate limit -------------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_rate_limiter_spaces_requests():
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)  # one a second
    assert [limiter.acquire() for _ in range(3)] == [0.0, 1.0, 1.0]
    clock.now += 5  # idle time refills the bucket, up to its burst of one
    assert limiter.acquire() == 0.0 and limiter.acquire() == 1.0


def test_rate_limiter_reserves_tokens_for_waiting_callers():
    clock = FakeClock()
    limiter = RateLimiter(120, burst=2, clock=clock, sleep=lambda s: None)  # sleeping callers do not move the clock
    assert [limiter.acquire() for _ in range(4)] == [0.0, 0.0, 0.5, 1.0]


def test_rate_limiter_refuses_a_wait_past_the_deadline():
    clock = FakeClock()
    limiter = RateLimiter(6, clock=clock, sleep=clock.sleep)  # one every 10 s
    limiter.acquire()
    with pytest.raises(AdapterError) as caught:
        limiter.acquire(deadline=clock.now + 2)
    assert caught.value.code == "StepTimeout"
    assert limiter.acquire(deadline=clock.now + 20) == 10.0  # the refused caller took no token


def test_rate_limit_applies_to_real_requests(server):
    clock = [0.0]
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(round(seconds, 6))
        clock[0] += seconds

    adapter = _openai(server, limiter=RateLimiter(600, clock=lambda: clock[0], sleep=sleep))  # one every 0.1 s
    for _ in range(3):
        collect(adapter.invoke("q", (), {}))
    assert waited == [0.1, 0.1]  # the second and third requests waited for their tokens
    assert len(server.requests) == 3


def test_shared_limiter_is_one_per_rate():
    assert shared_limiter(None) is None
    assert shared_limiter(30) is shared_limiter(30.0)
    assert shared_limiter(30) is not shared_limiter(31)
    with pytest.raises(AdapterError) as caught:
        shared_limiter(0)
    assert caught.value.code == AI_ADAPTER_UNAVAILABLE


# --- what a project has ----------------------------------------------------------------------------------


def test_available_adapters_follow_the_settings(program, server):
    assert available_adapters(ProjectConfig(), lambda name: None) == {}
    settings = ProjectConfig(
        ai_command=(sys.executable, "-c", "import sys; print(sys.stdin.read().strip()[::-1])"),
        openai_base_url=server.base_url,
        openai_model="m",
        ai_rate_limit=6000,
    )
    secrets = {"openai-api-key": "sk-from-secret"}
    found = available_adapters(settings, secrets.get, runner=program.runner, environ={"OPENAI_API_KEY": "sk-from-env"})
    assert sorted(found) == ["command", "openai"]
    command = select_adapter("command", (), found)
    assert collect(command.invoke("abc", (), {})) == "cba\n"
    assert command.limiter is shared_limiter(6000)
    openai = select_adapter(None, ("openai", "command"), found)
    assert collect(openai.invoke("q", (), {})) == "ok"
    assert server.requests[-1]["headers"]["Authorization"] == "Bearer sk-from-secret"
    # Without the secret, the environment's key.
    masked = []
    found = available_adapters(
        settings,
        lambda name: None,
        runner=program.runner,
        environ={"OPENAI_API_KEY": "sk-from-env"},
        mask=masked.append,
    )
    collect(found["openai"]({}).invoke("q", (), {}))
    assert server.requests[-1]["headers"]["Authorization"] == "Bearer sk-from-env"
    assert masked == ["sk-from-env"]
    # An empty precedence gives the mock; the session's precedence() lists the configured
    # built-ins first (test_ai_choice.py).
    assert select_adapter(None, (), found).name == "mock"


# --- through `catalyst run`, selected by the project's settings -------------------------------------


def test_cli_a_run_asks_the_adapters_its_settings_choose(project, server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-secret-4711")
    server.plan = [("stream", ["The spec ", "looks complete."])]
    reverse = [sys.executable, "-c", "import sys; print(sys.stdin.read().strip()[::-1])"]
    project.settings("""
        ai-adapters = ["openai", "command"]
        openai-model = "review-model"
    """)
    project.user_settings(f"""
        ai-command = {json.dumps(reverse)}
        openai-base-url = "{server.base_url}"
    """)
    project.playbook(
        "review",
        """
        name: review
        description: asks two AI adapters
        owner: Engineer
        steps:
          - name: verdict
            ai-prompt:
              prompt: Is the spec complete?
          - name: backwards
            ai-prompt:
              prompt: stressed
              provider: command
          - return:
              verdict: "{{verdict}}"
              backwards: "{{backwards}}"
    """,
    )
    result = project.run("review")
    assert result.exit_code == 0, result.output
    snap = project.snapshot()
    assert snap["outputs"] == {"verdict": "The spec looks complete.", "backwards": "desserts\n"}
    # The first adapter of ai-adapters answered the step that named none, with the model and
    # key of the settings, and no tools: grants are minimal unless the step gives some.
    [request] = server.requests
    assert request["body"]["model"] == "review-model" and "metadata" not in request["body"]
    assert request["headers"]["Authorization"] == "Bearer sk-cli-secret-4711"
    # The key is in no output and no file the run left.
    assert "sk-cli-secret-4711" not in result.output
    for path in project.root.rglob("*"):
        if path.is_file():
            assert b"sk-cli-secret-4711" not in path.read_bytes(), path
