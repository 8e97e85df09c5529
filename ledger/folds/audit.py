"""The audit projection: a timeline per attempt and per request, mapped from each attempt's timeline
(``ledger.folds.timeline``, folded once from one conversation's events).

Guarantees: computed from the ledger alone (no state outside the events); one ``Phase`` per phase, never per chunk
(``ledger.folds.audit_phases``); durations the engine measured on a monotonic clock (time to first chunk in the turn
metrics, upstream close, tool calls) are used as recorded, the others are derived from timestamps and are never
negative; every value is typed and frozen (``ledger.folds.audit_values``, re-exported here): the words and units a
person reads are made by the page (``ui.format``), never here. Every number is read or derived from recorded events.
- Each value is built once, frozen: what the phases record (cancel source, upstream close, final error, retries,
  tool calls, stale results, the end) is read from its phases, so the numbers agree with them; the rest (requests,
  chunk and stale counts, steps, the first ``done`` and ``persisted``) from the timeline.
- One end per attempt and the stale rule, as the reducer applies them, are the timeline's (``ledger.ends``,
  ``ledger.stale``): an event of an attempt after its end is late: shown as a late phase and counted
  (``late_events``), never applied; a chunk once a cancel was asked or the attempt ended is counted stale.
"""

from __future__ import annotations

from collections.abc import Iterable

# ``X as X`` re-exports each name (PEP 484); the import sorter would split them into one statement each.
# isort: off
from ledger.folds.audit_values import (
    AttemptAudit as AttemptAudit,
    Phase as Phase,
    PhaseKind as PhaseKind,
    RequestAudit as RequestAudit,
)

# isort: on
from ledger.events import AnyEvent
from ledger.folds.audit_phases import ms_between, phases
from ledger.folds.timeline import AttemptTimeline, RequestTimeline, timelines


def audit(events: Iterable[AnyEvent]) -> list[AttemptAudit]:
    """One ``AttemptAudit`` per attempt of a conversation, in the order the attempts started."""
    found: list[AttemptAudit] = []
    numbers: dict[str, int] = {}  # attempt id -> which attempt of its message it is
    for t in timelines(events):
        s, parent = t.started, numbers.get(t.started.continues or "")  # Continue: the attempt it goes on from
        number = numbers[s.attempt_id] = sum(1 for a in found if a.message_id == s.message_id) + 1
        found.append(attempt_audit(t, number, parent))
    return found


def attempt_audit(t: AttemptTimeline, number: int, parent: int | None = None) -> AttemptAudit:
    """One attempt's audit: ``number`` of its message's attempts, continuing attempt number ``parent``."""
    timeline = phases(t, number, parent)
    cancel_source = close_ms = error_type = error_summary = ended_ts = None
    retries = tool_calls = stale_tool_results = 0
    for p in timeline:  # what the timeline records is read from it (its applied phases)
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
    requests = tuple(request_audit(r) for r in t.requests)
    first = next((r.first_chunk_ms for r in requests if r.first_chunk_ms is not None), None)
    metrics = t.persisted.metrics if t.persisted else None
    if metrics is not None and metrics.wait_ms is not None:
        first = metrics.wait_ms  # measured by the engine on a monotonic clock: immune to clock steps
    s, done = t.started, t.done
    return AttemptAudit(
        attempt_id=s.attempt_id,
        message_id=s.message_id,
        number=number,
        model=s.model,
        trigger=s.trigger,
        started_ts=s.ts,
        turn=s.turn,
        purpose=s.purpose,
        requests=requests,
        chunk_count=t.chunk_count,
        last_chunk_seq=t.last_chunk_seq,
        stale_chunks=t.stale_chunks,
        stale_why=t.stale_why,
        cancel_source=cancel_source,
        upstream_close_ms=close_ms,
        error_type=error_type,
        error_summary=error_summary,
        retries=retries,
        finish_reason=done.finish_reason if done else None,
        usage=done.usage if done else None,
        status=t.persisted.status if t.persisted else "streaming",
        metrics=metrics,
        first_chunk_ms=first,
        duration_ms=ms_between(s.ts, ended_ts),
        steps=t.steps,
        tool_calls=tool_calls,
        stale_tool_results=stale_tool_results,
        late_events=t.late_events,
        phases=timeline,
        sent_by=t.submitted.actor if t.submitted is not None else None,
    )


def request_audit(r: RequestTimeline) -> RequestAudit:
    failed = r.failed
    return RequestAudit(
        request_id=r.request_id,
        model=r.sent.model,
        sent_ts=r.sent.ts,
        first_chunk_ms=ms_between(r.sent.ts, r.first_chunk_ts),
        chunk_count=r.chunk_count,
        last_chunk_seq=r.last_chunk_seq,
        closed_ms=r.closed.close_ms if r.closed else None,
        error_type=failed.error_type if failed else None,
        error_summary=failed.summary if failed else None,
        http_status=failed.http_status if failed else None,
        finish_reason=r.done.finish_reason if r.done else None,
    )
