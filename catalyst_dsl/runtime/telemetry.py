"""Traces and metrics of runs through OpenTelemetry: opt-in, with OpenTelemetry's own
environment variables, and an optional extra (`pip install 'catalyst-dsl[telemetry]'`).

A run sends them when `OTEL_TRACES_EXPORTER` or `OTEL_METRICS_EXPORTER` names an exporter
(`otlp`, or `console` for standard error) and `OTEL_SDK_DISABLED` is not `true`; the
rest is OpenTelemetry's usual configuration (`OTEL_EXPORTER_OTLP_ENDPOINT`,
`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, headers…), read by its SDK. Asked for
without the extra installed, the run says so once and goes on.

- A trace per run process: the span `catalyst.run` (a resumed run is a new trace, linked
  by its run id), and a child span `catalyst.step` for each step that finished, failed or
  was skipped, with its name, action and status; a failed step's span has the error
  status with the run's message (masked like every line the run prints).
- Metrics: `catalyst.runs` (runs that ended or paused, by playbook and status),
  `catalyst.run.duration` (seconds), `catalyst.steps` (by action and status) and
  `catalyst.step.duration` (seconds).

Only the events the console shows travel, after masking: never a prompt, an answer, an
input value or a file's content.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable

#: The exporters catalyst sets up itself; any other name is left to OpenTelemetry's SDK.
EXPORTERS = ("otlp", "console")
EXTRA_HELP = "install it with `python3 -m pip install 'catalyst-dsl[telemetry]'`, or unset OTEL_TRACES_EXPORTER"


def wanted(environ=None) -> bool:
    """Whether the environment asks for traces or metrics."""
    environ = os.environ if environ is None else environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    chosen = [environ.get(name, "").strip().lower() for name in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")]
    return any(value and value != "none" for value in chosen)


def start(events, warn: Callable[[str], None]) -> Callable[[], None] | None:
    """Listen to `events` and send what the run does; the function that flushes and ends
    it all (call it when the run's process ends), or None when nothing is sent."""
    if not wanted():
        return None
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        warn(f"OpenTelemetry is asked for, but its SDK is not installed: {EXTRA_HELP}")
        return None
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "catalyst"})
    tracer_provider = TracerProvider(resource=resource)
    readers = []
    try:
        span_exporter = _span_exporter(os.environ.get("OTEL_TRACES_EXPORTER", ""))
        metric_exporter = _metric_exporter(os.environ.get("OTEL_METRICS_EXPORTER", ""))
    except ImportError:
        warn(f"OpenTelemetry's OTLP exporter is not installed: {EXTRA_HELP}")
        return None
    if span_exporter is not None:
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    if metric_exporter is not None:
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        readers.append(PeriodicExportingMetricReader(metric_exporter))
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    listener = RunTelemetry(tracer_provider.get_tracer("catalyst"), meter_provider.get_meter("catalyst"), events)
    events.listeners.append(listener)

    def end() -> None:
        listener.close()
        tracer_provider.shutdown()
        meter_provider.shutdown()

    return end


def _span_exporter(name: str):
    name = name.strip().lower()
    if name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr)  # standard output holds the run's own lines
    return None


def _metric_exporter(name: str):
    name = name.strip().lower()
    if name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter()
    if name == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(out=sys.stderr)
    return None


class RunTelemetry:
    """Turns a run's events into spans and measurements (see the module docstring)."""

    def __init__(self, tracer, meter, events) -> None:
        self.tracer = tracer
        self.events = events
        self.run_span = None
        self._context = None
        self.run_started = 0.0
        self.attributes: dict[str, Any] = {}
        self.runs = meter.create_counter("catalyst.runs", description="Runs that ended or paused")
        self.run_duration = meter.create_histogram("catalyst.run.duration", unit="s", description="How long a run took")
        self.steps = meter.create_counter("catalyst.steps", description="Steps that finished, failed or were skipped")
        self.step_duration = meter.create_histogram(
            "catalyst.step.duration", unit="s", description="How long a step took"
        )

    def __call__(self, event: str, status: str | None, step: str | None, message: str, fields: dict) -> None:
        if event == "run-started":
            self._run_started(message.startswith("resuming"))
        elif event in ("step-finished", "step-skipped") and self.run_span is not None:
            self._step(step, fields.get("action"), status or "skipped", fields.get("duration") or 0.0, message)
        elif event == "paused":
            self._run_ended("paused", None)
        elif event == "run-finished":
            self._run_ended(status or "finished", message)

    def _run_started(self, resumed: bool) -> None:
        from opentelemetry import trace

        self.attributes = {"catalyst.run.id": self.events.run_id or "", "catalyst.playbook": self.events.playbook or ""}
        self.run_span = self.tracer.start_span(
            "catalyst.run", attributes={**self.attributes, "catalyst.run.resumed": resumed}
        )
        self._context = trace.set_span_in_context(self.run_span)
        self.run_started = time.monotonic()

    def _step(self, step, action, status: str, seconds: float, message: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        end = time.time_ns()
        span = self.tracer.start_span(
            "catalyst.step",
            context=self._context,
            start_time=end - int(seconds * 1e9),
            attributes={
                **self.attributes,
                "catalyst.step.name": step or "",
                "catalyst.step.action": action or "",
                "catalyst.step.status": status,
            },
        )
        if status == "failed":
            span.set_status(Status(StatusCode.ERROR, message.strip()))
        span.end(end_time=end)
        labels = {"catalyst.step.action": action or "", "catalyst.step.status": status}
        self.steps.add(1, labels)
        self.step_duration.record(seconds, labels)

    def _run_ended(self, status: str, message: str | None) -> None:
        if self.run_span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        self.run_span.set_attribute("catalyst.run.status", status)
        if status == "failed":
            self.run_span.set_status(Status(StatusCode.ERROR, (message or "the run failed").strip()))
        self.run_span.end()
        labels = {"catalyst.playbook": self.attributes.get("catalyst.playbook", ""), "catalyst.run.status": status}
        self.runs.add(1, labels)
        self.run_duration.record(time.monotonic() - self.run_started, labels)
        self.run_span = None

    def close(self) -> None:
        """The process ends with the run's span still open (an interruption): end it."""
        self._run_ended("interrupted", None)
