"""Chat titles made by the model, through litellm against the scripted upstream (which records every request): an
attempt of its own after the first answer, never in the chat or its history; Stop, Send and delete discard it;
a rename, before or during it, wins; a branch keeps its title."""

from __future__ import annotations

from engine.commands.engine import Engine
from ledger.events.core import AnyEvent, CancelRequested, Deleted, Started
from ledger.events.title import Titled
from ledger.history import model_history
from ledger.titles import SYSTEM, TITLE_REQUEST
from ledger.tree import selected_path
from tests.support.engine import EngineFactory, finished
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

QUESTION = "Tell me about caching in Python #drop"
HANGS = Behavior(text="Never arrives", first_delay=30)  # a title request left waiting (its wait is cut first)


def titles(engine: Engine, cid: str) -> list[Started]:
    return [e for e in engine.events(cid) if isinstance(e, Started) and e.purpose == "title"]


def status_of(engine: Engine, cid: str, attempt_id: str) -> str:
    conv = engine.conversation(cid)
    assert conv is not None
    return conv.attempts[attempt_id].status


async def title_running(engine: Engine, cid: str, upstream: ScriptedUpstream, requests: int = 2) -> Started:
    """The title attempt, once its request reached the upstream."""
    await wait_until(lambda: len(upstream.records) >= requests and titles(engine, cid), 20, "the title's request")
    return titles(engine, cid)[-1]


async def test_the_model_names_the_chat_after_its_first_answer_in_an_attempt_of_its_own(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(titles=True)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="Caching keeps results."), Behavior(text='"Caching in Python."\nA second line'))
    _, answer_id = await engine.send(cid, QUESTION)
    await wait_until(lambda: (c := engine.conversation(cid)) is not None and c.title == "Caching in Python", 20)
    request = upstream.records[1].messages
    assert [m["role"] for m in request] == ["system", "user"] and request[0]["content"] == SYSTEM
    assert request[1]["content"].startswith(TITLE_REQUEST)
    assert "user: Tell me about caching in Python\nassistant: Caching keeps results." in request[1]["content"]
    assert "#drop" not in request[1]["content"], "the tags are instructions, not the topic"
    conv = engine.conversation(cid)
    assert conv is not None
    (started,) = titles(engine, cid)
    answer = conv.messages[answer_id].selected_attempt_id
    assert started.through == answer and started.user_message_id == ""
    kinds = [e.KIND for e in engine.events(cid) if getattr(e, "attempt_id", None) == started.attempt_id]
    assert kinds[0] == "started" and kinds[-2:] == ["done", "persisted"] and "request_sent" in kinds
    (titled,) = [e for e in engine.events(cid) if isinstance(e, Titled)]
    assert (titled.replaces, titled.from_attempt) == ("Tell me about caching in Python #drop", started.attempt_id)
    assert len(selected_path(conv)) == 2, "the title is not a message of the chat"
    assert not any(e.message_id == started.message_id for e in model_history(conv))
    assert [s.title for s in engine.summaries() if s.conversation_id == cid] == ["Caching in Python"]
    upstream.plan(Behavior(text="More."))
    await engine.send(cid, "and more?")
    await finished(engine, cid)
    await nothing_more_for(0.3)
    assert len(upstream.records) == 3 and len(titles(engine, cid)) == 1, "a chat is named once"
    assert not any(TITLE_REQUEST in str(m["content"]) for m in upstream.last.messages)


async def test_a_delete_while_the_title_is_made_awaits_its_discard_cancel_and_nothing_follows_it(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(titles=True)
    seen: list[AnyEvent] = []
    engine.subscribe(seen.append)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="An answer."), HANGS)
    await engine.send(cid, QUESTION)
    title = await title_running(engine, cid, upstream)
    await engine.delete(cid)
    await nothing_more_for(0.3)
    mine = [e for e in seen if e.conversation_id == cid]
    assert isinstance(mine[-1], Deleted), "nothing is written after deleted"
    ends = [e.KIND for e in mine if getattr(e, "attempt_id", None) == title.attempt_id]
    assert "cancel_requested" in ends and ends[-2:] == ["cancelled", "persisted"], "it ended before the delete"
    cancel = next(e for e in mine if isinstance(e, CancelRequested) and e.attempt_id == title.attempt_id)
    assert (cancel.source, cancel.keep_partial) == ("delete", False)
    assert not any(isinstance(e, Titled) for e in mine)


async def test_a_rename_while_the_title_is_made_wins_and_one_before_asks_for_none(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(titles=True)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="An answer."), Behavior(text="A generated title for it", chunk_delay=0.2))
    await engine.send(cid, QUESTION)
    title = await title_running(engine, cid, upstream)
    engine.rename(cid, "My own name")
    await wait_until(lambda: status_of(engine, cid, title.attempt_id) == "complete", 20, "the title to complete")
    await nothing_more_for(0.2)
    conv = engine.conversation(cid)
    assert conv is not None and conv.title == "My own name"
    assert [s.title for s in engine.summaries() if s.conversation_id == cid] == ["My own name"]
    assert not any(isinstance(e, Titled) for e in engine.events(cid)), "the late title is not applied"

    other = engine.create_conversation()
    upstream.plan(Behavior(text="Slow answer.", chunk_delay=0.1))
    await engine.send(other, "Another question")
    engine.rename(other, "Named before")
    await finished(engine, other)
    await nothing_more_for(0.3)
    assert titles(engine, other) == [] and len(upstream.records) == 3


async def test_a_send_while_the_title_is_made_starts_at_once_and_the_title_is_asked_again_after_it(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(titles=True)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="First answer."), HANGS, Behavior(text="Second answer."), Behavior(text="Late Name"))
    await engine.send(cid, QUESTION)
    first = await title_running(engine, cid, upstream)
    assert not engine.is_streaming(cid), "a title never makes the chat busy"
    _, second = await engine.send(cid, "and then?")
    assert status_of(engine, cid, first.attempt_id) in ("interrupted", "empty"), "ended before the Send"
    cancel = next(e for e in engine.events(cid) if isinstance(e, CancelRequested))
    assert (cancel.attempt_id, cancel.source, cancel.keep_partial) == (first.attempt_id, "user", False)
    await wait_until(lambda: (c := engine.conversation(cid)) is not None and c.title == "Late Name", 20)
    conv = engine.conversation(cid)
    assert conv is not None and conv.attempts[conv.messages[second].selected_attempt_id or ""].text == "Second answer."
    assert [t.through for t in titles(engine, cid)][1] == conv.messages[second].selected_attempt_id


async def test_a_stopped_or_failed_title_leaves_the_title_and_nothing_of_it_reaches_the_chat(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(titles=True)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="An answer."), HANGS)
    await engine.send(cid, QUESTION)
    title = await title_running(engine, cid, upstream)
    assert await engine.cancel(cid, "user"), "Stop reaches the title through the one cancel path"
    assert status_of(engine, cid, title.attempt_id) in ("interrupted", "empty")
    upstream.plan(Behavior(text="Second."), Behavior(status=401, message="The key was refused"))
    await engine.send(cid, "and then?")
    await wait_until(
        lambda: len(titles(engine, cid)) == 2 and status_of(engine, cid, titles(engine, cid)[1].attempt_id) == "failed",
        20,
    )
    conv = engine.conversation(cid)
    assert conv is not None and conv.title == QUESTION and conv.live_attempt() is None
    upstream.plan(Behavior(text="Third."))
    await engine.send(cid, "once more")
    await finished(engine, cid)
    await nothing_more_for(0.3)
    sent = str(upstream.last.messages)
    assert "refused" not in sent and TITLE_REQUEST not in sent and "Never arrives" not in sent
    assert len(titles(engine, cid)) == 2, "two titles at most"


async def test_a_branch_keeps_its_branch_title(engines: EngineFactory, upstream: ScriptedUpstream) -> None:
    engine = engines(titles=True)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="An answer."), Behavior(text="Named"))
    _, answer = await engine.send(cid, QUESTION)
    await wait_until(lambda: (c := engine.conversation(cid)) is not None and c.title == "Named", 20)
    branch, _ = engine.branch(cid, answer)
    upstream.plan(Behavior(text="In the branch."))
    await engine.send(branch, "go on")
    await finished(engine, branch)
    await nothing_more_for(0.3)
    conv = engine.conversation(branch)
    assert conv is not None and conv.title == "Named — branch from answer 1" and titles(engine, branch) == []


async def test_the_demo_model_names_a_chat_after_its_question_without_its_tags(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines(titles=True)  # nothing planned: the upstream answers as the offline demo model does
    cid = engine.create_conversation()
    await engine.send(cid, "Tell me about caching in Python #slow")
    await wait_until(lambda: (c := engine.conversation(cid)) is not None and c.title == "Caching in Python", 20)
