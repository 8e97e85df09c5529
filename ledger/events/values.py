"""What events are made of: the literal types, the small frozen values they carry, and the ``Event`` base.

Guarantees:
- Every value is immutable (a frozen slotted dataclass); every field is a str, int, float, bool or None.
- ``Event`` holds the fields every kind has: ``seq`` (per-conversation order, assigned by the store when it is
  appended), ``ts`` (ISO 8601 UTC, stamped by whoever appends) and ``conversation_id``; ``KIND`` names a kind in
  the JSON Lines format (see ``ledger.codec``). The kinds themselves are in ``ledger.events.core`` (the one list of
  them) and ``ledger.events.agent`` (steps and tool calls).
- Ids and timestamps are never generated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from ledger.events.flags import Flags as Flags  # re-exported: every event module reads it from here

Origin = Literal["prompt", "resource"]  # what a tool server gave an attachment from (``Attachment.origin``)
CancelSource = Literal["user", "navigation", "disconnect", "delete", "timeout", "shutdown", "account", "acp"]
ErrorType = Literal[
    "rate_limit", "auth", "server", "timeout", "connection", "malformed_stream", "bad_request", "step_limit", "unknown"
] | Literal["context_length"] | Literal["tool_loop"] | Literal["spend_limit"]  # fmt: skip
StaleWhy = Literal["closing", "closed", "superseded", "out_of_order"]
StaleBlock = Literal["text", "reasoning", "tool_call", "tool_result"]
ToolStatus = Literal["ok", "error", "cancelled", "not_run", "declined", "unknown"]
Trigger = Literal["submit", "retry", "continue"]
#: What an attempt is for: an answer to a user message, or a side call of its own (``compaction``: a summary of
#: earlier turns; ``title``: the chat's name, ``ledger.titles``); the purposes other than ``answer`` hang outside
#: the message tree (docs/ledger.md, compaction and titles).
Purpose = Literal["answer", "compaction", "title"]
Block = Literal["text", "reasoning"]
FinalStatus = Literal["complete", "interrupted", "failed", "empty"]
ToolPartKind = Literal["text", "image", "audio", "resource", "resource_link"]

#: Cancel sources whose delivered prefix stays in the model history (docs/ledger.md).
PARTIAL_KEEPING_SOURCES: frozenset[str] = frozenset(
    {"user", "navigation", "disconnect", "shutdown", "restart", "account", "acp"}
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Token counts of one answer or step; ``estimated`` when counted locally because the provider sent none.

    ``partial``: reported before the end (a stopped or failed step): only the prompt side (``input_tokens``,
    ``cached_tokens``, ``cache_write_tokens``) is the provider's, the output was never reported (0 here).
    ``reasoning_tokens`` are part of ``output_tokens``; ``cached_tokens`` (read from the prompt cache) and
    ``cache_write_tokens`` (written to it) are part of ``input_tokens``."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0
    partial: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnMetrics:
    """What a turn cost and how it felt: copied onto the assistant and the user message of the turn.

    Tokens add up over the steps of an agent turn; ``wait_ms`` is the first step's time to first chunk;
    ``tool_ms`` the time spent running tools. ``estimated``: some count was made locally; which one is
    ``input_estimated`` / ``output_estimated`` (None in ledgers older than these fields: both as ``estimated``)."""

    sent_at: str | None = None
    wait_ms: float | None = None
    output_ms: float | None = None
    completed_at: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False
    steps: int = 1
    tool_ms: float | None = None
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0
    input_estimated: bool | None = None
    output_estimated: bool | None = None

    @property
    def input_is_estimated(self) -> bool:
        return self.estimated if self.input_estimated is None else self.input_estimated

    @property
    def output_is_estimated(self) -> bool:
        return self.estimated if self.output_estimated is None else self.output_estimated


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptUsage:
    """What one attempt of a conversation used, as ``deleted`` keeps it (``Deleted.usage``): the facts of a
    ``ledger.usage.UsageRow`` without its chat (the event's) and owner (``Deleted.owner``). ``status`` is
    ``complete``, ``stopped``, ``failed`` or ``running``; ``estimated``: some count was made locally."""

    attempt_id: str
    ts: str  # when the attempt started (ISO 8601 UTC)
    model: str
    purpose: str
    status: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    estimated: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Attachment:
    """A file on a user message, by content: the bytes are in the blob store under ``sha256`` (hex), never here.
    ``media_type`` is sniffed from the bytes (never the name's); ``width``/``height`` for images (pixels).
    ``origin`` says what a tool server gave it from (a prompt's messages, a resource), ``server`` which one,
    ``ref`` the prompt's name or the resource's URI; ``replaces`` is the sha256 of the attachment a Refresh
    re-fetched; all None for a file a person attached."""

    sha256: str
    name: str
    media_type: str
    size: int
    width: int | None = None
    height: int | None = None
    origin: Origin | None = None
    server: str | None = None
    ref: str | None = None
    replaces: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TextRef:
    """A text too long to keep in an event (``ledger.bounds``): its UTF-8 bytes are a blob under ``sha256`` (hex),
    ``size`` of them, ``chars`` characters; the event keeps only its first part (the preview) in the field it names."""

    sha256: str
    size: int
    chars: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolPart:
    """One content part of a tool's result, kept whole: ``text`` (a text part, or an embedded resource's text),
    binary bytes (image, audio, a resource's blob) by ``sha256`` in the blob store with their ``size`` in bytes,
    ``uri`` (an embedded resource's or a link's, never fetched by itself), ``name`` (a link's name or title),
    ``media_type`` as the tool said it, ``width``/``height`` of an image (pixels)."""

    kind: ToolPartKind
    text: str | None = None
    sha256: str | None = None
    size: int = 0
    uri: str | None = None
    name: str | None = None
    media_type: str | None = None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Param:
    """One request parameter (never a secret)."""

    name: str
    value: str | int | float | bool | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    """Fields every event has; every kind declares ``KIND`` and its ``FLAGS``."""

    KIND: ClassVar[str] = ""
    FLAGS: ClassVar[Flags]
    seq: int = 0
    ts: str = ""
    conversation_id: str
