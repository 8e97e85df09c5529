"""Which route a model call takes: the light routes for OpenAI-compatible providers and for Anthropic, Gemini and
Ollama, litellm's stream wrapper for any other.

Guarantees: ``open_stream`` sends every request through ``litellm.acompletion`` with the same arguments
(``engine.provider.calls.request_kwargs``: ``max_retries=0``, usage requested, tools only when there are any); a model
whose provider is OpenAI-compatible (``engine.provider.light_route.COMPATIBLE``) is read by ``LightStream``, one whose
provider is Anthropic, Gemini or Ollama's chat (``engine.provider.native_route.NATIVE``) by ``NativeStream``, any
other by ``ProviderStream``. ``LEDGER_CHAT_STREAM_ROUTE=litellm`` sends every model by the plain route. All three
streams yield the same ``Delta``/``ToolPiece`` values, close in ``aclose()`` and know ``finish_reason``/``usage`` at
the end and ``reported`` on the way.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from engine.offline import litellm
from engine.provider.calls import COMPATIBLE, ProviderConfig, ProviderStream, request_kwargs
from engine.provider.calls import open_stream as open_plain
from engine.provider.light_route import ROUTE_VARIABLE, LightStream, open_light
from engine.provider.native_route import NATIVE, NativeStream, open_native

__all__ = ["AnyStream", "Route", "open_stream", "route_of"]

AnyStream = ProviderStream | LightStream | NativeStream
Route = Literal["openai", "native", "plain"]


def route_of(config: ProviderConfig) -> Route:
    """The route ``config``'s model takes: by its litellm provider, unless the variable forces the plain one."""
    if os.environ.get(ROUTE_VARIABLE, "auto") == "litellm":
        return "plain"
    try:
        _, provider, _, _ = litellm().get_llm_provider(config.model, api_base=config.api_base)
    except Exception:  # noqa: BLE001 - a model litellm cannot route fails on the plain route, in litellm's words
        return "plain"
    if provider in COMPATIBLE:
        return "openai"
    return "native" if provider in NATIVE else "plain"


async def open_stream(
    config: ProviderConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> AnyStream:
    """Send the request by the model's route; raise litellm's exception for errors before streaming."""
    route = route_of(config)
    if route == "openai":
        return await open_light(request_kwargs(config, messages, tools))
    if route == "native":
        return await open_native(request_kwargs(config, messages, tools))
    return await open_plain(config, messages, tools)
