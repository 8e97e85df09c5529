"""Approvals in the audit timeline and the export: asked (mode, why, grant hash) and given (decision, scope, who)
are phases of their attempt, in words the page makes; an old ledger's ``tool_awaiting_approval`` still decodes and
replays as a waiting call."""

from __future__ import annotations

import json

from ledger.codec import dumps_line, from_dict
from ledger.events.approval import ApprovalAsked, ApprovalGiven
from ledger.events.core import Started, StepFinished, StepStarted, Submitted, ToolCalled
from ledger.folds.audit import audit
from ledger.reducer import replay
from tests.support.ledger_builders import ts
from ui.audit_words import phase_detail, phase_label

C, A = "c", "a1"
H = "ab" * 32


def opening() -> list:
    ids = {"conversation_id": C, "attempt_id": A}
    return [
        Submitted(conversation_id=C, ts=ts(0), message_id="u1", turn=1, text="delete it"),
        Started(**ids, ts=ts(1), message_id="m1", user_message_id="u1", turn=1, model="m"),
        StepStarted(**ids, ts=ts(2), step=1),
        ToolCalled(**ids, ts=ts(3), step=1, call_id="k1", name="delete_note", arguments="{}", server="demo"),
        StepFinished(**ids, ts=ts(4), step=1, finish_reason="tool_calls"),
    ]


def test_the_timeline_shows_the_approval_asked_and_given_with_why_who_and_how_far() -> None:
    ids = {"conversation_id": C, "attempt_id": A, "call_id": "k1", "server": "demo", "tool": "delete_note"}
    events = [
        *opening(),
        ApprovalAsked(**ids, ts=ts(5), mode="ask", why="chat_grant_void", grant_hash=H),
        ApprovalGiven(**ids, ts=ts(9000), decision="run", scope="chat", by="user", grant_hash=H),
    ]
    (attempt,) = audit(events)
    asked, given = [p for p in attempt.phases if p.kind.startswith("approval")]
    assert (phase_label(asked), phase_label(given)) == ("approval asked", "approval given")
    assert phase_detail(asked) == (
        "delete_note: asks every time (the tool changed since you allowed it in this chat) · grant abababababab"
    )
    assert phase_detail(given) == "delete_note: Run, in this chat, by you · grant abababababab"
    for event in events:  # the export: one JSON line each, read back equal
        assert from_dict(json.loads(dumps_line(event))) == event


def test_an_old_ledgers_tool_awaiting_approval_still_decodes_and_replays_as_waiting() -> None:
    line = {
        "kind": "tool_awaiting_approval",
        "conversation_id": C,
        "seq": 6,
        "ts": ts(5),
        "attempt_id": A,
        "call_id": "k1",
    }
    events = [*opening(), from_dict(line)]
    call = replay(events).conversations[C].attempts[A].tool_calls["k1"]
    assert call.phase == "waiting" and call.asked is None
    assert [p.kind for p in audit(events)[0].phases][-1] == "tool_awaiting_approval"
