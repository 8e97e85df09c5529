"""Traces as the ledger records them: the engine's attempts exported over OTLP/HTTP to a real receiver on 127.0.0.1
that decodes them with the opentelemetry-proto messages (never a mock of the exporter)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from engine.commands.engine import Engine
from engine.telemetry.live import LiveTelemetry
from engine.telemetry.otlp import Endpoint
from engine.turns import questions
from ledger.events.core import Chunk, QuestionAnswered, QuestionAsked, RequestSent, Started, UpstreamClosed
from ledger.folds.trace_values import span_id, trace_id, ts_ns
from store.tinydb.store import Store
from tests.support.engine import TEST_KEY, EngineFactory, current_attempt
from tests.support.otlp_receiver import OtlpReceiver, Received
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

ERROR = 2
QUESTION = "what is the secret plan"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    found = OtlpReceiver()
    yield found
    found.close()


def follow(engine: Engine, url: str, content: bool = False, timeout: float = 5.0) -> LiveTelemetry:
    endpoint = Endpoint(
        traces_url=f"{url}/v1/traces",
        metrics_url=f"{url}/v1/metrics",
        content=content,
        metric_interval=3600,
        export_timeout=timeout,
    )
    return LiveTelemetry(engine, endpoint)


async def answered(engine: Engine, cid: str, live: LiveTelemetry) -> None:
    await wait_until(lambda: not engine.is_streaming(cid), 20, "the answer to end")
    await asyncio.to_thread(live.flush)


def one_trace(receiver: OtlpReceiver) -> tuple[Received, list[Received]]:
    roots = [s for s in receiver.spans if s.parent_id is None]
    assert len(roots) == 1, [s.name for s in receiver.spans]
    root = roots[0]
    children = [s for s in receiver.spans if s.parent_id == root.span_id]
    assert all(s.trace_id == root.trace_id for s in receiver.spans)
    assert len(children) == len(receiver.spans) - 1
    return root, children


def no_key_anywhere(receiver: OtlpReceiver) -> None:
    assert TEST_KEY not in repr(receiver.spans)


async def test_a_plain_answer_is_one_invoke_agent_span_over_one_chat_span_timed_by_the_ledger(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver
) -> None:
    engine = engines()
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="one two three four", chunk_delay=0.005))
    _, m1 = await engine.submit(cid, QUESTION)
    await answered(engine, cid, live)
    root, children = one_trace(receiver)
    attempt = current_attempt(engine, cid, m1)
    events = engine.events(cid)
    started = next(e for e in events if isinstance(e, Started))
    sent = next(e for e in events if isinstance(e, RequestSent))
    assert root.name == "invoke_agent ledger_chat" and root.status_code == 0
    assert root.trace_id == trace_id(attempt.attempt_id) and root.span_id == span_id("agent", attempt.attempt_id)
    assert root.start_ns == ts_ns(started.ts) and root.service == "ledger-chat"
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.conversation.id"] == cid
    assert root.attributes["ledger.status"] == "complete"
    (chat,) = children
    assert chat.name == "chat test-model" and chat.kind == 3  # SPAN_KIND_CLIENT
    assert chat.span_id == span_id("chat", sent.request_id) and chat.start_ns == ts_ns(sent.ts)
    assert root.start_ns <= chat.start_ns <= chat.end_ns <= root.end_ns
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.request.model"] == "test-model"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert chat.attributes["ledger.chunks"] == attempt.chunks_rendered
    assert chat.attributes["gen_ai.usage.output_tokens"] > 0
    assert chat.attributes["server.address"] == "127.0.0.1"
    assert "ledger.time_to_first_chunk_ms" in chat.attributes
    first_chunk = next(e for e in events if isinstance(e, Chunk))
    assert chat.events[0][:2] == ("ledger.first_chunk", ts_ns(first_chunk.ts))
    assert QUESTION not in repr(receiver.spans) and "one two" not in repr(receiver.spans)
    no_key_anywhere(receiver)
    await live.close()
    assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} <= set(receiver.metrics)
    assert "gen_ai.client.operation.time_to_first_chunk" in receiver.metrics
    types = {attrs["gen_ai.token.type"] for attrs, _ in receiver.metrics["gen_ai.client.token.usage"]}
    assert types == {"input", "output"}


async def test_a_stopped_answer_is_recorded_as_cancelled_with_its_source_and_its_close_time(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver
) -> None:
    engine = engines()
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=" ".join(f"w{n}" for n in range(300)), chunk_delay=0.01))
    _, m1 = await engine.submit(cid, "count")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 5)
    assert await engine.cancel(cid, "user")
    await answered(engine, cid, live)
    root, (chat,) = one_trace(receiver)
    closed = next(e for e in engine.events(cid) if isinstance(e, UpstreamClosed))
    for span in (root, chat):
        assert span.status_code == ERROR and span.attributes["error.type"] == "cancelled"
        assert span.attributes["gen_ai.response.finish_reasons"] == ("cancelled",)
        assert span.attributes["ledger.cancel_source"] == "user"
    assert chat.end_ns == ts_ns(closed.ts)
    assert chat.attributes["ledger.cancel_to_upstream_closed_ms"] == closed.close_ms
    assert root.attributes["ledger.status"] == "interrupted"
    assert [name for name, _, _ in root.events] == ["ledger.cancel_requested"]
    await live.close()
    assert "ledger.cancel.upstream_close.duration" in receiver.metrics


async def test_a_re_sent_request_is_a_second_chat_span_under_the_same_invoke_agent(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver
) -> None:
    engine = engines()
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(Behavior(status=500), Behavior(text="after the re-send", chunk_delay=0.005))
    await engine.submit(cid, "hello")
    await answered(engine, cid, live)
    root, chats = one_trace(receiver)
    first, second = sorted(chats, key=lambda s: s.start_ns)
    assert first.name == second.name == "chat test-model" and first.span_id != second.span_id
    assert first.status_code == ERROR and first.attributes["error.type"] == "server"
    assert first.attributes["http.response.status_code"] == 500 and first.attributes["ledger.will_retry"] is True
    assert second.status_code == 0 and root.status_code == 0 and root.attributes["ledger.requests"] == 2
    await live.close()


async def test_a_failed_request_carries_its_error_type_on_both_spans(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver
) -> None:
    engine = engines()
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(Behavior(status=401))
    await engine.submit(cid, "hello")
    await answered(engine, cid, live)
    root, (chat,) = one_trace(receiver)
    assert root.status_code == chat.status_code == ERROR
    assert root.attributes["error.type"] == chat.attributes["error.type"] == "auth"
    assert chat.attributes["http.response.status_code"] == 401
    no_key_anywhere(receiver)
    await live.close()


async def test_a_tool_turn_stopped_during_its_tool_has_a_cancelled_execute_tool_span(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_slow")]))
    await engine.submit(cid, "run the slow job")
    await wait_until(lambda: "tool_dispatched" in [e.KIND for e in engine.events(cid)], what="the tool running")
    await engine.cancel(cid, "user")
    await answered(engine, cid, live)
    root, children = one_trace(receiver)
    (tool,) = [s for s in children if s.name == "execute_tool slow_task"]
    assert tool.span_id == span_id("tool", "call_slow") and tool.status_code == ERROR
    assert tool.attributes["gen_ai.tool.call.id"] == "call_slow"
    assert tool.attributes["mcp.method.name"] == "tools/call" and tool.attributes["error.type"] == "cancelled"
    assert tool.attributes["ledger.tool.status"] == "cancelled"
    assert "gen_ai.tool.call.arguments" not in tool.attributes
    assert root.attributes["ledger.cancel_source"] == "user" and root.attributes["ledger.tool_calls"] == 1
    await live.close()


async def test_a_step_s_chat_span_reaches_the_receiver_while_its_tool_still_runs_and_no_span_is_sent_twice(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("calculator", '{"expression": "2 + 3"}', "call_add")]),
        Behavior(text="", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_slow")]),
    )
    await engine.submit(cid, "add, then run the slow job")
    dispatched = [("tool_dispatched", "call_slow")]
    await wait_until(
        lambda: dispatched == [(e.KIND, e.call_id) for e in engine.events(cid) if e.KIND == "tool_dispatched"][1:],
        20,
        "the slow tool dispatched",
    )
    await asyncio.to_thread(live.flush)
    sent = [e for e in engine.events(cid) if isinstance(e, RequestSent)]
    early = {s.span_id for s in receiver.spans}
    assert span_id("chat", sent[0].request_id) in early and span_id("tool", "call_add") in early
    assert span_id("chat", sent[1].request_id) in early  # its step finished: it asked for the slow tool
    assert not [s for s in receiver.spans if s.parent_id is None]  # the attempt runs on: no root yet
    await engine.cancel(cid, "user")
    await answered(engine, cid, live)
    root, children = one_trace(receiver)
    ids = [s.span_id for s in receiver.spans]
    assert len(ids) == len(set(ids)) == 5  # root, two chat spans, two tool spans: each once
    assert {s.name for s in children} == {"chat test-model", "execute_tool calculator", "execute_tool slow_task"}
    await live.close()


@pytest.mark.parametrize("rev", ["2025-11-25", "2026-07-28"])
async def test_a_tool_s_question_is_a_wait_span_from_asked_to_answered_with_its_outcome_and_no_typed_values(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver, tmp_path: Path, rev: str
) -> None:
    hub, _ = await demo_hub(tmp_path, protocol=rev)
    engine = engines(tools=hub)
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("place_order", '{"item": "mug"}', "call_q")]),
        Behavior(text="Noted."),
    )
    await engine.submit(cid, "order a mug #order")
    found = await wait_until(lambda: [e for e in engine.events(cid) if isinstance(e, QuestionAsked)], 20, "a question")
    run = engine.active_run(cid)
    assert run is not None and questions.answer_question(
        run, found[0].question_id, "accept", {"name": "Ada Secretname", "quantity": "2", "size": "M"}
    )
    await answered(engine, cid, live)
    root, children = one_trace(receiver)
    (wait,) = [s for s in children if s.name == "await_answer place_order"]
    answer = next(e for e in engine.events(cid) if isinstance(e, QuestionAnswered))
    assert wait.span_id == span_id("question", found[0].question_id) and wait.status_code != ERROR
    assert (wait.start_ns, wait.end_ns) == (ts_ns(found[0].ts), ts_ns(answer.ts))
    assert wait.attributes["ledger.wait"] == "question" and wait.attributes["ledger.wait.outcome"] == "accept"
    assert wait.attributes["ledger.question.answered_by"] == "user" and wait.attributes["mcp.protocol.version"] == rev
    assert "Secretname" not in repr(receiver.spans)  # what the person typed is content: not without --otel-content
    (tool,) = [s for s in children if s.name == "execute_tool place_order"]
    assert tool.start_ns <= wait.start_ns <= wait.end_ns <= tool.end_ns
    await live.close()


async def test_message_content_is_exported_only_when_asked_for_and_never_a_key(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver
) -> None:
    engine = engines()
    live = follow(engine, receiver.url, content=True)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=f"the plan is here, and {TEST_KEY} is not", chunk_delay=0.005))
    await engine.submit(cid, QUESTION)
    await answered(engine, cid, live)
    root, (chat,) = one_trace(receiver)
    assert QUESTION in root.attributes["gen_ai.input.messages"]
    assert "the plan is here" in root.attributes["gen_ai.output.messages"]
    assert "the plan is here" in chat.attributes["gen_ai.output.messages"]
    no_key_anywhere(receiver)
    await live.close()


async def test_an_attempt_finalized_by_a_restart_is_exported_from_the_ledger(
    engines: EngineFactory, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    data = tmp_path / "crashed"
    store = Store.open(data, flush_interval=0.05)
    c, at = "conv_crashed", "2026-12-01T10:00:00.000+00:00"
    store.append(
        Started(
            conversation_id=c, ts=at, attempt_id="a1", message_id="m1", user_message_id="u1", turn=1, model="openai/x"
        )
    )
    store.append(
        RequestSent(
            conversation_id=c, ts="2026-12-01T10:00:00.010+00:00", attempt_id="a1", request_id="r1", model="openai/x"
        )
    )
    for n in range(3):
        store.append(
            Chunk(
                conversation_id=c,
                ts=f"2026-12-01T10:00:00.{200 + n}+00:00",
                attempt_id="a1",
                request_id="r1",
                chunk_seq=n,
                text=f"t{n} ",
            )
        )
    store.flush_sync(5)
    store.close()
    engine = engines(data)
    live = follow(engine, receiver.url)
    assert engine.recover() == ["a1"]
    await wait_until(lambda: not live.traces.open_attempts() and "a1" in live.exported, what="the trace read back")
    await asyncio.to_thread(live.flush)
    root, (chat,) = one_trace(receiver)
    assert root.trace_id == trace_id("a1") and root.start_ns == ts_ns(at)
    assert root.attributes["ledger.cancel_source"] == "restart" and root.status_code == ERROR
    assert chat.attributes["ledger.chunks"] == 3 and chat.span_id == span_id("chat", "r1")
    await live.close()


async def test_a_back_fill_of_the_stored_ledger_gives_the_live_run_s_span_ids(
    engines: EngineFactory, upstream: ScriptedUpstream, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    engine = engines()
    live = follow(engine, receiver.url)
    cid = engine.create_conversation()
    upstream.plan(Behavior(status=503), Behavior(text="alpha beta", chunk_delay=0.005), Behavior(text="gamma"))
    await engine.submit(cid, "one")
    await answered(engine, cid, live)
    await engine.submit(cid, "two")
    await answered(engine, cid, live)
    await live.close()
    await engine.flush()
    again = OtlpReceiver()
    try:
        args = ["export", "--otlp", again.url, "--data-dir", str(tmp_path / "data"), "--conversation", cid]
        assert await asyncio.to_thread(main, args) == 0
        live_ids = sorted((s.trace_id, s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in receiver.spans)
        filled = sorted((s.trace_id, s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in again.spans)
        assert filled == live_ids and len(filled) == 5
    finally:
        again.close()


async def test_a_receiver_that_is_down_loses_nothing_and_is_said_once_in_the_log(
    engines: EngineFactory, upstream: ScriptedUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    gone = OtlpReceiver()
    url = gone.url
    gone.close()
    engine = engines()
    live = follow(engine, url, timeout=0.5)
    cid = engine.create_conversation()
    caplog.set_level(logging.WARNING, "ledger_chat.telemetry")
    for n in range(3):
        upstream.plan(Behavior(text=f"answer {n}", chunk_delay=0.002))
        _, m = await engine.submit(cid, f"question {n}")
        await answered(engine, cid, live)
        assert current_attempt(engine, cid, m).text == f"answer {n}"
    failing = [r for r in caplog.records if "is failing" in r.getMessage()]
    assert len(failing) == 1 and url in failing[0].getMessage()
    assert live.exporter.failures >= 2
    await live.close()


async def test_a_receiver_that_never_answers_does_not_hold_up_the_answers(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    frozen = OtlpReceiver(hang=True)
    try:
        engine = engines()
        live = follow(engine, frozen.url, timeout=1.0)
        cid = engine.create_conversation()
        for n in range(2):
            upstream.plan(Behavior(text=" ".join(f"w{k}" for k in range(60)), chunk_delay=0.002))
            _, m = await engine.submit(cid, f"question {n}")
            await wait_until(lambda: not engine.is_streaming(cid), 20, "the answer to end")
            assert current_attempt(engine, cid, m).status == "complete"
        await wait_until(lambda: frozen.requests >= 1, what="the export reaching the frozen receiver")
        assert [e.KIND for e in engine.events(cid)].count("persisted") == 2
        await live.close(timeout=1.0)
    finally:
        frozen.close()
