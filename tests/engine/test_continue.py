"""Continue (``engine.commands.continuing``) against the scripted upstream through litellm: what the provider
receives, the
one answer the ledger's state makes of a prefix and its continuation, Stop and Retry on a continuation, refusals."""

from __future__ import annotations

import pytest

from engine.commands.engine import Engine, InputRejected
from engine.provider.request_view import requests_seen
from ledger.continuation import COMPLETE, joined, shown_text
from ledger.continuation_history import CONTINUE_INSTRUCTION
from ledger.decide import STILL_STREAMING
from ledger.folds.audit import audit
from ledger.state import AttemptState
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

WORDS = " ".join(f"w{n}" for n in range(200))
REST = " and that is the rest of the answer."


async def stopped_answer(engine: Engine, cid: str, upstream: ScriptedUpstream) -> tuple[str, AttemptState]:
    """A question whose answer the user stopped after a few chunks: (answer id, its interrupted attempt)."""
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    _, message_id = await engine.send(cid, "count for me")
    await wait_until(lambda: current_attempt(engine, cid, message_id).chunks_rendered >= 5)
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, message_id)
    assert attempt.status == "interrupted" and attempt.text
    return message_id, attempt


async def continued_to_the_end(engine: Engine, cid: str, message_id: str, upstream: ScriptedUpstream) -> str:
    """Continue the answer ``stopped_answer`` left with ``REST``, to its end: the continuation's attempt id."""
    upstream.plan(Behavior(text=REST))
    new_id = await engine.continue_answer(cid, message_id)
    await finished(engine, cid)
    return new_id


def the_answer(engine: Engine, cid: str, message_id: str) -> str:
    """The answer as the page shows it: its selected attempt, after the attempts it continues."""
    conv = engine.conversation(cid)
    assert conv is not None
    message = conv.messages[message_id]
    return shown_text(conv, conv.attempts[message.selected_attempt_id or ""])


def what_the_audit_says_was_sent(engine: Engine, cid: str, message_id: str) -> list[tuple[str, str]]:
    """The messages of the selected attempt's request, as the audit panel rebuilds them
    (``engine.provider.request_view``)."""
    attempt = current_attempt(engine, cid, message_id).attempt_id
    (request,) = requests_seen(engine.events(cid), attempt, lambda _p, _v: None, 20_000)
    return [(m.role, m.text) for m in request.messages]


async def test_continue_after_stop_sends_the_prefix_as_the_last_assistant_message_then_asks_to_go_on(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    message_id, stopped = await stopped_answer(engine, cid, upstream)
    new_id = await continued_to_the_end(engine, cid, message_id, upstream)

    assert upstream.last.messages == [
        {"role": "user", "content": "count for me"},
        {"role": "assistant", "content": stopped.text},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    continuation = current_attempt(engine, cid, message_id)
    assert (continuation.attempt_id, continuation.continues, continuation.trigger) == (
        new_id,
        stopped.attempt_id,
        "continue",
    )
    assert continuation.status == "complete" and continuation.text == REST, "its own text is what it streamed"
    assert the_answer(engine, cid, message_id) == joined(stopped.text, REST)
    assert what_the_audit_says_was_sent(engine, cid, message_id) == [
        (m["role"], m["content"]) for m in upstream.last.messages
    ]
    audited = {a.attempt_id: a for a in audit(engine.store.events(cid))}
    assert (audited[new_id].number, audited[new_id].phases[0].source) == (2, "continues attempt 1")

    sent = await follow_up_is_accepted(engine, cid, upstream)
    assistant = [m for m in sent if m["role"] == "assistant"]
    assert assistant == [{"role": "assistant", "content": joined(stopped.text, REST)}], "one answer, prefix once"


async def test_a_model_that_takes_a_prefill_gets_the_prefix_as_the_last_message_to_continue(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = "anthropic"
    engine = engines()
    cid = engine.create_conversation()
    message_id, stopped = await stopped_answer(engine, cid, upstream)
    await continued_to_the_end(engine, cid, message_id, upstream)
    assert upstream.last.dialect == "anthropic" and upstream.last.status in (None, 200)
    assert upstream.last.messages[-1] == {"role": "assistant", "content": stopped.text.rstrip()}
    assert CONTINUE_INSTRUCTION not in str(upstream.last.messages)
    assert the_answer(engine, cid, message_id) == joined(stopped.text, REST)
    assert what_the_audit_says_was_sent(engine, cid, message_id) == [
        (m["role"], m["content"]) for m in upstream.last.messages
    ]


async def test_stop_on_a_continuation_keeps_prefix_and_what_it_delivered_and_continue_is_offered_again(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    message_id, stopped = await stopped_answer(engine, cid, upstream)
    more = " ".join(f"x{n}" for n in range(200))
    upstream.plan(Behavior(text=more, chunk_delay=0.02))
    await engine.continue_answer(cid, message_id)
    await wait_until(lambda: current_attempt(engine, cid, message_id).chunks_rendered >= 3)
    assert await engine.cancel(cid, "user")
    second = current_attempt(engine, cid, message_id)
    assert second.status == "interrupted" and more.startswith(second.text)
    shown = joined(stopped.text, second.text)
    assert the_answer(engine, cid, message_id) == shown

    upstream.plan(Behavior(text=REST))
    await engine.continue_answer(cid, message_id)
    await finished(engine, cid)
    assert upstream.last.messages[-2:] == [
        {"role": "assistant", "content": shown},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    third = current_attempt(engine, cid, message_id)
    assert third.continues == second.attempt_id
    assert the_answer(engine, cid, message_id) == joined(shown, REST)


async def test_retry_on_a_continued_answer_starts_a_fresh_whole_answer_and_keeps_the_continued_one(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    message_id, stopped = await stopped_answer(engine, cid, upstream)
    continued = await continued_to_the_end(engine, cid, message_id, upstream)
    upstream.plan(Behavior(text="A fresh answer."))
    fresh = await engine.retry(cid, message_id)
    await finished(engine, cid)
    assert upstream.last.messages == [{"role": "user", "content": "count for me"}], "no old token is sent"
    conv = engine.conversation(cid)
    assert conv is not None
    message = conv.messages[message_id]
    assert message.attempt_ids == (stopped.attempt_id, continued, fresh) and message.selected_attempt_id == fresh
    assert conv.attempts[fresh].continues is None
    assert the_answer(engine, cid, message_id) == "A fresh answer."
    engine.select_attempt(cid, message_id, continued)  # the continued answer is still there, whole
    assert the_answer(engine, cid, message_id) == joined(stopped.text, REST)


async def test_continue_is_refused_with_a_sentence_for_a_complete_or_a_streaming_answer(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="All done."))
    _, done_id = await engine.send(cid, "hi")
    await finished(engine, cid)
    before = len(engine.store.events(cid))
    with pytest.raises(InputRejected, match="complete") as refused:
        await engine.continue_answer(cid, done_id)
    assert str(refused.value) == COMPLETE

    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    _, live_id = await engine.send(cid, "count")
    await wait_until(lambda: current_attempt(engine, cid, live_id).chunks_rendered >= 1)
    with pytest.raises(InputRejected) as refused:
        await engine.continue_answer(cid, live_id)
    assert str(refused.value) == STILL_STREAMING
    assert [e.KIND for e in engine.store.events(cid)[before:]].count("started") == 1, "nothing was started"
    await engine.cancel(cid, "user")


async def test_a_branch_from_a_continued_answer_carries_the_whole_answer_into_the_new_chat(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    message_id, stopped = await stopped_answer(engine, cid, upstream)
    await continued_to_the_end(engine, cid, message_id, upstream)
    new_cid, _ = engine.branch(cid, message_id)
    assert the_answer(engine, new_cid, message_id) == joined(stopped.text, REST)
    sent = await follow_up_is_accepted(engine, new_cid, upstream)
    assert [m for m in sent if m["role"] == "assistant"] == [
        {"role": "assistant", "content": joined(stopped.text, REST)}
    ]


async def test_an_answer_cut_at_the_length_limit_is_continued_from_its_whole_text(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="A long answer that the limit cut", cut=True))
    _, message_id = await engine.send(cid, "tell me everything")
    await finished(engine, cid)
    cut = current_attempt(engine, cid, message_id)
    assert (cut.status, cut.finish_reason) == ("complete", "length")
    upstream.plan(Behavior(text=" short."))
    await engine.continue_answer(cid, message_id)
    await finished(engine, cid)
    assert upstream.last.messages[-2:] == [
        {"role": "assistant", "content": "A long answer that the limit cut"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    assert the_answer(engine, cid, message_id) == "A long answer that the limit cut short."
    with pytest.raises(InputRejected, match="complete"):  # it ended by itself this time
        await engine.continue_answer(cid, message_id)
