"""Continue's pure decisions (``ledger.continuation``) and a continuation's request (``ledger.continuation_history``):
which answers may be continued, and what the model is sent, tool steps included."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ledger.codec import from_dict, to_dict
from ledger.continuation import COMPLETE, FAILED, NOT_LATEST, continuable, continuation, joined, refusal
from ledger.continuation_history import CONTINUE_INSTRUCTION, request_history
from ledger.decide import InputRejected, NewAttempt
from ledger.events.core import (
    AnyEvent,
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Persisted,
    Started,
    StepStarted,
    Submitted,
    ToolCalled,
    ToolResult,
)
from ledger.events.queue import MessageQueued
from ledger.history import as_messages
from ledger.reducer import replay
from ledger.state import ConversationState

C = "c1"


def turn(n: int, *texts: str, end: str = "stop", parent: str | None = None) -> list[AnyEvent]:
    """Turn ``n``: a question, an answer ``m{n}`` of one attempt ``a{n}`` that wrote ``texts`` and then ended
    (``stop``/``length``: done; ``cancel``: the user stopped it; ``fail``)."""
    att = f"a{n}"
    events: list[AnyEvent] = [
        Submitted(conversation_id=C, message_id=f"u{n}", turn=n, text=f"question {n}", parent=parent),
        Started(conversation_id=C, attempt_id=att, message_id=f"m{n}", user_message_id=f"u{n}", turn=n, model="x"),
    ]
    events += [
        Chunk(conversation_id=C, attempt_id=att, request_id="r", chunk_seq=i, text=t) for i, t in enumerate(texts)
    ]
    return events + ending(att, end)


def ending(att: str, end: str) -> list[AnyEvent]:
    if end == "cancel":
        return [
            CancelRequested(conversation_id=C, attempt_id=att, source="user"),
            Cancelled(conversation_id=C, attempt_id=att, source="user"),
        ]
    if end == "fail":
        return [Failed(conversation_id=C, attempt_id=att, error_type="server", summary="boom")]
    return [Done(conversation_id=C, attempt_id=att, request_id="r", finish_reason=end)]


def conv_of(events: list[AnyEvent]) -> ConversationState:
    return replay(events).conversations[C]


def continued(conv: ConversationState, message_id: str = "m1", attempt_id: str = "c1") -> list[AnyEvent]:
    return [continuation(conv, message_id, NewAttempt(attempt_id, "x"), streaming=False)]


def test_an_answer_stopped_or_cut_by_the_length_limit_may_be_continued_and_a_complete_one_may_not() -> None:
    assert continuable(conv_of(turn(1, "Half an ans", end="cancel")), "m1")
    assert continuable(conv_of(turn(1, "Cut by the limit", end="length")), "m1")
    assert refusal(conv_of(turn(1, "All of it.")), "m1", streaming=False) == COMPLETE
    assert refusal(conv_of(turn(1, "Half", end="fail")), "m1", streaming=False) == FAILED
    assert refusal(conv_of(turn(1, end="cancel")), "m1", streaming=False) is not None, "nothing was kept"
    two = conv_of([*turn(1, "Half", end="cancel"), *turn(2, "Next.", parent="a1")])
    assert refusal(two, "m1", streaming=False) == NOT_LATEST
    with pytest.raises(InputRejected, match="still streaming"):
        continuation(conv_of(turn(1, "Half", end="cancel")), "m1", NewAttempt("c1", "x"), streaming=True)


def test_a_failed_continuation_leaves_the_prefix_and_the_next_one_continues_the_prefix() -> None:
    events = turn(1, "Half an ans", end="cancel")
    events += continued(conv_of(events))
    events += [Chunk(conversation_id=C, attempt_id="c1", request_id="r2", chunk_seq=0, text="wer")]
    events += ending("c1", "fail")
    conv = conv_of(events)
    assert continuable(conv, "m1")
    again = continued(conv, attempt_id="c2")[0]
    assert isinstance(again, Started) and again.continues == "a1", "the failed one is skipped"
    sent = as_messages(request_history(conv_of([*events, again]), "c2", prefill=False))
    assert sent[-2:] == [
        {"role": "assistant", "content": "Half an ans"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]


def test_a_prefill_ends_the_request_with_the_prefix_without_its_trailing_whitespace() -> None:
    events = turn(1, "Half an ", end="cancel")
    events += continued(conv_of(events))
    sent = as_messages(request_history(conv_of(events), "c1", prefill=True))
    assert sent == [{"role": "user", "content": "question 1"}, {"role": "assistant", "content": "Half an"}]
    assert joined("Half an ", " answer") == "Half an answer" and joined("Half an", "swer") == "Half answer"


def test_a_stopped_tool_turn_is_continued_with_its_tool_steps_whole_and_its_last_text_last() -> None:
    call = {"conversation_id": C, "attempt_id": "a1"}
    events: list[AnyEvent] = turn(1, "Let me look.")[:-1]  # the first step, then its tool call and result
    events += [
        ToolCalled(**call, step=1, call_id="k1", name="search", arguments='{"q": "x"}'),
        ToolResult(**call, call_id="k1", status="ok", content="found x"),
        StepStarted(**call, step=2),
        Chunk(**call, request_id="r", chunk_seq=1, text="It says x, and"),
        *ending("a1", "cancel"),
    ]
    events += continued(conv_of(events))
    sent = as_messages(request_history(conv_of(events), "c1", prefill=False))
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["tool_calls"][0]["id"] == sent[2]["tool_call_id"] == "k1", "every call answered"
    assert sent[3] == {"role": "assistant", "content": "It says x, and"}


def test_a_started_without_continues_decodes_as_before_and_one_with_it_round_trips() -> None:
    old = {
        "seq": 1, "ts": "2026-11-30T08:00:00.000+00:00", "kind": "started", "conversation_id": C,
        "attempt_id": "a1", "message_id": "m1", "user_message_id": "u1", "turn": 1, "model": "x",
    }  # fmt: skip
    decoded = from_dict(old)
    assert isinstance(decoded, Started) and decoded.continues is None and decoded.trigger == "submit"
    new = replace(decoded, attempt_id="a2", trigger="continue", continues="a1")
    assert from_dict(to_dict(new)) == new


def test_a_continuation_resumes_the_queue_the_stop_paused_as_a_retry_does() -> None:
    events = turn(1, "Half an ans", end="cancel")
    events.insert(2, MessageQueued(conversation_id=C, queue_id="q1", text="and then?"))
    events.append(Persisted(conversation_id=C, attempt_id="a1", message_id="m1", status="interrupted", text="Half"))
    paused = conv_of(events)
    assert paused.queue_paused == "stopped" and len(paused.queue) == 1
    resumed = conv_of([*events, *continued(paused)])
    assert resumed.queue_paused is None and len(resumed.queue) == 1
