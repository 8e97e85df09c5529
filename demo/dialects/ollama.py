"""Ollama's dialect (``POST /api/chat``): the request, the NDJSON stream and its errors.

Guarantees:
- ``read`` turns the messages into OpenAI's shape (tool calls get ids made from their place and their object
  ``arguments`` a JSON string; a ``tool`` message answers the call in its place) and finds what Ollama refuses
  with a 400: a tool call whose ``arguments`` is not an object (Go's unmarshal error, as Ollama says it), and, as
  a model served by it expects, a tool call not answered by exactly one ``tool`` message right after it.
- ``frames`` is one JSON object per line: ``message`` with ``thinking`` or ``content`` pieces, each tool call whole
  with object ``arguments`` when it starts, then ``done: true`` with ``done_reason`` (``length`` when ``cut``)
  and, when usage is allowed, ``prompt_eval_count`` and ``eval_count``.
- An in-stream error is a ``{"error": message}`` line and the end of the stream.
- ``error``: ``{"error": message}`` with the status; ``retry_after`` as the ``retry-after`` header.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from starlette.responses import Response

from demo.behavior import Behavior
from demo.dialects.base import Parsed, error_json, function_tools, object_messages, text_of
from demo.stream import RequestRecord, paced, prompt_tokens

ERRORS = {
    400: "invalid request",
    401: "unauthorized",
    404: "model not found, try pulling it first",
    429: "too many requests, please retry later",
    500: "llama runner process has terminated: exit status 2",
    503: "server busy, please try again.  maximum pending requests exceeded",
}
UNMARSHAL = (
    "json: cannot unmarshal string into Go struct field ToolCallFunction.messages.tool_calls.function.arguments "
    "of type api.ToolCallFunctionArguments"
)
UNANSWERED = "messages[{i}]: every tool call needs one tool message right after it ({calls} calls, {answers} answers)"


def history_problem(messages: list[dict[str, Any]]) -> str | None:
    """The 400 message for these messages, or None when they would be accepted."""
    for i, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        if any(not isinstance((c.get("function") or {}).get("arguments"), dict) for c in calls):
            return UNMARSHAL
        if message.get("role") == "tool" and not (
            i and (messages[i - 1].get("tool_calls") or messages[i - 1].get("role") == "tool")
        ):
            return UNANSWERED.format(i=i, calls=0, answers=1)
        if calls:
            answers = 0
            while i + 1 + answers < len(messages) and messages[i + 1 + answers].get("role") == "tool":
                answers += 1
            if answers != len(calls):
                return UNANSWERED.format(i=i, calls=len(calls), answers=answers)
    return None


def as_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages in OpenAI's shape (see the module's guarantees)."""
    out: list[dict[str, Any]] = []
    call_of: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            answered = call_of.pop(0) if call_of else "unanswered"
            out.append({"role": "tool", "tool_call_id": answered, "content": text_of(message.get("content"))})
            continue
        calls: list[dict[str, Any]] = [
            {
                "id": f"oc_{i}_{j}",
                "type": "function",
                "function": {"name": f.get("name"), "arguments": json.dumps(f.get("arguments"))},
            }
            for j, f in enumerate((c.get("function") or {}) for c in message.get("tool_calls") or [])
        ]
        call_of = [str(c["id"]) for c in calls]
        text = text_of(message.get("content"))
        if role == "assistant":
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        else:
            out.append({"role": str(role), "content": text})
    return out


def _line(model: str, message: dict[str, Any], done: bool = False, **tail: Any) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    return json.dumps({"model": model, "created_at": stamp, "message": message, "done": done, **tail}) + "\n"


MALFORMED = '{"model": "demo", "message": {"role": "assistant", "content": "oo\n'


class OllamaDialect:
    name = "ollama"
    too_long = "the input length exceeds the context length"
    media_type = "application/x-ndjson"

    def read(self, body: dict[str, Any], model: str | None) -> Parsed:
        messages, tools = object_messages(body), function_tools(body)
        if messages is None:
            return Parsed(str(body.get("model")), [], tools, problem="json: cannot unmarshal messages")
        return Parsed(str(body.get("model")), as_openai(messages), tools, True, history_problem(messages))

    def error(self, status: int, message: str | None, retry_after: float | None) -> Response:
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else None
        return error_json({"error": message or ERRORS.get(status, f"HTTP {status}")}, status, headers)

    async def frames(self, record: RequestRecord, b: Behavior, text: str, parsed: Parsed) -> AsyncGenerator[str, None]:
        model = parsed.model
        async with aclosing(paced(record, b, text)) as pieces:
            async for piece in pieces:
                match piece.kind:
                    case "malformed":
                        yield MALFORMED
                        return
                    case "error":
                        yield json.dumps({"error": piece.text}) + "\n"
                        return
                    case "reasoning":
                        yield _line(model, {"role": "assistant", "content": "", "thinking": piece.text})
                    case "text":
                        yield _line(model, {"role": "assistant", "content": piece.text})
                    case "call_start":
                        assert piece.call is not None
                        call = {
                            "function": {"name": piece.call.name, "arguments": json.loads(piece.call.arguments or "{}")}
                        }
                        yield _line(model, {"role": "assistant", "content": "", "tool_calls": [call]})
                    case "call_args":
                        pass  # Ollama sends a call whole: its arguments went with its start
        tail: dict[str, Any] = {"done_reason": "length" if b.cut else "stop", "total_duration": 1_000_000}
        if b.usage:
            tail.update(prompt_eval_count=prompt_tokens(record, b), eval_count=len(text.split()) + len(b.tool_calls))
        yield _line(model, {"role": "assistant", "content": ""}, True, **tail)
        record.finished = True


DIALECT = OllamaDialect()
