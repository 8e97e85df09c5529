"""A process killed between a tool call and its result, in either direction, never leaves a history a provider
refuses (issue 40; peers: positron #15719, Codewhale #861): for every dialect, a kill after the model's call was
recorded but before it ran, while it ran, and after its result was recorded but before the next model call; the
restart on the same data folder answers every open call once (``not run``, ``unknown outcome``, or the result it
had), the page says so, and the next question's request is accepted by the strict upstream of that dialect."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.tools.hub import ToolHub
from engine.turns.open_calls import NOT_RUN_RESTART
from ledger.ends import UNKNOWN_OUTCOME
from tests.support.children import child_saying
from tests.support.dialects import DIALECTS
from tests.support.engine import EngineFactory, current_attempt, follow_up_is_accepted
from tests.support.tool_crash_child import MOMENTS, tool_requests
from tests.support.upstream import ScriptedUpstream
from ui.format import stopped_text, tool_state_words
from ui.tool_card import card_status

pytestmark = pytest.mark.asyncio(loop_scope="module")
#: (the card's words, the tool message the model gets) for each moment of the kill
SAID = {
    "called": ("not run", NOT_RUN_RESTART),
    "running": ("unknown outcome", UNKNOWN_OUTCOME),
    "answered": ("done", "3+4 = 7"),
}


@pytest.fixture(scope="module")
def killed(
    tmp_path_factory: pytest.TempPathFactory, upstream_server: ScriptedUpstream, model_client: None
) -> Iterator[tuple[Path, dict[str, dict[str, list[str]]]]]:
    """One child (``tests.support.tool_crash_child``) holding every dialect's turns at every moment, killed with
    SIGKILL: (its data root, {dialect: {moment: [conversation, answer]}})."""
    root = tmp_path_factory.mktemp("killed")
    upstream_server.reset()
    upstream_server.plan(*tool_requests())
    with child_saying("tool_crash_child", [str(root), upstream_server.base_url], "HELD ", 120) as (child, line):
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    yield root, json.loads(line.removeprefix("HELD "))


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_kill_between_a_tool_call_and_its_result_leaves_a_history_the_dialect_accepts_after_the_restart(
    hub_engines: EngineFactory,
    hub: ToolHub,
    upstream: ScriptedUpstream,
    killed: tuple[Path, dict[str, dict[str, list[str]]]],
    dialect: str,
) -> None:
    root, held = killed
    hub_engines.dialect = dialect
    engine = hub_engines(root / dialect, hub)
    open_before = {moment: current_attempt(engine, *held[dialect][moment]) for moment in MOMENTS}
    assert all(attempt.is_live for attempt in open_before.values()), "the kill left every turn open"
    assert sorted(engine.recover()) == sorted(a.attempt_id for a in open_before.values())
    for moment in MOMENTS:
        cid, message_id = held[dialect][moment]
        attempt = current_attempt(engine, cid, message_id)
        (call,) = attempt.tool_calls.values()
        words, content = SAID[moment]
        assert tool_state_words(card_status(call, attempt.is_live)) == words, (moment, call)
        assert call.content == content, (moment, call.content)
        assert attempt.cancel_source == "restart" and "the server restarted" in stopped_text(attempt)

        sent = await follow_up_is_accepted(engine, cid, upstream)
        asked = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        answered = [m.get("tool_call_id") for m in sent if m["role"] == "tool"]
        assert len(asked) == len(answered) == 1, sent
        assert [m["content"] for m in sent if m["role"] == "tool"] == [content], (moment, sent)
