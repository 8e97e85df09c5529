"""Shared builders for ledger tests: realistic event sequences with stamped ids, seqs and timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ledger.events import AnyEvent, Chunk, Created, Done, Persisted, RequestSent, Started, Submitted, TurnMetrics

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def ts(ms: float) -> str:
    return (T0 + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds")


def answer_events(conversation_id: str, turn: int, chunks: int, *, start_ms: float = 0) -> list[AnyEvent]:
    """One complete turn: submitted, started, request_sent, `chunks` chunks, done, persisted."""
    user, msg, att, req = f"u{turn}", f"m{turn}", f"a{turn}", f"r{turn}"
    c = conversation_id
    events: list[AnyEvent] = [
        Submitted(conversation_id=c, ts=ts(start_ms), message_id=user, turn=turn, text=f"question {turn}"),
        Started(
            conversation_id=c,
            ts=ts(start_ms),
            attempt_id=att,
            message_id=msg,
            user_message_id=user,
            turn=turn,
            model="demo",
        ),
        RequestSent(conversation_id=c, ts=ts(start_ms + 1), attempt_id=att, request_id=req, model="demo"),
    ]
    events += [
        Chunk(
            conversation_id=c,
            ts=ts(start_ms + 100 + 30 * n),
            attempt_id=att,
            request_id=req,
            chunk_seq=n,
            text=f"word{n} ",
        )
        for n in range(chunks)
    ]
    end = start_ms + 100 + 30 * chunks
    events += [
        Done(conversation_id=c, ts=ts(end), attempt_id=att, request_id=req, finish_reason="stop"),
        Persisted(
            conversation_id=c,
            ts=ts(end),
            attempt_id=att,
            message_id=msg,
            status="complete",
            text="".join(f"word{n} " for n in range(chunks)),
            metrics=TurnMetrics(output_tokens=chunks),
        ),
    ]
    return events


def conversation_events(conversation_id: str, answers: int, chunks: int) -> list[AnyEvent]:
    events: list[AnyEvent] = [Created(conversation_id=conversation_id, ts=ts(0), title=f"chat {conversation_id}")]
    for turn in range(1, answers + 1):
        events += answer_events(conversation_id, turn, chunks, start_ms=turn * 10_000)
    return events
