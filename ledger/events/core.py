"""The ledger's vocabulary: the one list of kinds (``AnyEvent``), a frozen dataclass per kind (docs/ledger.md).

Guarantees:
- Events are immutable values; every field is a str, int, float, bool, None, a tuple, or one of the small
  frozen value types of ``ledger.events.values`` (``Usage``, ``TurnMetrics``, ``Param``). Nothing mutable is shared.
- Every event carries ``seq`` (per-conversation order, assigned by the store when it is appended), ``ts``
  (ISO 8601 UTC, stamped by whoever appends) and ``conversation_id``. ``KIND`` names the event in the
  JSON Lines format (see ``ledger.codec``).
- The kinds are listed once, in ``AnyEvent``; ``EVENT_CLASSES`` is read from it, so a kind added to the union is
  known to the codec, the docs test and the property tests. The agent kinds (steps, tool calls) are defined in
  ``ledger.events.agent`` and the values in ``ledger.events.values``; both are re-exported here, so every kind, value
  and literal type is imported from ``ledger.events.core``.
- Ids and timestamps are never generated here.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import ClassVar, Literal

# ``X as X`` re-exports each name (PEP 484); the import sorter would split them into one statement each.
# isort: off
from ledger.events.conversation import (
    Attached as Attached,
    Branched as Branched,
    Created as Created,
    Deleted as Deleted,
    Detached as Detached,
    Handed as Handed,
    ReadBy as ReadBy,
    Renamed as Renamed,
    Selected as Selected,
    VersionSelected as VersionSelected,
)
from ledger.events.agent import (
    StaleToolResult as StaleToolResult,
    StepFinished as StepFinished,
    StepStarted as StepStarted,
    ToolAwaitingApproval as ToolAwaitingApproval,
    ToolCalled as ToolCalled,
    ToolCallStarted as ToolCallStarted,
    ToolDispatched as ToolDispatched,
    ToolProgress as ToolProgress,
    ToolResult as ToolResult,
)
from ledger.events.question import QuestionEvent as QuestionEvent
from ledger.events.question import QuestionAsked as QuestionAsked, QuestionAnswered as QuestionAnswered
from ledger.events.queue import QueueEvent
from ledger.events.title import Titled
from ledger.events.share import ShareEvent
from ledger.events.tool_server import ToolServerEvent
from ledger.events.approval import ApprovalAsked as ApprovalAsked, ApprovalEvent as ApprovalEvent
from ledger.events.approval import ApprovalGiven as ApprovalGiven, ApprovalScope as ApprovalScope
from ledger.events.approval import GrantRevoked as GrantRevoked
from ledger.events.values import (
    PARTIAL_KEEPING_SOURCES as PARTIAL_KEEPING_SOURCES,
    Attachment as Attachment,
    Block as Block,
    CancelSource as CancelSource,
    ErrorType as ErrorType,
    Event as Event,
    Flags as Flags,
    FinalStatus as FinalStatus,
    Param as Param,
    Purpose as Purpose,
    StaleBlock as StaleBlock,
    StaleWhy as StaleWhy,
    TextRef as TextRef,
    ToolPart as ToolPart,
    ToolPartKind as ToolPartKind,
    ToolStatus as ToolStatus,
    Trigger as Trigger,
    TurnMetrics as TurnMetrics,
    Usage as Usage,
)
# isort: on


@dataclass(frozen=True, kw_only=True, slots=True)
class Submitted(Event):
    """A user message. ``parent`` is the attempt (or user message) it follows, ``None`` at the root; an edit is a
    sibling of ``edit_of``. Ledgers written before messages had parents follow the shown path's last answer."""

    KIND: ClassVar[str] = "submitted"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=True, listed=True, late_phase=False)
    message_id: str
    turn: int
    text: str
    parent: str | None = None
    edit_of: str | None = None
    attachments: tuple[Attachment, ...] = ()  # the files sent with it, by content hash (every attempt sends these)
    queue_id: str | None = None  # the queued message this sends (``ledger.events.queue``): sent once, with it
    whole: TextRef | None = None  # a text over ``ledger.bounds.TEXT_BOUND``: ``text`` is its preview, this the blob
    actor: str | None = None  # team mode: the person who sent it (``engine.people.acting``); None in personal mode


@dataclass(frozen=True, kw_only=True, slots=True)
class Started(Event):
    KIND: ClassVar[str] = "started"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=True, late_phase=True)
    attempt_id: str
    message_id: str
    user_message_id: str
    turn: int
    model: str
    trigger: Trigger = "submit"
    purpose: Purpose = "answer"  # "compaction": a summary of the turns up to ``through`` (ledger.compaction)
    through: str | None = None  # a compaction: the attempt (or user message) its summary reaches
    preset_id: str | None = None  # the agent preset it ran with (``ledger.presets``), and which version of it
    preset_version: int | None = None
    continues: str | None = None  # Continue: the attempt whose answer this one continues (``ledger.continuation``)


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestSent(Event):
    KIND: ClassVar[str] = "request_sent"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=False, listed=False, late_phase=True)
    attempt_id: str
    request_id: str
    model: str
    params: tuple[Param, ...] = ()
    context_message_ids: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Chunk(Event):
    KIND: ClassVar[str] = "chunk"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=False, listed=False, late_phase=False)
    attempt_id: str
    request_id: str
    chunk_seq: int
    text: str
    block: Block = "text"


@dataclass(frozen=True, kw_only=True, slots=True)
class StaleChunk(Event):
    KIND: ClassVar[str] = "stale_chunk"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=False, listed=False, late_phase=False)
    attempt_id: str
    request_id: str
    chunk_seq: int
    why: StaleWhy
    chars: int = 0
    block: StaleBlock = "text"


@dataclass(frozen=True, kw_only=True, slots=True)
class CancelRequested(Event):
    KIND: ClassVar[str] = "cancel_requested"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    source: CancelSource
    keep_partial: bool = True
    turn: int = 0
    requested_by: str | None = None
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class UpstreamClosed(Event):
    KIND: ClassVar[str] = "upstream_closed"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=False, listed=False, late_phase=True)
    attempt_id: str
    request_id: str
    close_ms: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Cancelled(Event):
    KIND: ClassVar[str] = "cancelled"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=True, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    source: CancelSource
    delivered_chars: int = 0
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    usage: Usage | None = None  # what the provider reported of the stopped step before the end


@dataclass(frozen=True, kw_only=True, slots=True)
class Failed(Event):
    KIND: ClassVar[str] = "failed"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=False, prompt=True, listed=False, late_phase=False)
    attempt_id: str
    request_id: str | None = None
    error_type: ErrorType
    http_status: int | None = None
    summary: str
    retryable: bool = False
    will_retry: bool = False
    retry_after: float | None = None  # seconds the provider asked to wait before a re-send
    body: str | None = None  # the error body the provider sent, redacted (for the audit; never on the page)
    usage: Usage | None = None  # what the provider reported of the failed step before the end


@dataclass(frozen=True, kw_only=True, slots=True)
class Retrying(Event):
    KIND: ClassVar[str] = "retrying"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=False, prompt=True, listed=False, late_phase=False)
    message_id: str
    previous_attempt_id: str
    attempt_id: str
    why: Literal["user", "auto"] = "user"
    previous_request_id: str | None = None
    request_id: str | None = None
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class Done(Event):
    KIND: ClassVar[str] = "done"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=True, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    request_id: str
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Persisted(Event):
    KIND: ClassVar[str] = "persisted"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=True, prompt=True, listed=True, late_phase=True)
    attempt_id: str
    message_id: str
    status: FinalStatus
    text: str
    metrics: TurnMetrics = TurnMetrics()


@dataclass(frozen=True, kw_only=True, slots=True)
class Recovered(Event):
    KIND: ClassVar[str] = "recovered"
    FLAGS: ClassVar[Flags] = Flags(attempt=True, urgent=True, prompt=True, listed=False, late_phase=True)
    attempt_id: str
    source: Literal["restart"] = "restart"


AnyEvent = (
    Created
    | Renamed
    | Submitted
    | Started
    | RequestSent
    | Chunk
    | StaleChunk
    | CancelRequested
    | UpstreamClosed
    | Cancelled
    | Failed
    | Retrying
    | Done
    | Persisted
    | Selected
    | VersionSelected
    | Branched
    | Recovered
    | Detached
    | Attached
    | Handed
    | ReadBy
    | Deleted
    | StepStarted
    | StepFinished
    | ToolCallStarted
    | ToolCalled
    | ToolAwaitingApproval
    | ToolDispatched
    | ToolProgress
    | ToolResult
    | StaleToolResult
    | QuestionEvent
    | QueueEvent
    | ApprovalEvent
    | Titled
    | ShareEvent
    | ToolServerEvent
)

#: Every kind, in the union's order (the codec's table of kinds is built from it).
EVENT_CLASSES: tuple[type[Event], ...] = typing.get_args(AnyEvent)
