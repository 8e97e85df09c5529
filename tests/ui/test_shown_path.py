"""A streaming update does not walk the chat: what the page keeps between renders is what the ledger says.

The page keeps the path it shows while ``conv.messages`` and ``conv.chosen`` are the same objects
(``ui.shown_path``), the chat's cost while ``conv.messages`` is, and looks only at the attempts that may run
(``ConversationState.maybe_live``, the transcript's running views). These properties hold over random sessions
(``tests.support.random_sessions``): every state of every session, one event at a time.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.provider import chat_cost
from ledger.events import Chunk, StaleChunk
from ledger.state import TERMINAL_STATUSES, AttemptState, ConversationState
from ledger.tree import selected_path
from tests.support.random_sessions import CONV, build_events, states_along
from tests.support.session_steps import steps
from ui.compaction_view import with_dividers
from ui.shown_path import ChatCost, ShownPath

#: what changes in an attempt after its end without a new ``messages``: counters no view of the transcript shows
COUNTERS = {"chunks_received", "stale_chunks", "late_events", "stale_tool_results"}
chunky = st.lists(st.one_of(st.just(("chunk", 0)), st.just(("chunk", 1)), steps), max_size=80)


def walked_live(conv: ConversationState) -> AttemptState | None:
    """``live_attempt`` as it was before ``maybe_live``: every message, newest first."""
    for message_id in reversed(conv.message_ids):
        current = conv.messages[message_id].current_attempt_id
        if current is not None and conv.attempts[current].is_live and conv.attempts[current].purpose != "title":
            return conv.attempts[current]
    return None


def pairs(plan: list[tuple]) -> list[tuple[ConversationState, ConversationState, object]]:
    events = build_events([("submit", 0), *plan])
    states = [s.conversations.get(CONV) for s in states_along(events)]
    return [(a, b, e) for a, b, e in zip(states, states[1:], events, strict=False) if a is not None and b is not None]


@settings(max_examples=300, deadline=None)
@given(chunky)
def test_a_chunk_leaves_the_maps_that_decide_the_path_as_they_were(plan: list[tuple]) -> None:
    for before, after, event in pairs(plan):
        if isinstance(event, Chunk | StaleChunk):
            assert after.messages is before.messages
            assert after.children is before.children
            assert after.chosen is before.chosen


@settings(max_examples=300, deadline=None)
@given(chunky)
def test_the_path_kept_between_renders_is_the_path_walked_after_every_event(plan: list[tuple]) -> None:
    shown, cost = ShownPath(), ChatCost()
    for before, after, _ in pairs(plan):
        shown.of(before), cost.of(before)
        if after.messages is before.messages and after.chosen is before.chosen:
            assert selected_path(after) == selected_path(before)
        whole = with_dividers(after, selected_path(after))
        assert shown.of(after) == whole
        assert all(shown.place(after, m) == at for at, m in enumerate(whole))
        assert cost.of(after) == chat_cost(after)


@settings(max_examples=300, deadline=None)
@given(chunky)
def test_the_attempt_running_is_found_among_the_few_that_may_run(plan: list[tuple]) -> None:
    for _, after, _ in pairs(plan):
        assert after.live_attempt() == walked_live(after)
        kept = after.maybe_live or ()
        for place, attempt_id in kept:  # each one its message's current attempt, at its message's place
            assert after.messages[after.message_ids[place]].current_attempt_id == attempt_id
        assert [p for p, _ in kept] == sorted({p for p, _ in kept}, reverse=True)  # newest message first
        current = {m.current_attempt_id for m in after.messages.values()}
        running = {a for a in current if a is not None and after.attempts[a].status not in TERMINAL_STATUSES}
        assert running <= {a for _, a in kept}  # every attempt that has not ended is among them


@settings(max_examples=300, deadline=None)
@given(chunky)
def test_an_ended_attempt_changes_only_in_counters_while_the_messages_stay(plan: list[tuple]) -> None:
    for before, after, _ in pairs(plan):
        if after.messages is not before.messages:
            continue
        assert set(after.attempts.keys()) == set(before.attempts.keys())
        for attempt_id, old in before.attempts.items():
            new = after.attempts[attempt_id]
            if old.status in TERMINAL_STATUSES and new is not old:
                changed = {f for f in AttemptState._fields if getattr(old, f) != getattr(new, f)}
                assert changed <= COUNTERS, changed
            assert (new.metrics, new.model) == (old.metrics, old.model)  # what the chat's cost is made of
