"""The audit's working records while one conversation's events are folded (``ledger.audit``), and how a late event
of an attempt shows in its timeline.

Guarantees: a record holds the events that said its values and counters of its chunks; ``freeze`` builds each
frozen value once, from the timeline and those events. What the timeline records (cancel source, end, errors,
retries, tool calls, stale results) is read from its phases that were applied: a late phase (``Phase.late``, an
event after the attempt's end, ``ledger.ends``) is shown in the timeline and counted in ``late_events``, and never
wins: the first end and the first ``persisted`` stand. Durations derived from timestamps are never negative.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from ledger.approval_events import ApprovalAsked, ApprovalGiven
from ledger.audit_values import AttemptAudit, Phase, PhaseKind, RequestAudit
from ledger.ends import Phase as RunPhase
from ledger.events import AnyEvent, Done, Failed, Persisted, RequestSent, Started, UpstreamClosed
from ledger.kinds import LATE_PHASE_KINDS

#: The timeline entry a late event shows as (kinds not listed are counted only: a piece of a call, progress).
LATE_PHASES: dict[str, PhaseKind] = {kind: cast(PhaseKind, kind) for kind in LATE_PHASE_KINDS}


@dataclass(slots=True)
class RequestFold:
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
            first_chunk_ms=ms_between(self.sent.ts, self.first_chunk_ts),
            chunk_count=self.chunk_count,
            last_chunk_seq=self.last_chunk_seq,
            closed_ms=self.closed.close_ms if self.closed else None,
            error_type=failed.error_type if failed else None,
            error_summary=failed.summary if failed else None,
            http_status=failed.http_status if failed else None,
            finish_reason=self.done.finish_reason if self.done else None,
        )


@dataclass(slots=True)
class AttemptFold:
    """An attempt while the events are folded: its timeline so far, the events that said what the timeline does not
    show, and what every chunk changes, counted."""

    started: Started
    number: int
    phases: list[Phase] = field(default_factory=list)
    requests: list[RequestFold] = field(default_factory=list)
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    stale_why: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    names: dict[str, str] = field(default_factory=dict)
    done: Done | None = None
    persisted: Persisted | None = None
    phase: RunPhase = "open"
    closing: bool = False
    late_events: int = 0

    def late(self, event: AnyEvent) -> None:
        """An event after the attempt's end: shown as late in the timeline, counted, never folded."""
        self.late_events += 1
        kind: PhaseKind | None = LATE_PHASES.get(event.KIND)
        if isinstance(event, Failed):
            kind = "request_failed" if event.will_retry else "failed"
        if kind is not None:
            status, call_id = getattr(event, "status", None), getattr(event, "call_id", None)
            self.add(kind, event.ts, late=True, status=status, call_id=call_id, name=self.names.get(call_id or ""))

    def add(self, kind: PhaseKind, ts: str, **values: Any) -> None:
        self.phases.append(Phase(kind=kind, ts=ts, **values))

    def chunks_phase(self) -> None:
        if self.chunk_count and not any(p.kind == "chunks" for p in self.phases):
            self.add("chunks", self.phases[-1].ts, count=self.chunk_count, last_seq=self.last_chunk_seq)

    def freeze(self) -> AttemptAudit:
        cancel_source = close_ms = error_type = error_summary = ended_ts = None
        retries = tool_calls = stale_tool_results = 0
        for p in self.phases:  # what the timeline records is read from it (its applied phases)
            if p.late:
                continue
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
            purpose=s.purpose,
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
            duration_ms=ms_between(s.ts, ended_ts),
            steps=self.steps,
            tool_calls=tool_calls,
            stale_tool_results=stale_tool_results,
            late_events=self.late_events,
            phases=tuple(self.phases),
        )


def ms_between(start: str | None, end: str | None) -> float | None:
    """Milliseconds between two timestamps, never negative (a wall-clock step backwards reads as 0)."""
    if not start or not end:
        return None
    try:
        return max(0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000)
    except ValueError:
        return None


def approval_phase(a: AttemptFold, event: ApprovalAsked | ApprovalGiven) -> None:
    """The timeline entry of an approval asked (mode as ``status``, why as ``source``) or given (decision as
    ``status``, who as ``source``, ``scope``), each with the tool's grant hash."""
    name, cid, grant = a.names.get(event.call_id), event.call_id, event.grant_hash
    if isinstance(event, ApprovalAsked):
        a.add("approval_asked", event.ts, name=name, call_id=cid, grant=grant, status=event.mode, source=event.why)
        return
    status, source, scope = event.decision, event.by, event.scope
    a.add("approval_given", event.ts, name=name, call_id=cid, grant=grant, status=status, source=source, scope=scope)
