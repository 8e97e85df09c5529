"""Gemini's dialect (``POST .../models/{model}:streamGenerateContent?alt=sse``): request, SSE stream, errors.

Guarantees:
- ``read`` turns ``contents`` (parts in camelCase or snake_case: the API takes both) into OpenAI-shaped messages
  (``model`` turns are the assistant's, each text part of a user turn a message of its own; each ``functionCall``
  part a tool call with an id made from its turn and place; each ``functionResponse`` part a ``tool`` message
  answering the call in the same place) and finds what Gemini refuses with a 400: a turn with no parts, a
  function call turn not followed at once by a turn with as many function responses, a response whose name is
  not its call's, a response turn that follows no call turn.
- ``frames`` is Gemini's stream: one ``GenerateContentResponse`` per piece (reasoning as ``thought`` parts, text
  parts, each function call whole, in one part, when its call starts), ``usageMetadata`` in every chunk (prompt,
  candidates, thoughts and cached token counts so far, when usage is allowed), then a last chunk with
  ``finishReason`` ``STOP`` (``MAX_TOKENS`` when ``cut``), or, when ``blocked``, ``SAFETY`` with the rating that
  blocked it.
- An in-stream error is ``data: {"error": {...}}`` (``UNAVAILABLE``) and the end of the stream.
- ``error``: ``{"error": {"code", "message", "status"}}`` with Google's status names (429
  ``RESOURCE_EXHAUSTED``, 503 ``UNAVAILABLE``: its overload); ``retry_after`` as a ``RetryInfo`` detail.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from starlette.responses import Response

from demo.behavior import Behavior
from demo.dialects.base import Parsed, error_json
from demo.stream import RequestRecord, paced, prompt_tokens

ERRORS = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "models/unknown is not found for API version v1beta."),
    429: ("RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}
COUNT = (
    "Please ensure that the number of function response parts is equal to the number of function call parts of "
    "the function call turn."
)
AFTER = "Please ensure that function response turn comes immediately after a function call turn."
NAMES = "Please ensure that the function response parts have the same names as the function call parts."
EMPTY = "* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."


def _parts(turn: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The parts of one kind (``functionCall``, ``functionResponse``), in either spelling the API accepts."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
    found = [p.get(key, p.get(snake)) for p in turn.get("parts") or [] if isinstance(p, dict)]
    return [f for f in found if isinstance(f, dict)]


def history_problem(contents: list[dict[str, Any]]) -> str | None:
    """Gemini's 400 message for these contents, or None when it would accept them."""
    for i, turn in enumerate(contents):
        if not turn.get("parts"):
            return EMPTY.format(i=i)
        responses = _parts(turn, "functionResponse")
        calls = _parts(contents[i - 1], "functionCall") if i else []
        if responses and not calls:
            return AFTER
        if calls:
            if len(responses) != len(calls):
                return COUNT
            if [c.get("name") for c in calls] != [r.get("name") for r in responses]:
                return NAMES
    return None


def as_openai(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The contents in OpenAI's shape (see the module's guarantees)."""
    out: list[dict[str, Any]] = []
    for i, turn in enumerate(contents):
        text = "".join(str(p.get("text") or "") for p in turn.get("parts") or [] if isinstance(p, dict))
        if turn.get("role") == "model":
            calls = [
                {
                    "id": f"fc_{i}_{j}",
                    "type": "function",
                    "function": {"name": c.get("name"), "arguments": json.dumps(c.get("args") or {})},
                }
                for j, c in enumerate(_parts(turn, "functionCall"))
            ]
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for j, response in enumerate(_parts(turn, "functionResponse")):
            content = response.get("response")
            out.append({"role": "tool", "tool_call_id": f"fc_{i - 1}_{j}", "content": _result_text(content)})
        # litellm joins consecutive user messages into one turn with a text part each: one message per part again
        texts = [str(p["text"]) for p in turn.get("parts") or [] if isinstance(p, dict) and "text" in p]
        out += [{"role": "user", "content": t} for t in texts]
    return out


def _result_text(response: Any) -> str:
    if isinstance(response, dict) and set(response) == {"content"}:
        return str(response["content"])
    return json.dumps(response)


def _chunk(parts: list[dict[str, Any]] | None, model: str, usage: dict[str, int] | None, **end: Any) -> str:
    candidate: dict[str, Any] = {"index": 0, **end}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": "demo-response"}
    if usage is not None:
        payload["usageMetadata"] = usage
    return f"data: {json.dumps(payload)}\r\n\r\n"


MALFORMED = 'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "oo\r\n\r\n'
SAFETY = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]


class GeminiDialect:
    name = "gemini"
    too_long = "The input token count (2417) exceeds the maximum number of tokens allowed (2000)."
    media_type = "text/event-stream"

    def read(self, body: dict[str, Any], model: str | None) -> Parsed:
        contents = body.get("contents")
        tools = [
            str(d.get("name"))
            for t in body.get("tools") or []
            if isinstance(t, dict)
            for d in t.get("function_declarations") or t.get("functionDeclarations") or []
        ]
        if not isinstance(contents, list) or not all(isinstance(c, dict) for c in contents):
            return Parsed(str(model), [], tools, problem="* GenerateContentRequest.contents: contents is not specified")
        return Parsed(str(model), as_openai(contents), tools, True, history_problem(contents))

    def error(self, status: int, message: str | None, retry_after: float | None) -> Response:
        name, default = ERRORS.get(status, ("UNKNOWN", f"HTTP {status}"))
        error: dict[str, Any] = {"code": status, "message": message or default, "status": name}
        if retry_after is not None:
            error["details"] = [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"}
            ]
        return error_json({"error": error}, status)

    async def frames(self, record: RequestRecord, b: Behavior, text: str, parsed: Parsed) -> AsyncGenerator[str, None]:
        counts = {"candidates": 0, "thoughts": 0}
        prompt = prompt_tokens(record, b)

        def usage() -> dict[str, int] | None:
            if not b.usage:
                return None
            made = counts["candidates"] + counts["thoughts"]
            metadata = {
                "promptTokenCount": prompt,
                "candidatesTokenCount": counts["candidates"],
                "totalTokenCount": prompt + made,
            }
            if counts["thoughts"]:
                metadata["thoughtsTokenCount"] = counts["thoughts"]
            if b.cached_tokens:
                metadata["cachedContentTokenCount"] = b.cached_tokens
            return metadata

        async with aclosing(paced(record, b, text)) as pieces:
            async for piece in pieces:
                match piece.kind:
                    case "malformed":
                        yield MALFORMED
                        return
                    case "error":
                        error = {"code": 503, "message": piece.text, "status": "UNAVAILABLE"}
                        yield f"data: {json.dumps({'error': error})}\r\n\r\n"
                        return
                    case "reasoning":
                        counts["thoughts"] += 1
                        yield _chunk([{"text": piece.text, "thought": True}], parsed.model, usage())
                    case "text":
                        counts["candidates"] += 1
                        yield _chunk([{"text": piece.text}], parsed.model, usage())
                    case "call_start":
                        assert piece.call is not None
                        counts["candidates"] += 1
                        call = {"name": piece.call.name, "args": json.loads(piece.call.arguments or "{}")}
                        yield _chunk([{"functionCall": call}], parsed.model, usage())
                    case "call_args":
                        pass  # Gemini sends a call whole: its arguments went with its start
        if b.blocked:
            yield _chunk(None, parsed.model, usage(), finishReason="SAFETY", safetyRatings=SAFETY)
        else:
            yield _chunk([{"text": ""}], parsed.model, usage(), finishReason="MAX_TOKENS" if b.cut else "STOP")
        record.finished = True


DIALECT = GeminiDialect()
