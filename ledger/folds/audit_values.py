"""The audit's values: one ``AttemptAudit`` per attempt, its ``RequestAudit`` per request and its ``Phase`` timeline.

Guarantees: every value is frozen and typed (a ``PhaseKind``, counts, milliseconds, token counts); only the
fields that matter for a phase's kind are set; a ``late`` phase is an event recorded after its attempt's end
(``ledger.ends``): shown, never applied. The words and units a person reads are made by the page (``ui.format``),
never here. They are made by ``ledger.folds.audit.audit`` and imported from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ledger.events import Attachment, ToolServerEvent, TurnMetrics, Usage

PhaseKind = Literal[
    "submitted",
    "started",
    "request_sent",
    "first_chunk",
    "chunks",
    "cancel_requested",
    "upstream_closed",
    "cancelled",
    "recovered",
    "request_failed",
    "failed",
    "retrying",
    "done",
    "persisted",
    "step_started",
    "step_finished",
    "tool_call",
    "tool_awaiting_approval",
    "approval_asked",
    "approval_given",
    "tool_dispatched",
    "tool_result",
    "stale_tool_result",
    "question_asked",
    "question_answered",
    "tool_server_used",
    "tool_server_gone",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class Phase:
    """One step of an attempt's life; only the fields that matter for its kind are set."""

    kind: PhaseKind
    ts: str
    ms: float | None = None  # first_chunk: after the request was sent; upstream_closed: after the cancel
    count: int | None = None  # chunks: how many; cancelled: characters kept
    last_seq: int | None = None
    source: str | None = None  # cancel source, "restart", "user"/"auto" for retrying, the trigger for started
    number: int | None = None  # started: the attempt number
    model: str | None = None
    error_type: str | None = None
    http_status: int | None = None
    summary: str | None = None
    finish_reason: str | None = None
    status: str | None = None
    usage: Usage | None = None
    step: int | None = None
    name: str | None = None  # the tool's name
    call_id: str | None = None
    scope: str | None = None  # approval_given: once | chat | server (``source``: who; ``status``: run | skip)
    grant: str | None = None  # approval_asked/given: the tool's grant hash
    late: bool = False  # recorded after the attempt's end (``ledger.ends``): shown, never applied
    files: tuple[Attachment, ...] = ()  # submitted: the message's files (their sha256; a Refresh's ``replaces``)
    server: ToolServerEvent | None = None  # tool_server_used / tool_server_gone: what was recorded of the server


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestAudit:
    request_id: str
    model: str
    sent_ts: str
    first_chunk_ms: float | None = None
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    closed_ms: float | None = None
    error_type: str | None = None
    error_summary: str | None = None
    http_status: int | None = None
    finish_reason: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptAudit:
    attempt_id: str
    message_id: str
    number: int
    model: str
    trigger: str
    started_ts: str
    turn: int = 0
    purpose: str = "answer"  # "compaction": a summary of earlier turns (``ledger.compaction``)
    requests: tuple[RequestAudit, ...] = ()
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    stale_chunks: int = 0
    stale_why: tuple[tuple[str, int], ...] = ()
    cancel_source: str | None = None
    upstream_close_ms: float | None = None
    error_type: str | None = None
    error_summary: str | None = None
    retries: int = 0
    finish_reason: str | None = None
    usage: Usage | None = None
    status: str = "streaming"
    metrics: TurnMetrics | None = None
    first_chunk_ms: float | None = None
    duration_ms: float | None = None
    steps: int = 0
    tool_calls: int = 0
    stale_tool_results: int = 0
    late_events: int = 0  # events recorded after the attempt's end, never applied (``ledger.ends``)
    sent_by: str | None = None  # team mode: who sent the message it answers (``submitted.actor``)
    phases: tuple[Phase, ...] = ()
