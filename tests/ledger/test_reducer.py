"""The reducer's invariants over random interleavings (docs/ledger.md, rules), checked with hypothesis."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import get_args

from hypothesis import example, given, settings
from hypothesis import strategies as st

from demo.agent import history_problem
from ledger.codec import from_dict, to_dict
from ledger.compaction import effective
from ledger.continuation import links, shown_text
from ledger.events import (
    EVENT_CLASSES,
    AnyEvent,
    ApprovalAsked,
    ApprovalGiven,
    Attached,
    Branched,
    Cancelled,
    CancelRequested,
    Chunk,
    Created,
    Deleted,
    Detached,
    Done,
    ErrorType,
    Event,
    Failed,
    GrantRevoked,
    Persisted,
    QuestionAnswered,
    QuestionAsked,
    Recovered,
    Renamed,
    RequestSent,
    Retrying,
    Selected,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    ToolAwaitingApproval,
    ToolCalled,
    ToolCallStarted,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    TurnMetrics,
    UpstreamClosed,
    Usage,
    VersionSelected,
)
from ledger.history import as_messages, model_history
from ledger.question_events import QuestionState
from ledger.reducer import reduce, replay
from ledger.state import EMPTY_STATE, TERMINAL_STATUSES, State
from ledger.summary import summarize, summary_of
from ledger.title_events import Titled
from ledger.tree import selected_path
from tests.support.queue_steps import QUEUE_STEPS, queue_event

CONV = "c1"
MARK = re.compile(r"<(a\d+):(\d+):\d+>")
MARK_TEXT = re.compile(r"<a\d+:\d+:\d+>")

# One step of a random session, by name: what happens next, with small ids so that steps collide often.
STEPS = {
    "submit": st.tuples(st.just("submit"), st.integers(0, 2)),
    "retry": st.tuples(st.just("retry"), st.integers(0, 2)),
    "chunk": st.tuples(st.just("chunk"), st.integers(0, 7)),
    "late_chunk": st.tuples(st.just("late_chunk"), st.integers(0, 7)),
    "stale": st.tuples(st.just("stale"), st.integers(0, 7)),
    "cancel": st.tuples(
        st.just("cancel"), st.integers(0, 7), st.sampled_from(["user", "navigation", "delete", "shutdown"])
    ),
    "cancelled": st.tuples(st.just("cancelled"), st.integers(0, 7)),
    "fail": st.tuples(st.just("fail"), st.integers(0, 7), st.booleans()),
    "done": st.tuples(st.just("done"), st.integers(0, 7)),
    "persist": st.tuples(st.just("persist"), st.integers(0, 7)),
    "recover": st.tuples(st.just("recover"), st.integers(0, 7)),
    "select": st.tuples(st.just("select"), st.integers(0, 2), st.integers(0, 7)),
    "next_step": st.tuples(st.just("next_step"), st.integers(0, 7)),
    "call_started": st.tuples(st.just("call_started"), st.integers(0, 7), st.integers(0, 2)),
    "call_complete": st.tuples(st.just("call_complete"), st.integers(0, 7), st.integers(0, 2)),
    "dispatch": st.tuples(st.just("dispatch"), st.integers(0, 7), st.integers(0, 2)),
    "tool_result": st.tuples(
        st.just("tool_result"),
        st.integers(0, 7),
        st.integers(0, 2),
        st.sampled_from(["ok", "error", "cancelled", "not_run", "declined", "unknown"]),
    ),
    "stale_result": st.tuples(st.just("stale_result"), st.integers(0, 7), st.integers(0, 2)),
    "edit": st.tuples(st.just("edit"), st.integers(0, 7)),
    "select_version": st.tuples(st.just("select_version"), st.integers(0, 7)),
    "upstream_closed": st.tuples(st.just("upstream_closed"), st.integers(0, 7)),
    "step_finished": st.tuples(st.just("step_finished"), st.integers(0, 7)),
    "awaiting_approval": st.tuples(st.just("awaiting_approval"), st.integers(0, 7), st.integers(0, 2)),
    "progress": st.tuples(st.just("progress"), st.integers(0, 7), st.integers(0, 2)),
    "approval_asked": st.tuples(
        st.just("approval_asked"), st.integers(0, 7), st.integers(0, 2), st.sampled_from(["ask", "once"])
    ),
    "approval_given": st.tuples(
        st.just("approval_given"),
        st.integers(0, 7),
        st.integers(0, 2),
        st.sampled_from(["run", "skip"]),
        st.sampled_from(["once", "chat", "server"]),
        st.sampled_from(["user", "grant", "stop"]),
    ),
    "grant_revoked": st.tuples(st.just("grant_revoked"), st.integers(0, 2)),
    "detach": st.tuples(st.just("detach"), st.integers(0, 7)),
    "attach": st.tuples(st.just("attach"), st.integers(0, 7)),
    "branch": st.tuples(st.just("branch"), st.integers(0, 7)),
    "question": st.tuples(st.just("question"), st.integers(0, 7), st.integers(0, 2), st.integers(0, 1)),
    "answer": st.tuples(
        st.just("answer"),
        st.integers(0, 7),
        st.integers(0, 2),
        st.integers(0, 1),
        st.sampled_from(["accept", "decline", "cancel"]),
        st.sampled_from(["user", "stop", "restart"]),
    ),
    **QUEUE_STEPS,
    "compact": st.tuples(st.just("compact"), st.integers(0, 7), st.booleans()),
    "title": st.tuples(st.just("title"), st.integers(0, 7)),  # a chat's title made by the model (ledger.titles)
    "titled": st.tuples(st.just("titled"), st.integers(0, 7), st.booleans()),
    "continue": st.tuples(st.just("continue"), st.integers(0, 7)),
}
steps = st.one_of(*STEPS.values())
#: The kinds no step of a random session makes, each with the property that covers it instead: a new kind goes
#: into ``STEPS`` (and ``build_events``) or here, or ``test_every_kind_is_made_by_a_random_step_or_listed_as_not``
#: fails.
NOT_IN_SESSIONS: dict[type[Event], str] = {
    Created: "test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation puts it first",
    Renamed: "test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation inserts it",
    Deleted: "test_nothing_changes_a_deleted_conversation (in a session it would leave most properties nothing)",
}
#: every error type the ledger knows (the loop guard's ``tool_loop`` among them): a failure of any kind reduces alike
ERROR_TYPES = [value for part in get_args(ErrorType) for value in (get_args(part) or (part,))]


def build_events(plan: list[tuple]) -> list[AnyEvent]:
    """Turn a random plan into events the way an appender would: ids and seqs stamped outside the reducer."""
    events: list[AnyEvent] = []
    attempts: list[tuple[str, str]] = []  # (attempt_id, message_id)
    chunk_seq: dict[str, int] = {}
    steps_of: dict[str, int] = {}
    users: list[str] = []
    turn = 0

    def add(event: AnyEvent) -> None:
        events.append(event)

    for step in plan:
        kind = step[0]
        seq = len(events) + 1
        ts = f"2026-11-30T08:00:{seq % 60:02d}.000+00:00"
        base = {"seq": seq, "ts": ts, "conversation_id": CONV}
        if kind in QUEUE_STEPS and kind != "send_queued":
            add(queue_event(step, base))
            continue
        if kind in ("submit", "edit", "send_queued"):
            edit_of = users[step[1] % len(users)] if kind == "edit" and users else None
            if kind == "edit" and edit_of is None:
                continue
            turn += 1
            user, msg, att = f"u{turn}", f"m{turn}", f"a{len(attempts)}"
            users.append(user)
            queue_id = f"q{step[1]}" if kind == "send_queued" else None
            add(Submitted(**base, message_id=user, turn=turn, text=f"q {turn}", edit_of=edit_of, queue_id=queue_id))
            add(
                Started(
                    **base | {"seq": seq + 1},
                    attempt_id=att,
                    message_id=msg,
                    user_message_id=user,
                    turn=turn,
                    model="x",
                )
            )
            add(RequestSent(**base | {"seq": seq + 2}, attempt_id=att, request_id=f"r{att}", model="x"))
            attempts.append((att, msg))
            continue
        if not attempts:
            continue
        att, msg = attempts[step[1] % len(attempts)]
        if kind == "compact":  # a compaction reaching an attempt (or its user message), running like any attempt
            new, side = f"a{len(attempts)}", f"k{len(attempts)}"
            through = att if step[2] else users[-1]
            add(Started(**base, attempt_id=new, message_id=side, user_message_id="", turn=turn, model="x",
                        purpose="compaction", through=through))  # fmt: skip
            attempts.append((new, side))
        elif kind == "title":  # a title after an answer: a side attempt like a compaction's, its request its own
            new, side = f"a{len(attempts)}", f"t{len(attempts)}"
            add(Started(**base, attempt_id=new, message_id=side, user_message_id="", turn=turn, model="x",
                        purpose="title", through=att))  # fmt: skip
            attempts.append((new, side))
        elif kind == "titled":  # replacing the first message's title, or one it no longer has (a rename won)
            add(Titled(**base, title=f"T{seq}", replaces="q 1" if step[2] else "T0", from_attempt=att))
        elif kind == "retry":
            new = f"a{len(attempts)}"
            add(Retrying(**base, message_id=msg, previous_attempt_id=att, attempt_id=new))
            add(
                Started(
                    **base | {"seq": seq + 1},
                    attempt_id=new,
                    message_id=msg,
                    user_message_id="?",
                    turn=turn,
                    model="x",
                    trigger="retry",
                    purpose={"k": "compaction", "t": "title"}.get(msg[0], "answer"),  # a side one is retried as one
                    preset_id=f"preset{len(attempts) % 2}",  # Retry with another preset
                    preset_version=1 + len(attempts) % 3,
                )
            )
            attempts.append((new, msg))
        elif kind == "continue":  # Continue: a new attempt of the same answer, going on from ``att`` (any state)
            if msg.startswith(("k", "t")):  # side messages (compaction, title) are never continued
                continue
            new = f"a{len(attempts)}"
            add(Started(**base, attempt_id=new, message_id=msg, user_message_id="?", turn=turn, model="x",
                        trigger="continue", continues=att))  # fmt: skip
            attempts.append((new, msg))
        elif kind in ("chunk", "late_chunk"):
            n = chunk_seq.get(att, 0) if kind == "chunk" else max(chunk_seq.get(att, 0) - 1, 0)
            chunk_seq[att] = max(chunk_seq.get(att, 0), n + 1)
            add(Chunk(**base, attempt_id=att, request_id=f"r{att}", chunk_seq=n, text=f"<{att}:{n}:{seq}>"))
        elif kind == "stale":
            add(StaleChunk(**base, attempt_id=att, request_id=f"r{att}", chunk_seq=99, why="closed"))
        elif kind == "cancel":
            add(
                CancelRequested(
                    **base,
                    attempt_id=att,
                    source=step[2],
                    keep_partial=step[2] != "delete",
                    requested_by="host:2:b" if seq % 2 else None,  # another instance's Stop reduces the same
                )
            )
        elif kind == "cancelled":
            usage = Usage(input_tokens=seq, cached_tokens=seq // 2, partial=True) if seq % 2 else None
            add(Cancelled(**base, attempt_id=att, source="user", usage=usage))
        elif kind == "fail":
            add(
                Failed(
                    **base,
                    attempt_id=att,
                    request_id=f"r{att}",
                    error_type=ERROR_TYPES[seq % len(ERROR_TYPES)],
                    http_status=529 if seq % 2 else None,
                    summary="boom",
                    will_retry=step[2],
                    retry_after=0.5 if seq % 3 else None,
                    body='{"type":"error"}' if seq % 2 else None,
                    usage=Usage(input_tokens=seq, partial=True) if seq % 3 else None,
                )
            )
        elif kind == "done":
            add(Done(**base, attempt_id=att, request_id=f"r{att}"))
        elif kind == "persist":
            metrics = TurnMetrics(input_tokens=seq, input_estimated=seq % 2 == 0, output_estimated=seq % 3 == 0)
            add(Persisted(**base, attempt_id=att, message_id=msg, status="complete", text="", metrics=metrics))
        elif kind == "recover":
            add(Recovered(**base, attempt_id=att))
        elif kind == "select":
            add(Selected(**base, message_id=f"m{step[1] + 1}", attempt_id=f"a{step[2]}"))
        elif kind == "select_version":
            add(VersionSelected(**base, message_id=users[step[1] % len(users)]))
        elif kind == "next_step":
            steps_of[att] = steps_of.get(att, 1) + 1
            add(StepStarted(**base, attempt_id=att, step=steps_of[att]))
        elif kind in ("call_started", "call_complete"):
            call_id, number = f"{att}-s{steps_of.get(att, 1)}-c{step[2]}", steps_of.get(att, 1)
            if kind == "call_started":
                add(ToolCallStarted(**base, attempt_id=att, step=number, call_id=call_id, name="t", index=step[2]))
            else:
                add(ToolCalled(**base, attempt_id=att, step=number, call_id=call_id, name="t", arguments="{}"))
        elif kind == "dispatch":
            add(ToolDispatched(**base, attempt_id=att, call_id=_call(att, steps_of, step[2]), server="s"))
        elif kind == "tool_result":
            call_id = _call(att, steps_of, step[2])
            add(ToolResult(**base, attempt_id=att, call_id=call_id, status=step[3], content=f"<r:{call_id}:{seq}>"))
        elif kind == "stale_result":
            add(StaleToolResult(**base, attempt_id=att, call_id=_call(att, steps_of, step[2]), why="closed"))
        elif kind == "upstream_closed":
            add(UpstreamClosed(**base, attempt_id=att, request_id=f"r{att}", close_ms=1.5))
        elif kind == "step_finished":
            number = steps_of.get(att, 1)
            usage = Usage(input_tokens=seq, output_tokens=2, reasoning_tokens=1, cached_tokens=1, cache_write_tokens=1)
            add(StepFinished(**base, attempt_id=att, step=number, finish_reason="tool_calls", usage=usage))
        elif kind == "awaiting_approval":
            add(ToolAwaitingApproval(**base, attempt_id=att, call_id=_call(att, steps_of, step[2])))
        elif kind == "approval_asked":
            call_id, why = _call(att, steps_of, step[2]), "destructive"
            add(ApprovalAsked(**base, attempt_id=att, call_id=call_id, server="s", tool="t", mode=step[3], why=why,
                              grant_hash=f"h{step[2]}"))  # fmt: skip
        elif kind == "approval_given":
            call_id, (decision, scope, by) = _call(att, steps_of, step[2]), step[3:]
            add(ApprovalGiven(**base, attempt_id=att, call_id=call_id, server="s", tool=f"t{step[2]}",
                              decision=decision, scope=scope, by=by, grant_hash=f"h{seq % 2}"))  # fmt: skip
        elif kind == "grant_revoked":
            add(GrantRevoked(**base, server="s", tool=f"t{step[1]}", scope="chat", grant_hash="h0"))
        elif kind == "progress":
            add(ToolProgress(**base, attempt_id=att, call_id=_call(att, steps_of, step[2]), progress=1, total=2))
        elif kind == "detach":
            add(Detached(**base, attempt_id=att))
        elif kind == "attach":
            add(Attached(**base, attempt_id=att))
        elif kind == "branch":
            add(Branched(**base, message_id=msg, new_conversation_id=f"c{seq}"))
        elif kind == "question":
            call_id = _call(att, steps_of, step[2])
            qid, mode = f"{call_id}-q{step[3]}", "form" if step[3] == 0 else "url"
            add(
                QuestionAsked(
                    **base,
                    attempt_id=att,
                    call_id=call_id,
                    question_id=qid,
                    mode=mode,
                    message="?",
                    requested="{}" if mode == "form" else "https://example.test/x",
                    revision="2026-07-28",
                )
            )
        elif kind == "answer":
            call_id = _call(att, steps_of, step[2])
            content = '{"n": 1}' if step[4] == "accept" else None
            add(
                QuestionAnswered(
                    **base,
                    attempt_id=att,
                    call_id=call_id,
                    question_id=f"{call_id}-q{step[3]}",
                    action=step[4],
                    content=content,
                    by=step[5],
                )
            )
    return events


def _call(att: str, steps_of: dict[str, int], n: int) -> str:
    return f"{att}-s{steps_of.get(att, 1)}-c{n}"


def states_along(events: list[AnyEvent]) -> list[State]:
    states = [EMPTY_STATE]
    for event in events:
        states.append(reduce(states[-1], event))
    return states


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
@given(streaming, st.sampled_from(["", "A title"]), st.booleans())
def test_the_summary_folded_from_events_equals_the_summary_of_the_replayed_conversation(
    plan: list[tuple], title: str, renamed: bool
) -> None:
    events: list[AnyEvent] = [Created(conversation_id=CONV, ts="2026-11-30T07:59:00.000+00:00", title=title)]
    events += [replace(e, seq=e.seq + 1) for e in streamed_events(plan)]
    if renamed:
        events.insert(len(events) // 2, Renamed(conversation_id=CONV, ts=events[-1].ts, title="Renamed"))
    folded = None
    for n, event in enumerate(events, start=1):
        folded = summarize(folded, replace(event, seq=n))
        assert folded == summary_of(
            replay(replace(e, seq=i) for i, e in enumerate(events[:n], start=1)).conversations[CONV]
        )


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
