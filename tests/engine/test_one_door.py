"""One door in, one door out (``engine.attempts``): every way an attempt starts shows the same start sequence in the
ledger (claimed first, then the event that asked for it, if any, then ``started``), and every end runs the
after-end reactions once each, in their declared order; a reaction that raises is reported and neither stops the
others nor leaves the chat busy. Real engine, real TinyDB files, the real scripted upstream over HTTP."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from engine.attempts import Attempts, Ended, Policy
from engine.attempts.peers import Alone
from engine.commands.engine import Engine
from engine.policies import Declared
from ledger.events.core import AnyEvent, Persisted, Retrying, Started, Submitted
from ledger.events.title import Titled
from tests.support.engine import EngineFactory, current_attempt, finished
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

DECLARED = ["AfterCompaction", "SendQueued", "Titles", "DropUnwatched"]
SLOW = " ".join(f"w{n}" for n in range(300))


@dataclass
class Claims(Alone):
    """Another instance's view of claims: every attempt claimed, with how many events its chat had at that moment."""

    count: Callable[[str], int] = lambda cid: 0
    at_claim: dict[str, int] = field(default_factory=dict)

    async def claim(self, cid: str, attempt_id: str) -> None:
        self.at_claim[attempt_id] = self.count(cid)


@dataclass
class Tap:
    """A declared reaction, run as it is, its turn written down."""

    inner: Policy
    seen: list[tuple[str, str]]

    def ended(self, end: Ended, door: Attempts) -> None:
        self.seen.append((end.attempt_id, type(self.inner).__name__))
        self.inner.ended(end, door)


class Broken:
    """A reaction with a bug: it raises on every end."""

    def ended(self, end: Ended, door: Attempts) -> None:
        raise RuntimeError("a reaction with a bug")


def started_by(engine: Engine, cid: str, claims: Claims) -> dict[str, list[AnyEvent]]:
    """Per attempt claimed: the events appended from its claim up to and including its ``started``."""
    events, found = engine.events(cid), {}
    for attempt_id, at in claims.at_claim.items():
        upto = next(i for i, e in enumerate(events) if isinstance(e, Started) and e.attempt_id == attempt_id)
        found[attempt_id] = list(events[at : upto + 1])
    return found


async def test_every_start_path_claims_first_then_asks_then_starts_and_every_end_runs_the_reactions_in_order(
    engines: EngineFactory, upstream: ScriptedUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    claims, seen = Claims(), list[tuple[str, str]]()

    def order(declared: Declared) -> tuple[Policy, ...]:
        return (Broken(), *(Tap(p, seen) for p in declared))

    engine = engines(peers=claims, order=order, titles=True)
    claims.count = lambda cid: len(engine.events(cid))
    cid = engine.create_conversation()

    upstream.plan(Behavior(text="An answer."), Behavior(text="Caching in Python"))  # Send, then its title
    user_id, _ = await engine.send(cid, "Tell me about caching")
    await wait_until(lambda: any(isinstance(e, Titled) for e in engine.events(cid)), 20, "the title")
    await engine.edit(cid, user_id, "Tell me about caching, briefly")  # Edit
    await finished(engine, cid)
    await engine.retry(cid)  # Retry
    await finished(engine, cid)
    upstream.plan(Behavior(text=SLOW, chunk_delay=0.01))
    await engine.send(cid, "a long one")
    assert await engine.queued.add(cid, "queued while it streams") is not None  # a queued message, sent by itself
    await wait_until(lambda: any(isinstance(e, Submitted) and e.queue_id for e in engine.events(cid)), 20)
    await finished(engine, cid)
    upstream.plan(Behavior(text=SLOW, chunk_delay=0.02))
    _, cut = await engine.send(cid, "another long one")
    await wait_until(lambda: current_attempt(engine, cid, cut).chunks_rendered >= 3, 20)
    assert await engine.cancel(cid, "user")
    await engine.continue_answer(cid, cut)  # Continue
    await finished(engine, cid)
    await engine.compact(cid)  # a compaction
    await wait_until(lambda: not engine.is_running_here(cid), 20, "the compaction's end")

    starts = started_by(engine, cid, claims)
    shapes = []
    for events in starts.values():
        *asked, started = events
        assert isinstance(started, Started)
        shapes.append(([type(e).__name__ for e in asked], started.purpose, started.continues is not None))
        if asked and isinstance(asked[0], Submitted):
            assert asked[0].message_id == started.user_message_id, "the message asking is the one answered"
        if asked and isinstance(asked[0], Retrying):
            assert asked[0].attempt_id == started.attempt_id
    queued = [e for e in engine.events(cid) if isinstance(e, Submitted) and e.queue_id]
    assert shapes == [
        (["Submitted"], "answer", False),  # Send: nothing before the claim is this attempt's
        ([], "title", False),
        (["Submitted"], "answer", False),  # Edit
        (["Retrying"], "answer", False),  # Retry
        (["Submitted"], "answer", False),  # the long one
        (["Submitted"], "answer", False),  # the queued one
        (["Submitted"], "answer", False),  # the one cut short
        ([], "answer", True),  # Continue
        ([], "compaction", False),  # Compact
    ]
    assert len(queued) == 1 and starts[list(starts)[5]][0] == queued[0]

    ended = [e.attempt_id for e in engine.events(cid) if isinstance(e, Persisted)]
    assert sorted(ended) == sorted(starts), "every attempt ended once"
    for attempt_id in ended:
        assert [name for aid, name in seen if aid == attempt_id] == DECLARED, "each reaction once, in order"
    broken = [r for r in caplog.records if r.levelno == logging.ERROR and "Broken failed" in r.getMessage()]
    assert len(broken) == len(ended), "the broken reaction is reported at every end"
    assert not engine.is_streaming(cid) and not engine.streaming_here(), "nothing is left busy"
    upstream.plan(Behavior(text="still fine"))
    _, last = await engine.send(cid, "and after all that?")
    await finished(engine, cid)
    assert current_attempt(engine, cid, last).status == "complete"
