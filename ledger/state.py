"""The shape of what the ledger knows after replay: conversations, messages, attempts.

Guarantees: every state value is an immutable record (a ``NamedTuple``: its ``_replace`` is 5x cheaper than
``dataclasses.replace``, which keeps a 100,000-event replay well under a second); mappings inside are never
mutated after they are built (the reducer makes new ones), so a state can be shared, compared and kept.
- An attempt's text and reasoning are kept as ``ledger.pieces.Pieces`` (a chunk costs its own length, not the
  text so far) and read as ``str`` through ``text``/``reasoning``; an old state never reads later text.
- ``State.conversations`` is a persistent map (``immutables.Map``): a new state shares every conversation it did
  not change, so an event costs the same with 10 or 10,000 conversations in the state.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple

from immutables import Map

from ledger.events import (
    ApprovalAsked,
    ApprovalGiven,
    Attachment,
    AttemptUsage,
    QuestionState,
    QueuedItem,
    QueuePause,
    ShareState,
    TextRef,
    ToolPart,
    ToolServerEvent,
    ToolStatus,
    TurnMetrics,
    Usage,
)
from ledger.pieces import EMPTY as NO_TEXT
from ledger.pieces import Pieces

AttemptStatus = Literal["streaming", "closing", "complete", "interrupted", "failed", "empty"]
#: Where a tool call is before it has a result: its arguments are streaming, it is complete, it waits for the
#: user's Run/Skip, or it runs on its server.
ToolPhase = Literal["streaming", "ready", "waiting", "running"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"complete", "interrupted", "failed", "empty"})
LIVE_STATUSES: frozenset[str] = frozenset({"streaming", "closing"})

_EMPTY: Mapping[str, object] = MappingProxyType({})


class ToolCallState(NamedTuple):
    """One tool call the model asked for, and its one result once it has it."""

    call_id: str
    name: str
    step: int
    position: int = 0
    arguments: str = ""
    server: str | None = None
    phase: ToolPhase = "streaming"
    status: ToolStatus | None = None
    content: str = ""
    size: int = 0
    duration_ms: float | None = None
    parts: tuple[ToolPart, ...] = ()
    structured: str | None = None
    progress: float | None = None
    total: float | None = None
    progress_message: str | None = None
    dispatched_ts: str | None = None
    questions: tuple[QuestionState, ...] = ()  # what the tool asked while it ran (``ledger.events.question``)
    asked: ApprovalAsked | None = None  # its wait for approval: since when, mode, why, grant hash
    approval: ApprovalGiven | None = None  # the answer to that wait (or the grant or policy that answered)
    whole: TextRef | None = None  # a result over ``ledger.bounds.TEXT_BOUND``: ``content`` is its preview

    @property
    def answered(self) -> bool:
        return self.status is not None


class StepState(NamedTuple):
    """One model call of an attempt; its text is ``attempt.text[text_start:next step's text_start]``."""

    number: int
    text_start: int = 0
    reasoning_start: int = 0
    call_ids: tuple[str, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    finished: bool = False


class AttemptState(NamedTuple):
    """One try at producing an assistant message."""

    attempt_id: str
    message_id: str
    number: int
    model: str
    trigger: str = "submit"
    purpose: str = "answer"  # "compaction": a summary of earlier turns (``ledger.compaction``), not an answer
    started_ts: str = ""
    status: AttemptStatus = "streaming"
    text_pieces: Pieces = NO_TEXT
    reasoning_pieces: Pieces = NO_TEXT
    chunks_received: int = 0
    chunks_rendered: int = 0
    stale_chunks: int = 0
    last_chunk_seq: int | None = None
    request_ids: tuple[str, ...] = ()
    cancel_source: str | None = None
    keep_partial: bool = True
    error_type: str | None = None
    error_summary: str | None = None
    http_status: int | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    metrics: TurnMetrics | None = None
    persisted: bool = False
    steps: tuple[StepState, ...] = ()
    tool_calls: Mapping[str, ToolCallState] = _EMPTY  # type: ignore[assignment]
    stale_tool_results: int = 0
    late_events: int = 0  # events of this attempt recorded after its end (``ledger.ends``): never applied
    resend_note: str | None = None  # the failure an automatic re-send waits out, until that request is sent
    preset: tuple[str, int] | None = None  # the preset (id, version) it ran with, from ``started``
    continues: str | None = None  # the attempt whose answer it continues (``ledger.continuation``)

    @property
    def text(self) -> str:
        """The rendered text (joined when read)."""
        return self.text_pieces.text

    @property
    def reasoning(self) -> str:
        return self.reasoning_pieces.text

    @property
    def is_live(self) -> bool:
        return self.status in LIVE_STATUSES

    @property
    def in_history(self) -> bool:
        """Whether this attempt's text enters the model history when it is the selected one (docs/ledger.md)."""
        if self.status == "complete":
            return True
        if self.status != "interrupted" or not self.keep_partial:
            return False
        return bool(self.text_pieces) or any(c.answered for c in self.tool_calls.values())

    def step_text(self, index: int) -> str:
        """The text of ``steps[index]`` (an attempt without steps is one step)."""
        if not self.steps:
            return self.text
        start = 0 if index == 0 else self.steps[index].text_start  # text before the first recorded step is its own
        if index + 1 >= len(self.steps):
            return self.text_pieces.tail(start)
        return self.text[start : self.steps[index + 1].text_start]

    def step_calls(self, index: int) -> list[ToolCallState]:
        return [self.tool_calls[c] for c in self.steps[index].call_ids] if self.steps else []


class MessageState(NamedTuple):
    """A user message (``text``) or an assistant message (its attempts)."""

    message_id: str
    role: Literal["user", "assistant"]
    turn: int
    ts: str = ""
    text: str = ""
    user_message_id: str | None = None
    reply_id: str | None = None
    attempt_ids: tuple[str, ...] = ()
    current_attempt_id: str | None = None
    selected_attempt_id: str | None = None
    metrics: TurnMetrics | None = None
    parent: str | None = None  # a user message: the attempt (or user message) it follows; None at the root
    edit_of: str | None = None
    branches: tuple[str, ...] = ()  # conversations branched from this message
    attachments: tuple[Attachment, ...] = ()  # a user message's files, by content hash
    whole: TextRef | None = None  # a text over ``ledger.bounds.TEXT_BOUND``: ``text`` is its preview


class ConversationState(NamedTuple):
    conversation_id: str
    title: str = ""
    created_ts: str = ""
    updated_ts: str = ""
    deleted: bool = False
    turn: int = 0
    last_seq: int = 0
    detached: bool = False
    message_ids: tuple[str, ...] = ()
    messages: Mapping[str, MessageState] = _EMPTY  # type: ignore[assignment]
    attempts: Map[str, AttemptState] = Map()  # persistent: a chunk never copies the other attempts
    orphan_chunks: int = 0
    children: Mapping[str, tuple[str, ...]] = _EMPTY  # type: ignore[assignment]  # parent ("" = root) -> users
    chosen: Mapping[str, str] = _EMPTY  # type: ignore[assignment]  # parent ("" = root) -> the version followed
    branched_from: tuple[str, str] | None = None  # (conversation, message) this one was branched from
    queue: tuple[QueuedItem, ...] = ()  # messages queued while an answer ran, not yet sent, in order (ledger.queue)
    queue_paused: QueuePause | None = None  # why the queue waits for the person (None: it sends by itself)
    grants: Mapping[str, str] = _EMPTY  # type: ignore[assignment]  # "server/tool" -> grant hash (chat grants)
    owner: str | None = None  # team mode: the person it belongs to (its ``created`` event's); None in personal mode
    reads: tuple[tuple[str, str], ...] = ()  # (admin's name, time) of each ``read_by``: an admin's read
    spent: tuple[AttemptUsage, ...] = ()  # a deleted conversation: what its attempts used (its ``deleted``'s)
    shares: Mapping[str, ShareState] = _EMPTY  # type: ignore[assignment]  # share id -> its link (ledger.shares)
    #: server name -> the last ``tool_server_used`` or ``tool_server_gone`` recorded for it (what is noted already)
    tool_servers: Mapping[str, ToolServerEvent] = _EMPTY  # type: ignore[assignment]
    #: (place in ``message_ids``, attempt) of every attempt that may still be live, the newest message first: kept by
    #: the reducer when an attempt starts (``ledger.reduce_messages.with_attempt``), the only way one becomes live;
    #: None in a state built by hand (then ``live_attempt`` looks at every message).
    maybe_live: tuple[tuple[int, str], ...] | None = None

    def live_attempt(self) -> AttemptState | None:
        """The attempt that is streaming or closing, if any (newest first); never a chat's title being made. Costs
        the attempts that may be live (``maybe_live``), not the length of the chat."""
        if self.maybe_live is not None:
            for _, attempt_id in self.maybe_live:
                attempt = self.attempts[attempt_id]
                if attempt.is_live and attempt.purpose != "title":
                    return attempt
            return None
        for message_id in reversed(self.message_ids):
            message = self.messages[message_id]
            if message.current_attempt_id is not None:
                attempt = self.attempts[message.current_attempt_id]
                if attempt.is_live and attempt.purpose != "title":  # a title runs unseen (ledger.titles)
                    return attempt
        return None


class State(NamedTuple):
    conversations: Map[str, ConversationState] = Map()


EMPTY_STATE = State()
