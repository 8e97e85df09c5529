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
- One end per attempt, as the reducer applies it (``ledger.ends.next_phase``): an event of an attempt after its
  end is late: shown as a late phase and counted (``late_events``), never folded, so the first end and the first
  ``persisted`` stand; a chunk once a cancel was asked or the attempt ended is counted stale, as the reducer does.
  The working records are in ``ledger.audit_fold``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

# ``X as X`` re-exports each name (PEP 484); the import sorter would split them into one statement each.
# isort: off
from ledger.audit_values import (
    AttemptAudit as AttemptAudit,
    Phase as Phase,
    PhaseKind as PhaseKind,
    RequestAudit as RequestAudit,
)

# isort: on
from ledger.approval_events import ApprovalAsked, ApprovalGiven, GrantRevoked
from ledger.audit_fold import AttemptFold, RequestFold, approval_phase, ms_between
from ledger.ends import next_phase
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
    QuestionAnswered,
    QuestionAsked,
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
from ledger.queue_events import MessageQueued, QueuedEdited, QueuedRemoved
from ledger.title_events import Titled


def audit(events: Iterable[AnyEvent]) -> list[AttemptAudit]:
    """One ``AttemptAudit`` per attempt of a conversation, in the order the attempts started."""
    attempts: dict[str, AttemptFold] = {}
    requests: dict[str, RequestFold] = {}
    submitted: dict[str, str] = {}
    for event in events:
        if type(event) is Chunk:  # the hot path: counters only, straight to its attempt
            if (target := attempts.get(event.attempt_id)) is not None:
                _chunk(target, requests, event)
            continue
        if isinstance(event, Submitted):
            submitted[event.message_id] = event.ts
            continue
        if isinstance(event, Started) and event.attempt_id not in attempts:
            number = sum(1 for a in attempts.values() if a.started.message_id == event.message_id) + 1
            a = attempts[event.attempt_id] = AttemptFold(started=event, number=number)
            if event.user_message_id in submitted and event.trigger == "submit":
                a.add("submitted", submitted[event.user_message_id])
            parent = attempts.get(event.continues or "")  # Continue: which attempt it goes on from
            source = f"continues attempt {parent.number}" if parent is not None else event.trigger
            a.add("started", event.ts, number=number, source=source, model=event.model)
            continue
        a_id = getattr(event, "attempt_id", None)
        target = attempts.get(a_id) if isinstance(a_id, str) else None
        if isinstance(event, Retrying) and event.why == "user":
            target = attempts.get(event.previous_attempt_id)
        if target is None:
            continue
        phase = next_phase(target.phase, event)  # the one-end rule (ledger.ends), as the reducer applies it
        if phase is None:
            target.late(event)
        else:
            target.phase = phase
            _fold(target, requests, event)
    return [a.freeze() for a in attempts.values()]


def _fold(a: AttemptFold, requests: dict[str, RequestFold], event: AnyEvent) -> None:
    match event:
        case RequestSent():
            r = requests[event.request_id] = RequestFold(sent=event)
            a.requests.append(r)
            a.add("request_sent", event.ts, model=event.model)
        case Chunk():
            _chunk(a, requests, event)
        case StaleChunk():
            a.stale_why[event.why] = a.stale_why.get(event.why, 0) + 1
        case CancelRequested():
            a.closing = True
            a.chunks_phase()
            a.add("cancel_requested", event.ts, source=event.source)
        case UpstreamClosed():
            if event.request_id in requests:
                requests[event.request_id].closed = event
            a.add("upstream_closed", event.ts, ms=event.close_ms)
        case Cancelled():
            a.add("cancelled", event.ts, count=event.delivered_chars, source=event.source, usage=event.usage)
        case Recovered():
            a.chunks_phase()
            a.add("recovered", event.ts, source="restart")
        case Failed():
            if (failed := requests.get(event.request_id or "")) is not None:
                failed.failed = event
            if not event.will_retry:
                a.chunks_phase()
            kind: PhaseKind = "request_failed" if event.will_retry else "failed"
            a.add(
                kind,
                event.ts,
                error_type=event.error_type,
                http_status=event.http_status,
                summary=event.summary,
                usage=event.usage,
            )
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
            usage = Usage(  # each side marked estimated on its own (``partial``: the output side)
                input_tokens=m.input_tokens,
                output_tokens=m.output_tokens,
                estimated=m.input_is_estimated,
                partial=m.output_is_estimated,
            )
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
        case ApprovalAsked() | ApprovalGiven():
            approval_phase(a, event)
        case ToolDispatched():
            name = a.names.get(event.call_id)
            a.add("tool_dispatched", event.ts, name=name, call_id=event.call_id, model=event.server)
        case ToolResult():
            name, ms, size = a.names.get(event.call_id), event.duration_ms, event.size
            a.add("tool_result", event.ts, name=name, call_id=event.call_id, status=event.status, ms=ms, count=size)
        case QuestionAsked():
            name, cid = a.names.get(event.call_id), event.call_id
            a.add("question_asked", event.ts, name=name, call_id=cid, source=event.mode, summary=event.message)
        case QuestionAnswered():
            name, cid = a.names.get(event.call_id), event.call_id
            a.add("question_answered", event.ts, name=name, call_id=cid, status=event.action, source=event.by)
        case StaleToolResult():
            a.add("stale_tool_result", event.ts, call_id=event.call_id, source=event.why)
        case Submitted() | Started():
            pass  # they make the attempt (``audit``), never reach an existing one
        case ToolCallStarted() | ToolProgress():
            pass  # the timeline shows a call once it is complete, and its result, not every piece in between
        case Created() | Renamed() | Selected() | VersionSelected() | Branched() | Detached() | Attached() | Deleted():
            pass  # about the conversation, not an attempt
        case MessageQueued() | QueuedEdited() | QueuedRemoved():
            pass  # the queue (``ledger.queue``): a message reaches an attempt when its ``submitted`` sends it
        case GrantRevoked() | Titled():
            pass  # about the conversation (its grants, its title), not an attempt
        case _:
            assert_never(event)


def _chunk(a: AttemptFold, requests: dict[str, RequestFold], event: Chunk) -> None:
    if a.closing or a.phase != "open":  # the stale rule: never rendered once a cancel was asked or it ended
        why = "closing" if a.phase == "open" else "closed"
        a.stale_why[why] = a.stale_why.get(why, 0) + 1
        return
    sent = requests.get(event.request_id)
    if a.chunk_count == 0:
        a.add("first_chunk", event.ts, ms=ms_between(sent.sent.ts if sent else a.started.ts, event.ts))
    a.chunk_count += 1
    a.last_chunk_seq = event.chunk_seq
    if sent is not None:
        sent.first_chunk_ts = sent.first_chunk_ts or event.ts
        sent.chunk_count += 1
        sent.last_chunk_seq = event.chunk_seq
