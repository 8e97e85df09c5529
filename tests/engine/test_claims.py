"""Claim before start, and an owner that loses its claim stops: the engine with a ``Peers`` that refuses claims,
and a running attempt whose claim is lost (``Engine.lost``), over real TinyDB files and the real test upstream."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.attempts.peers import Alone
from engine.commands.engine import Engine, InputRejected
from engine.offline import ready
from engine.stamps import attempt_ids
from ledger.events import Persisted, Recovered
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

WORDS = " ".join(f"w{n}" for n in range(400))


class Refusing(Alone):
    """Another instance owns every new attempt (or the database cannot be reached)."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.refusing = True  # until the other instance (or the database) lets go

    async def claim(self, cid: str, attempt_id: str) -> None:
        self.asked.append(attempt_id)
        if self.refusing:
            raise InputRejected("The answer could not be started: this instance could not become its owner.")


async def test_a_refused_claim_starts_nothing_appends_nothing_and_calls_no_model(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    peers = Refusing()
    engine = engines(peers=peers)
    cid = engine.create_conversation()
    with pytest.raises(InputRejected, match="could not become its owner"):
        await engine.submit(cid, "hello")
    assert [e.KIND for e in engine.events(cid)] == ["created"]
    assert len(peers.asked) == 1 and not engine.streaming_here()
    await nothing_more_for(0.3)
    assert not upstream.records, "nothing goes to the model without an owner claim"
    peers.refusing = False  # the claim works again: the same text is sent and answered
    upstream.plan(Behavior(text="fine"))
    _, answer = await engine.submit(cid, "hello")
    await wait_until(lambda: current_attempt(engine, cid, answer).status == "complete")


async def test_an_owner_that_loses_its_claim_stops_at_once_closes_the_stream_and_writes_no_end(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    await ready()
    factory = EngineFactory(tmp_path, upstream)  # the end is another instance's: this ledger has none
    try:
        engine: Engine = factory()
        cid = engine.create_conversation()
        upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
        _, answer = await engine.submit(cid, "count")
        await wait_until(lambda: current_attempt(engine, cid, answer).chunks_rendered >= 3, what="streaming")
        attempt_id = current_attempt(engine, cid, answer).attempt_id
        engine.lost(cid, [attempt_id])
        assert not engine.is_running_here(cid), "the worker is gone at once"
        record = upstream.records[-1]
        await wait_until(lambda: record.disconnected_at is not None, 3, "the upstream closed")
        written = len(engine.events(cid))
        await nothing_more_for(0.5)
        kinds = [e.KIND for e in engine.events(cid)]
        assert len(kinds) == written, "nothing is written after the claim was lost"
        assert not {"cancel_requested", "cancelled", "done", "failed", "persisted", "upstream_closed"} & set(kinds)
        assert len(upstream.records) == 1, "no further model call"
        assert not await engine.cancel(cid, "user"), "a lost attempt has no owner here to cancel it"
    finally:
        await factory.close()


async def test_an_end_another_instance_wrote_while_this_owner_stalled_is_the_attempts_last_event(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    """Run 29 (`tests/cluster/test_pg_faults.py`, an owner frozen past its lease): the resumed owner read the
    survivor's end before it heard that its claim was gone, and recorded the chunks still arriving as stale ones
    after that end. Here the survivor's end (``recovered`` + ``persisted``) is read in while the owner streams, and
    the stream then runs to its own end: neither a chunk nor a second end is written after the survivor's."""
    await ready()
    factory = EngineFactory(tmp_path, upstream)
    try:
        engine: Engine = factory()
        cid = engine.create_conversation()
        upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
        _, answer = await engine.submit(cid, "count")
        await wait_until(lambda: current_attempt(engine, cid, answer).chunks_rendered >= 3, what="streaming")
        attempt = current_attempt(engine, cid, answer)
        ids = attempt_ids(cid, attempt.attempt_id)
        engine.read.append(Recovered(**ids))  # as the other instance's sweeper wrote them
        text = current_attempt(engine, cid, answer).text
        engine.read.append(Persisted(**ids, message_id=answer, status="interrupted", text=text))
        ended = len(engine.events(cid))
        await wait_until(lambda: upstream.records[-1].finished, 30, "the stream to run to its end")
        await wait_until(lambda: not engine.is_running_here(cid), what="the worker to end by itself")
        assert [e.KIND for e in engine.events(cid)[ended - 1 :]] == ["persisted"], "nothing after the end"
        assert current_attempt(engine, cid, answer).text == text, "the survivor's text stands"
    finally:
        await factory.close()
