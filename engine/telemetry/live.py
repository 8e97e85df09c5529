"""``LiveTelemetry``: an engine's attempts exported as traces and metrics while it runs, as their events land.

Guarantees:
- It listens to the read side (``Engine.subscribe``): every event, the engine's own and those absorbed from other
  instances, is folded by ``ledger.folds.trace.Traces`` (a chunk costs a dict lookup and a few counters on the loop);
  each span goes to a ``BatchSpanProcessor`` (a queue; the export runs on the SDK's thread) as soon as the event
  that ends it lands: a request's ``chat`` span when its step finishes or it is re-sent, a tool call's when its
  result lands, the attempt's root (and what was still open) with its ``persisted``, together with its
  measurements. No span is sent twice. Nothing here awaits the endpoint: a receiver that is
  down or never answers costs the loop nothing, and the ledger loses nothing (spans beyond the SDK's queue are
  dropped and can be back-filled with the same ids).
- An attempt whose ``started`` this process never saw (finalized by a restart, or by another instance) is read
  from the ledger in a worker thread when its ``persisted`` lands, and exported the same way.
- ``close()`` flushes what is queued (on a thread, bounded) and stops the SDK's threads.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable

from opentelemetry.metrics import Histogram
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from engine.commands import Engine
from engine.telemetry.otlp import SCOPE, Endpoint, metric_exporter, readable, resource, span_exporter
from ledger.events import AnyEvent, Persisted
from ledger.folds import AttemptTraceValue, Traces, traces

log = logging.getLogger("ledger_chat.telemetry")
TOKEN_BUCKETS: list[float] = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
SECOND_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
HISTOGRAMS: dict[str, tuple[str, str, list[float]]] = {  # name: (unit, description, buckets)
    "gen_ai.client.token.usage": ("{token}", "Number of input and output tokens used.", TOKEN_BUCKETS),
    "gen_ai.client.operation.duration": ("s", "GenAI operation duration.", SECOND_BUCKETS),
    "gen_ai.client.operation.time_to_first_chunk": ("s", "Time to receive the first chunk.", SECOND_BUCKETS),
    "ledger.cancel.upstream_close.duration": ("s", "Time from a cancel to the upstream stream closed.", SECOND_BUCKETS),
}
RECENT = 1024  # attempts remembered as exported (a late second ``persisted`` is not exported again)


class LiveTelemetry:
    def __init__(self, engine: Engine, endpoint: Endpoint) -> None:
        self.engine, self.endpoint = engine, endpoint
        self.where = resource(endpoint)
        self.exporter = span_exporter(endpoint)
        self.processor = BatchSpanProcessor(self.exporter, max_queue_size=8192, schedule_delay_millis=500)
        self.traces = Traces(content=endpoint.content)
        self.exported: OrderedDict[str, None] = OrderedDict()
        self.sent_early: dict[str, set[int]] = {}  # attempt id -> span ids already handed to the exporter
        self.meters: MeterProvider | None = None
        self.histograms: dict[str, Histogram] = {}
        exporter = metric_exporter(endpoint)
        if exporter is not None:
            reader = PeriodicExportingMetricReader(exporter, export_interval_millis=endpoint.metric_interval * 1000)
            self.meters = MeterProvider(metric_readers=[reader], resource=self.where, shutdown_on_exit=False)
            meter = self.meters.get_meter(SCOPE.name, SCOPE.version, SCOPE.schema_url)
            for name, (unit, description, buckets) in HISTOGRAMS.items():
                self.histograms[name] = meter.create_histogram(
                    name, unit=unit, description=description, explicit_bucket_boundaries_advisory=buckets
                )
        self._unsubscribe: Callable[[], None] = engine.subscribe(self.on_event)
        self._pending: set[asyncio.Future[list[AttemptTraceValue]]] = set()

    def on_event(self, event: AnyEvent) -> None:
        value = self.traces.add(event)
        if value is not None:
            self.emit(value)
        elif type(event) is Persisted and event.attempt_id not in self.exported:
            self._read_later(event.conversation_id, event.attempt_id)

    def emit(self, value: AttemptTraceValue) -> None:
        if value.attempt_id in self.exported:
            return
        if not value.final:
            self.sent_early.setdefault(value.attempt_id, set()).update(span.span_id for span in value.spans)
            while len(self.sent_early) > RECENT:  # an attempt this process never saw end (another instance ended it)
                del self.sent_early[next(iter(self.sent_early))]
            for span in value.spans:
                self.processor.on_end(readable(span, self.where))
            return
        self.exported[value.attempt_id] = None
        while len(self.exported) > RECENT:
            self.exported.popitem(last=False)
        already = self.sent_early.pop(value.attempt_id, set())
        for span in value.spans:
            if span.span_id not in already:
                self.processor.on_end(readable(span, self.where))
        for m in value.measurements:
            if (histogram := self.histograms.get(m.metric)) is not None:
                histogram.record(m.value, dict(m.attributes))

    def _read_later(self, cid: str, attempt_id: str) -> None:
        """An attempt ended here that started before this process saw it: read from the ledger off the loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._emit_read(cid, attempt_id, self._read(cid, attempt_id))
            return
        future = loop.run_in_executor(None, self._read, cid, attempt_id)
        self._pending.add(future)
        future.add_done_callback(lambda done: self._done_reading(done, cid, attempt_id))

    def _done_reading(self, done: asyncio.Future[list[AttemptTraceValue]], cid: str, attempt_id: str) -> None:
        self._pending.discard(done)
        if done.cancelled() or done.exception() is not None:
            log.warning("could not read %s/%s for its trace: %s", cid, attempt_id, done.exception())
            return
        self._emit_read(cid, attempt_id, done.result())

    def _emit_read(self, cid: str, attempt_id: str, values: list[AttemptTraceValue]) -> None:
        for value in values:
            self.emit(value)

    def _read(self, cid: str, attempt_id: str) -> list[AttemptTraceValue]:
        return traces(self.engine.events(cid), self.endpoint.content, attempt_id)

    def flush(self, timeout: float = 5.0) -> bool:
        """Export what is queued now (blocking: call it on a thread)."""
        done = self.processor.force_flush(int(timeout * 1000))
        if self.meters is not None:
            self.meters.force_flush(int(timeout * 1000))
        return done

    async def close(self, timeout: float = 5.0) -> None:
        self._unsubscribe()
        if self._pending:
            await asyncio.wait(self._pending, timeout=timeout)
        await asyncio.to_thread(self._shutdown, timeout)

    def _shutdown(self, timeout: float) -> None:
        self.flush(timeout)
        self.processor.shutdown()  # type: ignore[no-untyped-call]
        if self.meters is not None:
            self.meters.shutdown(int(timeout * 1000))
