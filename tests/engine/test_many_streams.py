"""Many streams at once, each with a backlog of buffered chunks (the loop kept busy, as on a busy machine): the
loop's share for reading (``engine.turns.loop_share``) changes when chunks are read, never what is recorded, and a Stop
is decided in the caller's own step (``AttemptWorker.cancel``), whatever the streams have waiting."""

from __future__ import annotations

import asyncio
import time

from engine.commands.engine import Engine
from ledger.events.core import Chunk, StaleChunk
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

STREAMS = 40
TEXT = " ".join(f"w{n}" for n in range(3000))


def keep_the_loop_busy(seconds: float) -> None:
    """The event loop held, as a busy machine holds it (not a wait): meanwhile every upstream keeps sending, so
    every stream has a backlog of chunks buffered when the loop runs again."""
    time.sleep(seconds)


async def streams_with_a_backlog(engine: Engine, upstream: ScriptedUpstream) -> list[tuple[str, str]]:
    """``STREAMS`` conversations streaming ``TEXT`` 2 ms a word, each past its third chunk, then a held loop."""
    cids = [engine.create_conversation() for _ in range(STREAMS)]
    upstream.plan(*[Behavior(text=TEXT, chunk_delay=0.002) for _ in cids])
    sent = await asyncio.gather(*(engine.submit(cid, f"question {n}") for n, cid in enumerate(cids)))
    pairs = [(cid, m) for cid, (_, m) in zip(cids, sent, strict=True)]
    await wait_until(lambda: all(current_attempt(engine, c, m).chunks_rendered >= 3 for c, m in pairs), timeout=30)
    keep_the_loop_busy(0.3)
    return pairs


async def test_forty_streams_with_a_backlog_stopped_at_once_keep_exactly_what_each_rendered(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    pairs = await streams_with_a_backlog(engine, upstream)
    assert all(await asyncio.gather(*(engine.cancel(cid, "user") for cid, _ in pairs)))
    for cid, message_id in pairs:
        attempt, events = current_attempt(engine, cid, message_id), engine.store.events(cid)
        rendered = [e for e in events if isinstance(e, Chunk)]
        stale = [e for e in events if isinstance(e, StaleChunk)]
        asked = next(e.seq for e in events if e.KIND == "cancel_requested")
        persisted = [e for e in events if e.KIND == "persisted"][-1]
        assert attempt.status == "interrupted" and persisted.status == "interrupted"
        assert attempt.chunks_received == attempt.chunks_rendered + attempt.stale_chunks == len(rendered) + len(stale)
        assert attempt.chunks_rendered == len(rendered) >= 3
        assert sorted(e.chunk_seq for e in [*rendered, *stale]) == list(range(len(rendered) + len(stale)))
        assert all(c.seq < asked for c in rendered), "a chunk was rendered after the Stop was recorded"
        assert persisted.text == attempt.text == "".join(c.text for c in rendered)
        assert TEXT.startswith(persisted.text) and len(persisted.text) < len(TEXT)
    records = upstream.records[-STREAMS:]
    await wait_until(lambda: all(r.closed_at is not None and not r.finished for r in records), timeout=10)


async def test_a_stop_among_forty_streams_with_a_backlog_is_recorded_before_the_loop_runs_anything_else(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    pairs = await streams_with_a_backlog(engine, upstream)
    cid, message_id = pairs[len(pairs) // 2]
    stop = asyncio.ensure_future(engine.cancel(cid, "user"))
    await asyncio.sleep(0)  # one turn of the loop: the Stop ran its first step, the streams read their share
    assert [e.KIND for e in engine.store.events(cid)].count("cancel_requested") == 1
    assert current_attempt(engine, cid, message_id).status == "closing"
    assert await stop
    assert current_attempt(engine, cid, message_id).status == "interrupted"
    assert all(current_attempt(engine, c, m).status == "streaming" for c, m in pairs if c != cid)
    assert all(await asyncio.gather(*(engine.cancel(c, "user") for c, _ in pairs if c != cid)))
