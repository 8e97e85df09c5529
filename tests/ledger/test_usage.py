"""The usage rows (``ledger.usage``) are the ledger's own sum: for any random session, every started attempt is one
row, and its tokens are those its first ``persisted`` recorded, or, while it has none, the usage of the steps it
finished; a branch's copies are no rows of their own; a deletion at any point keeps every row (its ``deleted``
event alone gives them back, through the codec), and a ``deleted`` written before that field keeps none."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ledger.codec import from_dict, to_dict
from ledger.events import (
    Cancelled,
    Deleted,
    Done,
    Failed,
    Persisted,
    Recovered,
    Started,
    StepFinished,
    StepStarted,
    ToolCalled,
    ToolCallStarted,
)
from ledger.reducer import replay
from ledger.usage import STATUSES, buried_rows, usage_of, usage_rows
from tests.support.random_sessions import CONV, build_events
from tests.support.session_steps import steps


def tokens_from_events(events: list) -> dict[str, tuple[int, int]]:
    """(input, output) per attempt, read straight from the events (no reducer)."""
    started = [e.attempt_id for e in events if isinstance(e, Started)]
    persisted: dict[str, Persisted] = {}
    steps_of: dict[str, dict[int, tuple[int, int]]] = {}
    begun: set[tuple[str, int]] = set()
    ended: set[str] = set()
    for e in events:
        if isinstance(e, Cancelled | Done | Recovered) or (isinstance(e, Failed) and not e.will_retry):
            ended.add(e.attempt_id)
        if isinstance(e, Persisted) and e.attempt_id not in persisted:
            persisted[e.attempt_id] = e
        elif getattr(e, "attempt_id", None) in ended:
            continue  # late: changes nothing (docs/ledger.md, one end per attempt)
        elif isinstance(e, StepStarted):
            begun.add((e.attempt_id, e.step))
        elif isinstance(e, ToolCallStarted | ToolCalled) and not any(a == e.attempt_id for a, _ in begun):
            begun.add((e.attempt_id, 1))  # a call in an attempt without steps makes its first one (the reducer's)
        elif isinstance(e, StepFinished) and e.usage is not None and (e.attempt_id, e.step) in begun:
            steps_of.setdefault(e.attempt_id, {})[e.step] = (e.usage.input_tokens, e.usage.output_tokens)
    out = {}
    for attempt in started:
        if attempt in persisted:
            m = persisted[attempt].metrics
            out[attempt] = (m.input_tokens, m.output_tokens)
        else:
            done = steps_of.get(attempt, {}).values()
            out[attempt] = (sum(i for i, _ in done), sum(o for _, o in done))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=60))
def test_every_attempt_is_one_row_whose_tokens_are_what_the_ledger_recorded(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations.get(CONV)
    rows = usage_rows(conv) if conv is not None else ()
    expected = tokens_from_events(events)
    assert sorted(r.attempt_id for r in rows) == sorted(expected), "every attempt, once"
    for row in rows:
        assert (row.input_tokens, row.output_tokens) == expected[row.attempt_id]
        assert row.status in STATUSES
        assert row.tokens == row.input_tokens + row.output_tokens
    assert sum(r.tokens for r in rows) == sum(i + o for i, o in expected.values())
    assert usage_rows(conv) == rows if conv is not None else True, "the same rows for the same state"


@settings(max_examples=200, deadline=None)
@given(st.lists(steps, min_size=1, max_size=60), st.data())
def test_a_deletion_keeps_every_row_its_chat_had_and_its_event_alone_gives_them_back(
    plan: list[tuple], data: st.DataObject
) -> None:
    events = build_events(plan)
    assume(events)
    at = data.draw(st.integers(1, len(events)))
    state = replay(events[:at])
    before = state.conversations[CONV]
    deleted = Deleted(conversation_id=CONV, seq=at + 1, ts="2026-11-30T09:00:00.000+00:00", owner=before.owner,
                      usage=usage_of(before))  # fmt: skip
    expected = tuple(r._replace(deleted=True) for r in usage_rows(before))
    gone = replay([deleted], state).conversations[CONV]
    assert usage_rows(gone) == expected, "the kept fold equals the full fold across the deletion"
    assert replay(events[at:], replay([deleted], state)).conversations[CONV] == gone, "nothing after it counts"
    stored = from_dict(to_dict(deleted))  # what a store keeps with the tombstone, read back
    assert stored == deleted and buried_rows(stored) == expected
    assert usage_rows(replay([stored]).conversations[CONV]) == expected, "a replay of the kept event alone"
    older = {k: v for k, v in to_dict(deleted).items() if k not in ("usage", "owner")}  # before these fields
    assert usage_rows(replay([from_dict(older)]).conversations[CONV]) == ()
