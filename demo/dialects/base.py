"""What every dialect of the scripted upstream provides, and the one request shape the rest of ``demo`` reads.

Guarantees:
- ``Parsed`` is a request as the upstream decides on it: the model, the messages in OpenAI's shape (whatever the
  dialect sent: ``role``, ``content`` as a string, ``tool_calls`` and ``tool`` messages), the names of the tools
  offered, whether usage was asked for, and ``problem``: the 400 message the real provider gives for this body
  (None when it would accept it).
- A ``Dialect`` reads a body into ``Parsed`` (never raises on a JSON object), answers an HTTP error the way its
  provider does (``error``, with ``retry_after`` in that provider's way), and writes the pieces of
  ``demo.stream.paced`` in its wire format (``frames``), setting ``record.finished`` after its last frame.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Protocol

from starlette.responses import Response

from demo.behavior import Behavior
from demo.stream import RequestRecord

__all__ = ["Dialect", "Parsed", "error_json", "function_tools", "object_messages", "text_of"]


@dataclass(frozen=True, slots=True)
class Parsed:
    model: str
    messages: list[dict[str, Any]]
    tools: list[str] = field(default_factory=list)
    include_usage: bool = True
    problem: str | None = None


class Dialect(Protocol):
    name: str
    media_type: str
    too_long: str  # the provider's 400 message for a request longer than the model's context window

    def read(self, body: dict[str, Any], model: str | None) -> Parsed: ...

    def error(self, status: int, message: str | None, retry_after: float | None) -> Response: ...

    def frames(self, record: RequestRecord, b: Behavior, text: str, parsed: Parsed) -> AsyncGenerator[str, None]: ...


def error_json(payload: dict[str, Any], status: int, headers: dict[str, str] | None = None) -> Response:
    """A JSON error body with its status (``Response``: the body is exactly the provider's bytes)."""
    return Response(json.dumps(payload), status_code=status, media_type="application/json", headers=headers)


def function_tools(body: dict[str, Any]) -> list[str]:
    """The names of the tools offered in OpenAI's (and Ollama's) ``tools`` shape: ``{"function": {"name": ...}}``."""
    return [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


def object_messages(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The body's ``messages`` when it is a list of objects, else None (the provider refuses the body)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return None
    return messages


def text_of(content: Any) -> str:
    """A message's content as one string: a string as it is, text blocks joined, anything else as JSON."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(b, dict) and "text" in b for b in content):
        return "".join(str(b["text"]) for b in content)
    return json.dumps(content)
