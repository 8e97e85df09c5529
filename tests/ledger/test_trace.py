"""The trace and waterfall projections are pure functions of the events: same events, same ids, bounded figures."""

from __future__ import annotations

from dataclasses import replace

from ledger.events import AnyEvent, Cancelled, CancelRequested, Chunk, Persisted, UpstreamClosed
from ledger.trace import traces
from ledger.trace_values import span_id, trace_id
from ledger.waterfall import MAX_BINS, MAX_FRAMES, frame_at, waterfalls
from tests.support.ledger_builders import T0, TEST_PACE, answer_events, ts, turn_events


def numbered(events: list[AnyEvent]) -> list[AnyEvent]:
    return [replace(e, seq=n) for n, e in enumerate(events, 1)]


def stopped(chunks: int, stop_after: int) -> list[AnyEvent]:
    """A turn stopped after ``stop_after`` chunks: two more arrive stale-free but after the Stop they are cut."""
    events = [e for e in answer_events("c", 1, chunks) if e.KIND not in ("done", "persisted")]
    kept = [e for e in events if not isinstance(e, Chunk) or e.chunk_seq < stop_after]
    at = ts(TEST_PACE.first_chunk_ms + TEST_PACE.chunk_ms * stop_after)
    text = "".join(e.text for e in kept if isinstance(e, Chunk))
    return numbered(
        kept
        + [
            CancelRequested(conversation_id="c", ts=at, attempt_id="a1", source="user", turn=1),
            UpstreamClosed(conversation_id="c", ts=at, attempt_id="a1", request_id="r1", close_ms=1.5),
            Cancelled(conversation_id="c", ts=at, attempt_id="a1", source="user", chunk_count=stop_after),
            Persisted(conversation_id="c", ts=at, attempt_id="a1", message_id="m1", status="interrupted", text=text),
        ]
    )


def test_the_same_events_give_the_same_spans_and_ids_every_time() -> None:
    events = numbered(answer_events("c", 1, 5))
    first, again = traces(events), traces(list(events))
    assert first == again and len(first) == 1
    root, chat = first[0].spans
    assert (root.trace_id, root.span_id) == (trace_id("a1"), span_id("agent", "a1"))
    assert chat.parent_id == root.span_id and chat.span_id == span_id("chat", "r1")
    assert root.start_ns <= chat.start_ns <= chat.end_ns <= root.end_ns


def test_a_stopped_attempt_is_an_error_with_the_cancel_source_never_a_success() -> None:
    (value,) = traces(stopped(10, 4))
    for span in value.spans:
        assert span.status == "error" and span.attribute("error.type") == "cancelled"
        assert span.attribute("ledger.cancel_source") == "user"


def test_an_attempt_still_running_has_no_trace_yet() -> None:
    events = numbered([e for e in answer_events("c", 1, 5) if e.KIND != "persisted"])
    assert traces(events) == []


def test_the_waterfall_of_a_stopped_answer_marks_the_stop_and_its_replay_holds_what_was_kept() -> None:
    (wf,) = waterfalls(stopped(10, 4), idle_timeout=30)
    assert wf.cancel_ms is not None and wf.closed_ms == wf.cancel_ms and wf.cancel_source == "user"
    assert wf.tokens_at_stop == wf.tokens_kept == 4
    assert frame_at(wf, wf.cancel_ms).tokens == 4 and frame_at(wf, 0).tokens == 0
    assert wf.text == "word0 word1 word2 word3 " and wf.rows[0].kind == "request"


def test_a_20000_chunk_answer_is_downsampled_to_bounded_figures_with_its_gaps() -> None:
    texts = [f"t{n} " for n in range(20_000)]
    events = numbered(turn_events("c", 1, texts, at=T0, question="q", pace=TEST_PACE))
    (wf,) = waterfalls(events, idle_timeout=0.06)  # a third of it is 20 ms: every 30 ms arrival is a gap
    assert len(wf.rendered_bins) <= MAX_BINS and sum(wf.rendered_bins) == 20_000
    assert len(wf.frames) <= MAX_FRAMES + 2 and wf.frames[-1].tokens == 20_000
    assert 0 < len(wf.gaps) <= 40
    assert wf.frames[-1].chars == len(wf.text)
