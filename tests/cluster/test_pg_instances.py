"""Two engines on one PostgreSQL database in one process, each with its own store and ``app.cluster``: what
one runs, the other folds live and in seq order; cancels from the other reach the owner, and a late one never
touches a newer attempt."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from app.cluster import Cluster
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine, InputRejected
from engine.tools.hub import ToolHub
from ledger.events.approval import ApprovalGiven
from ledger.events.core import QuestionAnswered, ToolResult
from ledger.reducer import replay
from store.postgres.store import PgStore
from tests.support.engine import make_settings
from tests.support.tools import demo_hub
from tests.support.upstream import Behavior, PlannedCall, ScriptedUpstream
from tests.support.waiting import nothing_more_for, wait_until

WORDS = " ".join(f"w{n}" for n in range(400))
Instance = tuple[Engine, Cluster]


@pytest.fixture
async def instances(database_url: str, upstream: ScriptedUpstream) -> AsyncIterator[Callable[..., Awaitable[Instance]]]:
    made: list[Instance] = []

    async def make(tools: ToolHub | None = None, **limits: Any) -> Instance:
        store = PgStore.open(database_url, flush_interval=0.05)
        cluster = Cluster(store, database_url)
        engine = build_engine(store, make_settings(upstream.base_url, **limits), tools, peers=cluster)
        await cluster.start(engine)
        made.append((engine, cluster))
        return engine, cluster

    yield make
    for engine, cluster in made:
        await engine.shutdown()
        await cluster.close()
        engine.store.close()
        if engine.tools is not None:
            await engine.tools.stop()


def live_text(engine: Engine, cid: str) -> str:
    conv = engine.conversation(cid)
    attempt = conv.live_attempt() if conv is not None else None
    return attempt.text if attempt is not None else ""


async def test_what_one_instance_streams_the_other_folds_live_and_ends_with_the_same_state_as_a_replay(
    instances, upstream: ScriptedUpstream
) -> None:
    (a, _), (b, _) = await instances(), await instances()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.005))
    cid = a.create_conversation()
    await a.submit(cid, "go")
    await wait_until(lambda: len(live_text(b, cid).split()) >= 20, what="b showing a's stream while it runs")
    assert a.is_streaming(cid) and b.is_streaming(cid) and not b.is_running_here(cid)
    await wait_until(lambda: not b.is_streaming(cid), what="b seeing the end")
    conv = b.conversation(cid)
    assert conv is not None and conv == replay(b.store.events(cid)).conversations[cid] == a.conversation(cid)
    assert [attempt.text for attempt in conv.attempts.values()] == [WORDS]


async def test_a_send_on_the_other_instance_while_one_streams_is_refused_and_stop_there_reaches_the_owner(
    instances, upstream: ScriptedUpstream
) -> None:
    (a, _), (b, b_cluster) = await instances(), await instances()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    cid = a.create_conversation()
    await a.submit(cid, "go")
    await wait_until(lambda: live_text(b, cid), what="b seeing the stream")
    with pytest.raises(InputRejected, match="still streaming"):
        await b.submit(cid, "me too")
    assert await b.cancel(cid, "user")
    assert not a.is_streaming(cid) and not b.is_streaming(cid)
    cancel = next(e for e in a.events(cid) if e.KIND == "cancel_requested")
    assert cancel.requested_by == b_cluster.me and [e.KIND for e in a.events(cid)][-2:] == ["cancelled", "persisted"]
    assert upstream.last.disconnected_at is not None


async def test_a_late_cancel_from_another_instance_never_touches_the_newer_attempt_of_the_same_turn(
    instances, upstream: ScriptedUpstream
) -> None:
    (a, a_cluster), (b, b_cluster) = await instances(), await instances()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01), Behavior(text="the new attempt's answer", chunk_delay=0.05))
    cid = a.create_conversation()
    _, answer = await a.submit(cid, "go")
    await wait_until(lambda: live_text(b, cid), what="b seeing the stream")
    old = b.conversation(cid).messages[answer].current_attempt_id
    new = await b.retry(cid)  # stops a's attempt through its owner, then runs the new one on b
    await wait_until(lambda: live_text(a, cid), what="a seeing b's new attempt")
    assert old is not None and old != new
    a_cluster.owners.request(b_cluster.me, {"cid": cid, "attempt": old, "turn": 1, "source": "user", "keep": True})
    assert not await a.cancel(cid, "user", attempt_id=old)  # the tab on a still showed the old attempt
    await wait_until(lambda: not b.is_streaming(cid), what="the new attempt ending")
    conv = b.conversation(cid)
    assert conv is not None and conv.attempts[new].status == "complete"
    assert conv.attempts[new].text == "the new attempt's answer"
    assert [e.KIND for e in b.events(cid)].count("cancel_requested") == 1


async def test_shutting_one_instance_down_leaves_the_answer_another_instance_runs_streaming(
    instances, upstream: ScriptedUpstream
) -> None:
    (a, _), (b, b_cluster) = await instances(), await instances()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    cid = a.create_conversation()
    await a.submit(cid, "go")
    await wait_until(lambda: live_text(b, cid), what="b seeing the stream")
    await b.shutdown()
    await b_cluster.close()
    await nothing_more_for(0.3)
    assert a.is_streaming(cid) and "cancel_requested" not in [e.KIND for e in a.events(cid)]
    assert await a.cancel(cid, "user")


async def test_the_last_viewer_leaving_elsewhere_cancels_under_the_cancel_policy_unless_the_owner_has_viewers(
    instances, upstream: ScriptedUpstream
) -> None:
    (a, _), (b, b_cluster) = await instances(leave_policy="cancel"), await instances(leave_policy="cancel")
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01), Behavior(text=WORDS, chunk_delay=0.01))
    cid = a.create_conversation()
    await a.viewer_joined(cid, "tab on a")
    await a.submit(cid, "watched on a")
    await wait_until(lambda: live_text(b, cid), what="b seeing the stream")
    await b.viewer_joined(cid, "tab on b")
    await b.viewer_left(cid, "tab on b", "navigation")
    await nothing_more_for(0.5)
    assert a.is_streaming(cid), "a tab on the owner still watches it"
    await a.cancel(cid, "user")
    await a.viewer_left(cid, "tab on a", "navigation")  # nothing streams: leaving changes nothing
    await wait_until(lambda: not b.is_streaming(cid), what="b seeing the first answer end")
    await a.submit(cid, "watched on b only")
    await wait_until(lambda: live_text(b, cid), what="b seeing the second stream")
    await b.viewer_joined(cid, "tab on b")
    await b.viewer_left(cid, "tab on b", "navigation")
    await wait_until(lambda: not a.is_streaming(cid), what="the owner cancelling for the last viewer")
    cancels = [e for e in a.events(cid) if e.KIND == "cancel_requested"]
    assert [(c.source, c.requested_by) for c in cancels] == [("user", None), ("navigation", b_cluster.me)]


async def test_an_approval_given_on_the_other_instance_reaches_the_owner_and_the_first_answer_wins(
    instances, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    (a, _), (b, _) = await instances(hub), await instances()
    call = PlannedCall("delete_note", '{"title": "Caching"}', "call_x")
    upstream.plan(Behavior(text="", tool_calls=[call]), Behavior(text="Deleted."))
    cid = a.create_conversation()
    await a.submit(cid, "delete the caching note")

    def waiting_on_b() -> bool:
        conv = b.conversation(cid)
        live = conv.live_attempt() if conv is not None else None
        return live is not None and "call_x" in live.tool_calls and live.tool_calls["call_x"].phase == "waiting"

    await wait_until(waiting_on_b, 20, "b showing the call waiting for approval")
    b.decide_tool(cid, "call_x", True, "chat")  # the tab on b: sent to the owner, a
    b.decide_tool(cid, "call_x", False)  # a second tab on b, a moment later: dropped by the owner
    await wait_until(lambda: not b.is_streaming(cid), 20, "b seeing the turn end")
    given = [(e.decision, e.scope, e.by) for e in a.events(cid) if isinstance(e, ApprovalGiven)]
    assert given == [("run", "chat", "user")]
    on_a, on_b = a.conversation(cid), b.conversation(cid)
    assert on_a is not None and on_b is not None and on_b.grants == on_a.grants and len(on_b.grants) == 1
    (result,) = [e for e in b.events(cid) if isinstance(e, ToolResult)]
    assert result.status == "ok" and "Deleted the note 'Caching'" in result.content


async def test_an_answer_to_a_tool_s_question_given_on_the_other_instance_reaches_the_owner_and_the_first_wins(
    instances, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    hub, _ = await demo_hub(tmp_path)
    (a, _), (b, _) = await instances(hub), await instances()
    call = PlannedCall("place_order", '{"item": "mug"}', "call_q")
    upstream.plan(Behavior(text="", tool_calls=[call]), Behavior(text="Ordered."))
    cid = a.create_conversation()
    await a.submit(cid, "order a mug")

    def asked_on_b() -> str | None:
        conv = b.conversation(cid)
        live = conv.live_attempt() if conv is not None else None
        questions = live.tool_calls["call_q"].questions if live is not None and "call_q" in live.tool_calls else ()
        return questions[0].question_id if questions else None

    question_id = await wait_until(asked_on_b, 20, "b showing the tool's question")
    with pytest.raises(ValueError, match="Quantity"):  # refused on b itself: nothing is sent
        b.answer_question(cid, question_id, "accept", {"name": "Ada", "quantity": "11", "size": "M"})
    b.answer_question(cid, question_id, "accept", {"name": "Ada", "quantity": "2", "size": "M"})  # to the owner
    b.answer_question(cid, question_id, "decline", None)  # a second tab on b, a moment later: dropped by the owner
    await wait_until(lambda: not b.is_streaming(cid), 20, "b seeing the turn end")
    answers = [(e.action, e.by) for e in a.events(cid) if isinstance(e, QuestionAnswered)]
    assert answers == [("accept", "user")]
    (result,) = [e for e in b.events(cid) if isinstance(e, ToolResult)]
    assert result.status == "ok" and result.content == "Order placed: 2 x mug (M) for Ada."
