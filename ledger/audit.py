"""The audit projection: a timeline per attempt and per request, folded from one conversation's events.

Guarantees: computed from the ledger alone (no state outside the events); one ``Phase`` per phase, never per
chunk; durations the engine measured on a monotonic clock (time to first chunk in the turn metrics, upstream
close, tool calls) are used as recorded, the others are derived from timestamps and are never negative; every
value is typed (a ``PhaseKind``, counts, milliseconds, token counts) and frozen: the words and units a person
reads are made by the page (``ui.format``), never here. Every number is read or derived from recorded events.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

from ledger.events import (
    AnyEvent,
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Persisted,
    Recovered,
    RequestSent,
    Retrying,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    ToolAwaitingApproval,
    ToolCalled,
    ToolDispatched,
    ToolResult,
    TurnMetrics,
    UpstreamClosed,
    Usage,
)

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
    "tool_dispatched",
    "tool_result",
    "stale_tool_result",
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
    phases: tuple[Phase, ...] = ()


def audit(events: Iterable[AnyEvent]) -> list[AttemptAudit]:
    """One ``AttemptAudit`` per attempt of a conversation, in the order the attempts started."""
    attempts: dict[str, _Attempt] = {}
    requests: dict[str, _Request] = {}
    submitted: dict[str, str] = {}
    for event in events:
        if isinstance(event, Submitted):
            submitted[event.message_id] = event.ts
            continue
        if isinstance(event, Started):
            number = sum(1 for a in attempts.values() if a.message_id == event.message_id) + 1
            a = attempts[event.attempt_id] = _Attempt(
                attempt_id=event.attempt_id,
                message_id=event.message_id,
                number=number,
                model=event.model,
                trigger=event.trigger,
                started_ts=event.ts,
                turn=event.turn,
            )
            if event.user_message_id in submitted and event.trigger == "submit":
                a.add("submitted", submitted[event.user_message_id])
            a.add("started", event.ts, number=number, source=event.trigger, model=event.model)
            continue
        a_id = getattr(event, "attempt_id", None)
        target = attempts.get(a_id) if isinstance(a_id, str) else None
        if isinstance(event, Retrying) and event.why == "user":
            target = attempts.get(event.previous_attempt_id)
        if target is not None:
            _fold(target, requests, event)
    return [a.freeze() for a in attempts.values()]


def _fold(a: _Attempt, requests: dict[str, _Request], event: AnyEvent) -> None:
    match event:
        case RequestSent():
            r = requests[event.request_id] = _Request(request_id=event.request_id, model=event.model, sent_ts=event.ts)
            a.requests.append(r)
            a.add("request_sent", event.ts, model=event.model)
        case Chunk():
            sent = requests.get(event.request_id)
            if a.chunk_count == 0:
                a.add("first_chunk", event.ts, ms=_ms_between(sent.sent_ts if sent else a.started_ts, event.ts))
            a.chunk_count += 1
            a.last_chunk_seq = event.chunk_seq
            if sent is not None:
                sent.first_chunk_ts = sent.first_chunk_ts or event.ts
                sent.chunk_count += 1
                sent.last_chunk_seq = event.chunk_seq
        case StaleChunk():
            a.stale_chunks += 1
            a.stale_why[event.why] = a.stale_why.get(event.why, 0) + 1
        case CancelRequested():
            a.cancel_source = event.source
            a.chunks_phase()
            a.add("cancel_requested", event.ts, source=event.source)
        case UpstreamClosed():
            a.upstream_close_ms = event.close_ms
            if event.request_id in requests:
                requests[event.request_id].closed_ms = event.close_ms
            a.add("upstream_closed", event.ts, ms=event.close_ms)
        case Cancelled():
            a.cancel_source, a.ended_ts = event.source, event.ts
            a.add("cancelled", event.ts, count=event.delivered_chars, source=event.source)
        case Recovered():
            a.cancel_source, a.ended_ts = "restart", event.ts
            a.chunks_phase()
            a.add("recovered", event.ts, source="restart")
        case Failed():
            _failed(a, requests.get(event.request_id or ""), event)
        case Retrying():
            if event.why == "auto":
                a.retries += 1
            a.add("retrying", event.ts, source=event.why)
        case Done():
            a.finish_reason, a.usage, a.ended_ts = event.finish_reason, event.usage, event.ts
            if event.request_id in requests:
                requests[event.request_id].finish_reason = event.finish_reason
            a.chunks_phase()
            a.add("done", event.ts, finish_reason=event.finish_reason or "stop", usage=event.usage)
        case Persisted():
            a.status, a.metrics = event.status, event.metrics
            a.ended_ts = a.ended_ts or event.ts
            m = event.metrics
            usage = Usage(input_tokens=m.input_tokens, output_tokens=m.output_tokens, estimated=m.estimated)
            has_tokens = m.input_tokens or m.output_tokens
            a.add("persisted", event.ts, status=event.status, usage=usage if has_tokens else None)
        case StepStarted():
            a.steps = max(a.steps, event.step)
            if event.step > 1:
                a.add("step_started", event.ts, step=event.step)
        case StepFinished():
            a.add("step_finished", event.ts, step=event.step, finish_reason=event.finish_reason, usage=event.usage)
        case ToolCalled():
            a.tool_calls += 1
            a.names[event.call_id] = event.name
            a.add("tool_call", event.ts, step=event.step, name=event.name, call_id=event.call_id)
        case ToolAwaitingApproval():
            a.add("tool_awaiting_approval", event.ts, name=a.names.get(event.call_id), call_id=event.call_id)
        case ToolDispatched():
            name = a.names.get(event.call_id)
            a.add("tool_dispatched", event.ts, name=name, call_id=event.call_id, model=event.server)
        case ToolResult():
            name = a.names.get(event.call_id)
            a.add(
                "tool_result",
                event.ts,
                name=name,
                call_id=event.call_id,
                status=event.status,
                ms=event.duration_ms,
                count=event.size,
            )
        case StaleToolResult():
            a.stale_tool_results += 1
            a.add("stale_tool_result", event.ts, call_id=event.call_id, source=event.why)
        case _:
            pass


def _failed(a: _Attempt, r: _Request | None, event: Failed) -> None:
    if r is not None:
        r.error_type, r.error_summary, r.http_status = event.error_type, event.summary, event.http_status
    kind: PhaseKind = "request_failed" if event.will_retry else "failed"
    if not event.will_retry:
        a.chunks_phase()
        a.error_type, a.error_summary, a.ended_ts = event.error_type, event.summary, event.ts
    a.add(kind, event.ts, error_type=event.error_type, http_status=event.http_status, summary=event.summary)


@dataclass(kw_only=True, slots=True)
class _Request:
    request_id: str
    model: str
    sent_ts: str
    first_chunk_ts: str | None = None
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    closed_ms: float | None = None
    error_type: str | None = None
    error_summary: str | None = None
    http_status: int | None = None
    finish_reason: str | None = None

    def freeze(self) -> RequestAudit:
        values = {f.name: getattr(self, f.name) for f in fields(RequestAudit) if f.name != "first_chunk_ms"}
        return RequestAudit(**values, first_chunk_ms=_ms_between(self.sent_ts, self.first_chunk_ts))


@dataclass(kw_only=True, slots=True)
class _Attempt:
    """The mutable draft of an ``AttemptAudit`` while the events are folded."""

    attempt_id: str
    message_id: str
    number: int
    model: str
    trigger: str
    started_ts: str
    turn: int
    requests: list[_Request] = field(default_factory=list)
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    stale_chunks: int = 0
    stale_why: dict[str, int] = field(default_factory=dict)
    cancel_source: str | None = None
    upstream_close_ms: float | None = None
    error_type: str | None = None
    error_summary: str | None = None
    retries: int = 0
    finish_reason: str | None = None
    usage: Usage | None = None
    status: str = "streaming"
    metrics: TurnMetrics | None = None
    ended_ts: str | None = None
    steps: int = 0
    tool_calls: int = 0
    stale_tool_results: int = 0
    names: dict[str, str] = field(default_factory=dict)
    phases: list[Phase] = field(default_factory=list)

    def add(self, kind: PhaseKind, ts: str, **values: Any) -> None:
        self.phases.append(Phase(kind=kind, ts=ts, **values))

    def chunks_phase(self) -> None:
        if self.chunk_count and not any(p.kind == "chunks" for p in self.phases):
            self.add("chunks", self.phases[-1].ts, count=self.chunk_count, last_seq=self.last_chunk_seq)

    def freeze(self) -> AttemptAudit:
        requests = tuple(r.freeze() for r in self.requests)
        first = next((r.first_chunk_ms for r in requests if r.first_chunk_ms is not None), None)
        if self.metrics is not None and self.metrics.wait_ms is not None:
            first = self.metrics.wait_ms  # measured by the engine on a monotonic clock: immune to clock steps
        copied = {f.name: getattr(self, f.name) for f in fields(AttemptAudit) if hasattr(self, f.name)}
        copied.update(
            requests=requests,
            stale_why=tuple(sorted(self.stale_why.items())),
            phases=tuple(self.phases),
            first_chunk_ms=first,
            duration_ms=_ms_between(self.started_ts, self.ended_ts),
        )
        return AttemptAudit(**copied)


def _ms_between(start: str | None, end: str | None) -> float | None:
    """Milliseconds between two timestamps, never negative (a wall-clock step backwards reads as 0)."""
    if not start or not end:
        return None
    try:
        return max(0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000)
    except ValueError:
        return None
