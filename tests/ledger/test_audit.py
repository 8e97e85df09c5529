"""The audit projection: per attempt and per request, every number read from the ledger."""

from __future__ import annotations

from ledger.events.core import (
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Persisted,
    RequestSent,
    Retrying,
    StaleChunk,
    Started,
    Submitted,
    TurnMetrics,
    UpstreamClosed,
    Usage,
)
from ledger.folds.audit import audit
from tests.support.ledger_builders import ts
from ui.audit_words import phase_detail, phase_label

C = "c"


def test_a_stopped_attempt_shows_first_chunk_chunks_stale_cancel_source_and_upstream_close() -> None:
    events = [
        Submitted(conversation_id=C, ts=ts(0), message_id="u1", turn=1, text="hi"),
        Started(conversation_id=C, ts=ts(1), attempt_id="a1", message_id="m1", user_message_id="u1", turn=1, model="m"),
        RequestSent(conversation_id=C, ts=ts(2), attempt_id="a1", request_id="r1", model="m"),
        *[
            Chunk(conversation_id=C, ts=ts(250 + n * 10), attempt_id="a1", request_id="r1", chunk_seq=n, text="x")
            for n in range(7)
        ],
        CancelRequested(conversation_id=C, ts=ts(400), attempt_id="a1", source="user"),
        StaleChunk(conversation_id=C, ts=ts(401), attempt_id="a1", request_id="r1", chunk_seq=7, why="closing"),
        UpstreamClosed(conversation_id=C, ts=ts(402), attempt_id="a1", request_id="r1", close_ms=1.5),
        Cancelled(conversation_id=C, ts=ts(403), attempt_id="a1", source="user", delivered_chars=7, chunk_count=7),
        Persisted(
            conversation_id=C,
            ts=ts(404),
            attempt_id="a1",
            message_id="m1",
            status="interrupted",
            text="x" * 7,
            metrics=TurnMetrics(input_tokens=3, output_tokens=7, estimated=True),
        ),
    ]
    (a,) = audit(events)
    assert (a.turn, a.number, a.chunk_count, a.last_chunk_seq, a.stale_chunks) == (1, 1, 7, 6, 1)
    assert a.first_chunk_ms == 248.0
    assert (a.cancel_source, a.upstream_close_ms, a.status) == ("user", 1.5, "interrupted")
    assert a.metrics is not None and a.metrics.estimated and a.duration_ms == 402.0
    kinds = [p.kind for p in a.phases]
    assert kinds == [
        "submitted",
        "started",
        "request_sent",
        "first_chunk",
        "chunks",
        "cancel_requested",
        "upstream_closed",
        "cancelled",
        "persisted",
    ]
    chunks = next(p for p in a.phases if p.kind == "chunks")
    assert (chunks.count, chunks.last_seq) == (7, 6)
    assert phase_detail(chunks) == "7 chunks, last seq 6"
    assert [phase_label(p) for p in a.phases][2:4] == ["request sent", "first chunk"]


def test_an_automatic_resend_shows_two_requests_the_failure_and_the_reported_tokens() -> None:
    events = [
        Started(conversation_id=C, ts=ts(0), attempt_id="a1", message_id="m1", user_message_id="u1", turn=1, model="m"),
        RequestSent(conversation_id=C, ts=ts(1), attempt_id="a1", request_id="r1", model="m"),
        Failed(
            conversation_id=C,
            ts=ts(5),
            attempt_id="a1",
            request_id="r1",
            error_type="rate_limit",
            http_status=429,
            summary="Rate limited",
            retryable=True,
            will_retry=True,
        ),
        Retrying(
            conversation_id=C,
            ts=ts(6),
            message_id="m1",
            previous_attempt_id="a1",
            attempt_id="a1",
            why="auto",
            previous_request_id="r1",
            request_id="r2",
        ),
        RequestSent(conversation_id=C, ts=ts(500), attempt_id="a1", request_id="r2", model="m"),
        Chunk(conversation_id=C, ts=ts(600), attempt_id="a1", request_id="r2", chunk_seq=0, text="ok"),
        Done(
            conversation_id=C,
            ts=ts(700),
            attempt_id="a1",
            request_id="r2",
            finish_reason="stop",
            usage=Usage(input_tokens=10, output_tokens=1),
        ),
    ]
    (a,) = audit(events)
    assert [r.request_id for r in a.requests] == ["r1", "r2"]
    assert (a.requests[0].error_type, a.requests[0].http_status) == ("rate_limit", 429)
    assert a.retries == 1 and a.error_type is None
    assert a.first_chunk_ms == 100.0 and a.requests[1].first_chunk_ms == 100.0
    assert a.usage == Usage(input_tokens=10, output_tokens=1)
    assert "done" in [p.kind for p in a.phases] and "request_failed" in [p.kind for p in a.phases]


def test_a_wall_clock_step_backwards_never_makes_a_duration_negative_and_measured_times_win() -> None:
    events = [
        Started(
            conversation_id=C, ts=ts(1000), attempt_id="a1", message_id="m1", user_message_id="u1", turn=1, model="m"
        ),
        RequestSent(conversation_id=C, ts=ts(1001), attempt_id="a1", request_id="r1", model="m"),
        Chunk(conversation_id=C, ts=ts(0), attempt_id="a1", request_id="r1", chunk_seq=0, text="x"),  # clock stepped
        Done(conversation_id=C, ts=ts(10), attempt_id="a1", request_id="r1"),
        Persisted(
            conversation_id=C,
            ts=ts(11),
            attempt_id="a1",
            message_id="m1",
            status="complete",
            text="x",
            metrics=TurnMetrics(wait_ms=42.0, output_ms=3.0),
        ),
    ]
    (a,) = audit(events)
    assert a.first_chunk_ms == 42.0 and a.duration_ms == 0.0
    assert a.requests[0].first_chunk_ms == 0.0
