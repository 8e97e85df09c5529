"""OpenAI's chat-completions stream, read from the bytes: SSE events parsed with orjson into litellm's chunk shape.

Guarantees:
- ``SseEvents`` turns the response body's pieces (any split, ``\\n`` or ``\\r\\n`` line ends) into the ``data``
  payloads of its events, in order: a multi-line ``data`` is joined with ``\\n`` as SSE says, comments (``:``) and
  ``event:``/``id:``/``retry:`` lines are skipped, ``[DONE]`` ends it. A payload is parsed by ``orjson`` when it
  ends; one that is not JSON raises ``orjson.JSONDecodeError`` (a ``json.JSONDecodeError``).
- ``generic_chunks`` maps one parsed chunk to litellm's ``GenericStreamingChunk`` dicts (the custom-provider
  interface's own chunk type), nothing dropped: the text; reasoning (``reasoning_content``, or ``reasoning`` as
  vLLM names it) under ``provider_specific_fields``; one chunk per tool-call piece (``tool_use``, with its
  ``index``; id and name only where the provider sent them); ``finish_reason``; usage (cached prompt tokens in
  ``prompt_tokens_details``). A chunk that carries none of these gives nothing; an ``error`` payload raises
  ``StreamErrorEvent``.
- Nothing here does I/O or imports litellm: it is the per-chunk work, and costs a few microseconds.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["SseEvents", "StreamErrorEvent", "generic_chunks"]

_DONE = b"[DONE]"


class StreamErrorEvent(Exception):
    """The provider sent an ``error`` object in the stream instead of a chunk."""

    def __init__(self, error: Any) -> None:
        self.error = error
        self.body = error if isinstance(error, dict) else None  # as the OpenAI SDK's errors carry it
        message = error.get("message") if isinstance(error, dict) else None
        super().__init__(str(message or error))


class SseEvents:
    """Feed the body's pieces; get back the parsed ``data`` payload of every event they completed."""

    __slots__ = ("_data", "_rest", "done")

    def __init__(self) -> None:
        self._rest = b""
        self._data: list[bytes] = []
        self.done = False

    def feed(self, piece: bytes) -> list[Any]:
        """The payloads of the events that ended in ``piece`` (none after ``[DONE]``)."""
        if self.done:
            return []
        lines = (self._rest + piece if self._rest else piece).split(b"\n")
        self._rest = lines.pop()
        out: list[Any] = []
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if self._data:
                    data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                    self._data = []
                    if data == _DONE:
                        self.done = True
                        return out
                    out.append(orjson.loads(data))
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)
        return out

    def close(self) -> list[Any]:
        """The last event when the body ended without its blank line."""
        tail = self.feed(b"\n\n") if self._rest or self._data else []
        return tail


def generic_chunks(payload: Any) -> list[dict[str, Any]]:
    """litellm ``GenericStreamingChunk`` dicts for one parsed ``chat.completion.chunk``."""
    if not isinstance(payload, dict):
        return []
    if "error" in payload and not payload.get("choices"):
        raise StreamErrorEvent(payload["error"])
    out: list[dict[str, Any]] = []
    choices = payload.get("choices")
    if choices:
        choice = choices[0]
        delta = choice.get("delta") or {}
        finish = choice.get("finish_reason") or ""
        text = delta.get("content") or ""
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        calls = delta.get("tool_calls")
        if text or reasoning or finish:
            out.append(_chunk(text, finish, None, {"reasoning_content": reasoning} if reasoning else None))
        if calls:
            for call in calls:
                out.append(_chunk("", "", _tool_use(call), None))
    usage = payload.get("usage")
    if usage and usage.get("completion_tokens") is not None:
        block: dict[str, Any] = {
            "prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0),
            "total_tokens": int(usage.get("total_tokens") or 0),
        }
        for kind in ("prompt_tokens_details", "completion_tokens_details"):
            if usage.get(kind):
                block[kind] = usage[kind]
        out.append({"text": "", "tool_use": None, "is_finished": True, "finish_reason": "", "usage": block, "index": 0})
    return out


def _chunk(text: str, finish: str, tool_use: dict[str, Any] | None, fields: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": bool(finish),
        "finish_reason": finish,
        "usage": None,
        "index": 0,
        "provider_specific_fields": fields,
    }


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    return {
        "id": call.get("id") or None,
        "type": "function",
        "function": {"name": function.get("name") or None, "arguments": function.get("arguments") or ""},
        "index": int(call.get("index") or 0),
    }
