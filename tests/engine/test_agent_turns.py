"""Agent turns through litellm against the scripted upstream and the real demo MCP server over stdio.

The upstream answers HTTP 400, as OpenAI does, to any history where a tool call lacks exactly one tool message:
every "history valid" below is that check passing on the next real request.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from engine.commands.engine import Engine
from engine.tools.config import ServerConfig
from engine.tools.hub import ToolHub
from ledger.codec import from_dict, to_dict
from ledger.ends import UNKNOWN_OUTCOME
from ledger.folds.audit import audit
from ledger.reducer import replay
from tests.support.app_process import free_port
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.ports import port_open
from tests.support.tool_turns import call_ids, results, tool_messages
from tests.support.tools import ROOT, demo_hub, demo_server_config, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until


def kinds(engine: Engine, cid: str) -> list[str]:
    return [e.KIND for e in engine.events(cid)]


async def test_stop_while_a_tool_call_is_half_written_keeps_the_text_and_runs_nothing(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, record = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    long_args = json.dumps({"expression": "1 + " * 60 + "1"})
    call = PlannedCall("calculator", long_args, "call_half", pieces=60)
    upstream.plan(Behavior(text="Let me compute that for you.", tool_calls=[call], chunk_delay=0.02, stall_after=20))
    _, m1 = await engine.submit(cid, "compute a long sum")
    await wait_until(lambda: "tool_call_started" in kinds(engine, cid), what="the call being written")
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "interrupted" and attempt.text == "Let me compute that for you."
    assert not {"tool_call", "tool_dispatched", "tool_result"} & set(kinds(engine, cid))
    assert server_record(record) == []
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert sent[1] == {"role": "assistant", "content": "Let me compute that for you."}
    assert call_ids(sent) == [] and tool_messages(sent) == []


async def test_stop_during_a_slow_tool_tells_the_server_and_answers_the_call_once(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, record = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_slow")]))
    _, m1 = await engine.submit(cid, "run the slow job")
    await wait_until(lambda: "tool_progress" in kinds(engine, cid), what="the tool reporting progress")
    stopped_at = time.time()
    assert await engine.cancel(cid, "user")
    grace = engine.settings.limits.tool_grace
    seen = await wait_until(
        lambda: [r for r in server_record(record) if r["event"] == "slow_task_cancelled"], grace, "the server's cancel"
    )
    assert seen[0]["t"] - stopped_at < grace
    result = results(engine, cid)["call_slow"]
    assert result.status == "cancelled" and "told to cancel" in result.content
    assert current_attempt(engine, cid, m1).status == "interrupted"
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert call_ids(sent) == ["call_slow"] and tool_messages(sent) == ["call_slow"]


async def test_two_calls_stop_during_the_first_gives_it_its_outcome_and_the_second_not_run(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    calls = [PlannedCall("slow_task", '{"seconds": 8}', "call_a"), PlannedCall("current_time", "{}", "call_b")]
    upstream.plan(Behavior(text="Two things.", tool_calls=calls))
    await engine.submit(cid, "two tools")
    await wait_until(lambda: "tool_dispatched" in kinds(engine, cid), what="the first call running")
    await engine.cancel(cid, "user")
    got = results(engine, cid)
    assert (got["call_a"].status, got["call_b"].status) == ("cancelled", "not_run")
    assert "before this call was dispatched" in got["call_b"].content
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert tool_messages(sent) == ["call_a", "call_b"]


async def test_a_two_step_turn_completes_with_tokens_summed_and_replay_equal_to_the_live_state(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="Computing.", tool_calls=[PlannedCall("calculator", '{"expression": "17*23"}', "call_c")]),
        Behavior(text="17 times 23 is 391."),
    )
    started = time.monotonic()
    _, m1 = await engine.submit(cid, "compute 17*23")
    await finished(engine, cid)
    turn_ms = (time.monotonic() - started) * 1000
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "complete" and attempt.tool_calls["call_c"].content == "17*23 = 391"
    assert [attempt.step_text(0), attempt.step_text(1)] == ["Computing.", "17 times 23 is 391."]
    second = upstream.records[-1].messages
    assert second[-2]["tool_calls"][0]["function"] == {"name": "calculator", "arguments": '{"expression": "17*23"}'}
    assert second[-1] == {"role": "tool", "tool_call_id": "call_c", "content": "17*23 = 391"}
    steps = [s.usage for s in attempt.steps]
    assert attempt.metrics is not None and attempt.metrics.steps == 2 and not attempt.metrics.estimated
    assert attempt.metrics.wait_ms is not None and attempt.metrics.tool_ms is not None
    # the first step's wait and the tool's run are two parts of the turn that do not overlap
    assert attempt.metrics.wait_ms >= 0 and attempt.metrics.tool_ms > 0
    assert attempt.metrics.wait_ms + attempt.metrics.tool_ms <= turn_ms
    assert attempt.metrics.output_tokens == sum(u.output_tokens for u in steps if u)
    assert attempt.metrics.input_tokens == sum(u.input_tokens for u in steps if u) > 0
    (a,) = audit(engine.events(cid))
    assert (a.steps, a.tool_calls) == (2, 1)
    assert [p.kind for p in a.phases].count("tool_result") == 1 and "step_started" in [p.kind for p in a.phases]
    exported = [to_dict(e) for e in engine.events(cid)]
    assert replay(from_dict(d) for d in exported).conversations[cid] == engine.conversation(cid)


async def test_retry_after_a_tool_turn_runs_the_tools_again_and_a_late_old_result_is_stale(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_old")]),
        Behavior(text="", tool_calls=[PlannedCall("current_time", "{}", "call_new")]),
        Behavior(text="It is now."),
    )
    _, m1 = await engine.submit(cid, "what time is it")
    await wait_until(lambda: "tool_dispatched" in kinds(engine, cid), what="the old call running")
    old = engine.active_run(cid)
    assert old is not None
    await engine.retry(cid, m1)
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert attempt.attempt_id != old.attempt_id and attempt.status == "complete"
    assert set(attempt.tool_calls) == {"call_new"}
    assert old.record_result("call_old", "ok", "LATE RESULT", 1.0) is False
    conv = engine.conversation(cid)
    assert conv is not None and "LATE RESULT" not in conv.attempts[old.attempt_id].tool_calls["call_old"].content
    assert conv.attempts[old.attempt_id].stale_tool_results == 1
    assert "LATE" not in json.dumps(await follow_up_is_accepted(engine, cid, upstream))


async def test_a_failing_tool_and_malformed_arguments_are_results_the_model_sees(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    calls = [PlannedCall("always_fails", "{}", "call_f"), PlannedCall("calculator", '{"expression": "1+', "call_m")]
    upstream.plan(Behavior(text="Trying.", tool_calls=calls), Behavior(text="Both failed, sorry."))
    _, m1 = await engine.submit(cid, "try the tools")
    await finished(engine, cid)
    got = results(engine, cid)
    assert got["call_f"].status == "error" and "on purpose" in got["call_f"].content
    assert got["call_m"].status == "error" and "not valid JSON" in got["call_m"].content
    assert current_attempt(engine, cid, m1).status == "complete"
    assert upstream.last.status == 200 and tool_messages(upstream.last.messages) == ["call_f", "call_m"]


async def test_a_tool_server_that_dies_mid_call_gives_a_readable_error_and_comes_back(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, record = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_d")]),
        Behavior(text="The tool server crashed."),
    )
    await engine.submit(cid, "slow job")
    started = await wait_until(lambda: [r for r in server_record(record) if r["event"] == "slow_task_started"])
    os.kill(started[0]["pid"], signal.SIGKILL)
    await finished(engine, cid)
    assert results(engine, cid)["call_d"].status == "error"
    assert "stopped while running this call" in results(engine, cid)["call_d"].content
    assert upstream.last.status == 200
    await wait_until(lambda: hub.health()[0].state == "ready", 15, "the server started again")


async def test_a_model_that_never_stops_calling_tools_ends_at_the_step_limit_readably(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub, max_steps=2)
    cid = engine.create_conversation()
    upstream.plan(
        *[Behavior(text="", tool_calls=[PlannedCall("current_time", "{}", f"call_{n}")]) for n in range(2)],
    )
    _, m1 = await engine.submit(cid, "loop forever")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "failed" and attempt.error_type == "step_limit"
    assert "step limit (2 steps)" in (attempt.error_summary or "")
    got = results(engine, cid)
    assert got["call_0"].status == "ok" and got["call_1"].status == "not_run", "the last step's call must not run"
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert call_ids(sent) == [] and tool_messages(sent) == []


async def test_with_confirm_run_and_skip_both_leave_a_valid_history(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path, confirm=True)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    calls = [
        PlannedCall("current_time", "{}", "call_run"),
        PlannedCall("calculator", '{"expression": "2+2"}', "call_skip"),
    ]
    upstream.plan(Behavior(text="", tool_calls=calls), Behavior(text="Done."))
    _, m1 = await engine.submit(cid, "time and sum")

    def waiting(call_id: str) -> bool:
        call = current_attempt(engine, cid, m1).tool_calls.get(call_id)
        return call is not None and call.phase == "waiting"

    for call_id, decision in (("call_run", True), ("call_skip", False)):
        await wait_until(partial(waiting, call_id), what=f"{call_id} waiting for approval")
        engine.decide_tool(cid, call_id, decision)
    await finished(engine, cid)
    got = results(engine, cid)
    assert got["call_run"].status == "ok" and got["call_skip"].status == "declined"
    assert upstream.last.status == 200 and tool_messages(upstream.last.messages) == ["call_run", "call_skip"]


async def test_a_turn_killed_while_a_tool_ran_comes_back_interrupted_with_a_valid_history(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    first = engines(tools=hub)
    cid = first.create_conversation()
    upstream.plan(Behavior(text="Working.", tool_calls=[PlannedCall("slow_task", '{"seconds": 8}', "call_k")]))
    _, m1 = await first.submit(cid, "slow job")
    await wait_until(lambda: "tool_dispatched" in kinds(first, cid), what="the call running")
    await first.flush()
    in_flight = shutil.ignore_patterns(".lock", ".*.tmp")  # a write still in flight is not on disk yet
    shutil.copytree(tmp_path / "data", tmp_path / "disk-at-death", ignore=in_flight)
    await first.cancel(cid, "shutdown")  # the first process is gone: its turn must not reach the upstream any more
    engine = engines(tmp_path / "disk-at-death")  # what a restarted process finds on disk
    assert current_attempt(engine, cid, m1).tool_calls["call_k"].phase == "running"
    assert engine.recover() == [current_attempt(engine, cid, m1).attempt_id]
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "interrupted" and attempt.tool_calls["call_k"].status == "unknown"
    assert attempt.tool_calls["call_k"].content == UNKNOWN_OUTCOME  # what the restart knows: nothing, said so
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert tool_messages(sent) == ["call_k"]


async def test_a_tool_server_that_cannot_start_is_reported_and_its_tools_are_not_offered(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    broken = ServerConfig(name="broken", command="/nonexistent/tool-server")
    hub = ToolHub((broken, demo_server_config(tmp_path / "record.jsonl")), log_dir=tmp_path / "logs")
    await hub.start()
    health = {h.name: h for h in hub.health()}
    assert health["broken"].state == "failed" and "not found" in (health["broken"].message or "")
    assert "/nonexistent/tool-server" in (health["broken"].message or "")  # named, never "(None)"
    assert "None" not in (health["broken"].message or "")
    assert health["demo"].state == "ready"
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="hello"))
    await engine.submit(cid, "hi")
    await finished(engine, cid)
    assert "current_time" in upstream.last.tools and all(not t.startswith("broken") for t in upstream.last.tools)


async def test_a_streamable_http_tool_server_works_like_a_stdio_one(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "demo.tools_server", "--http", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await wait_until(partial(port_open, port), 20, "the HTTP tool server listening")
        hub = ToolHub((ServerConfig(name="web", url=f"http://127.0.0.1:{port}/mcp"),))
        await hub.start()
        assert hub.health()[0].state == "ready" and "calculator" in hub.health()[0].tools
        outcome = await hub.call("web", "calculator", {"expression": "6*7"}, None)
        assert (outcome.text, outcome.is_error) == ("6*7 = 42", False)
        await hub.stop()
    finally:
        process.kill()
        process.wait(timeout=10)


async def test_a_provider_that_reuses_a_call_id_in_the_next_step_still_gets_each_call_answered_once(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("current_time", "{}", "call_0")]),
        Behavior(text="", tool_calls=[PlannedCall("current_time", "{}", "call_0")]),  # the same id again
        Behavior(text="Both times noted."),
    )
    _, m1 = await engine.submit(cid, "time twice")
    await finished(engine, cid)
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "complete" and len(attempt.tool_calls) == 2
    assert all(c.status == "ok" for c in attempt.tool_calls.values()) and attempt.stale_tool_results == 0
    ids = call_ids(upstream.last.messages)
    assert len(set(ids)) == 2 and sorted(tool_messages(upstream.last.messages)) == sorted(ids)


def test_parallel_calls_sent_at_one_index_are_told_apart_by_their_ids() -> None:
    from engine.provider.calls import ProviderConfig, ToolPiece
    from engine.turns.attempt import AttemptRun
    from ledger.events.core import Created, Started, Submitted
    from ledger.reducer import reduce
    from ledger.state import EMPTY_STATE

    state = [EMPTY_STATE]

    def append(event):  # the same path the engine takes: reduce and keep
        state[0] = reduce(state[0], event)
        return event

    for event in (
        Created(conversation_id="c"),
        Submitted(conversation_id="c", message_id="u", turn=1, text="q"),
        Started(conversation_id="c", attempt_id="a", message_id="m", user_message_id="u", turn=1, model="x"),
    ):
        append(event)
    run = AttemptRun(
        conversation_id="c", turn=1, message_id="m", user_message_id="u", attempt_id="a", model="x",
        messages=[], context_ids=(), provider=ProviderConfig(model="x"), append=append,
        view=lambda: state[0].conversations["c"], time_out=lambda stalled, still: None,
    )  # fmt: skip
    run.begin_step(1)
    for piece in (
        ToolPiece(index=0, call_id="call_A", name="f", arguments='{"a":'),
        ToolPiece(index=0, arguments="1}"),
        ToolPiece(index=0, call_id="call_B", name="g", arguments='{"a":2}'),
    ):
        assert run.receive_piece(piece)
    calls = run.complete_calls(lambda name: None)
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [("call_A", "f", '{"a":1}'), ("call_B", "g", '{"a":2}')]
