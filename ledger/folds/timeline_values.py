"""The values of one attempt's timeline (``ledger.folds.timeline``): its moments, its requests, its tool calls.

Guarantees: every value is frozen and slotted, made once by ``ledger.folds.timeline_fold.TimelineFold.freeze``; counts
follow the stale rule (``ledger.stale``) and the one-end rule (``ledger.ends``) as the fold applied them: a late
event is a ``Moment`` with ``late`` set and changes no other field. The projections (``ledger.folds.audit``,
``ledger.folds.trace``, ``ledger.folds.waterfall``) only map these values to their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.events import (
    AnyEvent,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Persisted,
    RequestSent,
    Started,
    Submitted,
    ToolCalled,
    UpstreamClosed,
    Usage,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Moment:
    """One event of the attempt in seq order (every kind but chunks: only its first rendered chunk is one)."""

    event: AnyEvent
    late: bool = False  # recorded after the attempt's end (``ledger.ends``): shown, never applied


@dataclass(frozen=True, kw_only=True, slots=True)
class QuestionTimeline:
    """A tool's question to a person (MCP elicitation), from its asking to its first answer."""

    question_id: str
    mode: str
    revision: str
    asked_at: str
    message: str | None = None  # only when content was asked for
    answered_at: str | None = None
    action: str | None = None
    by: str | None = None
    content: str | None = None  # only when content was asked for


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolTimeline:
    """A complete tool call: called, maybe waiting for a person, dispatched, its first result (or the attempt's end,
    ``result_at``, when none came before it)."""

    called: ToolCalled
    server: str | None = None
    awaiting_at: str | None = None
    dispatched_at: str | None = None
    result_at: str | None = None
    status: str | None = None
    duration_ms: float | None = None
    size: int = 0
    content: str | None = None  # only when content was asked for
    questions: tuple[QuestionTimeline, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestTimeline:
    """A request: sent, its chunks (rendered and stale), what was said of it, and how it ended."""

    sent: RequestSent
    step: int  # the step it was sent in
    first_chunk_ts: str | None = None  # its first rendered chunk
    chunk_count: int = 0  # rendered
    last_chunk_seq: int | None = None
    stale: int = 0
    first_arrival_ts: str | None = None  # its first chunk, rendered or stale
    last_arrival_ts: str | None = None
    closed: UpstreamClosed | None = None  # the last said of it
    failed: Failed | None = None  # the last said of it
    done: Done | None = None
    end_ts: str | None = None  # its end: done, step finished, failed, or the attempt's end (after its close)
    ended_by: str | None = None  # the attempt's end that closed it while open: cancelled / recovered / failed / ...
    finish_reason: str | None = None
    usage: Usage | None = None
    error_type: str | None = None  # the failure that ended it
    http_status: int | None = None
    will_retry: bool = False
    text: str = ""  # its rendered text, only when content was asked for

    @property
    def request_id(self) -> str:
        return self.sent.request_id


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptTimeline:
    """One attempt, folded: what happened in order (``moments``) and what it adds up to."""

    started: Started
    submitted: Submitted | None = None  # the user message it answers, when that was folded first
    content: bool = False  # whether texts were kept (requests' text, tools' content, questions)
    moments: tuple[Moment, ...] = ()
    requests: tuple[RequestTimeline, ...] = ()
    tools: tuple[ToolTimeline, ...] = ()
    chunk_count: int = 0  # rendered
    last_chunk_seq: int | None = None
    stale_why: tuple[tuple[str, int], ...] = ()  # stale chunks by reason, sorted
    stale_results: int = 0
    steps: int = 0  # the highest step started
    cancel: CancelRequested | None = None  # the first cancel asked
    chunks_at_cancel: int | None = None  # chunks rendered when it was asked
    cancel_source: str | None = None  # the last said: the cancel asked, then how it ended ("restart": recovered)
    requested_by: str | None = None
    end_kind: str | None = None  # done / failed / cancelled / recovered, or persisted (persisted while open)
    end_at: str | None = None
    error_type: str | None = None  # the failure that ended it
    done: Done | None = None
    persisted: Persisted | None = None  # the first
    late_events: int = 0
    last_ts: str = ""  # the last event's (late ones too)
    rendered: tuple[Chunk, ...] = ()  # only when arrivals were asked for
    stale_at: tuple[str, ...] = ()  # when each stale chunk arrived, only when arrivals were asked for

    @property
    def stale_chunks(self) -> int:
        return sum(count for _, count in self.stale_why)
