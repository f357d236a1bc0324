"""Traces and metrics of runs through OpenTelemetry, sent with its OTLP exporter to a
collector on 127.0.0.1 (the test's own, decoding OpenTelemetry's protobuf messages):
opt-in through OpenTelemetry's environment variables, masked like the console."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2  # noqa: E402
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: E402

SHIP = """
name: ship
description: two steps, the second fails
owner: Engineer
inputs:
  - string: token
    secret: true
    required: true
steps:
  - name: greet
    log-info: hello
  - name: broken
    bash: "echo failing with {{token}} >&2; exit 3"
    writes: []
"""


class Collector(ThreadingHTTPServer):
    """Receives OTLP/HTTP exports: spans and metrics, decoded."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Receiver)
        self.spans: list = []
        self.metrics: list = []
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Receiver(BaseHTTPRequestHandler):
    server: Collector

    def log_message(self, format, *args):  # noqa: A002
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/v1/traces":
            request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    self.server.spans.extend(scope.spans)
        elif self.path == "/v1/metrics":
            request = metrics_service_pb2.ExportMetricsServiceRequest.FromString(body)
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    self.server.metrics.extend(scope.metrics)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def collector(monkeypatch):
    server = Collector()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.url)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
    yield server
    server.shutdown()
    server.server_close()


def attributes(span) -> dict:
    return {a.key: a.value.string_value or a.value.bool_value for a in span.attributes}


def test_a_run_is_a_trace_with_a_span_per_step_and_its_metrics(project, collector):
    project.playbook("ship", SHIP)
    result = project.run("ship", token="s3cr3t-value")
    assert result.exit_code == 2, result.output
    by_name = {}
    for span in collector.spans:
        by_name.setdefault(span.name, []).append(span)
    [run] = by_name["catalyst.run"]
    steps = by_name["catalyst.step"]
    assert [attributes(s)["catalyst.step.name"] for s in steps] == ["greet", "broken"]
    assert all(s.parent_span_id == run.span_id and s.trace_id == run.trace_id for s in steps)
    assert attributes(run)["catalyst.playbook"] == "ship" and attributes(run)["catalyst.run.status"] == "failed"
    failed = steps[1]
    assert attributes(failed)["catalyst.step.status"] == "failed" and failed.status.code == 2  # ERROR
    assert "s3cr3t-value" not in failed.status.message and "***" in failed.status.message
    assert run.status.code == 2
    names = {m.name for m in collector.metrics}
    assert {"catalyst.runs", "catalyst.run.duration", "catalyst.steps", "catalyst.step.duration"} <= names


def test_nothing_is_sent_unless_asked(project, collector, monkeypatch):
    monkeypatch.delenv("OTEL_TRACES_EXPORTER")
    monkeypatch.delenv("OTEL_METRICS_EXPORTER")
    project.playbook("note", "name: note\ndescription: a note\nowner: Engineer\nsteps:\n  - log-info: hi\n")
    assert project.run("note").exit_code == 0
    assert collector.spans == [] and collector.metrics == []


def test_otel_sdk_disabled_wins(project, collector, monkeypatch):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    project.playbook("note", "name: note\ndescription: a note\nowner: Engineer\nsteps:\n  - log-info: hi\n")
    assert project.run("note").exit_code == 0
    assert collector.spans == []


def test_asked_for_without_the_sdk_the_run_says_so_and_goes_on(project, collector, monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    project.playbook("note", "name: note\ndescription: a note\nowner: Engineer\nsteps:\n  - log-info: hi\n")
    result = project.run("note")
    assert result.exit_code == 0, result.output
    assert "OpenTelemetry is asked for, but its SDK is not installed" in result.output
    assert "catalyst-dsl[telemetry]" in result.output
