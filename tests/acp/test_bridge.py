"""``main.py acp`` driven over real stdio by the SDK's client: streamed answers, the cancel contract, approvals and
bad input, against the scripted upstream through litellm and the demo tool server (one agent process for the
module; each test its own session)."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import RequestError, text_block
from acp.helpers import embedded_text_resource, resource_block, resource_link_block

from ledger.events.approval import ApprovalGiven
from ledger.events.core import Cancelled, CancelRequested, Chunk, Started, Submitted, ToolResult
from tests.acp.conftest import PIRATE, Editor, ledger_events, persisted
from tests.support.app_process import ROOT
from tests.support.tools import server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")
LONG = " ".join(f"word{i}" for i in range(400))
DELETE = '{"title": "Caching", "reason": "outdated"}'


async def test_a_streamed_answer_arrives_as_chunks_whose_text_is_the_ledgers_answer_then_end_turn(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    scripted.plan(Behavior(text="The ledger keeps every chunk, in order, and nothing else.", reasoning="Let me see."))
    sid = await agent.new_session()
    response = await agent.prompt(sid, "what does the ledger keep?")
    assert response.stop_reason == "end_turn"
    [answer] = await persisted(agent, sid)
    assert answer.status == "complete"
    assert len(agent.of_kind(sid, "agent_message_chunk")) > 1, "streamed, not sent at once"
    assert agent.text(sid) == answer.text == "The ledger keeps every chunk, in order, and nothing else."
    reasoning = "".join(
        e.text for e in ledger_events(agent.data_dir, sid) if isinstance(e, Chunk) and e.block == "reasoning"
    )
    assert agent.text(sid, "agent_thought_chunk") == reasoning == "Let me see."
    assert scripted.last.messages[-1] == {"role": "user", "content": "what does the ledger keep?"}


async def test_the_agent_presets_are_the_sessions_modes_and_the_chosen_one_instructs_the_next_answer(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    made = await agent.conn.new_session(cwd=str(ROOT), mcp_servers=[])
    assert made.modes is not None and made.modes.current_mode_id == "default"
    assert [(m.id, m.name) for m in made.modes.available_modes] == [("default", "Default"), ("pirate", "Pirate")]
    sid = made.session_id
    with pytest.raises(RequestError) as refused:
        await agent.conn.set_session_mode(session_id=sid, mode_id="no-such-preset")
    assert refused.value.code == -32602
    await agent.conn.set_session_mode(session_id=sid, mode_id="pirate")
    scripted.plan(Behavior(text="Arr, the ledger keeps it all."))
    assert (await agent.prompt(sid, "what does the ledger keep?")).stop_reason == "end_turn"
    assert scripted.last.messages[0] == {"role": "system", "content": PIRATE}
    await persisted(agent, sid)
    [started] = [e for e in ledger_events(agent.data_dir, sid) if isinstance(e, Started)]
    assert started.preset_id == "pirate", "the attempt names the preset it ran with"


async def test_cancel_mid_stream_sends_every_chunk_before_the_cancelled_answer_and_keeps_that_prefix(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    scripted.plan(Behavior(text=LONG, chunk_delay=0.05))
    sid = await agent.new_session()
    prompt = asyncio.ensure_future(agent.prompt(sid, "go on for a while"))
    await agent.chunks_arrived(sid, 5)
    await agent.conn.cancel(session_id=sid)
    response = await prompt
    assert response.stop_reason == "cancelled"
    [answer] = await persisted(agent, sid)
    assert answer.status == "interrupted"
    received = agent.text(sid)
    assert received == answer.text and 0 < len(received) < len(LONG), "the editor got exactly the kept prefix"
    sources = [e.source for e in ledger_events(agent.data_dir, sid) if isinstance(e, (CancelRequested, Cancelled))]
    assert sources == ["acp", "acp"], "the one cancel path, source acp"
    wire = [m for m in agent.wire if m.get("params", {}).get("sessionId") == sid or "result" in m or "error" in m]
    last_chunk = max(
        i
        for i, m in enumerate(wire)
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    )
    answered = next(i for i, m in enumerate(wire) if m.get("result", {}).get("stopReason") == "cancelled")
    assert last_chunk < answered, "the last agent_message_chunk precedes the cancelled answer"
    scripted.plan(Behavior(text="Fine."))
    assert (await agent.prompt(sid, "and now?")).stop_reason == "end_turn"
    assert {"role": "assistant", "content": received} in scripted.last.messages, "the prefix is in the next request"


async def test_cancel_during_a_tool_call_reaches_the_tool_server_and_the_editors_card_ends_as_the_ledgers_call(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    scripted.plan(Behavior(text="Working. ", tool_calls=[PlannedCall("slow_task", '{"seconds": 30}', "call_slow")]))
    prompt = asyncio.ensure_future(agent.prompt(sid, "run the slow task"))
    await wait_until(
        lambda: any(u.status == "in_progress" for u in agent.of_kind(sid, "tool_call_update")), 30, "the call running"
    )
    await agent.conn.cancel(session_id=sid)
    assert (await prompt).stop_reason == "cancelled"
    [answer] = await persisted(agent, sid)
    assert answer.status == "interrupted" and agent.text(sid) == answer.text == "Working. "
    [result] = [e for e in ledger_events(agent.data_dir, sid) if isinstance(e, ToolResult)]
    assert result.call_id == "call_slow" and result.status == "cancelled"
    assert "slow_task_cancelled" in [line["event"] for line in server_record(agent.record)], "the server saw it"
    last = [u for u in agent.of_kind(sid, "tool_call_update") if u.tool_call_id == "call_slow"][-1]
    assert (last.status, last.content[0].content.text) == ("failed", result.content)


async def test_a_tool_call_the_policy_asks_about_runs_once_allowed_and_is_declined_when_rejected(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    agent.permission = "allow_once"
    scripted.plan(Behavior(text="", tool_calls=[PlannedCall("delete_note", DELETE, "call_yes")]), Behavior(text="Ok."))
    assert (await agent.prompt(sid, "delete the caching note")).stop_reason == "end_turn"
    agent.permission = "reject_once"
    scripted.plan(Behavior(text="", tool_calls=[PlannedCall("delete_note", DELETE, "call_no")]), Behavior(text="No."))
    assert (await agent.prompt(sid, "delete it again")).stop_reason == "end_turn"
    asked = [(call.tool_call_id, options) for s, call, options in agent.asked if s == sid]
    assert asked == [(c, ["allow_once", "allow_always", "reject_once"]) for c in ("call_yes", "call_no")]
    await persisted(agent, sid, 2)
    results = {e.call_id: e.status for e in ledger_events(agent.data_dir, sid) if isinstance(e, ToolResult)}
    assert results == {"call_yes": "ok", "call_no": "declined"}
    calls = agent.of_kind(sid, "tool_call")
    assert [c.tool_call_id for c in calls] == ["call_yes", "call_no"], "each call announced once"
    finals = {
        u.tool_call_id: u.status for u in agent.of_kind(sid, "tool_call_update") if u.status in ("completed", "failed")
    }
    assert finals == {"call_yes": "completed", "call_no": "failed"}
    assert agent.text(sid) == "Ok.No."


async def test_allow_always_grants_the_tool_in_this_chat_so_the_next_call_runs_unasked(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    agent.permission = "allow_always"
    for call_id in ("call_a", "call_b"):
        scripted.plan(Behavior(text="", tool_calls=[PlannedCall("delete_note", DELETE, call_id)]), Behavior(text="."))
        assert (await agent.prompt(sid, f"delete ({call_id})")).stop_reason == "end_turn"
    assert [call.tool_call_id for s, call, _ in agent.asked if s == sid] == ["call_a"]
    await persisted(agent, sid, 2)
    results = {e.call_id: e.status for e in ledger_events(agent.data_dir, sid) if isinstance(e, ToolResult)}
    assert results == {"call_a": "ok", "call_b": "ok"}


async def test_cancel_while_a_permission_is_pending_ends_the_prompt_cancelled_and_the_call_never_runs(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    agent.permission, agent.hold = "hold", asyncio.Event()
    scripted.plan(Behavior(text="", tool_calls=[PlannedCall("delete_note", DELETE, "call_held")]), Behavior(text="!"))
    prompt = asyncio.ensure_future(agent.prompt(sid, "delete the caching note"))
    await wait_until(lambda: any(s == sid for s, _, _ in agent.asked), 30, "the permission request")
    await agent.conn.cancel(session_id=sid)
    agent.hold.set()  # the editor answers its open request "cancelled" after its Stop, as the protocol asks
    assert (await prompt).stop_reason == "cancelled"
    await persisted(agent, sid)
    events = ledger_events(agent.data_dir, sid)
    assert [(e.decision, e.by) for e in events if isinstance(e, ApprovalGiven)] == [("skip", "stop")]
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert result.status != "ok"
    finals = [u.status for u in agent.of_kind(sid, "tool_call_update") if u.tool_call_id == "call_held"]
    assert finals[-1] == "failed", "the editor's card ends as the ledger's call"
    agent.permission = "allow_once"


async def test_a_prompt_to_an_unknown_session_and_a_second_prompt_while_one_runs_are_refused(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    with pytest.raises(RequestError) as unknown:
        await agent.prompt("conv_nobody", "hello?")
    assert unknown.value.code == -32602 and "no session conv_nobody" in unknown.value.data["details"]
    scripted.plan(Behavior(text=LONG, chunk_delay=0.05))
    sid = await agent.new_session()
    first = asyncio.ensure_future(agent.prompt(sid, "a long one"))
    await agent.chunks_arrived(sid, 2)
    with pytest.raises(RequestError) as second:
        await agent.prompt(sid, "and another")
    assert second.value.code == -32600 and "already running" in second.value.data["details"]
    await agent.conn.cancel(session_id=sid)
    assert (await first).stop_reason == "cancelled"
    assert len(await persisted(agent, sid)) == 1, "the refused prompt sent nothing"


async def test_malformed_json_an_unknown_method_and_bad_params_get_the_protocols_answers_and_the_agent_goes_on(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    agent.write_raw(b"{this is not json\n")
    agent.write_raw(
        json.dumps({"jsonrpc": "2.0", "id": 90001, "method": "session/nothing", "params": {}}).encode() + b"\n"
    )
    bad_params = {"jsonrpc": "2.0", "id": 90002, "method": "session/prompt", "params": {"prompt": "not a list"}}
    agent.write_raw(json.dumps(bad_params).encode() + b"\n")
    error = await wait_until(lambda: next((m for m in agent.wire if m.get("id") == 90001), None), 20, "an answer")
    assert error["error"]["code"] == -32601, "method not found"
    error = await wait_until(lambda: next((m for m in agent.wire if m.get("id") == 90002), None), 20, "an answer")
    assert error["error"]["code"] == -32602, "invalid params"
    scripted.plan(Behavior(text="Still here."))
    sid = await agent.new_session()
    assert (await agent.prompt(sid, "are you there?")).stop_reason == "end_turn"
    assert agent.text(sid) == "Still here."


async def test_a_provider_error_answers_the_prompt_with_an_error_not_an_end_turn(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    scripted.plan(Behavior(status=401))
    sid = await agent.new_session()
    with pytest.raises(RequestError) as failed:
        await agent.prompt(sid, "hello")
    assert failed.value.data["error_type"] == "auth" and failed.value.data["http_status"] == 401
    [answer] = await persisted(agent, sid)
    assert answer.status == "failed"


async def test_an_answer_the_output_limit_ended_answers_max_tokens(agent: Editor, scripted: ScriptedUpstream) -> None:
    scripted.plan(Behavior(text="This answer stops at the", cut=True))
    sid = await agent.new_session()
    assert (await agent.prompt(sid, "a long one")).stop_reason == "max_tokens"
    [answer] = await persisted(agent, sid)
    assert agent.text(sid) == answer.text == "This answer stops at the"


async def test_session_load_replays_the_messages_the_answer_and_each_tool_call_with_its_one_result(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    agent.permission = "allow_once"
    call = PlannedCall("delete_note", DELETE, "call_replayed")
    scripted.plan(Behavior(text="Deleting. ", tool_calls=[call]), Behavior(text="Deleted."))
    assert (await agent.prompt(sid, "delete the caching note")).stop_reason == "end_turn"
    streamed = agent.text(sid)
    await persisted(agent, sid)
    [result] = [e for e in ledger_events(agent.data_dir, sid) if isinstance(e, ToolResult)]
    agent.updates[sid] = []
    await agent.conn.load_session(cwd="/", session_id=sid, mcp_servers=[])
    assert [u.content.text for u in agent.of_kind(sid, "user_message_chunk")] == ["delete the caching note"]
    assert agent.text(sid) == streamed == "Deleting. Deleted."
    [replayed] = agent.of_kind(sid, "tool_call")
    assert (replayed.tool_call_id, replayed.status) == ("call_replayed", "completed")
    assert replayed.content[0].content.text == result.content
    kinds = [u.session_update for u in agent.updates[sid]]
    assert kinds == ["user_message_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk",
                     "available_commands_update"], "in order, the session's commands after its history"  # fmt: skip


async def test_an_answer_the_providers_safety_filter_ended_answers_refusal(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    scripted.plan(Behavior(text="I can tell you that", blocked=True))
    sid = await agent.new_session()
    assert (await agent.prompt(sid, "something the filter stops")).stop_reason == "refusal"
    [answer] = await persisted(agent, sid)
    assert agent.text(sid) == answer.text


async def test_a_prompts_resource_link_and_embedded_file_reach_the_model_as_one_user_message_in_order(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    sid = await agent.new_session()
    scripted.plan(Behavior(text="It returns one."))
    prompt = [
        text_block("What does f return?"),
        resource_link_block("notes.md", "file:///p/notes.md", title="notes.md"),
        resource_block(embedded_text_resource("file:///p/a.py", "def f():\n    return 1")),
    ]
    assert (await agent.conn.prompt(session_id=sid, prompt=prompt)).stop_reason == "end_turn"
    sent = "What does f return?\n\n[notes.md](file:///p/notes.md)\n\nfile:///p/a.py:\n```\ndef f():\n    return 1\n```"
    assert scripted.last.messages[-1] == {"role": "user", "content": sent}
    await persisted(agent, sid)
    [submitted] = [e for e in ledger_events(agent.data_dir, sid) if isinstance(e, Submitted)]
    assert submitted.text == sent and submitted.attachments == ()
