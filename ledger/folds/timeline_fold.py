"""The fold of one attempt's events, in seq order, into its timeline (``ledger.folds.timeline_values``).

Guarantees: pure (no clock, no I/O); a chunk costs the stale rule's answer and a few counter updates (no per-chunk
object is kept unless arrivals are asked for, no text unless content is); the stale rule is ``ledger.stale``'s and
the one-end rule ``ledger.ends``'s, applied as the reducer applies them: an event after the attempt's end is a late
moment, counted, never applied (the first end and the first ``persisted`` stand); a chunk once a cancel was asked or
the attempt ended is stale. Every kind is named (``assert_never``). ``freeze`` makes the frozen timeline at any
point (the live trace freezes it when a span is ready).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import assert_never

from ledger.ends import Phase, next_phase
from ledger.events import (
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
from ledger.folds.timeline_tools import ToolRecord, tool_moment
from ledger.folds.timeline_values import AttemptTimeline, Moment, RequestTimeline
from ledger.stale import run_stale_reason


@dataclass(slots=True)
class RequestRecord:
    """A request while its attempt is folded (the fields of ``RequestTimeline``, and its text pieces)."""

    value: RequestTimeline
    chunk_count: int = 0
    first_chunk_ts: str | None = None
    last_chunk_seq: int | None = None
    stale: int = 0
    first_arrival_ts: str | None = None
    last_arrival_ts: str | None = None
    text: list[str] = field(default_factory=list)

    def freeze(self) -> RequestTimeline:
        return replace(
            self.value,
            chunk_count=self.chunk_count,
            first_chunk_ts=self.first_chunk_ts,
            last_chunk_seq=self.last_chunk_seq,
            stale=self.stale,
            first_arrival_ts=self.first_arrival_ts,
            last_arrival_ts=self.last_arrival_ts,
            text="".join(self.text),
        )


@dataclass(slots=True)
class TimelineFold:
    """One attempt while its events are folded; ``add`` says whether an event was its first ``persisted``."""

    started: Started
    submitted: Submitted | None = None
    content: bool = False
    arrivals: bool = False
    phase: Phase = "open"
    status: str = "streaming"  # as the stale rule reads it: streaming, closing (a cancel asked), ended
    moments: list[Moment] = field(default_factory=list)
    requests: dict[str, RequestRecord] = field(default_factory=dict)
    current: RequestRecord | None = None
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    step: int = 1
    values: AttemptTimeline = field(init=False)  # the attempt's scalars, replaced as they change
    chunk_count: int = 0
    last_chunk_seq: int | None = None
    stale_why: dict[str, int] = field(default_factory=dict)
    last_ts: str = ""
    rendered: list[Chunk] = field(default_factory=list)
    stale_at: list[str] = field(default_factory=list)
    ended: list[tuple[str, str]] = field(default_factory=list)  # ("chat" | "tool", id) ended inside the attempt

    def __post_init__(self) -> None:
        self.values = AttemptTimeline(started=self.started, submitted=self.submitted, content=self.content)

    def add(self, event: AnyEvent) -> bool:
        if type(event) is Chunk:  # the hot path
            self._chunk(event)
            return False
        if not isinstance(event, Retrying):  # a Retry names the attempt it replaces: not an event of its run
            self.last_ts = event.ts or self.last_ts
        phase = next_phase(self.phase, event)  # the one-end rule
        if phase is None:
            self.moments.append(Moment(event=event, late=True))
            self.values = replace(self.values, late_events=self.values.late_events + 1)
            return False
        first_persisted = phase == "persisted" and self.phase != "persisted"
        self.phase = phase
        if isinstance(event, StaleChunk):
            self._stale(event.why, self.requests.get(event.request_id), event.ts)
            return False
        self.moments.append(Moment(event=event))
        self._apply(event)
        return first_persisted

    def freeze(self) -> AttemptTimeline:
        return replace(
            self.values,
            moments=tuple(self.moments),
            requests=tuple(r.freeze() for r in self.requests.values()),
            tools=tuple(t.freeze() for t in self.tools.values()),
            chunk_count=self.chunk_count,
            last_chunk_seq=self.last_chunk_seq,
            stale_why=tuple(sorted(self.stale_why.items())),
            last_ts=self.last_ts,
            rendered=tuple(self.rendered),
            stale_at=tuple(self.stale_at),
        )

    def _chunk(self, event: Chunk) -> None:
        self.last_ts = event.ts or self.last_ts
        req = self.current
        if req is None or req.value.sent.request_id != event.request_id:
            req = self.requests.get(event.request_id)
        if (why := run_stale_reason(self.status)) is not None:  # order is the reducer's: it has the state
            self._stale(why, req, event.ts)
            return
        if self.chunk_count == 0:
            self.moments.append(Moment(event=event))  # the first rendered chunk
        self.chunk_count += 1
        self.last_chunk_seq = event.chunk_seq
        if self.arrivals:
            self.rendered.append(event)
        if req is not None:
            req.chunk_count += 1
            req.first_chunk_ts = req.first_chunk_ts or event.ts
            req.last_chunk_seq = event.chunk_seq
            req.first_arrival_ts = req.first_arrival_ts or event.ts
            req.last_arrival_ts = event.ts
            if self.content and event.block == "text":
                req.text.append(event.text)

    def _stale(self, why: str, req: RequestRecord | None, ts: str) -> None:
        self.stale_why[why] = self.stale_why.get(why, 0) + 1
        if self.arrivals:
            self.stale_at.append(ts)
        if req is not None:
            req.stale += 1
            req.first_arrival_ts = req.first_arrival_ts or ts
            req.last_arrival_ts = ts

    def _apply(self, event: AnyEvent) -> None:  # noqa: C901 - one case per kind
        v, req = self.values, self.current
        match event:
            case StepStarted():
                self.step, self.values = event.step, replace(v, steps=max(v.steps, event.step))
            case RequestSent():
                self.current = RequestRecord(RequestTimeline(sent=event, step=self.step))
                self.requests[event.request_id] = self.current
            case CancelRequested():
                self.status = "closing"
                first = v.cancel is None
                self.values = replace(
                    v,
                    cancel=event if first else v.cancel,
                    chunks_at_cancel=self.chunk_count if first else v.chunks_at_cancel,
                    cancel_source=event.source,
                    requested_by=event.requested_by,
                )
            case UpstreamClosed():
                if (req := self.requests.get(event.request_id)) is not None:
                    req.value = replace(req.value, closed=event)
            case Done():
                req = self.requests.get(event.request_id)
                if req is not None:
                    req.value = replace(req.value, done=event)
                self._finish(req, event.ts, event.finish_reason, event.usage)
                self.values = replace(self.values, done=event)
                self._end("done", event.ts)
            case StepFinished():
                req = self.current if self.current is not None and self.current.value.step == event.step else None
                if req is not None and req.value.end_ts is None:
                    self.ended.append(("chat", req.value.sent.request_id))
                self._finish(req, event.ts, event.finish_reason, event.usage)
            case Failed():
                self._failed(event)
            case Cancelled():
                if req is not None and req.value.end_ts is None:
                    req.value = replace(req.value, usage=event.usage or req.value.usage)
                self.values = replace(v, cancel_source=event.source)
                self._end("cancelled", event.ts)
            case Recovered():
                self.values = replace(v, cancel_source="restart")
                self._end("recovered", event.ts)
            case Persisted():
                self.values = replace(v, persisted=event)
                self._end(v.end_kind or "persisted", event.ts)
            case StaleToolResult():
                self.values = replace(v, stale_results=v.stale_results + 1)
            case ToolCalled() | ToolAwaitingApproval() | ApprovalAsked() | ToolDispatched() | ToolResult():
                tool_moment(self.tools, event, self.content, self.ended)
            case QuestionAsked() | QuestionAnswered():
                tool_moment(self.tools, event, self.content, self.ended)
            case ApprovalGiven() | ToolCallStarted() | ToolProgress() | Retrying() | Submitted() | Started():
                pass  # shown by the audit from its moment; they add up to nothing here
            case StaleChunk() | Chunk():
                pass  # folded before (``add``)
            case (
                Created() | Renamed() | Selected() | VersionSelected() | Branched() | Detached() | Handed() | ReadBy()
                | Attached() | Deleted() | ShareCreated() | ShareUpdated() | ShareRevoked() | ShareOpened()
            ):  # fmt: skip
                pass  # about the conversation (its share links too), not an attempt
            case MessageQueued() | QueuedEdited() | QueuedRemoved() | GrantRevoked() | Titled():
                pass  # the queue, the grants, the title: never an attempt's
            case ToolServerUsed() | ToolServerGone():
                pass  # what a remote server was, or that it went: shown by the audit from its moment
            case _:
                assert_never(event)

    def _failed(self, event: Failed) -> None:
        if event.request_id and (said := self.requests.get(event.request_id)) is not None:
            said.value = replace(said.value, failed=event)
        req = self.requests.get(event.request_id) if event.request_id else self.current
        if req is not None and req.value.end_ts is None:
            usage = event.usage or req.value.usage
            req.value = replace(
                req.value,
                end_ts=event.ts,
                error_type=event.error_type,
                http_status=event.http_status,
                will_retry=event.will_retry,
                usage=usage,
            )
            if event.will_retry:
                self.ended.append(("chat", req.value.sent.request_id))
        if not event.will_retry:
            self.values = replace(self.values, error_type=event.error_type)
            self._end("failed", event.ts)

    def _finish(self, req: RequestRecord | None, ts: str, finish_reason: str | None, usage: Usage | None) -> None:
        if req is None or req.value.end_ts is not None:
            return
        value = req.value
        req.value = replace(value, end_ts=ts, finish_reason=finish_reason, usage=usage or value.usage)

    def _end(self, kind: str, ts: str) -> None:
        self.status = "ended"
        if self.values.end_kind is not None:
            return
        self.values = replace(self.values, end_kind=kind, end_at=ts)
        for req in self.requests.values():  # what was still open ended with the attempt (after its close, if any)
            if req.value.end_ts is None:
                closed_at = req.value.closed.ts if req.value.closed is not None else ""
                req.value = replace(req.value, end_ts=closed_at or ts, ended_by=kind)
        for tool in self.tools.values():
            tool.end(ts)
