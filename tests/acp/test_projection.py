"""The editor's view is the ledger's: for random sessions (``tests.support.random_sessions``: interleaved chunks,
late and stale chunks, tool calls with approvals, questions, progress and results, Stops from every source,
failures, retries), the updates ``editor.projection.project`` sends for an attempt, folded as a client folds them,
equal that attempt in the reducer's state, whether they are projected at once or in two goes."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from editor.projection import Sent, project
from ledger.events.core import AnyEvent, Chunk
from ledger.reducer import replay
from ledger.state import EMPTY_STATE, AttemptState
from tests.support.random_sessions import CONV, build_events
from tests.support.session_steps import lived_sessions, steps


def client_view(updates: tuple[Any, ...]) -> tuple[str, str, dict[str, dict[str, Any]]]:
    """(text, reasoning, tool calls) as a client folds the updates; fails on an update of a call not announced."""
    text, thought, calls = [], [], {}
    for update in updates:
        kind = update.session_update
        if kind == "agent_message_chunk":
            text.append(update.content.text)
        elif kind == "agent_thought_chunk":
            thought.append(update.content.text)
        elif kind == "tool_call":
            assert update.tool_call_id not in calls, "a tool call announced twice"
            calls[update.tool_call_id] = {"status": update.status, "content": update.content}
        else:
            assert update.tool_call_id in calls, "an update of a call the client was never shown"
            call = calls[update.tool_call_id]
            call.update({k: getattr(update, k) for k in ("status", "content") if getattr(update, k) is not None})
    return "".join(text), "".join(thought), calls


def ledger_view(attempt: AttemptState) -> dict[str, dict[str, Any]]:
    out = {}
    for call_id, call in attempt.tool_calls.items():
        if call.answered:
            status = "completed" if call.status == "ok" else "failed"
        else:
            status = "in_progress" if call.phase == "running" else "pending"
        out[call_id] = {"status": status, "result": call.content if call.answered else None}
    return out


sessions = st.one_of(lived_sessions, st.lists(steps, max_size=50))


@settings(max_examples=200, deadline=None)
@given(sessions, st.data())
def test_the_clients_view_of_every_attempt_equals_the_ledgers_history(plan: list[tuple], data: st.DataObject) -> None:
    events: list[AnyEvent] = build_events(plan)
    thinking = data.draw(st.sets(st.integers(0, max(len(events) - 1, 0))))  # some chunks are reasoning
    events = [
        dataclasses.replace(e, block="reasoning") if isinstance(e, Chunk) and i in thinking else e
        for i, e in enumerate(events)
    ]
    conv = replay(events).conversations.get(CONV)
    cut = data.draw(st.integers(0, len(events)))
    for attempt in conv.attempts.values() if conv is not None else []:
        at_once, _ = project(attempt.attempt_id, events, Sent(EMPTY_STATE))
        first, sent = project(attempt.attempt_id, events[:cut], Sent(EMPTY_STATE))
        rest, _ = project(attempt.attempt_id, events, sent)
        assert first + rest == at_once, "split anywhere, the same updates, each once"
        text, thought, calls = client_view(at_once)
        assert text == attempt.text
        assert thought == attempt.reasoning
        shown = {
            call_id: {
                "status": call["status"],
                "result": call["content"][0].content.text if call["status"] in ("completed", "failed") else None,
            }
            for call_id, call in calls.items()
        }
        assert shown == ledger_view(attempt)
