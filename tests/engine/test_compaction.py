"""Compaction through litellm against the scripted upstream (which records every request), with a small input
window declared as ``--model-info`` does: it runs before the request that would not fit, as an attempt of its own
(Stop, delete, errors), and the request after it fits, carries the summary and the recent turns whole."""

from __future__ import annotations

from pathlib import Path

from demo.agent import history_problem
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine
from engine.files import models
from engine.provider.calls import ProviderConfig
from engine.provider.tokens import count_messages
from engine.tools.hub import ToolHub
from ledger.compaction import SUMMARY_PREFIX, SUMMARY_REQUEST
from ledger.events.core import CancelRequested, Deleted, Started, UpstreamClosed
from ledger.history import as_messages, model_history
from ledger.presets import Preset
from store.tinydb.store import Store
from tests.support.engine import TEST_KEY, EngineFactory, current_attempt, make_settings
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

SMALL = "openai/lc-compaction-window"
QUESTION = "And now a new question: " + "what happened next in the story? " * 6
WINDOW = 600
models.declare({SMALL: {"max_input_tokens": WINDOW}})  # what --model-info FILE declares


def small_window(engines: EngineFactory, upstream: ScriptedUpstream, tools: ToolHub | None = None) -> Engine:
    """An engine whose model has a 600-token input window (its ledger checked like the suite's others)."""
    store = Store.open(engines.tmp_path / "small", flush_interval=0.05)
    config = ProviderConfig(model=SMALL, api_base=upstream.base_url, api_key=TEST_KEY)
    engine = build_engine(store, make_settings(upstream.base_url, config), tools)
    seen: list = []
    engines.engines.append(engine)
    engines.seen.append(seen)
    engine.subscribe(seen.append)
    return engine


async def ended(engine: Engine, cid: str) -> None:
    await wait_until(lambda: not engine.is_streaming(cid), 20, "the turn to end")


async def answered_after_the_summary(engine: Engine, cid: str) -> None:
    """The answer a compaction made room for has ended (between the summary's end and that answer's start the
    conversation streams nothing for a moment, so ``ended`` alone may return at the summary's end)."""

    def answered() -> bool:
        starts = [e for e in engine.events(cid) if isinstance(e, Started)]
        return not engine.is_streaming(cid) and bool(starts) and starts[-1].purpose == "answer"

    await wait_until(answered, 20, "the answer after the summary")


def compactions(engine: Engine, cid: str) -> list[Started]:
    return [e for e in engine.events(cid) if isinstance(e, Started) and e.purpose == "compaction"]


async def a_long_chat(engine: Engine, upstream: ScriptedUpstream, cid: str) -> str:
    """A long first answer, a tool turn, and an answer stopped mid-stream; returns the stopped attempt's text."""
    upstream.plan(Behavior(text="The long story goes on. " * 80))
    await engine.send(cid, "tell me the long story")
    await ended(engine, cid)
    upstream.plan(
        Behavior(text="Let me compute.", tool_calls=[PlannedCall("calculator", '{"expression": "2+2"}', "c1")])
    )
    upstream.after_tool_results = Behavior(text="It is 4.")
    await engine.send(cid, "what is 2+2")
    await ended(engine, cid)
    upstream.after_tool_results = None
    upstream.plan(Behavior(text="Stopped words " * 80, stall_after=15))  # 15 chunks, then nothing
    _, m3 = await engine.send(cid, "say many words")
    await wait_until(lambda: current_attempt(engine, cid, m3).chunks_rendered == 15, what="15 chunks")
    assert await engine.cancel(cid, "user")
    stopped = current_attempt(engine, cid, m3)
    assert stopped.status == "interrupted"
    return stopped.text


async def test_the_compaction_runs_before_the_request_that_would_not_fit_and_the_next_one_fits_whole(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = small_window(engines, upstream, hub)
    cid = engine.create_conversation()
    prefix = await a_long_chat(engine, upstream, cid)
    assert compactions(engine, cid) == [], "nothing is summarized while the requests fit"
    meter = await engine.meter(cid, SMALL)
    assert meter.window == WINDOW and WINDOW * 0.8 < meter.used < WINDOW and meter.warn
    before = len(upstream.records)
    u4, m4 = await engine.send(cid, QUESTION)
    await wait_until(lambda: conv_reply(engine, cid, u4), 20, "the answer after the compaction")
    summary_request, answer_request = upstream.records[before:]
    assert [m["role"] for m in summary_request.messages] == ["user"], "a compaction sends one message, no tools"
    transcript = str(summary_request.messages[0]["content"])
    assert transcript.startswith(SUMMARY_REQUEST) and "The long story goes on." in transcript
    assert summary_request.tools == []
    sent = answer_request.messages
    assert sent[0]["role"] == "system" and str(sent[0]["content"]).startswith(SUMMARY_PREFIX)
    assert "Summary of 2 earlier messages" in str(sent[0]["content"]) and "tell me the long story" in sent[0]["content"]
    assert "The long story goes on." not in str(sent[1:]), "the summarized turn is not sent again"
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    assert history_problem(sent) is None and answer_request.status == 200, "the provider accepted the history"
    assert sent[-3:] == [
        {"role": "user", "content": "say many words"},
        {"role": "assistant", "content": prefix},  # the interrupted prefix exactly as the user saw it
        {"role": "user", "content": QUESTION},
    ]
    assert count_messages(SMALL, sent) <= WINDOW, "the request after the compaction fits the window"
    assert current_attempt(engine, cid, m4).status == "complete"
    (compaction,) = compactions(engine, cid)
    conv = engine.conversation(cid)
    assert conv is not None and conv.attempts[compaction.attempt_id].status == "complete"
    kinds = [(e.KIND, getattr(e, "attempt_id", None)) for e in engine.events(cid)]
    assert kinds.index(("started", compaction.attempt_id)) < kinds.index(("persisted", compaction.attempt_id))
    answer = current_attempt(engine, cid, m4).attempt_id
    assert kinds.index(("persisted", compaction.attempt_id)) < kinds.index(("started", answer))
    new_cid, _ = engine.branch(cid, m4)
    branched = engine.conversation(new_cid)
    assert branched is not None and as_messages(model_history(branched))[:-2] == sent[:-1], "the branch inherits it"
    first_user = next(e for e in engine.events(cid) if e.KIND == "submitted")
    upstream.plan(Behavior(text="A short answer."))
    _, edited = await engine.edit(cid, first_user.message_id, "a shorter first question")
    await wait_until(lambda: current_attempt(engine, cid, edited).status == "complete", 20, "the edit's answer")
    assert upstream.last.messages == [{"role": "user", "content": "a shorter first question"}], "no summary there"
    await hub.stop()


async def test_stop_during_a_compaction_sends_nothing_more_and_leaves_the_history_as_it_was(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = small_window(engines, upstream)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="The long story goes on. " * 100, chunk_delay=0.0))
    await engine.send(cid, "tell me the long story")
    await ended(engine, cid)
    conv = engine.conversation(cid)
    assert conv is not None
    history = as_messages(model_history(conv))
    upstream.plan(Behavior(text="A slow summary. " * 100, chunk_delay=0.05))
    before = len(upstream.records)
    user_id, _ = await engine.send(cid, "one more question")
    await wait_until(lambda: compactions(engine, cid) and engine.active_run(cid), what="the compaction")
    (compaction,) = compactions(engine, cid)
    run = engine.active_run(cid)
    assert run is not None and run.attempt_id == compaction.attempt_id
    await wait_until(lambda: run.chunk_count > 3, what="the summary streaming")
    assert await engine.cancel(cid, "user", attempt_id=compaction.attempt_id)
    await nothing_more_for(0.6)
    assert len(upstream.records) == before + 1, "no answer request follows a stopped compaction"
    conv = engine.conversation(cid)
    assert conv is not None and conv.attempts[compaction.attempt_id].status == "interrupted"
    assert conv.messages[user_id].reply_id is None and not engine.is_streaming(cid)
    assert as_messages(model_history(conv)) == [*history, {"role": "user", "content": "one more question"}]
    events = engine.events(cid)
    assert any(isinstance(e, CancelRequested) and e.attempt_id == compaction.attempt_id for e in events)
    assert any(isinstance(e, UpstreamClosed) and e.attempt_id == compaction.attempt_id for e in events)
    upstream.plan(Behavior(text="Short summary."), Behavior(text="The answer."))
    await engine.retry_compaction(cid, conv.messages[run.message_id].message_id)
    await wait_until(lambda: conv_reply(engine, cid, user_id), 20, "the waiting message answered after Retry")
    assert str(upstream.last.messages[0]["content"]).startswith(SUMMARY_PREFIX)


def conv_reply(engine: Engine, cid: str, user_id: str) -> bool:
    conv = engine.conversation(cid)
    reply = conv.messages[user_id].reply_id if conv is not None else None
    return reply is not None and current_attempt(engine, cid, reply).status == "complete"


async def test_deleting_during_a_compaction_awaits_its_upstream_closed_and_nothing_follows(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = small_window(engines, upstream)
    seen = engines.seen[-1]
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="The long story goes on. " * 100, chunk_delay=0.0))
    await engine.send(cid, "tell me the long story")
    await ended(engine, cid)
    upstream.plan(Behavior(text="A slow summary. " * 100, chunk_delay=0.05))
    before = len(upstream.records)
    await engine.send(cid, "one more question")
    await wait_until(lambda: (r := engine.active_run(cid)) is not None and r.chunk_count > 3, what="the summary")
    (compaction,) = compactions(engine, cid)
    await engine.delete(cid)
    await nothing_more_for(0.5)
    mine = [e for e in seen if e.conversation_id == cid]
    closed = [i for i, e in enumerate(mine) if isinstance(e, UpstreamClosed) and e.attempt_id == compaction.attempt_id]
    assert closed and isinstance(mine[-1], Deleted) and closed[0] < len(mine) - 1, "deleted after upstream_closed"
    assert len(upstream.records) == before + 1 and upstream.records[-1].disconnected_at is not None


async def test_a_context_length_error_says_so_and_compact_and_retry_answers(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = engines()  # a model whose window litellm does not know: only the provider can say "too long"
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="A first answer with some words in it."))
    await engine.send(cid, "first question")
    await ended(engine, cid)
    _, m2 = await engine.send(cid, "a question the provider finds too long #toolong")
    await ended(engine, cid)
    failed = current_attempt(engine, cid, m2)
    assert (failed.status, failed.error_type, failed.http_status) == ("failed", "context_length", 400)
    assert failed.error_summary is not None
    assert failed.error_summary.startswith("The conversation is too long for this model")
    assert "maximum context length is 2000 tokens" in failed.error_summary
    before = len(upstream.records)
    await engine.compact_and_retry(cid, m2)
    await wait_until(lambda: current_attempt(engine, cid, m2).status == "complete", 20, "the retried answer")
    summary_request, retried = upstream.records[before:]
    assert str(summary_request.messages[0]["content"]).startswith(SUMMARY_REQUEST)
    assert retried.status == 200 and str(retried.messages[0]["content"]).startswith(SUMMARY_PREFIX)
    assert retried.messages[-1] == {"role": "user", "content": "a question the provider finds too long #toolong"}
    conv = engine.conversation(cid)
    assert conv is not None and len(conv.messages[m2].attempt_ids) == 2


async def test_a_failed_compaction_says_why_and_leaves_the_history_as_it_was(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = small_window(engines, upstream)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="The long story goes on. " * 100, chunk_delay=0.0))
    await engine.send(cid, "tell me the long story")
    await ended(engine, cid)
    conv = engine.conversation(cid)
    assert conv is not None
    history = as_messages(model_history(conv))
    upstream.plan(Behavior(status=400, message="The summary request was refused."))
    before = len(upstream.records)
    user_id, _ = await engine.send(cid, "one more question")
    await wait_until(lambda: compactions(engine, cid) and not engine.is_streaming(cid), what="the compaction's end")
    await nothing_more_for(0.4)
    (compaction,) = compactions(engine, cid)
    conv = engine.conversation(cid)
    assert conv is not None and len(upstream.records) == before + 1, "no answer request follows a failed one"
    failed = conv.attempts[compaction.attempt_id]
    assert failed.status == "failed" and "The summary request was refused" in (failed.error_summary or "")
    assert as_messages(model_history(conv)) == [*history, {"role": "user", "content": "one more question"}]
    assert conv.messages[user_id].reply_id is None


async def test_an_agent_preset_s_instructions_count_in_the_meter_and_in_what_must_fit_the_window(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = small_window(engines, upstream)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="A short first answer. " * 20))
    await engine.send(cid, "first question")
    await ended(engine, cid)
    told = "You are Ada, a careful assistant who answers in French. " * 40
    plain, with_told = await engine.meter(cid, SMALL), await engine.meter(cid, SMALL, told)
    sent = count_messages(SMALL, [{"role": "system", "content": told}])
    assert sent > 300 and abs(with_told.used - plain.used - sent) <= 4, "the meter counts what the preset sends first"
    assert plain.used + 100 < WINDOW < with_told.used + 100, "the question fits without them, not with them"
    ada = engine.presets.save(Preset(preset_id="", name="Ada", instructions=told, model=SMALL))
    upstream.plan(Behavior(text="Summary: a first question was answered briefly."), Behavior(text="Bonjour."))
    await engine.send(cid, "a second question, a few words long", preset=ada.preset_id)
    await answered_after_the_summary(engine, cid)
    assert len(compactions(engine, cid)) == 1, "with the instructions the request would not fit: summarized first"
    last = upstream.last.messages
    assert last[0] == {"role": "system", "content": told} and SUMMARY_PREFIX in str(last[1])
    assert count_messages(SMALL, last) <= WINDOW and upstream.last.status == 200
