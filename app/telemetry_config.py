"""The observability options: ``--otlp-endpoint`` / ``--otel-content`` (``--otlp`` on ``export``) and where they point.

Guarantees: the endpoint is ``--otlp-endpoint`` (or ``LEDGERCHAT_OTLP_ENDPOINT``), else the standard
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` (``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``);
a base URL gets ``/v1/traces`` and ``/v1/metrics``; ``OTEL_SERVICE_NAME`` names the service (default
``ledger-chat``); ``export`` sends spans only when its ``--otlp`` says so. A URL that is not http(s) is a
``ValueError`` naming the option (``load_config`` makes it a ``ConfigError``). Imports nothing of the app.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True, slots=True)
class TelemetryConfig:
    traces_url: str | None = None
    metrics_url: str | None = None
    service_name: str = "ledger-chat"
    content: bool = False


def telemetry_flags(parser: argparse.ArgumentParser, export: bool = False) -> None:
    """The observability options: ``--otlp-endpoint`` and ``--otel-content`` (``--otlp`` on ``export``)."""
    name = "--otlp" if export else "--otlp-endpoint"
    parser.add_argument(
        name,
        dest="otlp_endpoint",
        default=argparse.SUPPRESS,
        help="OTLP/HTTP endpoint for OpenTelemetry GenAI traces and metrics, e.g. http://127.0.0.1:4318 "
        "(default: OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    parser.add_argument(
        "--otel-content",
        action="store_true",
        default=argparse.SUPPRESS,
        help="also export message content (questions, answers, tool arguments and results); keys never",
    )


def telemetry_config(args: argparse.Namespace, environ: Mapping[str, str]) -> TelemetryConfig:
    flag = getattr(args, "otlp_endpoint", None) or environ.get("LEDGERCHAT_OTLP_ENDPOINT") or None
    if getattr(args, "command", None) == "export":  # ``export`` sends spans only when ``--otlp`` asks for it
        flag = getattr(args, "otlp_endpoint", None)
        environ = {k: v for k, v in environ.items() if not k.startswith("OTEL_EXPORTER_OTLP")}
    traces: str | None
    metrics: str | None
    if flag:
        base = flag.rstrip("/").removesuffix("/v1/traces")
        traces, metrics = f"{base}/v1/traces", f"{base}/v1/metrics"
    else:
        base = (environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").rstrip("/")
        traces = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or (f"{base}/v1/traces" if base else None)
        metrics = environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or (f"{base}/v1/metrics" if base else None)
    for url in (traces, metrics):
        if url and not url.startswith(("http://", "https://")):
            raise ValueError(f"--otlp-endpoint: {url!r} must start with http:// or https://")
    content = bool(getattr(args, "otel_content", False)) or environ.get("LEDGERCHAT_OTEL_CONTENT", "") in ("1", "true")
    return TelemetryConfig(
        traces_url=traces,
        metrics_url=metrics,
        service_name=environ.get("OTEL_SERVICE_NAME") or "ledger-chat",
        content=content,
    )
