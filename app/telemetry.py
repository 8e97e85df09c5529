"""Observability commands: the live exporter's start (``--otlp-endpoint``, ``app.telemetry_config``) and
``main.py export --otlp URL`` (the back-fill).

Guarantees:
- No endpoint: nothing is started and nothing is imported from the SDK.
- Message content is exported only with ``--otel-content``; keys never (``engine.telemetry.otlp``).
- The back-fill sends the stored conversations' ended attempts as the same spans (same ids) the live run sent; it
  prints how many and exits 1 when the endpoint accepted none of them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from app.telemetry_config import TelemetryConfig

if TYPE_CHECKING:
    from app.config import AppConfig
    from engine.commands import Engine
    from engine.telemetry import LiveTelemetry


def _endpoint(config: TelemetryConfig, **more: Any) -> Any:
    from engine.telemetry import Endpoint

    assert config.traces_url is not None
    return Endpoint(
        traces_url=config.traces_url,
        metrics_url=config.metrics_url,
        service_name=config.service_name,
        content=config.content,
        **more,
    )


def start_telemetry(telemetry: TelemetryConfig, engine: Engine) -> LiveTelemetry | None:
    """Follow the engine's events and export them (None when no endpoint is configured); flushed at shutdown."""
    if telemetry.traces_url is None:
        return None
    from nicegui import app

    from engine.telemetry import LiveTelemetry

    live = LiveTelemetry(engine, _endpoint(telemetry))
    app.on_shutdown(live.close)
    return live


def backfill(config: AppConfig) -> int:
    """``main.py export --otlp URL [--conversation ID]``: the stored attempts as spans, sent now."""
    from app.commands import stored_for_reading
    from engine.telemetry import send
    from ledger.folds import traces

    store = stored_for_reading(config)
    if store is None:
        return 1
    ids = store.conversation_ids()
    if config.conversation:
        if config.conversation not in ids:
            print(f"ledger-chat: no conversation {config.conversation} in {store.where}", file=sys.stderr)
            return 1
        ids = [config.conversation]
    values = [value for cid in ids for value in traces(store.events(cid), config.telemetry.content)]
    endpoint = _endpoint(config.telemetry)
    sent = send(values, endpoint)
    total = sum(len(v.spans) for v in values)
    print(f"{len(values)} attempt(s), {sent} of {total} span(s) sent to {endpoint.shown}", flush=True)
    return 0 if sent == total else 1
