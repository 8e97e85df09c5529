"""The ledger's spans and measurements handed to the OpenTelemetry SDK and its OTLP/HTTP exporters.

Guarantees:
- ``readable(span)`` is the SDK's ``ReadableSpan`` with exactly the ids, parent, times, attributes and status of
  the pure ``SpanValue`` (``ledger.folds.trace``): nothing is re-timed or re-numbered, so a back-fill repeats the ids.
- Every string attribute passes ``engine.redaction.redact``: a key never leaves the process, content or not.
- ``OnceLogged`` wraps an exporter so that a failing endpoint is said once in the log (and its recovery once),
  instead of the SDK's line per batch; exports run on the SDK's own threads (``BatchSpanProcessor``,
  ``PeriodicExportingMetricReader``), never on the event loop.
- ``send(values, endpoint)`` is the back-fill: every span of the traces, in batches, synchronously; it returns
  how many were accepted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from engine.redaction import redact, redact_url
from ledger.folds import AttemptTraceValue, AttrValue, SpanValue

log = logging.getLogger("ledger_chat.telemetry")
SCOPE = InstrumentationScope("ledger_chat", "0.1.0", "https://opentelemetry.io/schemas/1.41.0")
KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
STATUS = {"unset": StatusCode.UNSET, "ok": StatusCode.OK, "error": StatusCode.ERROR}
SAMPLED = TraceFlags(TraceFlags.SAMPLED)
EXPORT_TIMEOUT = 5.0  # seconds an export request may take before the SDK gives it up (on its own thread)
# The SDK says every failed batch in its own words; ours says it once (``OnceLogged``).
for _name in ("opentelemetry.exporter.otlp.proto.http", "opentelemetry.exporter.otlp.proto.http.trace_exporter"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)


@dataclass(frozen=True, kw_only=True, slots=True)
class Endpoint:
    """Where spans and metrics go (OTLP/HTTP), under which service name, and whether message content goes too."""

    traces_url: str
    metrics_url: str | None = None
    service_name: str = "ledger-chat"
    content: bool = False
    metric_interval: float = 10.0  # seconds between metric exports
    export_timeout: float = EXPORT_TIMEOUT  # seconds one export request may take (on the SDK's thread)

    @property
    def shown(self) -> str:
        return redact_url(self.traces_url)


def resource(endpoint: Endpoint) -> Resource:
    return Resource.create({"service.name": endpoint.service_name})


def _value(value: AttrValue) -> AttrValue:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, tuple):
        return tuple(redact(v) for v in value)
    return value


def readable(span: SpanValue, where: Resource) -> ReadableSpan:
    context = SpanContext(span.trace_id, span.span_id, is_remote=False, trace_flags=SAMPLED)
    parent = None
    if span.parent_id is not None:
        parent = SpanContext(span.trace_id, span.parent_id, is_remote=False, trace_flags=SAMPLED)
    return ReadableSpan(
        name=span.name,
        context=context,
        parent=parent,
        resource=where,
        attributes={key: _value(value) for key, value in span.attributes},
        events=[Event(e.name, {k: _value(v) for k, v in e.attributes}, timestamp=e.at_ns) for e in span.events],
        kind=KINDS[span.kind],
        status=Status(STATUS[span.status], span.status_message if span.status == "error" else None),
        start_time=span.start_ns,
        end_time=span.end_ns,
        instrumentation_scope=SCOPE,
    )


def readable_spans(values: Sequence[AttemptTraceValue], where: Resource) -> list[ReadableSpan]:
    return [readable(span, where) for value in values for span in value.spans]


class OnceLogged(SpanExporter):
    """An exporter that says once that export fails (and once that it works again)."""

    def __init__(self, inner: SpanExporter, shown: str) -> None:
        self.inner, self.shown, self.failing = inner, shown, False
        self.failures = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001 - an exporter must never break its thread
            log.debug("export raised", exc_info=exc)
            result = SpanExportResult.FAILURE
        if result is SpanExportResult.FAILURE:
            self.failures += 1
            if not self.failing:
                self.failing = True
                log.warning(
                    "OpenTelemetry export to %s is failing: spans are dropped until it answers (the ledger keeps "
                    "everything: `main.py export --otlp` sends them later)",
                    self.shown,
                )
        elif self.failing:
            self.failing = False
            log.warning("OpenTelemetry export to %s works again", self.shown)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def span_exporter(endpoint: Endpoint) -> OnceLogged:
    return OnceLogged(OTLPSpanExporter(endpoint=endpoint.traces_url, timeout=endpoint.export_timeout), endpoint.shown)


def metric_exporter(endpoint: Endpoint) -> OTLPMetricExporter | None:
    if endpoint.metrics_url is None:
        return None
    return OTLPMetricExporter(endpoint=endpoint.metrics_url, timeout=endpoint.export_timeout)


def send(values: Sequence[AttemptTraceValue], endpoint: Endpoint, batch: int = 512) -> int:
    """Export every span of ``values`` now (the back-fill); how many spans the endpoint accepted."""
    exporter, where = span_exporter(endpoint), resource(endpoint)
    spans, sent = readable_spans(values, where), 0
    try:
        for start in range(0, len(spans), batch):
            part = spans[start : start + batch]
            if exporter.export(part) is SpanExportResult.SUCCESS:
                sent += len(part)
    finally:
        exporter.shutdown()
    return sent
