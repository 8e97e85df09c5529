"""The working records of the trace projection: one ``AttemptFold`` per attempt, fed its events in seq order.

Guarantees: pure (no clock, no I/O); a chunk costs a few counter updates (no per-chunk object is kept, unless
content is asked for: then the text pieces of each request); the fold stops at the attempt's first ``persisted``
(``done``): what comes after is late (``ledger.ends``) and changes nothing, as everywhere else. The spans are made
of these records by ``ledger.trace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ledger.approval_events import ApprovalAsked
from ledger.events import (
    AnyEvent,
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Param,
    Persisted,
    QuestionAnswered,
    QuestionAsked,
    Recovered,
    RequestSent,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    ToolAwaitingApproval,
    ToolCalled,
    ToolDispatched,
    ToolResult,
    TurnMetrics,
    UpstreamClosed,
    Usage,
)
from ledger.trace_waits import QuestionFold


@dataclass(slots=True)
class RequestFold:
    request_id: str
    model: str
    step: int
    sent: str
    params: tuple[Param, ...] = ()
    first_chunk: str | None = None
    last_chunk: str | None = None
    chunks: int = 0
    stale: int = 0
    end: str | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    error_type: str | None = None
    http_status: int | None = None
    will_retry: bool = False
    closed_at: str | None = None
    close_ms: float | None = None
    ended_by: str | None = None  # the attempt's end that closed it while open: cancelled / recovered / failed
    text: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ToolFold:
    call_id: str
    name: str
    step: int
    called_at: str
    arguments: str = ""
    server: str | None = None
    awaiting_at: str | None = None
    dispatched_at: str | None = None
    result_at: str | None = None
    status: str | None = None
    duration_ms: float | None = None
    size: int = 0
    content: str | None = None
    questions: list[QuestionFold] = field(default_factory=list)


@dataclass(slots=True)
class AttemptFold:
    """One attempt's events, folded; ``add`` returns True once its ``persisted`` landed (the trace is ready)."""

    started: Started
    content: bool = False
    question: str | None = None
    step: int = 1
    requests: dict[str, RequestFold] = field(default_factory=dict)
    tools: dict[str, ToolFold] = field(default_factory=dict)
    current: RequestFold | None = None
    chunks: int = 0
    stale: int = 0
    stale_results: int = 0
    cancel_at: str | None = None
    cancel_source: str | None = None
    requested_by: str | None = None
    end_kind: str | None = None
    end_at: str | None = None
    error_type: str | None = None
    finish_reason: str | None = None
    status: str | None = None
    metrics: TurnMetrics | None = None
    persisted_at: str | None = None
    text: str = ""
    last_ts: str = ""
    done: bool = False
    ended_early: list[tuple[str, str]] = field(default_factory=list)  # ("chat" | "tool", id) ended, not yet taken

    def add(self, event: AnyEvent) -> bool:
        if self.done:
            return True
        if type(event) is Chunk:  # the hot path
            self._chunk(event)
            return False
        self.last_ts = event.ts or self.last_ts
        self._other(event)
        return self.done

    def _chunk(self, event: Chunk) -> None:
        self.chunks += 1
        req = self.current
        if req is None or req.request_id != event.request_id:
            req = self.requests.get(event.request_id)
        if req is not None:
            req.chunks += 1
            req.first_chunk = req.first_chunk or event.ts
            req.last_chunk = event.ts
            if self.content and event.block == "text":
                req.text.append(event.text)
        self.last_ts = event.ts or self.last_ts

    def _other(self, event: AnyEvent) -> None:  # noqa: C901 - one case per kind that tells the trace something
        req: RequestFold | None
        tool: ToolFold | None
        match event:
            case StepStarted(step=step):
                self.step = step
            case RequestSent():
                req = RequestFold(event.request_id, event.model, self.step, event.ts, event.params)
                self.requests[event.request_id] = self.current = req
            case StaleChunk(request_id=rid):
                self.stale += 1
                if (req := self.requests.get(rid)) is not None:
                    req.stale += 1
                    req.first_chunk = req.first_chunk or event.ts
                    req.last_chunk = event.ts
            case CancelRequested():
                self.cancel_at = self.cancel_at or event.ts
                self.cancel_source, self.requested_by = event.source, event.requested_by
            case UpstreamClosed(request_id=rid):
                if (req := self.requests.get(rid)) is not None:
                    req.closed_at, req.close_ms = event.ts, event.close_ms
            case Done():
                self._finish(self.requests.get(event.request_id), event.ts, event.finish_reason, event.usage)
                self._end("done", event.ts)
                self.finish_reason = event.finish_reason
            case StepFinished():
                req = self.current if self.current is not None and self.current.step == event.step else None
                if req is not None and req.end is None:
                    self.ended_early.append(("chat", req.request_id))
                self._finish(req, event.ts, event.finish_reason, event.usage)
            case Failed():
                req = self.requests.get(event.request_id) if event.request_id else self.current
                if req is not None and req.end is None:
                    req.end, req.error_type, req.http_status = event.ts, event.error_type, event.http_status
                    req.will_retry, req.usage = event.will_retry, event.usage or req.usage
                    if event.will_retry:
                        self.ended_early.append(("chat", req.request_id))
                if not event.will_retry:
                    self.error_type = event.error_type
                    self._end("failed", event.ts)
            case Cancelled():
                if self.current is not None and self.current.end is None:
                    self.current.usage = event.usage or self.current.usage
                self.cancel_source = event.source
                self._end("cancelled", event.ts)
            case Recovered():
                self.cancel_source = "restart"
                self._end("recovered", event.ts)
            case Persisted():
                self.status, self.metrics, self.text = event.status, event.metrics, event.text
                self.persisted_at = event.ts
                self._end(self.end_kind or "persisted", event.ts)
                self.done = True
            case ToolCalled():
                tool = ToolFold(event.call_id, event.name, event.step, event.ts, event.arguments, event.server)
                self.tools[event.call_id] = tool
            case ToolAwaitingApproval(call_id=cid) | ApprovalAsked(call_id=cid):
                if (tool := self.tools.get(cid)) is not None:
                    tool.awaiting_at = event.ts
            case ToolDispatched(call_id=cid):
                if (tool := self.tools.get(cid)) is not None:
                    tool.dispatched_at, tool.server = event.ts, event.server
            case ToolResult(call_id=cid):
                if (tool := self.tools.get(cid)) is not None and tool.result_at is None:
                    tool.result_at, tool.status, tool.duration_ms = event.ts, event.status, event.duration_ms
                    tool.size = event.size
                    tool.content = event.content if self.content else None
                    self.ended_early.append(("tool", cid))
            case QuestionAsked(call_id=cid):
                if (tool := self.tools.get(cid)) is not None:
                    message = event.message if self.content else None
                    tool.questions.append(
                        QuestionFold(event.question_id, event.mode, event.revision, event.ts, message)
                    )
            case QuestionAnswered(call_id=cid):
                tool = self.tools.get(cid)
                for q in tool.questions if tool is not None else ():
                    if q.question_id == event.question_id and q.answered_at is None:
                        q.answered_at, q.action, q.by = event.ts, event.action, event.by
                        q.content = event.content if self.content else None
            case StaleToolResult():
                self.stale_results += 1
            case _:
                pass  # the rest (progress, tool call pieces, retrying, the conversation's own) tells the trace nothing

    def _finish(self, req: RequestFold | None, ts: str, finish_reason: str | None, usage: Usage | None) -> None:
        if req is None or req.end is not None:
            return
        req.end, req.finish_reason, req.usage = ts, finish_reason, usage or req.usage

    def _end(self, kind: str, ts: str) -> None:
        if self.end_kind is not None:
            return
        self.end_kind, self.end_at = kind, ts
        for req in self.requests.values():  # what was still open ended with the attempt (after its close, if any)
            if req.end is None:
                req.end, req.ended_by = req.closed_at or ts, kind
        for tool in self.tools.values():
            if tool.result_at is None:
                tool.result_at = ts
