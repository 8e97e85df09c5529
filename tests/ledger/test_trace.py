"""The trace and waterfall projections are pure functions of the events: same events, same ids, bounded figures."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.events.core import (
    AnyEvent,
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Persisted,
    RequestSent,
    Started,
    StepFinished,
    StepStarted,
    ToolCalled,
    ToolDispatched,
    ToolResult,
    UpstreamClosed,
)
from ledger.folds.trace import Traces, traces
from ledger.folds.trace_values import AttemptTraceValue, SpanValue, span_id, trace_id
from ledger.folds.waterfall import MAX_BINS, MAX_FRAMES, frame_at, waterfalls
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


@st.composite
def agent_turns(draw: st.DrawFn) -> list[AnyEvent]:
    """One agent attempt: steps of (a re-sent failure,) a request, chunks and tool calls, ended on its own or
    stopped after any of its events (with a stale-free close)."""
    c, a, n = "c", "a1", iter(range(1, 10_000))
    at = lambda: ts(next(n) * 7.0)  # noqa: E731 - a clock that only moves on
    events: list[AnyEvent] = [
        Started(conversation_id=c, ts=at(), attempt_id=a, message_id="m1", user_message_id="u1", turn=1, model="x/m")
    ]
    for step in range(1, draw(st.integers(1, 3)) + 1):
        events.append(StepStarted(conversation_id=c, ts=at(), attempt_id=a, step=step))
        if draw(st.booleans()):
            events.append(RequestSent(conversation_id=c, ts=at(), attempt_id=a, request_id=f"r{step}x", model="x/m"))
            events.append(
                Failed(
                    conversation_id=c,
                    ts=at(),
                    attempt_id=a,
                    request_id=f"r{step}x",
                    error_type="server",
                    summary="500",
                    will_retry=True,
                )
            )
        rid = f"r{step}"
        events.append(RequestSent(conversation_id=c, ts=at(), attempt_id=a, request_id=rid, model="x/m"))
        events += [
            Chunk(conversation_id=c, ts=at(), attempt_id=a, request_id=rid, chunk_seq=k, text=f"w{k} ")
            for k in range(draw(st.integers(0, 3)))
        ]
        events.append(StepFinished(conversation_id=c, ts=at(), attempt_id=a, step=step, finish_reason="tool_calls"))
        for k in range(draw(st.integers(0, 2))):
            call = f"s{step}c{k}"
            events.append(
                ToolCalled(conversation_id=c, ts=at(), attempt_id=a, step=step, call_id=call, name="t", arguments="{}")
            )
            events.append(ToolDispatched(conversation_id=c, ts=at(), attempt_id=a, call_id=call, server="srv"))
            events.append(ToolResult(conversation_id=c, ts=at(), attempt_id=a, call_id=call, status="ok", content="x"))
    cut = draw(st.integers(1, len(events)))
    if cut < len(events):
        events = events[:cut] + [
            CancelRequested(conversation_id=c, ts=at(), attempt_id=a, source="user", turn=1),
            Cancelled(conversation_id=c, ts=at(), attempt_id=a, source="user"),
            Persisted(conversation_id=c, ts=at(), attempt_id=a, message_id="m1", status="interrupted", text=""),
        ]
    else:
        events += [
            Done(conversation_id=c, ts=at(), attempt_id=a, request_id=rid, finish_reason="stop"),
            Persisted(conversation_id=c, ts=at(), attempt_id=a, message_id="m1", status="complete", text=""),
        ]
    return numbered(events)


@settings(max_examples=200, deadline=None)
@given(agent_turns())
def test_a_span_made_ready_early_is_made_once_and_is_the_same_span_in_its_attempt_s_whole_trace(
    events: list[AnyEvent],
) -> None:
    folder, early, finals = Traces(), dict[str, dict[int, SpanValue]](), list[AttemptTraceValue]()
    made_early: set[int] = set()
    for event in events:
        if (value := folder.add(event)) is None:
            continue
        if not value.final:
            sent = early.setdefault(value.attempt_id, {})
            for span in value.spans:
                assert span.span_id not in sent, "a span was made ready twice"
                sent[span.span_id] = span
                made_early.add(span.span_id)
            continue
        finals.append(value)
        whole = {span.span_id: span for span in value.spans}
        assert len(whole) == len(value.spans)
        for made in early.pop(value.attempt_id, {}).values():
            assert whole[made.span_id] == made
    assert len(finals) == 1 and finals == traces(events)  # the back-fill is the live fold
    ended = {e.request_id for e in events if isinstance(e, Failed)}
    ended |= {f"r{e.step}" for e in events if isinstance(e, StepFinished)}
    ended_calls = {e.call_id for e in events if isinstance(e, ToolResult)}
    assert {span_id("chat", r) for r in ended} | {span_id("tool", c) for c in ended_calls} <= made_early


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
