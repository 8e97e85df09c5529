"""The ledger's vocabulary: one frozen dataclass per event kind (see docs/ledger.md).

Guarantees:
- Events are immutable values; every field is a str, int, float, bool, None, a tuple, or one of the small
  frozen value types below (``Usage``, ``TurnMetrics``, ``Param``). Nothing mutable is shared.
- Every event carries ``seq`` (per-conversation order, assigned by the store when it is appended), ``ts``
  (ISO 8601 UTC, stamped by whoever appends) and ``conversation_id``. ``KIND`` names the event in the
  JSON Lines format (see ``ledger.codec``).
- Ids and timestamps are never generated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

CancelSource = Literal["user", "navigation", "disconnect", "delete", "timeout", "shutdown"]
ErrorType = Literal[
    "rate_limit", "auth", "server", "timeout", "connection", "malformed_stream", "bad_request", "step_limit", "unknown"
]
StaleWhy = Literal["closing", "closed", "superseded", "out_of_order"]
StaleBlock = Literal["text", "reasoning", "tool_call", "tool_result"]
ToolStatus = Literal["ok", "error", "cancelled", "not_run", "declined"]
Trigger = Literal["submit", "retry"]
Block = Literal["text", "reasoning"]
FinalStatus = Literal["complete", "interrupted", "failed", "empty"]

#: Cancel sources whose delivered prefix stays in the model history (docs/ledger.md).
PARTIAL_KEEPING_SOURCES: frozenset[str] = frozenset({"user", "navigation", "disconnect", "shutdown", "restart"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Token counts of one answer; ``estimated`` when counted locally because the provider sent none."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnMetrics:
    """What a turn cost and how it felt: copied onto the assistant and the user message of the turn.

    Tokens add up over the steps of an agent turn; ``wait_ms`` is the first step's time to first chunk;
    ``tool_ms`` the time spent running tools."""

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


@dataclass(frozen=True, kw_only=True, slots=True)
class Param:
    """One request parameter (never a secret)."""

    name: str
    value: str | int | float | bool | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    """Fields every event has."""

    KIND: ClassVar[str] = ""
    seq: int = 0
    ts: str = ""
    conversation_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Created(Event):
    KIND: ClassVar[str] = "created"
    title: str = ""
    branched_from: str | None = None  # the conversation this one was branched from
    branched_at: str | None = None  # the message of that conversation it was branched at


@dataclass(frozen=True, kw_only=True, slots=True)
class Renamed(Event):
    KIND: ClassVar[str] = "renamed"
    title: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Submitted(Event):
    """A user message. ``parent`` is the attempt (or user message) it follows, ``None`` at the root; an edit is a
    sibling of ``edit_of``. Ledgers written before messages had parents follow the shown path's last answer."""

    KIND: ClassVar[str] = "submitted"
    message_id: str
    turn: int
    text: str
    parent: str | None = None
    edit_of: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Started(Event):
    KIND: ClassVar[str] = "started"
    attempt_id: str
    message_id: str
    user_message_id: str
    turn: int
    model: str
    trigger: Trigger = "submit"


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestSent(Event):
    KIND: ClassVar[str] = "request_sent"
    attempt_id: str
    request_id: str
    model: str
    params: tuple[Param, ...] = ()
    context_message_ids: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Chunk(Event):
    KIND: ClassVar[str] = "chunk"
    attempt_id: str
    request_id: str
    chunk_seq: int
    text: str
    block: Block = "text"


@dataclass(frozen=True, kw_only=True, slots=True)
class StaleChunk(Event):
    KIND: ClassVar[str] = "stale_chunk"
    attempt_id: str
    request_id: str
    chunk_seq: int
    why: StaleWhy
    chars: int = 0
    block: StaleBlock = "text"


@dataclass(frozen=True, kw_only=True, slots=True)
class CancelRequested(Event):
    KIND: ClassVar[str] = "cancel_requested"
    attempt_id: str
    source: CancelSource
    keep_partial: bool = True
    turn: int = 0
    requested_by: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class UpstreamClosed(Event):
    KIND: ClassVar[str] = "upstream_closed"
    attempt_id: str
    request_id: str
    close_ms: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Cancelled(Event):
    KIND: ClassVar[str] = "cancelled"
    attempt_id: str
    source: CancelSource
    delivered_chars: int = 0
    chunk_count: int = 0
    last_chunk_seq: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Failed(Event):
    KIND: ClassVar[str] = "failed"
    attempt_id: str
    request_id: str | None = None
    error_type: ErrorType
    http_status: int | None = None
    summary: str
    retryable: bool = False
    will_retry: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Retrying(Event):
    KIND: ClassVar[str] = "retrying"
    message_id: str
    previous_attempt_id: str
    attempt_id: str
    why: Literal["user", "auto"] = "user"
    previous_request_id: str | None = None
    request_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Done(Event):
    KIND: ClassVar[str] = "done"
    attempt_id: str
    request_id: str
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Persisted(Event):
    KIND: ClassVar[str] = "persisted"
    attempt_id: str
    message_id: str
    status: FinalStatus
    text: str
    metrics: TurnMetrics = TurnMetrics()


@dataclass(frozen=True, kw_only=True, slots=True)
class Selected(Event):
    KIND: ClassVar[str] = "selected"
    message_id: str
    attempt_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class VersionSelected(Event):
    """The user chose which version of a user message (an edit, or the original) the conversation follows."""

    KIND: ClassVar[str] = "version_selected"
    message_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Branched(Event):
    """A new conversation was branched from this one at ``message_id``."""

    KIND: ClassVar[str] = "branched"
    message_id: str
    new_conversation_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Recovered(Event):
    KIND: ClassVar[str] = "recovered"
    attempt_id: str
    source: Literal["restart"] = "restart"


@dataclass(frozen=True, kw_only=True, slots=True)
class Detached(Event):
    KIND: ClassVar[str] = "detached"
    attempt_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Attached(Event):
    KIND: ClassVar[str] = "attached"
    attempt_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Deleted(Event):
    KIND: ClassVar[str] = "deleted"


# --- agent turns: steps and tool calls ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class StepStarted(Event):
    """A model call of an agent attempt begins (step 1 is the first request of every attempt)."""

    KIND: ClassVar[str] = "step_started"
    attempt_id: str
    step: int


@dataclass(frozen=True, kw_only=True, slots=True)
class StepFinished(Event):
    """A step's stream ended on its own: with tool calls to run (``tool_calls``) or with the answer."""

    KIND: ClassVar[str] = "step_finished"
    attempt_id: str
    step: int
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStarted(Event):
    """The model began writing a tool call (its first streamed piece: id and name)."""

    KIND: ClassVar[str] = "tool_call_started"
    attempt_id: str
    step: int
    call_id: str
    name: str
    index: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCalled(Event):
    """A tool call is complete (its step finished streaming): it will be answered by exactly one ``tool_result``."""

    KIND: ClassVar[str] = "tool_call"
    attempt_id: str
    step: int
    call_id: str
    name: str
    arguments: str
    server: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolAwaitingApproval(Event):
    KIND: ClassVar[str] = "tool_awaiting_approval"
    attempt_id: str
    call_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDispatched(Event):
    KIND: ClassVar[str] = "tool_dispatched"
    attempt_id: str
    call_id: str
    server: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolProgress(Event):
    KIND: ClassVar[str] = "tool_progress"
    attempt_id: str
    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult(Event):
    """The one result of a tool call: its full content (the model history may get a shortened copy)."""

    KIND: ClassVar[str] = "tool_result"
    attempt_id: str
    call_id: str
    status: ToolStatus
    content: str
    size: int = 0
    duration_ms: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class StaleToolResult(Event):
    """A tool result that arrived for an attempt that had ended or been superseded: recorded, never shown."""

    KIND: ClassVar[str] = "stale_tool_result"
    attempt_id: str
    call_id: str
    why: StaleWhy
    size: int = 0


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
)

EVENT_CLASSES: tuple[type[Event], ...] = (
    Created,
    Renamed,
    Submitted,
    Started,
    RequestSent,
    Chunk,
    StaleChunk,
    CancelRequested,
    UpstreamClosed,
    Cancelled,
    Failed,
    Retrying,
    Done,
    Persisted,
    Selected,
    VersionSelected,
    Branched,
    Recovered,
    Detached,
    Attached,
    Deleted,
    StepStarted,
    StepFinished,
    ToolCallStarted,
    ToolCalled,
    ToolAwaitingApproval,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    StaleToolResult,
)
