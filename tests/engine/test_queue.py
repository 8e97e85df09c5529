"""Messages queued while an answer streams, against the scripted upstream through litellm (it records every
request): sent once as the next turn after a complete answer; paused by Stop, a failure and a restart; kept by
Retry; edited and removed before they are sent; never sent twice, however many ask."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.commands.engine import Engine, InputRejected
from ledger.events.core import Submitted
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

WORDS = " ".join(f"w{n}" for n in range(60))


def sent_from_queue(engine: Engine, cid: str) -> list[str]:
    """The queue ids of the submitted messages that sent a queued one, in the ledger's order."""
    return [e.queue_id for e in engine.store.events(cid) if isinstance(e, Submitted) and e.queue_id is not None]


async def streaming_answer(engine: Engine, upstream: ScriptedUpstream, *later: Behavior) -> tuple[str, str]:
    """A chat whose first answer (WORDS, slowly) is streaming; ``later`` answer the next requests."""
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02), *later)
    _, m1 = await engine.submit(cid, "first question")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    return cid, m1


async def test_a_message_queued_during_a_stream_is_sent_once_after_the_full_answer(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid, m1 = await streaming_answer(engine, upstream, Behavior(text="second answer"))
    queue_id = await engine.queued.add(cid, "and a follow-up")
    assert queue_id is not None and [i.text for i in engine.conversation(cid).queue] == ["and a follow-up"]
    assert len(upstream.records) == 1, "a queued message waits for the answer"
    await wait_until(lambda: len(upstream.records) == 2 and not engine.is_streaming(cid))
    first, second = upstream.records
    assert first.finished and current_attempt(engine, cid, m1).text == WORDS, "sent before the answer completed"
    assert second.messages == [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": WORDS},
        {"role": "user", "content": "and a follow-up"},
    ]
    await nothing_more_for(0.4)
    assert len(upstream.records) == 2 and sent_from_queue(engine, cid) == [queue_id]
    assert engine.conversation(cid).queue == ()


async def test_several_queued_messages_go_in_order_one_turn_each_and_edits_and_removals_count(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid, _ = await streaming_answer(engine, upstream, Behavior(text="answer two"), Behavior(text="answer three"))
    one = await engine.queued.add(cid, "second, as typed")
    two = await engine.queued.add(cid, "a message I change my mind about")
    three = await engine.queued.add(cid, "third")
    assert one and two and three
    await engine.queued.edit(cid, one, "second, corrected")
    await engine.queued.remove(cid, two)
    await wait_until(lambda: len(upstream.records) == 3 and not engine.is_streaming(cid))
    assert [r.messages[-1]["content"] for r in upstream.records] == ["first question", "second, corrected", "third"]
    assert upstream.records[2].messages[-2] == {"role": "assistant", "content": "answer two"}
    await nothing_more_for(0.3)
    assert len(upstream.records) == 3 and sent_from_queue(engine, cid) == [one, three]


async def test_stop_pauses_the_queue_and_send_now_sends_it_after_the_stopped_prefix(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid, m1 = await streaming_answer(engine, upstream, Behavior(text="answer to the queued one"))
    queue_id = await engine.queued.add(cid, "queued before Stop")
    assert queue_id is not None
    assert await engine.cancel(cid, "user")
    await nothing_more_for(0.4)
    conv = engine.conversation(cid)
    assert len(upstream.records) == 1 and conv.queue_paused == "stopped" and len(conv.queue) == 1
    await engine.queued.edit(cid, queue_id, "queued before Stop, edited while paused")
    await engine.queued.send_now(cid, queue_id)
    await wait_until(lambda: len(upstream.records) == 2 and not engine.is_streaming(cid))
    prefix = current_attempt(engine, cid, m1).text
    assert prefix and WORDS.startswith(prefix) and prefix != WORDS
    assert upstream.records[1].messages[1:] == [
        {"role": "assistant", "content": prefix},
        {"role": "user", "content": "queued before Stop, edited while paused"},
    ]
    assert engine.conversation(cid).queue == () and engine.conversation(cid).queue_paused is None


async def test_retry_of_the_running_answer_keeps_the_queue_for_after_the_retried_answer(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid, m1 = await streaming_answer(
        engine, upstream, Behavior(text="the retried answer"), Behavior(text="the queued one's answer")
    )
    queue_id = await engine.queued.add(cid, "after the retry")
    await engine.retry(cid)
    await wait_until(lambda: len(upstream.records) == 3 and not engine.is_streaming(cid))
    assert upstream.records[1].messages == [{"role": "user", "content": "first question"}]
    assert upstream.records[2].messages[1:] == [
        {"role": "assistant", "content": "the retried answer"},
        {"role": "user", "content": "after the retry"},
    ]
    assert current_attempt(engine, cid, m1).text == "the retried answer"
    assert sent_from_queue(engine, cid) == [queue_id]


async def test_two_concurrent_send_now_calls_send_the_queued_message_once(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid, _ = await streaming_answer(engine, upstream, Behavior(text="only once"), Behavior(text="never"))
    queue_id = await engine.queued.add(cid, "press me twice")
    assert queue_id is not None
    await engine.cancel(cid, "user")
    results = await asyncio.gather(
        engine.queued.send_now(cid, queue_id), engine.queued.send_now(cid, queue_id), return_exceptions=True
    )
    refused = [r for r in results if isinstance(r, InputRejected)]
    assert len(refused) == 1 and "no longer queued" in str(refused[0]), results
    await wait_until(lambda: len(upstream.records) == 2 and not engine.is_streaming(cid))
    await nothing_more_for(0.4)
    assert len(upstream.records) == 2 and sent_from_queue(engine, cid) == [queue_id]
    assert [m["content"] for m in upstream.records[1].messages].count("press me twice") == 1


async def test_a_failed_answer_pauses_the_queue_and_says_why(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02, drop_after=10), Behavior(text="after the failure"))
    _, m1 = await engine.submit(cid, "first question")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    queue_id = await engine.queued.add(cid, "waits for the person")
    await wait_until(lambda: not engine.is_streaming(cid))
    await nothing_more_for(0.4)
    conv = engine.conversation(cid)
    assert current_attempt(engine, cid, m1).status == "failed"
    assert len(upstream.records) == 1 and conv.queue_paused == "failed" and conv.queue[0].queue_id == queue_id


async def test_after_a_restart_the_queue_is_still_there_paused_and_sent_only_by_send_now(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    data = tmp_path / "restart"
    engine = engines(data)
    cid, _ = await streaming_answer(engine, upstream, Behavior(text="sent by the person"))
    queue_id = await engine.queued.add(cid, "queued before the restart")
    await engine.shutdown()
    engine.store.close()
    again = engines(data)
    again.recover()
    conv = again.conversation(cid)
    assert conv is not None and [i.queue_id for i in conv.queue] == [queue_id] and conv.queue_paused == "restart"
    await nothing_more_for(0.4)
    assert len(upstream.records) == 1, "a restart never sends a queued message by itself"
    assert queue_id is not None
    await again.queued.send_now(cid, queue_id)
    await wait_until(lambda: len(upstream.records) == 2 and not again.is_streaming(cid))
    assert upstream.records[1].messages[-1] == {"role": "user", "content": "queued before the restart"}


async def test_queueing_is_refused_when_nothing_runs_and_deleting_the_chat_drops_its_queue(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    idle = engine.create_conversation()
    assert await engine.queued.add(idle, "nothing runs") is None, "the caller sends it instead"
    cid, _ = await streaming_answer(engine, upstream, Behavior(text="never asked"))
    await engine.queued.add(cid, "dropped with the chat")
    await engine.delete(cid)
    await nothing_more_for(0.4)
    assert engine.conversation(cid) is None and len(upstream.records) == 1


async def test_the_files_of_a_queued_message_outlive_the_deletion_of_another_chat_that_sent_them(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    notes = await engine.files.accept("notes.txt", b"the same notes in two chats\n")
    other = engine.create_conversation()
    upstream.plan(Behavior(text="read them"))
    await engine.send(other, "read these", attachments=(notes,))
    await wait_until(lambda: not engine.is_streaming(other))
    cid, _ = await streaming_answer(engine, upstream, Behavior(text="read them again"))
    queue_id = await engine.queued.add(cid, "and these, once more", attachments=(notes,))
    await engine.delete(other)
    assert engine.files.read(notes.sha256) is not None, "a queued message's file was deleted with another chat"
    await wait_until(lambda: len(upstream.records) == 3 and not engine.is_streaming(cid))
    assert sent_from_queue(engine, cid) == [queue_id]
    assert "the same notes in two chats" in str(upstream.records[2].messages[-1]["content"])


async def test_the_queue_belongs_to_the_chat_a_branch_does_not_copy_it_and_an_edit_leaves_it_paused(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid, m1 = await streaming_answer(engine, upstream, Behavior(text="answer to the edit"))
    queue_id = await engine.queued.add(cid, "stays in this chat")
    await engine.cancel(cid, "user")
    branch, _ = engine.branch(cid, m1)
    assert engine.conversation(branch).queue == (), "a branch copied the queue"
    user_id = engine.conversation(cid).messages[m1].user_message_id
    assert user_id is not None
    await engine.edit(cid, user_id, "first question, edited")
    await wait_until(lambda: not engine.is_streaming(cid))
    await nothing_more_for(0.4)
    conv = engine.conversation(cid)
    assert [i.queue_id for i in conv.queue] == [queue_id] and conv.queue_paused == "stopped"
    assert len(upstream.records) == 2, "an edit's answer completing sent the paused queue"
