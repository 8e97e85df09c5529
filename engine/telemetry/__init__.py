"""OpenTelemetry export of the ledger's traces and metrics (OTLP/HTTP, the official SDK and exporter).

``engine.telemetry.otlp`` turns the pure spans of ``ledger.folds.trace`` into the SDK's spans and sends them;
``engine.telemetry.live`` follows an engine's events and exports each attempt as it ends.
"""

from __future__ import annotations

from engine.telemetry.live import LiveTelemetry
from engine.telemetry.otlp import Endpoint, send

__all__ = ["Endpoint", "LiveTelemetry", "send"]
