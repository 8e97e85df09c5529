"""The audit's timeline of one attempt: each moment of its timeline (``ledger.folds.timeline``) as a ``Phase``.

Guarantees: one ``Phase`` per moment that says something to a person, never per chunk: the first rendered chunk is
``first_chunk`` (after its request was sent) and the chunks are one ``chunks`` phase, put before the cancel or the
end that stopped them; a late moment (``Phase.late``, an event after the attempt's end, ``ledger.ends``) shows as
a late phase of its kind (``LATE_PHASES``; the others are counted only) and is never applied. A tool's name is the
one its ``tool_call`` gave before. Every kind is named (``assert_never``). Durations derived from timestamps are
never negative.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, assert_never, cast

from ledger.events import (
    LATE_PHASE_KINDS,
    AnyEvent,
    ApprovalAsked,
    ApprovalGiven,
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
    GrantRevoked,
    Handed,
    MessageQueued,
    Persisted,
    QuestionAnswered,
    QuestionAsked,
    QueuedEdited,
    QueuedRemoved,
    ReadBy,
    Recovered,
    Renamed,
    RequestSent,
    Retrying,
    Selected,
    ShareCreated,
    ShareOpened,
    ShareRevoked,
    ShareUpdated,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    Titled,
    ToolAwaitingApproval,
    ToolCalled,
    ToolCallStarted,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    ToolServerGone,
    ToolServerUsed,
    UpstreamClosed,
    Usage,
    VersionSelected,
)
from ledger.folds.audit_values import Phase, PhaseKind
from ledger.folds.timeline import AttemptTimeline

#: The timeline entry a late event shows as (kinds not listed are counted only: a piece of a call, progress).
LATE_PHASES: dict[str, PhaseKind] = {kind: cast(PhaseKind, kind) for kind in LATE_PHASE_KINDS}


@dataclass(slots=True)
class Phases:
    """The phases of one attempt while its moments are mapped, and the tools' names said so far."""

    timeline: AttemptTimeline
    phases: list[Phase] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)

    def add(self, kind: PhaseKind, ts: str, **values: Any) -> None:
        self.phases.append(Phase(kind=kind, ts=ts, **values))

    def chunks(self) -> None:
        t = self.timeline  # no chunk is rendered after a cancel or the end: its counts are the final ones
        if t.chunk_count and not any(p.kind == "chunks" for p in self.phases):
            self.add("chunks", self.phases[-1].ts, count=t.chunk_count, last_seq=t.last_chunk_seq)

    def late(self, event: AnyEvent) -> None:
        kind: PhaseKind | None = LATE_PHASES.get(event.KIND)
        if isinstance(event, Failed):
            kind = "request_failed" if event.will_retry else "failed"
        if kind is not None:
            status, call_id = getattr(event, "status", None), getattr(event, "call_id", None)
            self.add(kind, event.ts, late=True, status=status, call_id=call_id, name=self.names.get(call_id or ""))


def phases(timeline: AttemptTimeline, number: int, parent: int | None) -> tuple[Phase, ...]:
    """The attempt's phases; ``number``: which attempt of its message it is; ``parent``: the number of the attempt
    it continues (Continue)."""
    p, s = Phases(timeline), timeline.started
    if timeline.submitted is not None and s.trigger == "submit":
        p.add("submitted", timeline.submitted.ts, files=timeline.submitted.attachments)
    source = f"continues attempt {parent}" if parent is not None else s.trigger  # Continue: which it goes on from
    p.add("started", s.ts, number=number, source=source, model=s.model)
    for moment in timeline.moments:
        if moment.late:
            p.late(moment.event)
        else:
            _phase(p, moment.event)
    return tuple(p.phases)


def _phase(p: Phases, event: AnyEvent) -> None:  # noqa: C901 - one case per kind
    match event:
        case RequestSent():
            p.add("request_sent", event.ts, model=event.model)
        case Chunk():  # the first rendered one
            sent = next((r.sent for r in p.timeline.requests if r.request_id == event.request_id), None)
            p.add("first_chunk", event.ts, ms=ms_between(sent.ts if sent else p.timeline.started.ts, event.ts))
        case CancelRequested():
            p.chunks()
            p.add("cancel_requested", event.ts, source=event.source)
        case UpstreamClosed():
            p.add("upstream_closed", event.ts, ms=event.close_ms)
        case Cancelled():
            p.add("cancelled", event.ts, count=event.delivered_chars, source=event.source, usage=event.usage)
        case Recovered():
            p.chunks()
            p.add("recovered", event.ts, source="restart")
        case Failed():
            if not event.will_retry:
                p.chunks()
            kind: PhaseKind = "request_failed" if event.will_retry else "failed"
            usage, status = event.usage, event.http_status
            p.add(kind, event.ts, error_type=event.error_type, http_status=status, summary=event.summary, usage=usage)
        case Retrying():
            p.add("retrying", event.ts, source=event.why)
        case Done():
            p.chunks()
            p.add("done", event.ts, finish_reason=event.finish_reason or "stop", usage=event.usage)
        case Persisted():
            p.add("persisted", event.ts, status=event.status, usage=persisted_usage(event))
        case StepStarted():
            if event.step > 1:
                p.add("step_started", event.ts, step=event.step)
        case StepFinished():
            p.add("step_finished", event.ts, step=event.step, finish_reason=event.finish_reason, usage=event.usage)
        case ToolCalled():
            p.names[event.call_id] = event.name
            p.add("tool_call", event.ts, step=event.step, name=event.name, call_id=event.call_id)
        case ToolAwaitingApproval():
            p.add("tool_awaiting_approval", event.ts, name=p.names.get(event.call_id), call_id=event.call_id)
        case ApprovalAsked() | ApprovalGiven():
            approval_phase(p, event)
        case ToolDispatched():
            name = p.names.get(event.call_id)
            p.add("tool_dispatched", event.ts, name=name, call_id=event.call_id, model=event.server)
        case ToolResult():
            name, ms, size = p.names.get(event.call_id), event.duration_ms, event.size
            p.add("tool_result", event.ts, name=name, call_id=event.call_id, status=event.status, ms=ms, count=size)
        case QuestionAsked():
            name, cid = p.names.get(event.call_id), event.call_id
            p.add("question_asked", event.ts, name=name, call_id=cid, source=event.mode, summary=event.message)
        case QuestionAnswered():
            name, cid = p.names.get(event.call_id), event.call_id
            why = event.reason
            p.add(
                "question_answered", event.ts, name=name, call_id=cid, status=event.action, source=event.by, summary=why
            )
        case StaleToolResult():
            p.add("stale_tool_result", event.ts, call_id=event.call_id, source=event.why)
        case ToolServerUsed():
            p.add("tool_server_used", event.ts, server=event)
        case ToolServerGone():
            p.add("tool_server_gone", event.ts, server=event)
        case Submitted() | Started() | StaleChunk():
            pass  # they make the attempt (the timeline), or are counted only (stale chunks)
        case ToolCallStarted() | ToolProgress():
            pass  # the timeline shows a call once it is complete, and its result, not every piece in between
        case (
            Created() | Handed() | ReadBy() | Renamed() | Selected() | VersionSelected() | Branched() | Detached()
            | Attached() | Deleted() | ShareCreated() | ShareUpdated() | ShareRevoked() | ShareOpened()
        ):  # fmt: skip
            pass  # about the conversation, not an attempt
        case MessageQueued() | QueuedEdited() | QueuedRemoved():
            pass  # the queue (``ledger.queue``): a message reaches an attempt when its ``submitted`` sends it
        case GrantRevoked() | Titled():
            pass  # about the conversation (its grants, its title), not an attempt
        case _:
            assert_never(event)


def persisted_usage(event: Persisted) -> Usage | None:
    """The tokens of the turn's metrics, each side marked estimated on its own (``partial``: the output side)."""
    m = event.metrics
    usage = Usage(
        input_tokens=m.input_tokens,
        output_tokens=m.output_tokens,
        estimated=m.input_is_estimated,
        partial=m.output_is_estimated,
    )
    return usage if m.input_tokens or m.output_tokens else None


def approval_phase(p: Phases, event: ApprovalAsked | ApprovalGiven) -> None:
    """The timeline entry of an approval asked (mode as ``status``, why as ``source``) or given (decision as
    ``status``, who as ``source``, ``scope``), each with the tool's grant hash."""
    name, cid, grant = p.names.get(event.call_id), event.call_id, event.grant_hash
    if isinstance(event, ApprovalAsked):
        p.add("approval_asked", event.ts, name=name, call_id=cid, grant=grant, status=event.mode, source=event.why)
        return
    status, source, scope = event.decision, event.by, event.scope
    p.add("approval_given", event.ts, name=name, call_id=cid, grant=grant, status=status, source=source, scope=scope)


def ms_between(start: str | None, end: str | None) -> float | None:
    """Milliseconds between two timestamps, never negative (a wall-clock step backwards reads as 0)."""
    if not start or not end:
        return None
    try:
        return max(0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000)
    except ValueError:
        return None
