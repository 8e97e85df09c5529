"""The engine's main scenarios in every dialect the scripted upstream speaks (OpenAI, Anthropic, Gemini, Ollama),
each through litellm's real HTTP path: what the ledger records and what the next request sends are the same
whatever the provider, and every history the engine sends is one that provider accepts (its 400 otherwise)."""

from __future__ import annotations

import json

import pytest

from engine.commands.engine import Engine
from engine.tools.hub import ToolHub
from ledger.events.core import ToolCalled, ToolResult
from tests.support.dialects import DIALECTS
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

WORDS = " ".join(f"w{n}" for n in range(120))
#: One event loop for the module: the tool server (seconds to start) is started once and shared by its tests.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(params=DIALECTS)
def dialect(request: pytest.FixtureRequest, hub_engines: EngineFactory) -> str:
    """Each test runs once per dialect: its engines call the upstream in that dialect."""
    hub_engines.dialect = request.param
    return str(request.param)


def kinds(engine: Engine, cid: str) -> list[str]:
    return [e.KIND for e in engine.events(cid)]


def call_named(engine: Engine, cid: str, name: str) -> str:
    """The id the ledger gave the call of ``name`` (Gemini and Ollama send none: litellm makes one up)."""
    return next(e.call_id for e in engine.events(cid) if isinstance(e, ToolCalled) and e.name == name)


def sent_calls(messages: list[dict]) -> list[str]:
    return [c["function"]["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]


def sent_results(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


async def test_an_answer_streams_to_the_end_with_the_usage_the_provider_reported(
    dialect: str, hub_engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="one two three four", reasoning="thinking it over", chunk_delay=0.002))
    _, m1 = await engine.submit(cid, "count")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert (attempt.status, attempt.text, attempt.reasoning) == ("complete", "one two three four", "thinking it over")
    assert attempt.metrics is not None and not attempt.metrics.estimated and attempt.metrics.input_tokens > 0
    assert upstream.last.dialect == dialect and upstream.last.finished


async def test_stop_mid_stream_keeps_the_prefix_and_sends_it_next_turn(
    dialect: str, hub_engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    _, m1 = await engine.submit(cid, "count for me")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 5)
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, m1)
    record = upstream.last
    await wait_until(lambda: record.disconnected_at is not None, 3, "the upstream to see the client go")
    assert attempt.status == "interrupted" and attempt.text and WORDS.startswith(attempt.text)
    assert not record.finished and "upstream_closed" in kinds(engine, cid)
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert sent == [
        {"role": "user", "content": "count for me"},
        {"role": "assistant", "content": attempt.text},
        {"role": "user", "content": "and now?"},
    ]


async def test_a_provider_error_ends_the_attempt_failed_and_stays_out_of_history(
    dialect: str, hub_engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="PARTIAL " * 40, drop_after=4))
    _, m1 = await engine.submit(cid, "hi")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "failed" and attempt.error_type == "connection" and len(upstream.records) == 1
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert "PARTIAL" not in json.dumps(sent) and [m["role"] for m in sent] == ["user", "user"]


async def test_a_rate_limit_before_the_first_chunk_is_resent_within_the_same_attempt(
    dialect: str, hub_engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(status=429), Behavior(text="after the re-send"))
    _, m1 = await engine.submit(cid, "hi")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "complete" and attempt.text == "after the re-send"
    assert len(attempt.request_ids) == 2 and len(upstream.records) == 2
    (failed,) = [e for e in engine.events(cid) if e.KIND == "failed"]
    assert (failed.error_type, failed.http_status, failed.will_retry) == ("rate_limit", 429, True)


async def test_a_two_step_tool_turn_completes_and_its_history_is_accepted(
    dialect: str, hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="Computing.", tool_calls=[PlannedCall("calculator", '{"expression": "17*23"}', "call_c")]),
        Behavior(text="17 times 23 is 391."),
    )
    _, m1 = await engine.submit(cid, "compute 17*23")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "complete" and [attempt.step_text(0), attempt.step_text(1)] == [
        "Computing.",
        "17 times 23 is 391.",
    ]
    assert attempt.tool_calls[call_named(engine, cid, "calculator")].content == "17*23 = 391"
    second = upstream.records[-1].messages
    assert upstream.records[-1].status == 200 and sent_calls(second) == ["calculator"]
    assert sent_results(second) == ["17*23 = 391"]
    assert attempt.metrics is not None and attempt.metrics.steps == 2 and not attempt.metrics.estimated
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert sent_calls(sent) == ["calculator"] and sent_results(sent) == ["17*23 = 391"]


async def test_stop_during_a_tool_answers_the_call_once_and_the_history_is_accepted(
    dialect: str, hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub, tool_grace=1.0)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="Starting.", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_slow")]))
    _, m1 = await engine.submit(cid, "run the slow job")
    await wait_until(lambda: "tool_progress" in kinds(engine, cid), what="the tool reporting progress")
    assert await engine.cancel(cid, "user")
    (result,) = [e for e in engine.events(cid) if isinstance(e, ToolResult)]
    assert result.status == "cancelled" and result.call_id == call_named(engine, cid, "slow_task")
    assert current_attempt(engine, cid, m1).status == "interrupted"
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert sent_calls(sent) == ["slow_task"] and len(sent_results(sent)) == 1


async def test_stop_while_a_call_streams_keeps_the_text_and_runs_nothing(
    dialect: str, hub_engines: EngineFactory, upstream: ScriptedUpstream, hub: ToolHub
) -> None:
    engine = hub_engines(tools=hub)
    cid = engine.create_conversation()
    call = PlannedCall("calculator", json.dumps({"expression": "1 + " * 40 + "1"}), "call_half", pieces=40)
    upstream.plan(Behavior(text="Let me compute that.", tool_calls=[call], chunk_delay=0.01))
    _, m1 = await engine.submit(cid, "compute a long sum")
    await wait_until(lambda: "tool_call_started" in kinds(engine, cid), what="the call being written")
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "interrupted" and attempt.text == "Let me compute that."
    assert not {"tool_call", "tool_dispatched", "tool_result"} & set(kinds(engine, cid))
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert sent[1] == {"role": "assistant", "content": "Let me compute that."} and sent_calls(sent) == []
