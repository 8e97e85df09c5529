"""OpenAI's chat-completions dialect: the request, the SSE stream of ``chat.completion.chunk`` and its errors.

Guarantees:
- ``read`` keeps the messages as sent (they are OpenAI's shape already); ``problem`` is ``demo.agent``'s history
  check (a tool call id without exactly one tool message, a tool message answering no call).
- ``frames``: reasoning as ``reasoning_content`` deltas, text deltas (the first carries ``role``), tool calls as
  OpenAI streams them (``demo.sse.tool_call_events``), a final chunk with ``finish_reason`` (``tool_calls``,
  ``content_filter`` when ``blocked``, ``length`` when ``cut``, else ``stop``), the usage chunk when asked for and
  allowed (with ``prompt_tokens_details.cached_tokens``), then ``data: [DONE]``.
- An in-stream error is ``data: {"error": {...}}`` and the end of the stream.
- ``error``: ``{"error": {"message", "type", "code"}}`` with the status; ``retry_after`` as the ``retry-after``
  header.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from starlette.responses import Response

from demo.agent import history_problem
from demo.behavior import Behavior
from demo.dialects.base import Parsed, error_json, function_tools, object_messages
from demo.sse import DONE, MALFORMED, chunk, event, usage_chunk
from demo.stream import RequestRecord, paced, prompt_tokens

ERRORS = {
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    429: ("Rate limit reached for requests. Please try again in 1s.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request.", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
    400: ("The request body must be a JSON object.", "invalid_request_error", None),
    413: ("The request body is too large.", "invalid_request_error", None),
}


class OpenAIDialect:
    name = "openai"
    too_long = (
        "This model's maximum context length is 2000 tokens. However, your messages resulted in 2417 tokens. "
        "Please reduce the length of the messages."
    )
    media_type = "text/event-stream"

    def read(self, body: dict[str, Any], model: str | None) -> Parsed:
        messages, tools = object_messages(body), function_tools(body)
        if messages is None:
            return Parsed(str(body.get("model")), [], tools, problem="messages must be a list of objects")
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return Parsed(str(body.get("model")), messages, tools, usage, history_problem(messages))

    def error(self, status: int, message: str | None, retry_after: float | None) -> Response:
        default, kind, code = ERRORS.get(status, (f"HTTP {status}", "error", None))
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else None
        return error_json({"error": {"message": message or default, "type": kind, "code": code}}, status, headers)

    async def frames(self, record: RequestRecord, b: Behavior, text: str, parsed: Parsed) -> AsyncGenerator[str, None]:
        model, first = parsed.model, True
        async with aclosing(paced(record, b, text)) as pieces:
            async for piece in pieces:
                match piece.kind:
                    case "malformed":
                        yield MALFORMED
                        return
                    case "error":
                        yield event({"error": {"message": piece.text, "type": "server_error", "code": None}})
                        return
                    case "reasoning" | "text":
                        key = "reasoning_content" if piece.kind == "reasoning" else "content"
                        delta: dict[str, Any] = {key: piece.text}
                        if first:
                            delta["role"], first = "assistant", False
                        yield event(chunk(model, delta))
                    case "call_start":
                        assert piece.call is not None
                        call = {
                            "index": piece.index,
                            "id": piece.call.call_id or f"call_{piece.index}",
                            "type": "function",
                            "function": {"name": piece.call.name, "arguments": ""},
                        }
                        yield event(chunk(model, {"tool_calls": [call]}))
                    case "call_args":
                        part = {"index": piece.index, "function": {"arguments": piece.text}}
                        yield event(chunk(model, {"tool_calls": [part]}))
        finish = "tool_calls" if b.tool_calls else "content_filter" if b.blocked else "length" if b.cut else "stop"
        yield event(chunk(model, {}, finish_reason=finish))
        if parsed.include_usage and b.usage:
            thought = len(b.reasoning.split()) if b.reasoning else 0
            words = len(text.split()) + len(b.tool_calls) + thought
            yield event(usage_chunk(model, prompt_tokens(record, b), words, b.cached_tokens, thought))
        yield DONE
        record.finished = True


DIALECT = OpenAIDialect()
