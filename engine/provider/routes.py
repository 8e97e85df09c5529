"""Which route a model call takes: the light route for OpenAI-compatible providers, litellm's stream wrapper else.

Guarantees: ``open_stream`` sends every request through ``litellm.acompletion`` with the same arguments
(``engine.provider.calls.request_kwargs``: ``max_retries=0``, usage requested, tools only when there are any); a model
whose provider is OpenAI-compatible (``engine.provider.light_route.COMPATIBLE``) is read by ``LightStream``, any other
by ``ProviderStream``. ``LEDGER_CHAT_STREAM_ROUTE=litellm`` sends every model by the plain route. Both streams yield
the same ``Delta``/``ToolPiece`` values, close in ``aclose()`` and know ``finish_reason``/``usage`` at the end.
"""

from __future__ import annotations

from typing import Any

from engine.provider.calls import ProviderConfig, ProviderStream, request_kwargs
from engine.provider.calls import open_stream as open_plain
from engine.provider.light_route import LightStream, open_light, serves

__all__ = ["AnyStream", "open_stream"]

AnyStream = ProviderStream | LightStream


async def open_stream(
    config: ProviderConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> AnyStream:
    """Send the request by the model's route; raise litellm's exception for errors before streaming."""
    if serves(config):
        return await open_light(request_kwargs(config, messages, tools))
    return await open_plain(config, messages, tools)
