"""One request read by both routes: the engine's light route and litellm's plain one, on the same real upstream.

Guarantees: ``use(route)`` picks the route through ``LEDGER_CHAT_STREAM_ROUTE`` ("litellm" forces the plain route,
"light" lets the model's provider choose); ``read_all`` reads a whole stream and closes it, giving its pieces, finish
reason, usage and stream type; ``failure_of`` is the exception a read raised and the failure the ledger would record
for it; ``failures_by_both`` plans one behaviour for each route in turn on a reset upstream and gives both failures,
holding that each route sent exactly one request (no re-send of its own).
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.provider.calls import ProviderConfig
from engine.provider.failures import classify
from engine.provider.light_route import ROUTE_VARIABLE
from engine.provider.routes import open_stream
from tests.support.upstream import Behavior, ScriptedUpstream

__all__ = ["ASK", "ROUTES", "TOOLS", "failure_of", "failures_by_both", "read_all", "use"]

ROUTES = ("light", "litellm")
ASK = [{"role": "user", "content": "hello there"}]
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]


def use(route: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ROUTE_VARIABLE, "litellm" if route == "litellm" else "auto")


async def read_all(cfg: ProviderConfig, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    stream = await open_stream(cfg, ASK, tools)
    try:
        pieces = [piece async for piece in stream]
    finally:
        await stream.aclose()
    return {"pieces": pieces, "finish": stream.finish_reason, "usage": stream.usage, "type": type(stream)}


async def failure_of(cfg: ProviderConfig) -> tuple[Any, Any]:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - the type is what the test compares
        await read_all(cfg)
    return caught.value, classify(caught.value)


async def failures_by_both(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, behavior: Behavior, cfg: ProviderConfig
) -> dict[str, tuple[Any, Any]]:
    got = {}
    for route in ROUTES:
        use(route, monkeypatch)
        upstream.reset()
        upstream.plan(behavior)
        got[route] = await failure_of(cfg)
        assert len(upstream.records) == 1, f"{route}: a re-send of its own"
    return got
