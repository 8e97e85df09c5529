"""Approval policy per tool (issue 22) through real turns: the scripted upstream, litellm, the demo MCP server over
stdio (``hub``: every tool ``readOnlyHint`` but ``delete_note``, ``destructiveHint``) and over streamable HTTP.

The upstream answers HTTP 400, as OpenAI does, to a history where a tool call lacks exactly one tool message: each
"the next request is accepted" below is that check passing on a real request.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from engine.commands.engine import Engine, InputRejected
from engine.commands.grants import GrantView, chat_grants, revoke, server_grants
from engine.people import acting_as
from engine.tools.config import ServerConfig
from engine.tools.hub import ToolHub
from ledger.events.approval import ApprovalAsked, ApprovalGiven
from tests.support.app_process import free_port
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.ports import port_open
from tests.support.tool_turns import results, tool_messages
from tests.support.tools import ROOT, demo_hub, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")
DELETE = '{"title": "Caching", "reason": "outdated"}'


def asked(engine: Engine, cid: str) -> list[ApprovalAsked]:
    return [e for e in engine.events(cid) if isinstance(e, ApprovalAsked)]


def given(engine: Engine, cid: str) -> list[ApprovalGiven]:
    return [e for e in engine.events(cid) if isinstance(e, ApprovalGiven)]


def waiting(engine: Engine, cid: str, call_id: str) -> bool:
    conv = engine.state.conversations.get(cid)
    live = conv.live_attempt() if conv is not None else None
    call = live.tool_calls.get(call_id) if live is not None else None
    return call is not None and call.phase == "waiting"


async def ask_delete(engine: Engine, upstream: ScriptedUpstream, cid: str, call_id: str) -> str:
    """A turn whose one call is ``delete_note``; returns the answer's message id once the call waits."""
    upstream.plan(Behavior(text="", tool_calls=[PlannedCall("delete_note", DELETE, call_id)]), Behavior(text="Ok."))
    _, message_id = await engine.submit(cid, "delete the caching note")
    await wait_until(partial(waiting, engine, cid, call_id), 20, f"{call_id} waiting for approval")
    return message_id


async def run_delete(engine: Engine, upstream: ScriptedUpstream, cid: str, call_id: str) -> None:
    """A turn whose one call is ``delete_note``, expected to run without asking."""
    upstream.plan(Behavior(text="", tool_calls=[PlannedCall("delete_note", DELETE, call_id)]), Behavior(text="Ok."))
    await engine.submit(cid, "delete it again")
    await finished(engine, cid)


async def test_a_read_only_tool_runs_without_asking_and_a_destructive_one_waits_saying_why(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines(tools=hub)
    cid = engine.create_conversation()
    calls = [PlannedCall("current_time", "{}", "call_time"), PlannedCall("delete_note", DELETE, "call_del")]
    upstream.plan(Behavior(text="", tool_calls=calls), Behavior(text="Done."))
    _, m1 = await engine.submit(cid, "time, then delete")
    await wait_until(partial(waiting, engine, cid, "call_del"), 20, "delete_note waiting")
    assert results(engine, cid)["call_time"].status == "ok", "the read-only tool ran first, without asking"
    [question] = asked(engine, cid)
    assert (question.call_id, question.tool, question.mode, question.why) == (
        "call_del",
        "delete_note",
        "ask",
        "destructive",
    )
    resolved = hub.resolve("delete_note")
    assert resolved is not None and question.grant_hash == resolved.grant_hash and len(question.grant_hash) == 64
    assert current_attempt(engine, cid, m1).tool_calls["call_del"].asked == question  # the visible waiting state
    engine.decide_tool(cid, "call_del", False)
    await finished(engine, cid)
    assert results(engine, cid)["call_del"].status == "declined"
    assert [(g.decision, g.scope, g.by) for g in given(engine, cid)] == [("skip", "once", "user")]
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert tool_messages(sent) == ["call_time", "call_del"]


async def test_always_allow_in_this_chat_runs_the_next_call_without_asking_and_a_revoked_grant_asks_again(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines(tools=hub)
    cid = engine.create_conversation()
    await ask_delete(engine, upstream, cid, "call_1")
    engine.decide_tool(cid, "call_1", True, "chat")
    await finished(engine, cid)
    assert results(engine, cid)["call_1"].status == "ok"
    [grant] = chat_grants(engine, cid)
    assert (grant.server, grant.tool, grant.grant_hash) == ("demo", "delete_note", asked(engine, cid)[0].grant_hash)

    await run_delete(engine, upstream, cid, "call_2")
    assert results(engine, cid)["call_2"].status == "ok" and len(asked(engine, cid)) == 1, "it asked again"
    assert [(g.call_id, g.scope, g.by) for g in given(engine, cid)][-1] == ("call_2", "chat", "grant")
    assert upstream.last.status == 200

    assert await revoke(engine, cid, grant) and chat_grants(engine, cid) == ()
    await ask_delete(engine, upstream, cid, "call_3")
    assert asked(engine, cid)[-1].why == "destructive"
    engine.decide_tool(cid, "call_3", False)
    await finished(engine, cid)
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert tool_messages(sent) == ["call_1", "call_2", "call_3"]
    assert results(engine, cid)["call_3"].status == "declined"


async def test_the_first_answer_wins_and_a_second_is_refused(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines(tools=hub)
    cid = engine.create_conversation()
    await ask_delete(engine, upstream, cid, "call_a")
    engine.decide_tool(cid, "call_a", True)
    with pytest.raises(InputRejected):
        engine.decide_tool(cid, "call_a", False)  # the other tab's click, a moment later
    await finished(engine, cid)
    assert results(engine, cid)["call_a"].status == "ok"
    assert [(g.decision, g.by) for g in given(engine, cid)] == [("run", "user")]
    await follow_up_is_accepted(engine, cid, upstream)


async def test_always_allow_on_this_server_runs_it_in_another_chat_until_revoked(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines(tools=hub)
    first, second = engine.create_conversation(), engine.create_conversation()
    await ask_delete(engine, upstream, first, "call_s1")
    engine.decide_tool(first, "call_s1", True, "server")
    await finished(engine, first)
    try:
        [grant] = await server_grants(engine)
        assert (grant.scope, grant.tool) == ("server", "delete_note")
        await run_delete(engine, upstream, second, "call_s2")
        assert asked(engine, second) == [] and results(engine, second)["call_s2"].status == "ok"
        assert [(g.scope, g.by) for g in given(engine, second)] == [("server", "grant")]
    finally:
        assert await revoke(engine, None, GrantView("server", "demo", "delete_note", ""))
    await ask_delete(engine, upstream, second, "call_s3")
    engine.decide_tool(second, "call_s3", False)
    await finished(engine, second)
    sent = await follow_up_is_accepted(engine, second, upstream)
    assert tool_messages(sent) == ["call_s2", "call_s3"]


async def test_in_team_mode_one_persons_always_allow_never_runs_a_call_unasked_in_anothers_chat(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines(tools=hub)
    with acting_as("local:ann"):
        mine, later = engine.create_conversation(), engine.create_conversation()
    with acting_as("local:ben"):
        theirs = engine.create_conversation()
    with acting_as("local:ann"):
        await ask_delete(engine, upstream, mine, "call_t1")
        engine.decide_tool(mine, "call_t1", True, "server")
    await finished(engine, mine)
    try:
        assert [g.tool for g in await server_grants(engine, "local:ann")] == ["delete_note"]
        assert await server_grants(engine, "local:ben") == () and await server_grants(engine) == ()
        with acting_as("local:ben"):
            await ask_delete(engine, upstream, theirs, "call_t2")  # ann's grant is not ben's: it asks
            engine.decide_tool(theirs, "call_t2", False)
        await finished(engine, theirs)
        with acting_as("local:ann"):
            await run_delete(engine, upstream, later, "call_t3")  # ann's own other chat: it runs
        assert [(g.scope, g.by) for g in given(engine, later)] == [("server", "grant")]
        assert not await revoke(engine, None, GrantView("server", "demo", "delete_note", ""), "local:ben")
    finally:
        assert await revoke(engine, None, GrantView("server", "demo", "delete_note", ""), "local:ann")
    assert await server_grants(engine, "local:ann") == ()


async def test_stop_while_waiting_answers_skip_and_not_run_and_the_next_request_is_accepted(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines(tools=hub)
    cid = engine.create_conversation()
    m1 = await ask_delete(engine, upstream, cid, "call_stop")
    await engine.cancel(cid, "user")
    await finished(engine, cid)
    assert current_attempt(engine, cid, m1).status == "interrupted"
    assert results(engine, cid)["call_stop"].status == "not_run"
    assert [(g.decision, g.by) for g in given(engine, cid)] == [("skip", "stop")]
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert tool_messages(sent) == ["call_stop"]


async def test_a_restart_while_waiting_answers_not_run_and_the_turn_ends_interrupted(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    first = hub_engines(tools=hub)
    cid = first.create_conversation()
    m1 = await ask_delete(first, upstream, cid, "call_r")
    await first.flush()
    in_flight = shutil.ignore_patterns(".lock", ".*.tmp")
    shutil.copytree(tmp_path / "data", tmp_path / "disk-at-death", ignore=in_flight)
    await first.cancel(cid, "shutdown")
    engine = hub_engines(tmp_path / "disk-at-death", tools=hub)  # the restarted process finds the wait on disk
    assert current_attempt(engine, cid, m1).tool_calls["call_r"].phase == "waiting"
    assert engine.recover() == [current_attempt(engine, cid, m1).attempt_id]
    attempt = current_attempt(engine, cid, m1)
    assert attempt.status == "interrupted" and attempt.tool_calls["call_r"].status == "not_run"
    assert [(g.decision, g.by) for g in given(engine, cid)] == [("skip", "restart")]
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert tool_messages(sent) == ["call_r"]


async def test_a_tool_changed_by_its_server_voids_the_chat_grant_and_asks_again_saying_why(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    first = hub_engines(tools=hub)
    cid = first.create_conversation()
    await ask_delete(first, upstream, cid, "call_v1")
    first.decide_tool(cid, "call_v1", True, "chat")
    await finished(first, cid)
    await first.flush()
    shutil.copytree(tmp_path / "data", tmp_path / "later", ignore=shutil.ignore_patterns(".lock", ".*.tmp"))
    changed, _ = await demo_hub(
        tmp_path / "changed", env={"LEDGERCHAT_DEMO_DELETE_CHANGED": " It now also empties the bin."}
    )
    try:
        engine = hub_engines(tmp_path / "later", tools=changed)  # the app restarted; the server changed the tool
        await ask_delete(engine, upstream, cid, "call_v2")
        question = asked(engine, cid)[-1]
        assert question.why == "chat_grant_void" and question.grant_hash != asked(engine, cid)[0].grant_hash
        engine.decide_tool(cid, "call_v2", True)
        await finished(engine, cid)
        await follow_up_is_accepted(engine, cid, upstream)
    finally:
        await changed.stop()


async def test_the_config_sets_modes_per_tool_never_refuses_with_a_sentence_and_once_asks_once_per_chat(
    hub_engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    configured, record = await demo_hub(tmp_path, approval={"delete_note": "never", "*": "once"})
    try:
        engine = hub_engines(tools=configured)
        cid = engine.create_conversation()
        await run_delete(engine, upstream, cid, "call_never")
        refused = results(engine, cid)["call_never"]
        assert refused.status == "declined" and "approval policy" in refused.content and "forbids" in refused.content
        assert not any(r["event"] == "delete_note" for r in server_record(record)), "the server never saw it"
        assert [(g.decision, g.by) for g in given(engine, cid)] == [("skip", "policy")]

        upstream.plan(Behavior(text="", tool_calls=[PlannedCall("current_time", "{}", "call_o1")]), Behavior(text="."))
        await engine.submit(cid, "time please")  # read-only, but the config says "once": the config wins
        await wait_until(partial(waiting, engine, cid, "call_o1"), 20, "current_time waiting")
        assert (asked(engine, cid)[-1].mode, asked(engine, cid)[-1].why) == ("once", "config_server")
        engine.decide_tool(cid, "call_o1", True)
        await finished(engine, cid)
        upstream.plan(Behavior(text="", tool_calls=[PlannedCall("current_time", "{}", "call_o2")]), Behavior(text="."))
        await engine.submit(cid, "and again")
        await finished(engine, cid)
        assert len(asked(engine, cid)) == 1 and results(engine, cid)["call_o2"].status == "ok"
        assert [(g.scope, g.by) for g in given(engine, cid)][1:] == [("chat", "user"), ("chat", "grant")]
        sent = await follow_up_is_accepted(engine, cid, upstream)
        assert tool_messages(sent) == ["call_never", "call_o1", "call_o2"]
    finally:
        await configured.stop()


async def test_over_streamable_http_a_destructive_tool_asks_and_always_allow_in_this_chat_holds(
    hub_engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "demo.tools_server", "--http", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    web = ToolHub((ServerConfig(name="web", url=f"http://127.0.0.1:{port}/mcp"),))
    try:
        await wait_until(partial(port_open, port), 20, "the HTTP tool server listening")
        await web.start()
        engine = hub_engines(tools=web)
        cid = engine.create_conversation()
        await ask_delete(engine, upstream, cid, "call_h1")
        assert (asked(engine, cid)[0].server, asked(engine, cid)[0].why) == ("web", "destructive")
        engine.decide_tool(cid, "call_h1", True, "chat")
        await finished(engine, cid)
        await run_delete(engine, upstream, cid, "call_h2")
        assert len(asked(engine, cid)) == 1 and results(engine, cid)["call_h2"].status == "ok"
        sent = await follow_up_is_accepted(engine, cid, upstream)
        assert tool_messages(sent) == ["call_h1", "call_h2"]
    finally:
        await web.stop()
        process.kill()
        process.wait(timeout=10)


async def test_waiting_longer_than_the_idle_timeouts_for_a_person_ends_nothing_and_run_completes_the_turn(
    hub_engines: EngineFactory, hub: ToolHub, upstream: ScriptedUpstream
) -> None:
    engine = hub_engines(tools=hub, idle_timeout=0.3, first_chunk_timeout=0.5)
    cid = engine.create_conversation()
    m1 = await ask_delete(engine, upstream, cid, "call_slow")
    await nothing_more_for(1.5)  # five idle timeouts long: a wait for a person is not a silent provider
    assert waiting(engine, cid, "call_slow") and current_attempt(engine, cid, m1).status == "streaming"
    engine.decide_tool(cid, "call_slow", True)
    await finished(engine, cid)
    assert current_attempt(engine, cid, m1).status == "complete" and results(engine, cid)["call_slow"].status == "ok"
