"""Edit, regenerate anywhere and branch to a new chat, through litellm against the scripted upstream, on real
ledger files: what the next request sends is the shown branch, with what the user saw."""

from __future__ import annotations

from engine.commands.engine import Engine
from ledger.reducer import replay
from ledger.tree import selected_path
from tests.support.engine import EngineFactory, current_attempt
from tests.support.ledger_builders import conversation_events
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

WORDS = " ".join(f"w{n}" for n in range(300))


async def answered(engine: Engine, cid: str, text: str, upstream: ScriptedUpstream, reply: str) -> tuple[str, str]:
    upstream.plan(Behavior(text=reply, chunk_delay=0.0))
    ids = await engine.submit(cid, text)
    await wait_until(lambda: not engine.is_streaming(cid), 10, "the answer")
    return ids


def shown_texts(engine: Engine, cid: str) -> list[str]:
    conv = engine.conversation(cid)
    assert conv is not None
    out = []
    for message_id in selected_path(conv):
        message = conv.messages[message_id]
        out.append(message.text if message.role == "user" else conv.attempts[message.selected_attempt_id or ""].text)
    return out


async def test_branching_from_a_stopped_answer_carries_the_stopped_prefix_into_the_new_chat(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    _, m1 = await engine.submit(cid, "count for me")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 5)
    await engine.cancel(cid, "user")
    stopped = current_attempt(engine, cid, m1).text
    new_cid, draft = engine.branch(cid, m1)
    assert draft is None and engine.conversation(new_cid) is not None
    assert engine.conversation(cid).messages[m1].branches == (new_cid,)
    assert engine.conversation(new_cid).branched_from == (cid, m1)
    await answered(engine, new_cid, "expand on point 2", upstream, "sure")
    assert upstream.last.messages == [
        {"role": "user", "content": "count for me"},
        {"role": "assistant", "content": stopped},
        {"role": "user", "content": "expand on point 2"},
    ]
    copied = replay(engine.events(new_cid)).conversations[new_cid]
    assert copied == engine.conversation(new_cid)


async def test_editing_message_two_of_four_sends_one_and_the_edit_and_the_old_branch_stays_intact(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    users = [(await answered(engine, cid, f"q{n}", upstream, f"a{n}"))[0] for n in range(1, 5)]
    upstream.plan(Behavior(text="a2 edited", chunk_delay=0.0))
    new_user, _ = await engine.edit(cid, users[1], "q2, but better")
    await wait_until(lambda: not engine.is_streaming(cid))
    assert upstream.last.messages == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2, but better"},
    ]
    assert shown_texts(engine, cid) == ["q1", "a1", "q2, but better", "a2 edited"]
    engine.select_version(cid, users[1])
    assert shown_texts(engine, cid) == ["q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4"]
    engine.select_version(cid, new_user)
    await answered(engine, cid, "q3 on the edit", upstream, "fine")
    assert [m["content"] for m in upstream.last.messages] == [
        "q1",
        "a1",
        "q2, but better",
        "a2 edited",
        "q3 on the edit",
    ]


async def test_retrying_a_middle_answer_starts_a_branch_and_the_later_turns_stay_with_the_old_attempt(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    await answered(engine, cid, "q1", upstream, "a1")
    _, m2 = await answered(engine, cid, "q2", upstream, "a2")
    await answered(engine, cid, "q3", upstream, "a3")
    upstream.plan(Behavior(text="a2 again", chunk_delay=0.0))
    await engine.retry(cid, m2)
    await wait_until(lambda: not engine.is_streaming(cid))
    assert [m["content"] for m in upstream.last.messages] == ["q1", "a1", "q2"]
    assert shown_texts(engine, cid) == ["q1", "a1", "q2", "a2 again"]
    first = engine.conversation(cid).messages[m2].attempt_ids[0]
    engine.select_attempt(cid, m2, first)
    assert shown_texts(engine, cid) == ["q1", "a1", "q2", "a2", "q3", "a3"]


async def test_editing_while_a_later_answer_streams_stops_it_first_through_the_cancel_path(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    u1, _ = await answered(engine, cid, "q1", upstream, "a1")
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02), Behavior(text="new answer", chunk_delay=0.0))
    _, m2 = await engine.submit(cid, "q2")
    await wait_until(lambda: current_attempt(engine, cid, m2).chunks_rendered >= 3)
    await engine.edit(cid, u1, "q1 edited")
    await wait_until(lambda: not engine.is_streaming(cid))
    assert current_attempt(engine, cid, m2).status == "interrupted"
    assert "cancel_requested" in [e.KIND for e in engine.events(cid)]
    assert shown_texts(engine, cid) == ["q1 edited", "new answer"]


async def test_a_branch_after_a_tool_turn_carries_the_calls_with_their_results(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="Computing.", tool_calls=[PlannedCall("calculator", '{"expression": "2+3"}', "call_b")]),
        Behavior(text="It is 5."),
    )
    _, m1 = await engine.submit(cid, "compute 2+3")
    await wait_until(lambda: not engine.is_streaming(cid), 15)
    new_cid, _ = engine.branch(cid, m1)
    await answered(engine, new_cid, "and times 2?", upstream, "10")
    assert upstream.last.status == 200
    roles = [m["role"] for m in upstream.last.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert upstream.last.messages[2] == {"role": "tool", "tool_call_id": "call_b", "content": "2+3 = 5"}


async def test_a_ledger_written_before_messages_had_parents_loads_as_one_linear_branch(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path
) -> None:
    first = engines(tmp_path / "old")
    for event in conversation_events("old", answers=3, chunks=4):  # no parent fields, as older versions wrote
        first.store.append(event)
    await first.flush()
    first.store.close()  # one process per data dir: the next engine stands for the app started again
    engine = engines(tmp_path / "old")
    assert shown_texts(engine, "old")[::2] == ["question 1", "question 2", "question 3"]
    await answered(engine, "old", "question 4", upstream, "ok")
    assert [m["content"] for m in upstream.last.messages if m["role"] == "user"] == [
        "question 1",
        "question 2",
        "question 3",
        "question 4",
    ]


async def test_branching_from_a_user_message_gives_the_chat_before_it_and_its_text_as_a_draft(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()
    cid = engine.create_conversation()
    await answered(engine, cid, "q1", upstream, "a1")
    u2, _ = await answered(engine, cid, "q2", upstream, "a2")
    new_cid, draft = engine.branch(cid, u2)
    assert draft == "q2" and shown_texts(engine, new_cid) == ["q1", "a1"]


def test_an_old_ledger_that_switched_an_earlier_answers_attempt_still_shows_every_later_turn() -> None:
    from ledger.events.core import Chunk, Persisted, Selected, Started, Submitted

    c = "legacy"

    def said(attempt: str, text: str) -> Chunk:
        return Chunk(conversation_id=c, attempt_id=attempt, request_id="r", chunk_seq=0, text=text)

    events = [
        Submitted(conversation_id=c, message_id="u1", turn=1, text="q1"),
        Started(conversation_id=c, attempt_id="a1", message_id="m1", user_message_id="u1", turn=1, model="x"),
        said("a1", "first"),
        Persisted(conversation_id=c, attempt_id="a1", message_id="m1", status="complete", text="first"),
        Started(conversation_id=c, attempt_id="a2", message_id="m1", user_message_id="u1", turn=1, model="x"),
        said("a2", "second"),
        Persisted(conversation_id=c, attempt_id="a2", message_id="m1", status="complete", text="second"),
        Submitted(conversation_id=c, message_id="u2", turn=2, text="q2"),  # no parent: written before parents
        Started(conversation_id=c, attempt_id="b1", message_id="m2", user_message_id="u2", turn=2, model="x"),
        said("b1", "answer 2"),
        Persisted(conversation_id=c, attempt_id="b1", message_id="m2", status="complete", text="answer 2"),
        Selected(conversation_id=c, message_id="m1", attempt_id="a1"),  # the old page allowed this on any answer
    ]
    conv = replay(events).conversations[c]
    assert selected_path(conv) == ("u1", "m1", "u2", "m2")
    from ledger.history import as_messages, model_history

    assert [m["content"] for m in as_messages(model_history(conv))] == ["q1", "first", "q2", "answer 2"]
