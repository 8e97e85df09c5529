"""The audit projection: a timeline per attempt and per request, folded from one conversation's events.

Guarantees: computed from the ledger alone (no state outside the events); one ``Phase`` per phase, never per
chunk; durations the engine measured on a monotonic clock (time to first chunk in the turn metrics, upstream
close, tool calls) are used as recorded, the others are derived from timestamps and are never negative; every
value is typed and frozen (``ledger.audit_values``, re-exported here): the words and units a person reads are made
by the page (``ui.format``), never here. Every number is read or derived from recorded events.
- Each value is built once, frozen, at the end of the fold (no mutable copy of its fields): what the timeline
  records (cancel source, upstream close, final error, retries, tool calls, stale results, the end) is read from
  its phases, so the numbers agree with it; the rest from the events that said it and from chunk counters.
- Every kind is named in the fold (``assert_never``): a new kind is either folded or listed as telling nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, assert_never

# ``X as X`` re-exports each name (PEP 484); the import sorter would split them into one statement each.
# isort: off
from ledger.audit_values import (
    AttemptAudit as AttemptAudit,
    Phase as Phase,
    PhaseKind as PhaseKind,
    RequestAudit as RequestAudit,
)

# isort: on
from ledger.events import (
    AnyEvent,
    Attached,
    Branched,
    Cancelled,
    CancelRequested,
    Chunk,
    Created,
    Deleted,
    Detached,
    Done,
    Failed,
    Persisted,
    Recovered,
    Renamed,
    RequestSent,
    Retrying,
    Selected,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    ToolAwaitingApproval,
    ToolCalled,
    ToolCallStarted,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    UpstreamClosed,
    Usage,
    VersionSelected,
)


def audit(events: Iterable[AnyEvent]) -> list[AttemptAudit]:
    """One ``AttemptAudit`` per attempt of a conversation, in the order the attempts started."""
    attempts: dict[str, _Attempt] = {}
    requests: dict[str, _Request] = {}
    submitted: dict[str, str] = {}
    for event in events:
        if type(event) is Chunk:  # the hot path: counters only, straight to its attempt
            if (target := attempts.get(event.attempt_id)) is not None:
                _chunk(target, requests, event)
            continue
        if isinstance(event, Submitted):
            submitted[event.message_id] = event.ts
            continue
        if isinstance(event, Started):
            number = sum(1 for a in attempts.values() if a.started.message_id == event.message_id) + 1
            a = attempts[event.attempt_id] = _Attempt(started=event, number=number)
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
            r = requests[event.request_id] = _Request(sent=event)
            a.requests.append(r)
            a.add("request_sent", event.ts, model=event.model)
        case Chunk():
            _chunk(a, requests, event)
        case StaleChunk():
            a.stale_why[event.why] = a.stale_why.get(event.why, 0) + 1
        case CancelRequested():
            a.chunks_phase()
            a.add("cancel_requested", event.ts, source=event.source)
        case UpstreamClosed():
            if event.request_id in requests:
                requests[event.request_id].closed = event
            a.add("upstream_closed", event.ts, ms=event.close_ms)
        case Cancelled():
            a.add("cancelled", event.ts, count=event.delivered_chars, source=event.source)
        case Recovered():
            a.chunks_phase()
            a.add("recovered", event.ts, source="restart")
        case Failed():
            if (failed := requests.get(event.request_id or "")) is not None:
                failed.failed = event
            if not event.will_retry:
                a.chunks_phase()
            kind: PhaseKind = "request_failed" if event.will_retry else "failed"
            a.add(kind, event.ts, error_type=event.error_type, http_status=event.http_status, summary=event.summary)
        case Retrying():
            a.add("retrying", event.ts, source=event.why)
        case Done():
            a.done = event
            if event.request_id in requests:
                requests[event.request_id].done = event
            a.chunks_phase()
            a.add("done", event.ts, finish_reason=event.finish_reason or "stop", usage=event.usage)
        case Persisted():
            a.persisted = event
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
            a.names[event.call_id] = event.name
            a.add("tool_call", event.ts, step=event.step, name=event.name, call_id=event.call_id)
        case ToolAwaitingApproval():
            a.add("tool_awaiting_approval", event.ts, name=a.names.get(event.call_id), call_id=event.call_id)
        case ToolDispatched():
            name = a.names.get(event.call_id)
            a.add("tool_dispatched", event.ts, name=name, call_id=event.call_id, model=event.server)
        case ToolResult():
            name, ms, size = a.names.get(event.call_id), event.duration_ms, event.size
            a.add("tool_result", event.ts, name=name, call_id=event.call_id, status=event.status, ms=ms, count=size)
        case StaleToolResult():
            a.add("stale_tool_result", event.ts, call_id=event.call_id, source=event.why)
        case Submitted() | Started():
            pass  # they make the attempt (``audit``), never reach an existing one
        case ToolCallStarted() | ToolProgress():
            pass  # the timeline shows a call once it is complete, and its result, not every piece in between
        case Created() | Renamed() | Selected() | VersionSelected() | Branched() | Detached() | Attached() | Deleted():
            pass  # about the conversation, not an attempt
        case _:
            assert_never(event)


def _chunk(a: _Attempt, requests: dict[str, _Request], event: Chunk) -> None:
    sent = requests.get(event.request_id)
    if a.chunk_count == 0:
        a.add("first_chunk", event.ts, ms=_ms_between(sent.sent.ts if sent else a.started.ts, event.ts))
    a.chunk_count += 1
    a.last_chunk_seq = event.chunk_seq
    if sent is not None:
        sent.first_chunk_ts = sent.first_chunk_ts or event.ts
        sent.chunk_count += 1
        sent.last_chunk_seq = event.chunk_seq


@dataclass(slots=True)
class _Request:
    """A request while the events are folded: the events that said its values, and its chunks counted."""

    sent: RequestSent
    first_chunk_ts: str | None = None
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    closed: UpstreamClosed | None = None
    failed: Failed | None = None
    done: Done | None = None

    def freeze(self) -> RequestAudit:
        failed = self.failed
        return RequestAudit(
            request_id=self.sent.request_id,
            model=self.sent.model,
            sent_ts=self.sent.ts,
            first_chunk_ms=_ms_between(self.sent.ts, self.first_chunk_ts),
            chunk_count=self.chunk_count,
            last_chunk_seq=self.last_chunk_seq,
            closed_ms=self.closed.close_ms if self.closed else None,
            error_type=failed.error_type if failed else None,
            error_summary=failed.summary if failed else None,
            http_status=failed.http_status if failed else None,
            finish_reason=self.done.finish_reason if self.done else None,
        )


@dataclass(slots=True)
class _Attempt:
    """An attempt while the events are folded: its timeline so far, the events that said what the timeline does not
    show, and what every chunk changes, counted."""

    started: Started
    number: int
    phases: list[Phase] = field(default_factory=list)
    requests: list[_Request] = field(default_factory=list)
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    stale_why: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    names: dict[str, str] = field(default_factory=dict)
    done: Done | None = None
    persisted: Persisted | None = None

    def add(self, kind: PhaseKind, ts: str, **values: Any) -> None:
        self.phases.append(Phase(kind=kind, ts=ts, **values))

    def chunks_phase(self) -> None:
        if self.chunk_count and not any(p.kind == "chunks" for p in self.phases):
            self.add("chunks", self.phases[-1].ts, count=self.chunk_count, last_seq=self.last_chunk_seq)

    def freeze(self) -> AttemptAudit:
        cancel_source = close_ms = error_type = error_summary = ended_ts = None
        retries = tool_calls = stale_tool_results = 0
        for p in self.phases:  # what the timeline records is read from it
            match p.kind:
                case "cancel_requested":
                    cancel_source = p.source
                case "cancelled" | "recovered":
                    cancel_source, ended_ts = p.source, p.ts
                case "failed":
                    error_type, error_summary, ended_ts = p.error_type, p.summary, p.ts
                case "done":
                    ended_ts = p.ts
                case "persisted":
                    ended_ts = ended_ts or p.ts
                case "upstream_closed":
                    close_ms = p.ms
                case "retrying":
                    retries += p.source == "auto"
                case "tool_call":
                    tool_calls += 1
                case "stale_tool_result":
                    stale_tool_results += 1
        requests = tuple(r.freeze() for r in self.requests)
        first = next((r.first_chunk_ms for r in requests if r.first_chunk_ms is not None), None)
        metrics = self.persisted.metrics if self.persisted else None
        if metrics is not None and metrics.wait_ms is not None:
            first = metrics.wait_ms  # measured by the engine on a monotonic clock: immune to clock steps
        s, done = self.started, self.done
        return AttemptAudit(
            attempt_id=s.attempt_id,
            message_id=s.message_id,
            number=self.number,
            model=s.model,
            trigger=s.trigger,
            started_ts=s.ts,
            turn=s.turn,
            requests=requests,
            chunk_count=self.chunk_count,
            last_chunk_seq=self.last_chunk_seq,
            stale_chunks=sum(self.stale_why.values()),
            stale_why=tuple(sorted(self.stale_why.items())),
            cancel_source=cancel_source,
            upstream_close_ms=close_ms,
            error_type=error_type,
            error_summary=error_summary,
            retries=retries,
            finish_reason=done.finish_reason if done else None,
            usage=done.usage if done else None,
            status=self.persisted.status if self.persisted else "streaming",
            metrics=metrics,
            first_chunk_ms=first,
            duration_ms=_ms_between(s.ts, ended_ts),
            steps=self.steps,
            tool_calls=tool_calls,
            stale_tool_results=stale_tool_results,
            phases=tuple(self.phases),
        )


def _ms_between(start: str | None, end: str | None) -> float | None:
    """Milliseconds between two timestamps, never negative (a wall-clock step backwards reads as 0)."""
    if not start or not end:
        return None
    try:
        return max(0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000)
    except ValueError:
        return None
