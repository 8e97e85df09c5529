"""The provider path: every model call through litellm (``calls``: the stream, its pieces, the usage), the light
routes (OpenAI-compatible servers, SSE parsed here; Anthropic, Gemini and Ollama through litellm's own parsers
without its stream wrapper), the route chosen per model, provider errors classified
into failures a person can read, token counts, the context window's meter, the cost of an attempt, an agent
preset applied to a request and the request a page shows as sent.

Guarantees: no key or credential in a URL leaves here in clear (``redaction``, ``url_credentials``); litellm is
imported off the event loop once (``engine.offline``); nothing here appends to the ledger.
"""

from __future__ import annotations

from engine.provider.calls import ProviderConfig, ToolPiece, takes_prefill, takes_reasoning
from engine.provider.context import Meter, count, measure, window_of
from engine.provider.cost import Cost, CostReport, attempt_cost, chat_cost, price, total, turn_cost
from engine.provider.failures import Failure, StreamStalled, classify
from engine.provider.light_route import COMPATIBLE
from engine.provider.preset_request import AppliedPreset, allows, approval_overrides, offered, with_instructions
from engine.provider.request_view import SentRequest, requests_seen
from engine.provider.routes import AnyStream, open_stream
from engine.provider.tokens import count_messages, count_text, warm_up
from engine.provider.url_credentials import split_credentials

__all__ = [
    "AnyStream",
    "AppliedPreset",
    "COMPATIBLE",
    "Cost",
    "CostReport",
    "Failure",
    "Meter",
    "ProviderConfig",
    "SentRequest",
    "StreamStalled",
    "ToolPiece",
    "allows",
    "approval_overrides",
    "attempt_cost",
    "chat_cost",
    "classify",
    "count",
    "count_messages",
    "count_text",
    "measure",
    "offered",
    "open_stream",
    "price",
    "requests_seen",
    "split_credentials",
    "takes_prefill",
    "takes_reasoning",
    "total",
    "turn_cost",
    "warm_up",
    "window_of",
    "with_instructions",
]
