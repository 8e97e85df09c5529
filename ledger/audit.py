"""The audit projection: a timeline per attempt and per request, folded from one conversation's events.

Guarantees: computed from the ledger alone (no state outside the events); one entry per phase, never per
chunk; every number shown (chunk count, last chunk_seq, stale chunks, first-chunk and close milliseconds,
tokens and whether they were estimated) is read or derived from recorded events.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

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
    Started,
    Submitted,
    TurnMetrics,
    UpstreamClosed,
    Usage,
)


@dataclass(kw_only=True, slots=True)
class RequestAudit:
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

    @property
    def first_chunk_ms(self) -> float | None:
        return _ms_between(self.sent_ts, self.first_chunk_ts)


@dataclass(kw_only=True, slots=True)
class Phase:
    ts: str
    name: str
    detail: str = ""


@dataclass(kw_only=True, slots=True)
class AttemptAudit:
    attempt_id: str
    message_id: str
    number: int
    model: str
    trigger: str
    started_ts: str
    turn: int = 0
    submitted_ts: str | None = None
    requests: list[RequestAudit] = field(default_factory=list)
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    stale_chunks: int = 0
    stale_why: dict[str, int] = field(default_factory=dict)
    cancel_source: str | None = None
    cancel_ts: str | None = None
    upstream_close_ms: float | None = None
    error_type: str | None = None
    error_summary: str | None = None
    retries: int = 0
    finish_reason: str | None = None
    usage: Usage | None = None
    status: str = "streaming"
    metrics: TurnMetrics | None = None
    ended_ts: str | None = None
    phases: list[Phase] = field(default_factory=list)

    @property
    def first_chunk_ms(self) -> float | None:
        for request in self.requests:
            if request.first_chunk_ts:
                return request.first_chunk_ms
        return None

    @property
    def duration_ms(self) -> float | None:
        return _ms_between(self.started_ts, self.ended_ts)


def audit(events: Iterable[AnyEvent]) -> list[AttemptAudit]:
    """One ``AttemptAudit`` per attempt of a conversation, in the order the attempts started."""
    attempts: dict[str, AttemptAudit] = {}
    requests: dict[str, RequestAudit] = {}
    submitted: dict[str, str] = {}
    for event in events:
        match event:
            case Submitted():
                submitted[event.message_id] = event.ts
            case Started():
                a = attempts[event.attempt_id] = AttemptAudit(
                    attempt_id=event.attempt_id,
                    message_id=event.message_id,
                    number=_count(attempts, event.message_id) + 1,
                    model=event.model,
                    trigger=event.trigger,
                    started_ts=event.ts,
                    turn=event.turn,
                    submitted_ts=submitted.get(event.user_message_id),
                )
                if a.submitted_ts and event.trigger == "submit":
                    a.phases.append(Phase(ts=a.submitted_ts, name="submitted"))
                a.phases.append(Phase(ts=event.ts, name="started", detail=f"attempt {a.number} ({event.trigger})"))
            case RequestSent() if event.attempt_id in attempts:
                r = requests[event.request_id] = RequestAudit(
                    request_id=event.request_id, model=event.model, sent_ts=event.ts
                )
                attempts[event.attempt_id].requests.append(r)
                attempts[event.attempt_id].phases.append(Phase(ts=event.ts, name="request sent", detail=event.model))
            case Chunk() if event.attempt_id in attempts:
                _chunk(attempts[event.attempt_id], requests.get(event.request_id), event)
            case StaleChunk() if event.attempt_id in attempts:
                a = attempts[event.attempt_id]
                a.stale_chunks += 1
                a.stale_why[event.why] = a.stale_why.get(event.why, 0) + 1
            case CancelRequested() if event.attempt_id in attempts:
                a = attempts[event.attempt_id]
                a.cancel_source, a.cancel_ts = event.source, event.ts
                _chunks_phase(a)
                a.phases.append(Phase(ts=event.ts, name="cancel requested", detail=event.source))
            case UpstreamClosed() if event.attempt_id in attempts:
                _upstream_closed(attempts[event.attempt_id], requests.get(event.request_id), event)
            case Cancelled() if event.attempt_id in attempts:
                a = attempts[event.attempt_id]
                a.cancel_source, a.ended_ts = event.source, event.ts
                a.phases.append(Phase(ts=event.ts, name="cancelled", detail=f"{event.delivered_chars} chars kept"))
            case Recovered() if event.attempt_id in attempts:
                a = attempts[event.attempt_id]
                a.cancel_source, a.ended_ts = "restart", event.ts
                _chunks_phase(a)
                a.phases.append(Phase(ts=event.ts, name="recovered", detail="interrupted by a restart"))
            case Failed() if event.attempt_id in attempts:
                _failed(attempts[event.attempt_id], requests.get(event.request_id or ""), event)
            case Retrying():
                if event.why == "auto" and event.attempt_id in attempts:
                    attempts[event.attempt_id].retries += 1
                    attempts[event.attempt_id].phases.append(
                        Phase(ts=event.ts, name="retrying", detail="automatic re-send")
                    )
                elif event.previous_attempt_id in attempts:
                    attempts[event.previous_attempt_id].phases.append(
                        Phase(ts=event.ts, name="retrying", detail="by the user")
                    )
            case Done() if event.attempt_id in attempts:
                a = attempts[event.attempt_id]
                a.finish_reason, a.usage, a.ended_ts = event.finish_reason, event.usage, event.ts
                if event.request_id in requests:
                    requests[event.request_id].finish_reason = event.finish_reason
                _chunks_phase(a)
                a.phases.append(
                    Phase(ts=event.ts, name="done", detail=f"{event.finish_reason or 'stop'}{_tokens(event.usage)}")
                )
            case Persisted() if event.attempt_id in attempts:
                a = attempts[event.attempt_id]
                a.status, a.metrics = event.status, event.metrics
                a.ended_ts = a.ended_ts or event.ts
                a.phases.append(
                    Phase(ts=event.ts, name="persisted", detail=f"{event.status}{_metric_tokens(event.metrics)}")
                )
            case _:
                pass
    return list(attempts.values())


def _chunk(a: AttemptAudit, r: RequestAudit | None, event: Chunk) -> None:
    if a.chunk_count == 0:
        sent = r.sent_ts if r else a.started_ts
        ms = _ms_between(sent, event.ts)
        a.phases.append(Phase(ts=event.ts, name="first chunk", detail=f"+{ms:.0f} ms" if ms is not None else ""))
    a.chunk_count += 1
    a.last_chunk_seq = event.chunk_seq
    if r is not None:
        r.first_chunk_ts = r.first_chunk_ts or event.ts
        r.chunk_count += 1
        r.last_chunk_seq = event.chunk_seq


def _chunks_phase(a: AttemptAudit) -> None:
    if a.chunk_count and not any(p.name == "chunks" for p in a.phases):
        a.phases.append(
            Phase(ts=a.phases[-1].ts, name="chunks", detail=f"{a.chunk_count} chunks, last seq {a.last_chunk_seq}")
        )


def _upstream_closed(a: AttemptAudit, r: RequestAudit | None, event: UpstreamClosed) -> None:
    a.upstream_close_ms = event.close_ms
    if r is not None:
        r.closed_ms = event.close_ms
    detail = f"+{event.close_ms:.1f} ms after cancel" if event.close_ms is not None else ""
    a.phases.append(Phase(ts=event.ts, name="upstream closed", detail=detail))


def _failed(a: AttemptAudit, r: RequestAudit | None, event: Failed) -> None:
    if r is not None:
        r.error_type, r.error_summary, r.http_status = event.error_type, event.summary, event.http_status
    status = f" HTTP {event.http_status}" if event.http_status else ""
    if event.will_retry:
        a.phases.append(
            Phase(ts=event.ts, name="request failed", detail=f"{event.error_type}{status}: {event.summary}")
        )
        return
    _chunks_phase(a)
    a.error_type, a.error_summary, a.ended_ts = event.error_type, event.summary, event.ts
    a.phases.append(Phase(ts=event.ts, name="failed", detail=f"{event.error_type}{status}: {event.summary}"))


def _count(attempts: dict[str, AttemptAudit], message_id: str) -> int:
    return sum(1 for a in attempts.values() if a.message_id == message_id)


def _tokens(usage: Usage | None) -> str:
    if usage is None:
        return ""
    mark = "~" if usage.estimated else ""
    return f", {mark}{usage.input_tokens} in / {mark}{usage.output_tokens} out"


def _metric_tokens(m: TurnMetrics) -> str:
    mark = "~" if m.estimated else ""
    return f", {mark}{m.input_tokens} in / {mark}{m.output_tokens} out" if (m.input_tokens or m.output_tokens) else ""


def _ms_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000
    except ValueError:
        return None
