"""A tool's question (MCP elicitation: the demo server's ``place_order`` form), over real stdio: put to an editor
that declares form elicitation, its answer reaching the tool and the ledger; declined at once for an editor that
does not, the tool and the model told so."""

from __future__ import annotations

import json

import pytest
from acp.schema import ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities

from ledger.events.core import ToolResult
from ledger.events.question import QuestionAnswered, QuestionAsked
from tests.acp.conftest import Editor, ledger_events, persisted
from tests.support.tools import server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream

pytestmark = pytest.mark.asyncio(loop_scope="module")
ORDER = PlannedCall("place_order", '{"item": "tea"}', "call_order")
FORMS = ClientCapabilities(elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))


async def test_an_editor_that_takes_forms_is_asked_the_tools_question_and_its_answer_reaches_tool_and_ledger(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    await agent.conn.initialize(protocol_version=1, client_capabilities=FORMS)
    agent.answer = {"name": "Ada", "quantity": 2, "size": "M", "gift": False}
    sid = await agent.new_session()
    scripted.plan(Behavior(text="", tool_calls=[ORDER]), Behavior(text="Ordered."))
    assert (await agent.prompt(sid, "order tea")).stop_reason == "end_turn"
    [(message, mode)] = agent.questions
    assert "fill in the order" in message
    assert (mode.session_id, mode.tool_call_id) == (sid, "call_order")
    assert set(mode.requested_schema.properties) == {"name", "quantity", "size", "gift"}
    await persisted(agent, sid)
    events = ledger_events(agent.data_dir, sid)
    [asked] = [e for e in events if isinstance(e, QuestionAsked)]
    [answered] = [e for e in events if isinstance(e, QuestionAnswered)]
    assert (answered.question_id, answered.action, answered.by) == (asked.question_id, "accept", "user")
    assert json.loads(answered.content or "{}") == agent.answer
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert result.content == "Order placed: 2 x tea (M) for Ada."
    seen = [r for r in server_record(agent.record) if r["event"] == "question_answered"]
    assert seen[-1]["data"] == agent.answer, "the tool got the editor's values"


async def test_an_editor_that_takes_no_forms_is_not_asked_and_the_question_is_declined(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    await agent.conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    agent.questions.clear()
    sid = await agent.new_session()
    scripted.plan(Behavior(text="", tool_calls=[ORDER]), Behavior(text="No order then."))
    assert (await agent.prompt(sid, "order tea")).stop_reason == "end_turn"
    assert agent.questions == []
    await persisted(agent, sid)
    events = ledger_events(agent.data_dir, sid)
    [answered] = [e for e in events if isinstance(e, QuestionAnswered)]
    assert (answered.action, answered.by) == ("decline", "app"), "declined by the app, not by a person"
    assert answered.reason == "this editor takes no questions (it declared no form elicitation)", "why, kept"
    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert result.content == "No order placed: the person chose decline."
    tool_message = next(m for m in scripted.last.messages if m["role"] == "tool")
    assert "chose decline" in json.dumps(tool_message), "the model reads that it was declined"
