"""What an editor sends and what it is answered, in the ledger's words and back: a prompt's content blocks as the
text of a user message, and how an ended attempt answers ``session/prompt``.

Guarantees: pure. ``prompt_text`` keeps text blocks as they are and turns a resource link into a line naming it and
an embedded text resource into its text under its URI (fenced), in the editor's order; an image or an embedded
binary resource is a file of the message (``prompt_files``: its bytes decoded, named after its URI, else after its
place and type; stored by sha256 as an attachment, and refused as the page refuses a file: too large, or an image
for a model that takes none), not text; audio is named, never dropped silently (``PromptCapabilities`` does not
offer it). Undecodable base64 is refused with invalid params. ``stop_reason`` maps the attempt's end: complete →
``end_turn`` (``max_tokens`` when the provider said ``length``, ``refusal`` when its filter ended it); stopped (any
cancel source) → ``cancelled``; the step limit or the loop guard → ``max_turn_requests``; any other failure is not
an answer: ``failure`` gives the JSON-RPC error it becomes, in the provider's words.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from acp import RequestError
from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
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
        elif not isinstance(block, (ImageContentBlock, EmbeddedResourceContentBlock)):  # those are files
            parts.append(f"[{getattr(block, 'type', 'a content block')} not sent: this agent takes text and files]")
    return "\n\n".join(p for p in parts if p)


def prompt_files(blocks: Sequence[Any]) -> list[tuple[str, bytes]]:
    """The files a prompt's content blocks carry (images, embedded binary resources): (name, bytes), in order."""
    files: list[tuple[str, bytes]] = []
    for number, block in enumerate(blocks, 1):
        if isinstance(block, ImageContentBlock):
            kind, data, uri = block.mime_type, block.data, block.uri
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(block.resource, BlobResourceContents):
            kind, data, uri = block.resource.mime_type or "", block.resource.blob, block.resource.uri
        else:
            continue
        try:
            decoded = base64.b64decode(data, validate=True)
        except ValueError:
            raise RequestError.invalid_params({"details": f"content block {number}: its data is not base64"}) from None
        name = PurePosixPath(unquote(urlparse(uri).path)).name if uri else ""
        extension = kind.rsplit("/", 1)[-1].split("+")[0] if "/" in kind else "bin"
        files.append((name or f"attachment-{number}.{extension}", decoded))
    return files


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
