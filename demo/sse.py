"""OpenAI's streaming wire format, as the demo model writes it: chat-completion chunks framed as SSE events.

Guarantees:
- ``event`` frames one JSON payload as ``data: {...}`` and a blank line; ``DONE`` ends a stream; ``MALFORMED`` is
  a chunk cut off mid-JSON (the ``#malformed`` fault).
- ``chunk`` is one ``chat.completion.chunk`` with id ``chatcmpl-demo``, the current time, one choice with the
  given delta and ``finish_reason``; ``usage_chunk`` has no choices and the token counts (total = prompt +
  completion).
- ``tool_call_events`` streams a tool call as OpenAI does: id, type and name first with empty arguments, then
  the arguments string in ``call.pieces`` parts (at least one character each) under the same ``index``.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from demo.agent import PlannedCall

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


def usage_chunk(model: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """The chunk that reports usage (sent when the request asks for ``stream_options.include_usage``)."""
    return {
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


async def tool_call_events(model: str, index: int, call: PlannedCall) -> AsyncIterator[str]:
    """A tool call as OpenAI streams it: id and name first, then the arguments string in pieces."""
    first = {
        "index": index,
        "id": call.call_id or f"call_{index}",
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    yield event(chunk(model, {"tool_calls": [first]}))
    size = max(1, -(-len(call.arguments) // max(call.pieces, 1)))
    for start in range(0, len(call.arguments), size):
        piece = {"index": index, "function": {"arguments": call.arguments[start : start + size]}}
        yield event(chunk(model, {"tool_calls": [piece]}))
