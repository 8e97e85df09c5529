"""Spend limits against the scripted upstream, priced through litellm with ``--model-info``'s prices: a person's
answers run until the limit, the next Send is refused with the sentence (nothing appended), an agent turn stops at
the step boundary with every tool call answered and goes on once the limit is raised, stopped answers count their
partial cost, and titles stop before their request with the reason in their own attempt."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.commands.assembly import build_engine
from engine.commands.engine import Engine, InputRejected
from engine.files import models
from engine.offline import ready
from engine.provider.calls import ProviderConfig
from engine.spend import ANYONE, money, priced, spent
from engine.tools.hub import ToolHub
from ledger.events import RequestSent, ToolCalled, ToolResult
from store.limits import DEFAULT, MemoryLimits, SpendLimit
from store.tinydb.store import Store
from tests.support.engine import TEST_KEY, current_attempt, finished, make_settings, one_end_each
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

MODEL = "openai/spend-limit-test"  # its own name: the price declared here touches no other test's model
PRICES = {MODEL: {"input_cost_per_token": 1e-5, "output_cost_per_token": 0.0}}  # 1,000 prompt tokens: $0.01
ONE_CENT = Behavior(text="an answer", input_tokens=1000)
SENTENCE = "You have spent $0.03 of your $0.025 daily limit; it resets at 00:00 UTC."
MakeEngine = Callable[..., Engine]


@pytest.fixture
async def spend_engine(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[MakeEngine]:
    """An engine answering as ``MODEL`` with the limits given; its ledger checked (one end per attempt) after."""
    models.declare(PRICES)  # what --model-info does at start-up
    made: list[tuple[Engine, list]] = []

    def make(limits: MemoryLimits, tools: ToolHub | None = None, **options: object) -> Engine:
        config = ProviderConfig(model=MODEL, api_base=upstream.base_url, api_key=TEST_KEY)
        settings = replace(make_settings("", config, **options), spend_limits=limits)
        engine = build_engine(Store.open(tmp_path / f"data{len(made)}", flush_interval=0.05), settings, tools)
        seen: list = []
        engine.subscribe(seen.append)
        made.append((engine, seen))
        return engine

    await ready()
    yield make
    for engine, seen in made:
        await engine.shutdown()
        assert not one_end_each(seen)
        engine.store.close()


def limited(usd: float) -> MemoryLimits:
    limits = MemoryLimits()
    limits.put(DEFAULT, SpendLimit(day_usd=usd))
    return limits


async def test_answers_run_until_the_limit_and_the_next_send_is_refused_with_the_figure_and_the_reset_time(
    spend_engine: MakeEngine, upstream: ScriptedUpstream
) -> None:
    engine = spend_engine(limited(0.025))
    cid = engine.create_conversation()
    for n in range(3):  # $0.01 each: under the limit before each of them; the last one cut at the output limit
        upstream.plan(replace(ONE_CENT, cut=n == 2))
        _, answer = await engine.submit(cid, f"question {n}")
        await finished(engine, cid)
        assert current_attempt(engine, cid, answer).status == "complete"
    before, requests = len(engine.events(cid)), len(upstream.records)
    with pytest.raises(InputRejected) as refused:
        await engine.submit(cid, "one more")
    assert str(refused.value) == SENTENCE
    assert len(engine.events(cid)) == before, "nothing appended: the text stays the person's"
    assert len(upstream.records) == requests, "no request made"
    with pytest.raises(InputRejected, match="daily limit"):
        await engine.continue_answer(cid, answer)  # a cut answer may be continued: the guard refuses it


async def test_deleting_a_chat_keeps_what_it_spent_so_the_next_send_in_a_new_chat_is_still_refused(
    spend_engine: MakeEngine, upstream: ScriptedUpstream
) -> None:
    engine = spend_engine(limited(0.025))
    cid = engine.create_conversation()
    for n in range(3):
        upstream.plan(ONE_CENT)
        await engine.submit(cid, f"question {n}")
        await finished(engine, cid)
    used = spent(engine.settings.spend.book.rows(None)).usd if engine.settings.spend else 0.0
    await engine.delete(cid)
    rows = engine.settings.spend.book.rows(None) if engine.settings.spend else []
    assert len(rows) == 3 and all(r.deleted for r in rows) and spent(rows).usd == pytest.approx(used)
    fresh = engine.create_conversation()
    with pytest.raises(InputRejected) as refused:
        await engine.submit(fresh, "after deleting the chat")
    assert str(refused.value) == SENTENCE


async def test_an_agent_turn_stops_at_the_step_boundary_and_goes_on_after_the_limit_is_raised(
    spend_engine: MakeEngine, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    limits = limited(0.015)
    engine = spend_engine(limits, tools=hub)
    cid = engine.create_conversation()
    call = PlannedCall("calculator", '{"expression": "2+2"}', "call_1")
    upstream.plan(Behavior(text="", tool_calls=[call], input_tokens=2000))  # $0.02: over once this step is done
    try:
        _, answer = await engine.submit(cid, "add it up")
        await finished(engine, cid)
        attempt = current_attempt(engine, cid, answer)
        said = "You have spent $0.02 of your $0.015 daily limit; it resets at 00:00 UTC."
        assert (attempt.status, attempt.error_type, attempt.error_summary) == ("failed", "spend_limit", said)
        assert len(upstream.records) == 1, "no request after the step that reached the limit"
        events = engine.events(cid)
        called = {e.call_id for e in events if isinstance(e, ToolCalled)}
        answered = {e.call_id: e.status for e in events if isinstance(e, ToolResult)}
        assert called == {"call_1"} and answered == {"call_1": "ok"}, "every call has its one result"
        assert sum(isinstance(e, RequestSent) for e in events) == 1
        limits.put(DEFAULT, SpendLimit(day_usd=1.0))  # an admin raises the limit: the next request goes out
        upstream.plan(Behavior(text="4, as asked"))
        retried = await engine.retry(cid, answer)
        await finished(engine, cid)
        assert current_attempt(engine, cid, answer).attempt_id == retried
        assert current_attempt(engine, cid, answer).status == "complete"
    finally:
        await hub.stop()


async def test_a_stopped_answer_counts_its_partial_cost_toward_the_limit(
    spend_engine: MakeEngine, upstream: ScriptedUpstream
) -> None:
    engine = spend_engine(limited(0.00005))
    cid = engine.create_conversation()
    words = " ".join(f"w{n}" for n in range(400))
    upstream.plan(Behavior(text=words, chunk_delay=0.01, input_tokens=1000))
    _, answer = await engine.submit(cid, "count slowly")
    await wait_until(lambda: current_attempt(engine, cid, answer).chunks_rendered >= 5)
    assert await engine.cancel(cid, "user")
    stopped = current_attempt(engine, cid, answer)
    assert stopped.status == "interrupted" and stopped.metrics is not None and stopped.metrics.estimated
    rows = engine.settings.spend.book.rows(ANYONE) if engine.settings.spend else []
    (row,) = rows
    assert (row.status, row.estimated, row.input_tokens) == ("stopped", True, stopped.metrics.input_tokens)
    assert row.output_tokens == stopped.metrics.output_tokens > 0, "the words received before Stop count"
    assert priced(row).usd == pytest.approx(row.input_tokens * 1e-5)  # (this model's output is free)
    usd = spent(rows).usd
    with pytest.raises(InputRejected) as refused:
        await engine.submit(cid, "again")
    said = f"You have spent {money(usd)} (estimated) of your $0.00005 daily limit; it resets at 00:00 UTC."
    assert str(refused.value) == said


async def test_a_title_over_the_limit_ends_before_its_request_with_the_reason_in_its_attempt(
    spend_engine: MakeEngine, upstream: ScriptedUpstream
) -> None:
    engine = spend_engine(limited(0.005), titles=True)
    cid = engine.create_conversation()
    upstream.plan(ONE_CENT)
    _, answer = await engine.submit(cid, "name me")  # under the limit before it; over once it is done
    await wait_until(lambda: any(a.purpose == "title" and not a.is_live for a in conv_attempts(engine, cid)))
    (title,) = [a for a in conv_attempts(engine, cid) if a.purpose == "title"]
    assert (title.status, title.error_type) == ("failed", "spend_limit")
    assert title.request_ids == () and len(upstream.records) == 1, "the title asked nothing of the model"
    assert current_attempt(engine, cid, answer).status == "complete"


def conv_attempts(engine: Engine, cid: str) -> list:
    conv = engine.conversation(cid)
    return list(conv.attempts.values()) if conv is not None else []


def test_the_monthly_limit_resets_on_the_first_of_the_next_month() -> None:
    from engine.spend.limits import Over, resets

    now = datetime(2026, 12, 31, 23, 59, tzinfo=UTC)
    assert resets("month", now) == datetime(2027, 1, 1, tzinfo=UTC)
    over = Over("month", "usd", 2.5, 2.0, False, resets("month", now))
    assert over.sentence == "You have spent $2.50 of your $2.00 monthly limit; it resets on 1 January at 00:00 UTC."
    tokens = Over("day", "tokens", 12345, 10000, False, resets("day", now))
    assert tokens.sentence == "You have used 12,345 tokens of your 10,000-token daily limit; it resets at 00:00 UTC."
