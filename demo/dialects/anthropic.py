"""Anthropic's Messages dialect (``POST /v1/messages``): the request, the SSE event stream and its errors.

Guarantees:
- ``read`` turns the body into OpenAI-shaped messages (an assistant's text blocks joined, each of a user's text
  blocks a message of its own; ``tool_use`` blocks into ``tool_calls`` with their ``input`` as a JSON string; each
  ``tool_result`` block into a ``tool`` message, before the user's text) and finds what Anthropic refuses with a
  400: a ``tool_use`` whose ``tool_result`` is not in the next message, which must be the user's, with every
  result first in it; a ``tool_result`` answering no ``tool_use`` of the message before; an empty text block; a
  first message that is not the user's.
- ``frames`` is the stream as Anthropic sends it: ``message_start`` (usage: ``input_tokens`` and both prompt-cache
  fields), a ``ping``, one content block per part (``thinking`` with ``thinking_delta`` and a
  ``signature_delta``; ``text`` with ``text_delta``; ``tool_use`` with id and name first, then its input in
  ``input_json_delta`` parts), ``message_delta`` with ``stop_reason`` (``tool_use``, ``refusal`` when ``blocked``,
  ``max_tokens`` when ``cut``, else ``end_turn``) and the output tokens when usage is allowed, then ``message_stop``.
- An in-stream error is an ``error`` event (``overloaded_error``) and the end of the stream.
- ``error``: ``{"type": "error", "error": {"type", "message"}}`` with Anthropic's type per status (429
  ``rate_limit_error``, 529 ``overloaded_error``, ...), a ``request-id`` header, ``retry-after`` when given.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from starlette.responses import Response

from demo.behavior import Behavior
from demo.dialects.base import Parsed, error_json, object_messages, text_of
from demo.stream import RequestRecord, paced, prompt_tokens

ERRORS = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "An unexpected error has occurred internal to Anthropic's systems."),
    529: ("overloaded_error", "Overloaded"),
}
MISSING = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
ORPHAN = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
NOT_FIRST = "messages.{i}: `tool_result` blocks must come first in the content of a user message, before any text."
EMPTY = "messages.{i}.content.{j}: text content blocks must be non-empty"


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def history_problem(messages: list[dict[str, Any]]) -> str | None:
    """Anthropic's 400 message for these messages, or None when it would accept them."""
    if messages and messages[0].get("role") != "user":
        return 'messages.0.role: the first message must use the "user" role'
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        for j, block in enumerate(blocks):
            if block.get("type") == "text" and not block.get("text"):
                return EMPTY.format(i=i, j=j)
        uses = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
        after = messages[i + 1] if i + 1 < len(messages) else None
        results = _blocks(after) if after is not None and after.get("role") == "user" else []
        answered = [str(b.get("tool_use_id")) for b in results if b.get("type") == "tool_result"]
        missing = [u for u in uses if u not in answered]
        if uses and missing:
            return MISSING.format(i=i, ids=", ".join(missing))
        kinds = [b.get("type") for b in results]
        first_other = next((n for n, k in enumerate(kinds) if k != "tool_result"), len(kinds))
        if uses and "tool_result" in kinds[first_other:]:
            return NOT_FIRST.format(i=i + 1)
        if message.get("role") == "user":
            before = _blocks(messages[i - 1]) if i and messages[i - 1].get("role") == "assistant" else []
            used = {str(b.get("id")) for b in before if b.get("type") == "tool_use"}
            for j, block in enumerate(blocks):
                if block.get("type") == "tool_result" and str(block.get("tool_use_id")) not in used:
                    return ORPHAN.format(i=i, j=j, id=block.get("tool_use_id"))
    return None


def as_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages in OpenAI's shape (see the module's guarantees)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        blocks = _blocks(message)
        text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        if message.get("role") == "assistant":
            calls = [
                {
                    "id": b.get("id"),
                    "type": "function",
                    "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input"))},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append({"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": text_of(b.get("content"))})
        # litellm joins consecutive user messages into one with a text block each: one message per block again
        out += [{"role": "user", "content": str(b.get("text"))} for b in blocks if b.get("type") == "text"]
    return out


def _event(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"


MALFORMED = 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "te\n\n'


class AnthropicDialect:
    name = "anthropic"
    too_long = "prompt is too long: 2417 tokens > 2000 maximum"
    media_type = "text/event-stream"

    def read(self, body: dict[str, Any], model: str | None) -> Parsed:
        messages = object_messages(body)
        tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        if messages is None:
            return Parsed(str(body.get("model")), [], tools, problem="messages: Input should be a valid list")
        return Parsed(str(body.get("model")), as_openai(messages), tools, True, history_problem(messages))

    def error(self, status: int, message: str | None, retry_after: float | None) -> Response:
        kind, default = ERRORS.get(status, ("api_error", f"HTTP {status}"))
        headers = {"request-id": "req_demo_0001"}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        return error_json({"type": "error", "error": {"type": kind, "message": message or default}}, status, headers)

    async def frames(self, record: RequestRecord, b: Behavior, text: str, parsed: Parsed) -> AsyncGenerator[str, None]:
        usage = {
            "input_tokens": prompt_tokens(record, b) - b.cached_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": b.cached_tokens,
            "output_tokens": 1,
        }
        message = {"id": "msg_demo", "type": "message", "role": "assistant", "model": parsed.model, "content": []}
        yield _event("message_start", {"message": {**message, "stop_reason": None, "usage": usage}})
        yield _event("ping", {})
        index, open_kind = -1, ""
        async with aclosing(paced(record, b, text)) as pieces:
            async for piece in pieces:
                if piece.kind == "malformed":
                    yield MALFORMED
                    return
                if piece.kind == "error":
                    yield _event("error", {"error": {"type": "overloaded_error", "message": piece.text}})
                    return
                kind = {"reasoning": "thinking", "text": "text", "call_start": "tool_use"}.get(piece.kind, open_kind)
                if piece.kind != "call_args" and (kind != open_kind or kind == "tool_use"):
                    if open_kind == "thinking":
                        yield _delta(index, {"type": "signature_delta", "signature": "c2lnbmVk"})
                    if open_kind:
                        yield _event("content_block_stop", {"index": index})
                    index, open_kind = index + 1, kind
                    yield _event("content_block_start", {"index": index, "content_block": _start(piece, kind)})
                    if kind == "tool_use":
                        continue
                match piece.kind:
                    case "reasoning":
                        yield _delta(index, {"type": "thinking_delta", "thinking": piece.text})
                    case "text":
                        yield _delta(index, {"type": "text_delta", "text": piece.text})
                    case _:
                        yield _delta(index, {"type": "input_json_delta", "partial_json": piece.text})
        if open_kind:
            yield _event("content_block_stop", {"index": index})
        stop = "tool_use" if b.tool_calls else "refusal" if b.blocked else "max_tokens" if b.cut else "end_turn"
        tail: dict[str, Any] = {"delta": {"stop_reason": stop, "stop_sequence": None}}
        if b.usage:
            tail["usage"] = {"output_tokens": len(text.split()) + len(b.tool_calls)}
        yield _event("message_delta", tail)
        yield _event("message_stop", {})
        record.finished = True


def _delta(index: int, delta: dict[str, Any]) -> str:
    return _event("content_block_delta", {"index": index, "delta": delta})


def _start(piece: Any, kind: str) -> dict[str, Any]:
    if kind == "tool_use":
        call = piece.call
        return {"type": "tool_use", "id": call.call_id or f"toolu_demo_{piece.index}", "name": call.name, "input": {}}
    return {"type": "thinking", "thinking": "", "signature": ""} if kind == "thinking" else {"type": "text", "text": ""}


DIALECT = AnthropicDialect()
