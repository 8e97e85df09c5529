"""What an editor sends and what it is answered, in the ledger's words and back: a prompt's content blocks as the
text of a user message, and how an ended attempt answers ``session/prompt``.

Guarantees: pure. ``prompt_text`` keeps text blocks as they are and turns a resource link into a line naming it and
an embedded text resource into its text under its URI (fenced), in the editor's order; an image, audio or binary
resource is named, never dropped silently (``PromptCapabilities`` does not offer them, so a client sends them only
against the protocol). ``stop_reason`` maps the attempt's end: complete → ``end_turn`` (``max_tokens`` when the
provider said ``length``, ``refusal`` when its filter ended it); stopped (any cancel source) → ``cancelled``; the
step limit or the loop guard → ``max_turn_requests``; any other failure is not an answer: ``failure`` gives the
JSON-RPC error it becomes, in the provider's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp import RequestError
from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
    TextResourceContents,
)

from ledger.state import AttemptState

#: the JSON-RPC error code of a turn the provider (or the engine) could not answer
TURN_FAILED = -32603


def prompt_text(blocks: Sequence[Any]) -> str:
    """The user message a prompt's content blocks make."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.title or block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(block.resource, TextResourceContents):
            parts.append(f"{block.resource.uri}:\n```\n{block.resource.text}\n```")
        elif isinstance(block, EmbeddedResourceContentBlock):
            parts.append(f"[a binary resource: {block.resource.uri}, not sent]")
        else:
            parts.append(f"[{getattr(block, 'type', 'a content block')} not sent: this agent takes text]")
    return "\n\n".join(p for p in parts if p)


def stop_reason(attempt: AttemptState) -> StopReason | None:
    """How ``session/prompt`` answers an ended attempt; None for a failure (``failure`` says which error)."""
    if attempt.status == "complete":
        return {"length": "max_tokens", "content_filter": "refusal"}.get(attempt.finish_reason or "", "end_turn")  # type: ignore[return-value]
    if attempt.status == "failed" and attempt.cancel_source == "timeout":
        return None  # a model that stopped sending: an error, not a cancel the editor asked for
    if attempt.cancel_source is not None or attempt.status in ("interrupted", "empty"):
        return "cancelled"
    if attempt.error_type in ("step_limit", "tool_loop"):
        return "max_turn_requests"
    return None


def failure(attempt: AttemptState) -> RequestError:
    """The JSON-RPC error a failed turn answers ``session/prompt`` with: the provider's sentence, its type and
    HTTP status as data."""
    data = {"error_type": attempt.error_type, "http_status": attempt.http_status, "attempt_id": attempt.attempt_id}
    return RequestError(TURN_FAILED, attempt.error_summary or "The model could not answer.", data)
