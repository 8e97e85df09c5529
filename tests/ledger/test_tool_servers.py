"""What a conversation records of the remote tool servers its turns used (``tool_server_used``,
``tool_server_gone``), over random sessions: the reducer keeps the last applied one per server and nothing else
changes; the audit shows each as a phase of its attempt, in words that name the server, its address, and who."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.ends import is_late
from ledger.events import ToolServerEvent, ToolServerGone, ToolServerUsed
from ledger.folds import audit
from ledger.reducer import replay
from ledger.state import ConversationState
from tests.support.random_sessions import CONV, build_events, states_along
from tests.support.session_steps import steps
from ui.server_words import server_words


def without_servers(conv: ConversationState) -> ConversationState:
    """The conversation less what server events may change: their fold, the last activity, late counts."""
    attempts = {k: a._replace(late_events=0) for k, a in conv.attempts.items()}
    return conv._replace(tool_servers={}, updated_ts="", last_seq=0, attempts=attempts)


@settings(max_examples=200, deadline=None)
@given(st.lists(steps, max_size=80))
def test_the_reducer_keeps_the_last_applied_server_event_per_server_and_nothing_else_changes(plan: list[tuple]) -> None:
    events = build_events(plan)
    expected: dict[str, ToolServerEvent] = {}
    for before, event in zip(states_along(events), events, strict=False):
        conv = before.conversations.get(CONV)
        if isinstance(event, ToolServerUsed | ToolServerGone) and (conv is None or not is_late(conv, event)):
            expected[event.server] = event
    state = replay(events)
    if CONV not in state.conversations:
        return
    conv = state.conversations[CONV]
    if conv.deleted:
        return
    assert dict(conv.tool_servers) == expected
    others = replay(e for e in events if not isinstance(e, ToolServerUsed | ToolServerGone)).conversations[CONV]
    assert without_servers(conv) == without_servers(others), "a server event changed a message or an attempt"


@settings(max_examples=100, deadline=None)
@given(st.lists(steps, max_size=60))
def test_every_applied_server_event_is_one_phase_of_its_attempt_in_words_naming_the_server(plan: list[tuple]) -> None:
    events = build_events(plan)
    phases = [p for a in audit(events) for p in a.phases if p.kind in ("tool_server_used", "tool_server_gone")]
    for phase in phases:
        assert phase.server is not None and phase.kind == phase.server.KIND
        words = server_words(phase.server)
        assert f"Tool server '{phase.server.server}' ({phase.server.url})" in words


def test_the_audit_reads_a_team_server_first_used_and_then_switched_off() -> None:
    base = {"conversation_id": CONV, "attempt_id": "a0", "server": "docs", "url": "https://docs.example/mcp"}
    used = ToolServerUsed(**base, ts="2026-12-04T10:05:00.000Z", call_id="c1", team=True, added_by="local:ann",
                          added_ts="2026-12-04T10:02:00.000Z", version="v1")  # fmt: skip
    assert server_words(used) == (
        "Tool server 'docs' (https://docs.example/mcp), a team server, added by ann on 2026-12-04 10:02 UTC, "
        "first used here"
    )
    mine = ToolServerUsed(**base, ts="t", call_id="c2", added_by="local:bo", added_ts="2026-12-04T10:02:00.000Z",
                          changed_by="local:bo", changed_ts="2026-12-04T11:00:00.000Z")  # fmt: skip
    assert server_words(mine) == (
        "Tool server 'docs' (https://docs.example/mcp), bo's own server, added by bo on 2026-12-04 10:02 UTC, "
        "switched on by bo on 2026-12-04 11:00 UTC, first used here"
    )
    off = ToolServerGone(**base, ts="t", why="disabled", changed_by="local:ann", changed_ts="2026-12-04T12:00:00.000Z")
    assert server_words(off) == (
        "Tool server 'docs' (https://docs.example/mcp) was switched off by ann on 2026-12-04 12:00 UTC: "
        "its tools are no longer offered here"
    )
    gone = ToolServerGone(**base, ts="t", why="removed")
    assert server_words(gone).endswith("was removed from the Tools panel: its tools are no longer offered here")
