"""Questions from tools (MCP elicitation) against the demo server over stdio, on both revisions a server can
negotiate (2025-11-25: an ``elicitation/create`` request; 2026-07-28: an ``input_required`` result answered by
re-sending the request); Stop while a question waits; the tool's deadline paused while it waits; a restart."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engine.commands.engine import Engine
from engine.tools.asking import fields
from engine.turns import questions
from engine.turns.worker import recover
from ledger.codec import dumps_line
from ledger.events.core import AnyEvent, QuestionAnswered, QuestionAsked, ToolResult
from ledger.folds.audit import audit
from ledger.reducer import replay
from ledger.state import ToolCallState
from tests.support.engine import EngineFactory, finished, follow_up_is_accepted
from tests.support.tools import demo_hub, server_record
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import wait_until

REVISIONS = ["2025-11-25", "2026-07-28"]
ORDER = {"name": "Ada", "quantity": "2", "size": "M", "gift": True}  # as the form gives them: a number as typed


async def asked(engine: Engine, cid: str, upstream: ScriptedUpstream, tmp_path: Path, rev: str) -> QuestionAsked:
    upstream.plan(
        Behavior(text="", tool_calls=[PlannedCall("place_order", '{"item": "mug"}', "call_q")]),
        Behavior(text="Noted."),
    )
    await engine.submit(cid, "order a mug #order")
    found: list[QuestionAsked] = await wait_until(lambda: of(engine, cid, QuestionAsked), 20, "the tool's question")
    return found[0]


def of(engine: Engine, cid: str, kind: type) -> list:
    return [e for e in engine.events(cid) if isinstance(e, kind)]


def the_call(engine: Engine, cid: str) -> ToolCallState:
    conv = engine.conversation(cid)
    assert conv is not None
    return next(a.tool_calls["call_q"] for a in conv.attempts.values() if "call_q" in a.tool_calls)


@pytest.mark.parametrize("rev", REVISIONS)
async def test_a_form_question_shows_its_typed_fields_refuses_an_invalid_value_and_submit_reaches_the_tool(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path, rev: str
) -> None:
    hub, record = await demo_hub(tmp_path, protocol=rev)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    question = await asked(engine, cid, upstream, tmp_path, rev)
    assert (question.mode, question.revision) == ("form", rev)
    form = {f.key: (f.kind, f.label, f.required) for f in fields(json.loads(question.requested))}
    assert form == {
        "name": ("string", "Name", True),
        "quantity": ("integer", "Quantity", True),
        "size": ("choice", "Size", True),
        "gift": ("boolean", "Gift wrap", False),
    }
    assert the_call(engine, cid).questions[0].question_id == question.question_id  # the card's pending form
    run = engine.active_run(cid)
    assert run is not None
    with pytest.raises(ValueError, match="Quantity: must be at most 10"):
        questions.answer_question(run, question.question_id, "accept", {**ORDER, "quantity": "11"})
    assert of(engine, cid, QuestionAnswered) == [] and server_record(record) == []  # invalid is never sent
    assert questions.answer_question(run, question.question_id, "accept", ORDER)
    assert not questions.answer_question(run, question.question_id, "decline")  # the first answer wins
    await finished(engine, cid)
    (result,) = of(engine, cid, ToolResult)
    assert (result.status, result.content) == ("ok", "Order placed: 2 x mug (M) for Ada, gift wrapped.")
    (answer,) = of(engine, cid, QuestionAnswered)
    assert (answer.action, answer.by, json.loads(answer.content or "")["quantity"]) == ("accept", "user", 2)
    (seen,) = server_record(record)
    assert (seen["action"], seen["revision"], seen["data"]["name"]) == ("accept", rev, "Ada")
    await follow_up_is_accepted(engine, cid, upstream)


@pytest.mark.parametrize("rev", REVISIONS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_tool_as_such(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path, rev: str, action: str
) -> None:
    hub, record = await demo_hub(tmp_path, protocol=rev)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    question = await asked(engine, cid, upstream, tmp_path, rev)
    run = engine.active_run(cid)
    assert run is not None and questions.answer_question(run, question.question_id, action, {"name": "ignored"})
    await finished(engine, cid)
    (result,) = of(engine, cid, ToolResult)
    assert result.content == f"No order placed: the person chose {action}."
    assert [(r["action"], r["data"]) for r in server_record(record)] == [(action, None)]
    (answer,) = of(engine, cid, QuestionAnswered)
    assert (answer.action, answer.content) == (action, None)


@pytest.mark.parametrize("rev", REVISIONS)
async def test_stop_while_the_form_is_open_answers_cancel_the_tool_sees_it_and_the_follow_up_is_accepted(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path, rev: str
) -> None:
    hub, record = await demo_hub(tmp_path, protocol=rev)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    await asked(engine, cid, upstream, tmp_path, rev)
    assert await engine.cancel(cid, "user")
    (answer,) = of(engine, cid, QuestionAnswered)
    assert (answer.action, answer.by) == ("cancel", "stop")
    assert [r["action"] for r in server_record(record)] == ["cancel"]  # the tool saw the cancel
    (result,) = of(engine, cid, ToolResult)
    assert result.call_id == "call_q"
    assert result.status == "cancelled", "the Stop's cancel answer ended the call: never shown as done"
    assert the_call(engine, cid).questions[0].by == "stop"  # the card says the turn was stopped while it waited
    timeline = [(p.kind, p.name, p.source) for a in audit(engine.events(cid)) for p in a.phases]
    assert ("question_asked", "place_order", "form") in timeline and (
        "question_answered",
        "place_order",
        "stop",
    ) in timeline
    exported = [json.loads(dumps_line(e)) for e in engine.events(cid)]
    (line,) = [e for e in exported if e["kind"] == "question_answered"]
    assert {k: line[k] for k in ("call_id", "action", "content", "by")} == {
        "call_id": "call_q",
        "action": "cancel",
        "content": None,
        "by": "stop",
    }
    conv = engine.conversation(cid)
    assert conv is not None and replay(engine.events(cid)).conversations[cid] == conv
    attempt = next(a for a in conv.attempts.values() if "call_q" in a.tool_calls)
    assert attempt.status == "interrupted"
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["call_q"]


@pytest.mark.parametrize("rev", REVISIONS)
async def test_a_question_answered_after_longer_than_the_tools_timeout_still_completes(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path, rev: str
) -> None:
    hub, _ = await demo_hub(tmp_path, protocol=rev, timeout=1.0)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    question = await asked(engine, cid, upstream, tmp_path, rev)
    waited_from = time.monotonic()
    await wait_until(lambda: time.monotonic() - waited_from > 1.6, 5, "longer than the 1 s deadline")
    run = engine.active_run(cid)
    assert run is not None and questions.answer_question(run, question.question_id, "accept", ORDER)
    await finished(engine, cid)
    (result,) = of(engine, cid, ToolResult)
    assert (result.status, result.content) == ("ok", "Order placed: 2 x mug (M) for Ada, gift wrapped.")


async def test_a_restart_while_a_question_waits_answers_it_cancel_and_the_call_not_run(
    engines: EngineFactory, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    engine = engines(tools=hub)
    cid = engine.create_conversation()
    await asked(engine, cid, upstream, tmp_path, "2026-07-28")
    events = list(engine.events(cid))  # the ledger as a process that died now left it
    state = [replay(events)]

    def append(event: AnyEvent) -> AnyEvent:
        events.append(event)
        state[0] = replay(events)
        return event

    assert recover(lambda: state[0], append)
    kinds = [(type(e).__name__, getattr(e, "by", None) or getattr(e, "status", None)) for e in events[-4:]]
    assert kinds == [
        ("QuestionAnswered", "restart"),
        ("ToolResult", "not_run"),
        ("Recovered", None),
        ("Persisted", "interrupted"),
    ]
    assert isinstance(result := events[-3], ToolResult) and "waited for an answer" in result.content
    await engine.cancel(cid, "user")
