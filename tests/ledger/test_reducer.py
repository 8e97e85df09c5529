"""The reducer's invariants over random interleavings (docs/ledger.md, rules), checked with hypothesis."""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from demo.agent import history_problem
from ledger.codec import from_dict, to_dict
from ledger.compaction import effective
from ledger.continuation import links, shown_text
from ledger.events.core import (
    EVENT_CLASSES,
    AnyEvent,
    Chunk,
    Created,
    Deleted,
    Event,
    Handed,
    ReadBy,
    Renamed,
    StaleChunk,
    ToolResult,
)
from ledger.events.question import QuestionState
from ledger.history import as_messages, model_history
from ledger.reducer import replay
from ledger.state import TERMINAL_STATUSES, State
from ledger.summary import summarize, summary_of
from ledger.tree import selected_path
from tests.support.random_sessions import CONV, build_events, states_along
from tests.support.session_steps import STEPS, steps

MARK = re.compile(r"<(a\d+):(\d+):\d+>")
MARK_TEXT = re.compile(r"<a\d+:\d+:\d+>")

#: The kinds no step of a random session makes, each with the property that covers it instead: a new kind goes
#: into ``STEPS`` (and ``build_events``) or here, or ``test_every_kind_is_made_by_a_random_step_or_listed_as_not``
#: fails.
NOT_IN_SESSIONS: dict[type[Event], str] = {
    Created: "test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation puts it first",
    Renamed: "test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation inserts it",
    Handed: "test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation inserts it",
    ReadBy: "test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation inserts it",
    Deleted: "test_nothing_changes_a_deleted_conversation (in a session it would leave most properties nothing)",
}


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=60))
def test_chunk_accounting_holds_for_every_attempt(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations.get(CONV)
    received: dict[str, int] = {}
    for event in events:
        if isinstance(event, Chunk | StaleChunk):
            received[event.attempt_id] = received.get(event.attempt_id, 0) + 1
    for attempt in conv.attempts.values() if conv else []:
        assert attempt.chunks_received == received.get(attempt.attempt_id, 0)
        assert attempt.chunks_received == attempt.chunks_rendered + attempt.stale_chunks
        rendered = [(a, int(n)) for a, n in MARK.findall(attempt.text)]
        assert all(a == attempt.attempt_id for a, _ in rendered), "another attempt's tokens were mixed in"
        seqs = [n for _, n in rendered]
        assert seqs == sorted(set(seqs)), "rendered text is not in chunk_seq order"
        assert len(rendered) == attempt.chunks_rendered


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=60))
def test_chunk_from_a_closing_closed_or_superseded_attempt_is_never_rendered(plan: list[tuple]) -> None:
    events = build_events(plan)
    states = states_along(events)
    final = states[-1].conversations.get(CONV)
    for before, event in zip(states, events, strict=False):
        if not isinstance(event, Chunk):
            continue
        conv = before.conversations.get(CONV)
        attempt = conv.attempts.get(event.attempt_id) if conv else None
        renderable = (
            attempt is not None
            and attempt.status == "streaming"
            and conv.messages[attempt.message_id].current_attempt_id == attempt.attempt_id
        )
        if not renderable and final is not None and event.attempt_id in final.attempts:
            assert event.text not in final.attempts[event.attempt_id].text


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=60))
def test_terminal_attempt_states_stay_terminal(plan: list[tuple]) -> None:
    states = states_along(build_events(plan))
    for before, after in zip(states, states[1:], strict=False):
        conv_before, conv_after = before.conversations.get(CONV), after.conversations.get(CONV)
        if conv_before is None or conv_after is None:
            continue
        for attempt_id, attempt in conv_before.attempts.items():
            if attempt.status in TERMINAL_STATUSES:
                later = conv_after.attempts[attempt_id]
                assert later.status == attempt.status
                assert later.text == attempt.text


@settings(max_examples=200, deadline=None)
@given(st.lists(steps, max_size=60))
def test_replaying_the_exported_ledger_gives_the_state_built_one_event_at_a_time(plan: list[tuple]) -> None:
    events = build_events(plan)
    live = states_along(events)[-1]
    exported = [to_dict(e) for e in events]
    assert replay(from_dict(d) for d in exported) == live
    half = len(events) // 2
    assert replay(events[half:], replay(events[:half])) == live


def test_chunk_from_superseded_attempt_is_not_rendered() -> None:
    events = build_events([("submit", 0), ("chunk", 0), ("retry", 0), ("chunk", 0), ("chunk", 1)])
    conv = replay(events).conversations[CONV]
    assert conv.attempts["a0"].text == "<a0:0:4>"
    assert conv.attempts["a0"].stale_chunks == 1
    assert conv.attempts["a1"].text == "<a1:0:8>"
    assert conv.messages["m1"].selected_attempt_id == "a1"


def test_chunk_after_cancel_request_is_counted_stale_and_prefix_is_kept() -> None:
    events = build_events(
        [("submit", 0), ("chunk", 0), ("chunk", 0), ("cancel", 0, "user"), ("chunk", 0), ("cancelled", 0)]
    )
    attempt = replay(events).conversations[CONV].attempts["a0"]
    assert (attempt.status, attempt.text, attempt.stale_chunks) == ("interrupted", "<a0:0:4><a0:1:5>", 1)


def test_cancel_before_any_chunk_leaves_an_empty_attempt() -> None:
    events = build_events([("submit", 0), ("cancel", 0, "user"), ("cancelled", 0)])
    assert replay(events).conversations[CONV].attempts["a0"].status == "empty"


def test_failed_request_that_will_be_resent_keeps_the_attempt_streaming() -> None:
    events = build_events([("submit", 0), ("fail", 0, True), ("chunk", 0)])
    attempt = replay(events).conversations[CONV].attempts["a0"]
    assert (attempt.status, attempt.text) == ("streaming", "<a0:0:5>")


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=80))
@example(plan=[("submit", 0), ("chunk", 0), ("next_step", 0), ("cancelled", 0)])  # text before a recorded step
def test_the_model_history_answers_every_tool_call_exactly_once_and_never_sends_failed_text(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations.get(CONV)
    if conv is None:
        return
    messages = as_messages(model_history(conv))
    assert history_problem(messages) is None, messages
    for attempt in conv.attempts.values():
        if attempt.status == "failed":
            assert all(attempt.text not in str(m.get("content")) for m in messages if attempt.text)
    sent = "".join(str(m.get("content")) for m in messages)
    path = selected_path(conv)
    compacted = effective(conv, [(m, conv.messages[m].selected_attempt_id) for m in path])
    for message_id in path[compacted[0] if compacted else 0 :]:  # what a compaction summarized is not sent
        message = conv.messages[message_id]
        shown = conv.attempts.get(message.selected_attempt_id or "")
        if shown is not None and shown.status == "interrupted" and shown.keep_partial and shown.text:
            assert shown.text in sent, "an interrupted prefix the user saw is missing from the history"
        if message.role == "user":
            assert message.text in sent


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=80))
@example(plan=[("submit", 0), ("chunk", 0), ("cancel", 0, "user"), ("cancelled", 0), ("continue", 0), ("chunk", 1)])
def test_a_continued_answer_is_sent_as_one_text_with_its_prefix_never_twice(plan: list[tuple]) -> None:
    """Every rendered chunk reaches the history at most once, and a continued answer that is not summarized is sent
    as the texts of its chain that the history keeps, joined (``ledger.continuation``)."""
    conv = replay(build_events(plan)).conversations.get(CONV)
    if conv is None:
        return
    history = model_history(conv)
    sent = "".join(e.content or "" for e in history)
    assert all(sent.count(mark) == 1 for mark in set(MARK_TEXT.findall(sent))), "a chunk was sent twice"
    path = selected_path(conv)
    compacted = effective(conv, [(m, conv.messages[m].selected_attempt_id) for m in path])
    for message_id in path[compacted[0] if compacted else 0 :]:
        message = conv.messages[message_id]
        attempt = conv.attempts.get(message.selected_attempt_id or "")
        if message.role != "assistant" or attempt is None or attempt.is_live or attempt.purpose != "answer":
            continue
        kept = [link.text for link in links(conv, attempt) if link.in_history]
        texts = [e.content or "" for e in history if e.message_id == message_id and e.role == "assistant"]
        assert "".join(texts) == "".join(kept)
        if attempt.in_history and len(kept) > 1:
            assert shown_text(conv, attempt) == "".join(kept), "the page shows what the model is sent"


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=80))
def test_a_tool_call_keeps_its_first_result_and_late_results_only_count_as_stale(plan: list[tuple]) -> None:
    """A second result only counts: as stale while its attempt runs, as late once it ended (``ledger.ends``)."""
    events = build_events(plan)
    states = states_along(events)
    for before, after, event in zip(states, states[1:], events, strict=False):
        if not isinstance(event, ToolResult):
            continue
        conv_before, conv_after = before.conversations.get(CONV), after.conversations.get(CONV)
        if conv_before is None or conv_after is None or event.attempt_id not in conv_after.attempts:
            continue
        attempt_before, attempt_after = conv_before.attempts[event.attempt_id], conv_after.attempts[event.attempt_id]
        old = attempt_before.tool_calls.get(event.call_id)
        new = attempt_after.tool_calls.get(event.call_id)
        if old is not None and old.answered:
            assert new == old, "a second result replaced the first"
            stale, late = (1, 0) if attempt_before.is_live else (0, 1)
            assert attempt_after.stale_tool_results == attempt_before.stale_tool_results + stale
            assert attempt_after.late_events == attempt_before.late_events + late
            assert attempt_after._replace(stale_tool_results=0, late_events=0) == attempt_before._replace(
                stale_tool_results=0, late_events=0
            ), "a second result changed its attempt"


def test_a_stopped_tool_turn_sends_its_answered_calls_and_omits_the_half_written_one() -> None:
    events = build_events(
        [
            ("submit", 0),
            ("chunk", 0),
            ("call_complete", 0, 0),
            ("tool_result", 0, 0, "ok"),
            ("next_step", 0),
            ("chunk", 0),
            ("call_started", 0, 1),
            ("cancel", 0, "user"),
            ("cancelled", 0),
        ]
    )
    conv = replay(events).conversations[CONV]
    messages = as_messages(model_history(conv))
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["id"] == "a0-s1-c0" and messages[2]["tool_call_id"] == "a0-s1-c0"
    assert messages[3] == {"role": "assistant", "content": conv.attempts["a0"].step_text(1)}
    assert "a0-s2-c1" not in str(messages) and history_problem(messages) is None


# Sessions that stream: a first turn, then mostly chunks (every third one reasoning) among all the other steps.
chunk_step = st.tuples(st.just("chunk"), st.integers(0, 7))
streaming = st.lists(st.one_of(chunk_step, chunk_step, steps), max_size=60).map(lambda plan: [("submit", 0), *plan])


def streamed_events(plan: list[tuple]) -> list[AnyEvent]:
    events = build_events(plan)
    return [replace(e, block="reasoning") if isinstance(e, Chunk) and e.chunk_seq % 3 == 2 else e for e in events]


def _texts(state: State) -> dict[str, tuple[str, str]]:
    conv = state.conversations.get(CONV)
    return {a.attempt_id: (a.text, a.reasoning) for a in conv.attempts.values()} if conv else {}


@settings(max_examples=200, deadline=None)
@given(streaming, st.data())
def test_an_old_state_never_reads_text_appended_after_it_even_when_it_is_reduced_again(
    plan: list[tuple], data: st.DataObject
) -> None:
    events = streamed_events(plan)
    states = states_along(events)  # every state shares its attempts' buffers with the ones after it
    _texts(states[-1])  # a read caches the join of every buffer, up to its newest piece
    at = data.draw(st.sampled_from([n for n, e in enumerate(events) if isinstance(e, Chunk)] or [0]))
    other = [replace(e, text=f"[{e.text}]") if isinstance(e, Chunk) else e for e in events[at:]]
    fork = replay(other, states[at])  # a second branch appended onto an old state's buffers
    assert _texts(fork) == _texts(replay(other, replay(events[:at])))
    for n, state in enumerate(states):
        assert _texts(state) == _texts(replay(events[:n])), f"the state after {n} events reads later text"
    assert states[-1] == replay(events)


@settings(max_examples=200, deadline=None)
@given(streaming)
def test_each_step_text_is_its_slice_of_the_attempt_text(plan: list[tuple]) -> None:
    conv = replay(streamed_events(plan)).conversations.get(CONV)
    for attempt in conv.attempts.values() if conv else []:
        parts = [attempt.step_text(i) for i in range(max(len(attempt.steps), 1))]
        assert "".join(parts) == attempt.text  # the steps share out the whole text, what came before any step too
        assert len(attempt.text) == attempt.text_pieces.length


@settings(max_examples=300, deadline=None)
@given(
    streaming, st.sampled_from(["", "A title"]), st.booleans(), st.sampled_from([None, "local:ann"]), st.booleans(),
    st.lists(st.integers(0, 10_000), max_size=3),
)  # fmt: skip
def test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation(
    plan: list[tuple], title: str, renamed: bool, owner: str | None, handed: bool, reads: list[int]
) -> None:
    events: list[AnyEvent] = [
        Created(conversation_id=CONV, ts="2026-11-30T07:59:00.000+00:00", title=title, owner=owner)
    ]
    events += [replace(e, seq=e.seq + 1) for e in streamed_events(plan)]
    if renamed:
        events.insert(len(events) // 2, Renamed(conversation_id=CONV, ts=events[-1].ts, title="Renamed"))
    if handed:  # an unowned chat gets its owner; an owned one keeps it
        events.insert(len(events) // 3 + 1, Handed(conversation_id=CONV, ts=events[-1].ts, owner="local:ben"))
    for at in reads:  # an admin's read (--admin-can-read), late in the day: never the chat's last activity
        read = ReadBy(conversation_id=CONV, ts="2026-12-31T23:59:59.000+00:00", actor="local:root", name="root")
        events.insert(1 + at % len(events), read)
    folded = None
    for n, event in enumerate(events, start=1):
        folded = summarize(folded, replace(event, seq=n))
        assert folded == summary_of(
            replay(replace(e, seq=i) for i, e in enumerate(events[:n], start=1)).conversations[CONV]
        )
    assert folded is not None and folded.owner == (owner or ("local:ben" if handed else None)), "never taken"
    numbered = [replace(e, seq=i) for i, e in enumerate(events, start=1)]
    conv = replay(numbered).conversations[CONV]
    assert conv.reads == tuple(("root", "2026-12-31T23:59:59.000+00:00") for _ in reads)
    without_reads = replay(e for e in numbered if not isinstance(e, ReadBy)).conversations[CONV]  # the same seqs
    assert conv._replace(reads=(), last_seq=0) == without_reads._replace(last_seq=0), "a read changes nothing else"


@settings(max_examples=200, deadline=None)
@given(st.lists(steps, max_size=80))
def test_a_tools_question_keeps_its_first_answer_and_is_asked_once(plan: list[tuple]) -> None:
    events = build_events(plan)
    before: dict[str, QuestionState] = {}
    for state in states_along(events):
        for conv in state.conversations.values():
            for attempt in conv.attempts.values():
                for call in attempt.tool_calls.values():
                    assert len({q.question_id for q in call.questions}) == len(call.questions)
                    for q in call.questions:
                        old = before.get(q.question_id)
                        assert old is None or not old.answered or old == q, "an answer changed"
                        before[q.question_id] = q


@settings(max_examples=20, deadline=None)
@given(st.tuples(*STEPS.values()))
def test_every_kind_is_made_by_a_random_step_or_listed_as_not(one_of_each: tuple[tuple, ...]) -> None:
    made = {type(e) for e in build_events([("submit", 0), *one_of_each])}
    assert made.isdisjoint(NOT_IN_SESSIONS), "a kind the sessions make is listed as not made"
    forgotten = sorted(cls.KIND for cls in set(EVENT_CLASSES) - made - NOT_IN_SESSIONS.keys())
    assert forgotten == [], "neither made by a step of the random sessions nor listed in NOT_IN_SESSIONS"
    assert all(where.split()[0] in globals() for where in NOT_IN_SESSIONS.values()), "a listed property is gone"


@settings(max_examples=200, deadline=None)
@given(streaming, st.data())
def test_nothing_changes_a_deleted_conversation(plan: list[tuple], data: st.DataObject) -> None:
    events = streamed_events(plan)
    at = data.draw(st.integers(0, len(events)))
    deleted = Deleted(conversation_id=CONV, seq=at + 1, ts="2026-11-30T09:00:00.000+00:00")
    before = replay(events[:at]).conversations.get(CONV)
    gone = replay([deleted], replay(events[:at]))
    conv = gone.conversations[CONV]
    assert conv.deleted and not conv.attempts and not conv.messages
    assert (conv.title, conv.last_seq) == (before.title if before else "", at + 1)
    assert replay(events[at:], gone) == gone, "an event changed the deleted conversation"
