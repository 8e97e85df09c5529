"""The one ledger builder of the tests and the benches: realistic event sequences with stamped ids, seqs and times.

``turn_events`` writes one complete turn from its texts and its pace; ``answer_events`` and ``conversation_events``
are the tests' regular turns (``word0 word1 …`` answers, ``TEST_PACE``), and ``bench.make_chats`` builds its
random turns with ``turn_events`` too (its own texts and pace), so both write the turns a real answer writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ledger.events.core import AnyEvent, Chunk, Created, Done, Persisted, RequestSent, Started, Submitted, TurnMetrics

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


@dataclass(frozen=True, kw_only=True, slots=True)
class Pace:
    """When a turn's events happen, in milliseconds after its question: the request, the first chunk, each next one
    (the answer ends one ``chunk_ms`` after its last chunk)."""

    request_ms: float
    first_chunk_ms: float
    chunk_ms: float


TEST_PACE = Pace(request_ms=1, first_chunk_ms=100, chunk_ms=30)


def stamp(at: datetime) -> str:
    """A timestamp as the engine writes it (``engine.stamps.now_iso``): ISO 8601 with milliseconds."""
    return at.isoformat(timespec="milliseconds")


def ts(ms: float) -> str:
    return stamp(T0 + timedelta(milliseconds=ms))


def turn_events(
    conversation_id: str, turn: int, texts: Sequence[str], *, at: datetime, question: str, pace: Pace
) -> list[AnyEvent]:
    """One complete turn asked at ``at``: submitted, started, request_sent, a chunk per text, done, persisted (ids
    ``u``/``m``/``a``/``r`` and the turn's number; seqs are left to the store)."""
    user, msg, att, req = f"u{turn}", f"m{turn}", f"a{turn}", f"r{turn}"
    c, asked = conversation_id, stamp(at)
    events: list[AnyEvent] = [
        Submitted(conversation_id=c, ts=asked, message_id=user, turn=turn, text=question),
        Started(
            conversation_id=c,
            ts=asked,
            attempt_id=att,
            message_id=msg,
            user_message_id=user,
            turn=turn,
            model="demo",
        ),
        RequestSent(
            conversation_id=c,
            ts=stamp(at + timedelta(milliseconds=pace.request_ms)),
            attempt_id=att,
            request_id=req,
            model="demo",
        ),
    ]
    events += [
        Chunk(
            conversation_id=c,
            ts=stamp(at + timedelta(milliseconds=pace.first_chunk_ms + pace.chunk_ms * n)),
            attempt_id=att,
            request_id=req,
            chunk_seq=n,
            text=text,
        )
        for n, text in enumerate(texts)
    ]
    end = stamp(at + timedelta(milliseconds=pace.first_chunk_ms + pace.chunk_ms * len(texts)))
    events += [
        Done(conversation_id=c, ts=end, attempt_id=att, request_id=req, finish_reason="stop"),
        Persisted(
            conversation_id=c,
            ts=end,
            attempt_id=att,
            message_id=msg,
            status="complete",
            text="".join(texts),
            metrics=TurnMetrics(output_tokens=len(texts)),
        ),
    ]
    return events


def answer_events(conversation_id: str, turn: int, chunks: int, *, start_ms: float = 0) -> list[AnyEvent]:
    """One complete turn: submitted, started, request_sent, `chunks` chunks, done, persisted."""
    texts = [f"word{n} " for n in range(chunks)]
    at = T0 + timedelta(milliseconds=start_ms)
    return turn_events(conversation_id, turn, texts, at=at, question=f"question {turn}", pace=TEST_PACE)


def conversation_events(conversation_id: str, answers: int, chunks: int) -> list[AnyEvent]:
    events: list[AnyEvent] = [Created(conversation_id=conversation_id, ts=ts(0), title=f"chat {conversation_id}")]
    for turn in range(1, answers + 1):
        events += answer_events(conversation_id, turn, chunks, start_ms=turn * 10_000)
    return events
