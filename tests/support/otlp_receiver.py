"""A real OTLP/HTTP receiver on 127.0.0.1: what arrives is decoded with the ``opentelemetry-proto`` messages.

``OtlpReceiver()`` serves ``/v1/traces`` and ``/v1/metrics`` (protobuf bodies, gzip or not) on its own thread and
keeps every span (``spans``, as ``Received``) and every metric data point (``metrics``); ``hang=True`` makes it
accept a request and never answer it (until ``close``), to stand for a slow or frozen backend.
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def plain(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(plain(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return {kv.key: plain(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


@dataclass
class Received:
    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int  # 0 unset, 1 ok, 2 error
    status_message: str
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    service: str = ""


class OtlpReceiver:
    def __init__(self, hang: bool = False) -> None:
        self.spans: list[Received] = []
        self.metrics: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        self.requests = 0
        self.hang = hang
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.requests += 1
                if receiver.hang:
                    receiver.release.wait()
                    return
                if self.path == "/v1/traces":
                    receiver.take_traces(body)
                    reply = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    receiver.take_metrics(body)
                    reply = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def take_traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            service = next((plain(a.value) for a in rs.resource.attributes if a.key == "service.name"), "")
            for ss in rs.scope_spans:
                for s in ss.spans:
                    self.spans.append(
                        Received(
                            name=s.name,
                            trace_id=int.from_bytes(s.trace_id, "big"),
                            span_id=int.from_bytes(s.span_id, "big"),
                            parent_id=int.from_bytes(s.parent_span_id, "big") if s.parent_span_id else None,
                            kind=s.kind,
                            start_ns=s.start_time_unix_nano,
                            end_ns=s.end_time_unix_nano,
                            attributes={a.key: plain(a.value) for a in s.attributes},
                            status_code=s.status.code,
                            status_message=s.status.message,
                            events=[
                                (e.name, e.time_unix_nano, {a.key: plain(a.value) for a in e.attributes})
                                for e in s.events
                            ],
                            service=service,
                        )
                    )

    def take_metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    points = self.metrics.setdefault(metric.name, [])
                    for p in metric.histogram.data_points:
                        points.append(({a.key: plain(a.value) for a in p.attributes}, (p.count, p.sum)))

    def named(self, prefix: str) -> list[Received]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
