"""OpenAI's streaming wire format, as the demo model writes it: chat-completion chunks framed as SSE events.

Guarantees:
- ``event`` frames one JSON payload as ``data: {...}`` and a blank line; ``DONE`` ends a stream; ``MALFORMED`` is
  a chunk cut off mid-JSON (the ``#malformed`` fault).
- ``chunk`` is one ``chat.completion.chunk`` with id ``chatcmpl-demo``, the current time, one choice with the
  given delta and ``finish_reason``; ``usage_chunk`` has no choices and the token counts (total = prompt +
  completion).
- ``usage_chunk`` carries ``prompt_tokens_details.cached_tokens`` when some prompt tokens came from the cache.
"""

from __future__ import annotations

import json
import time
from typing import Any

DONE = "data: [DONE]\n\n"
MALFORMED = 'data: {"id": "broken", "choices": [{"delta": {"content": "oops"\n\n'


def event(payload: dict[str, Any]) -> str:
    """One SSE event carrying ``payload`` as JSON."""
    return f"data: {json.dumps(payload)}\n\n"


def chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """A streamed chat-completion chunk with one choice."""
    return {
        "id": "chatcmpl-demo",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def usage_chunk(
    model: str, prompt_tokens: int, completion_tokens: int, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    """The chunk that reports usage (sent when the request asks for ``stream_options.include_usage``); reasoning
    tokens (part of the completion's) as OpenAI's reasoning models report them."""
    payload: dict[str, Any] = {
        "id": "chatcmpl-demo",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    if cached:
        payload["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    if reasoning:
        payload["usage"]["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return payload
