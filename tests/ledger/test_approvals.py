"""Approvals in random sessions (``tests.support.random_sessions.build_events`` makes approval_asked, approval_given and
grant_revoked among every other kind): the first answer of a call stands, a chat grant is only ever what a person's
"always allow in this chat" made and no revocation took back, and a waiting call is visible as waiting."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.events.approval import ApprovalAsked, ApprovalGiven, GrantRevoked
from ledger.reduce_approval import grant_key
from ledger.reducer import replay
from tests.support.random_sessions import CONV, build_events, states_along
from tests.support.session_steps import steps
from ui.tool_card import card_status


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=60))
def test_the_first_answer_of_a_call_stands_and_no_later_one_changes_it(plan: list[tuple]) -> None:
    events = build_events(plan)
    seen: dict[tuple[str, str], ApprovalGiven] = {}
    for state in states_along(events):
        conv = state.conversations.get(CONV)
        for attempt in conv.attempts.values() if conv else []:
            for call in attempt.tool_calls.values():
                key = (attempt.attempt_id, call.call_id)
                if key in seen:
                    assert call.approval == seen[key], "a later answer replaced the first"
                elif call.approval is not None:
                    assert call.approval in events and call.approval.call_id == call.call_id
                    seen[key] = call.approval


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=60))
def test_a_chat_grant_is_only_what_a_persons_allow_in_this_chat_made_and_nothing_revoked(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations.get(CONV)
    for key, granted in (conv.grants if conv else {}).items():
        made = [
            i
            for i, e in enumerate(events)
            if isinstance(e, ApprovalGiven)
            and (e.decision, e.scope, e.by) == ("run", "chat", "user")
            and grant_key(e.server, e.tool) == key
            and e.grant_hash == granted
        ]
        assert made, f"{key} is granted without anyone allowing it in this chat"
        revoked = [
            i for i, e in enumerate(events) if isinstance(e, GrantRevoked) and grant_key(e.server, e.tool) == key
        ]
        assert not revoked or max(revoked) < max(made), f"{key} is still granted after it was revoked"


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=60))
def test_a_call_asked_and_not_yet_answered_shows_as_waiting_with_what_was_asked(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations.get(CONV)
    for attempt in conv.attempts.values() if conv else []:
        for call in attempt.tool_calls.values():
            if call.asked is not None and call.approval is None and not call.answered:
                assert isinstance(call.asked, ApprovalAsked) and call.asked in events
                assert call.phase == "waiting"
                assert card_status(call, attempt.is_live) == ("waiting" if attempt.is_live else "omitted")
