"""Regenerate races (lobehub #10076, #10075, #10508: the answer vanishes, an empty message is saved, later turns
disappear), as 50 randomized sequences of Retry, Stop and double-clicked Retry from two tabs (concurrent calls),
within milliseconds of each other, of the end, and of an error.

What must hold after every sequence: one new attempt per accepted Retry (each call returns its own attempt id, and
the answer is the last one's); every attempt ended once (the fixture checks the ledger); an attempt's text is a
prefix of the one request it made (never another's tokens); a complete attempt has text; a stopped one that had
shown text keeps it; the earlier turn is untouched and the next question is answered with a history the provider
accepts.
"""

from __future__ import annotations

import asyncio
import random

from engine.commands.engine import Engine
from ledger.decide import STILL_STREAMING, InputRejected
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.upstream import Behavior, ScriptedUpstream

SEQUENCES = 50
ACTIONS = ("retry", "retry", "double", "two_tabs", "stop", "stop_then_retry", "wait", "end")


def behavior(n: int, rng: random.Random) -> Behavior:
    text = " ".join(f"r{n}x{k}" for k in range(rng.randint(3, 40)))
    if rng.random() < 0.2:  # a lost connection after a few words: Retry within milliseconds of an error
        return Behavior(text=text, chunk_delay=0.002, drop_after=rng.randint(1, 3))
    return Behavior(text=text, chunk_delay=rng.choice((0.0005, 0.002, 0.005)))


async def retry(engine: Engine, cid: str, message_id: str) -> list[str]:
    """A Retry's new attempt id, or nothing when it was refused in a sentence (a press that lost the race to
    another one: the answer it would stop is the other press's new attempt)."""
    try:
        return [await engine.retry(cid, message_id)]
    except InputRejected as refused:
        assert str(refused) == STILL_STREAMING
        return []


async def act(engine: Engine, cid: str, message_id: str, action: str, rng: random.Random) -> list[str]:
    """Do one action; the attempt ids of the Retries it made that were accepted."""
    match action:
        case "retry":
            return await retry(engine, cid, message_id)
        case "double":  # a double click: the second press lands while the first is being handled
            both = await asyncio.gather(retry(engine, cid, message_id), retry(engine, cid, message_id))
            assert len(both[0] + both[1]) >= 1, "a double click made no attempt at all"
            return both[0] + both[1]
        case "two_tabs":  # Retry in one tab, Stop in the other, at once
            got = await asyncio.gather(retry(engine, cid, message_id), engine.cancel(cid, "user"))
            return got[0]
        case "stop":
            await engine.cancel(cid, "user")
        case "stop_then_retry":
            await engine.cancel(cid, "user")
            return await retry(engine, cid, message_id)
        case "wait":
            await asyncio.sleep(rng.choice((0.0, 0.005, 0.02, 0.05)))  # the gap between two presses
        case "end":
            await finished(engine, cid)
    return []


async def test_random_retry_stop_and_double_click_sequences_make_one_attempt_per_accepted_retry_and_lose_nothing(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    rng = random.Random(40)
    for sequence in range(SEQUENCES):
        cid = engine.create_conversation()
        upstream.reset()
        upstream.plan(Behavior(text="the earlier answer", chunk_delay=0.0005))
        _, first = await engine.submit(cid, "an earlier turn")
        await finished(engine, cid)
        earlier = current_attempt(engine, cid, first)
        plan = [behavior(n, rng) for n in range(60)]
        upstream.plan(*plan)
        _, message_id = await engine.submit(cid, f"sequence {sequence}")
        actions = [rng.choice(ACTIONS) for _ in range(rng.randint(2, 7))]
        accepted: list[str] = []
        for action in actions:
            accepted += await act(engine, cid, message_id, action, rng)
        await finished(engine, cid)

        conv = engine.conversation(cid)
        assert conv is not None
        message = conv.messages[message_id]
        said = f"sequence {sequence}: {actions}"
        assert len(set(accepted)) == len(accepted), said
        assert len(message.attempt_ids) == 1 + len(accepted), said
        if accepted:
            assert message.current_attempt_id == accepted[-1], said
        planned = [b.text or "" for b in plan]
        for attempt_id in message.attempt_ids:
            attempt = conv.attempts[attempt_id]
            assert not attempt.is_live, said
            assert any(text.startswith(attempt.text) for text in planned), f"{said}: mixed text {attempt.text!r}"
            if attempt.status == "complete":
                assert attempt.text, f"{said}: an empty complete answer"
            if attempt.status == "empty":
                assert attempt.chunks_rendered == 0, f"{said}: shown text lost"
        assert current_attempt(engine, cid, first) == earlier, f"{said}: the earlier turn changed"
        upstream.reset()
        await follow_up_is_accepted(engine, cid, upstream)
