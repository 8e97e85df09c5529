"""The one-end rule's table (``ledger.ends``): the kinds of an attempt's run and how one more event moves it."""

from __future__ import annotations

import dataclasses

from ledger.ends import ATTEMPT_KINDS, is_terminal, next_phase
from ledger.events.core import (
    EVENT_CLASSES,
    Chunk,
    Done,
    Failed,
    Persisted,
    Recovered,
    RequestSent,
    StaleToolResult,
    Started,
    ToolResult,
)

C = "conv_1"
A = "att_1"


def test_attempt_kinds_are_exactly_the_kinds_of_one_attempts_run() -> None:
    with_attempt = {
        cls.KIND
        for cls in EVENT_CLASSES
        if any(f.name == "attempt_id" and f.type == "str" for f in dataclasses.fields(cls))
    }
    # retrying names two attempts and selected is the message's choice: neither is one attempt's run
    assert with_attempt - {"retrying", "selected"} == ATTEMPT_KINDS


def test_the_terminals_are_done_cancelled_recovered_and_a_failure_without_a_re_send() -> None:
    assert is_terminal(Done(conversation_id=C, attempt_id=A, request_id="r"))
    assert is_terminal(Recovered(conversation_id=C, attempt_id=A))
    assert is_terminal(Failed(conversation_id=C, attempt_id=A, error_type="server", summary="x"))
    assert not is_terminal(Failed(conversation_id=C, attempt_id=A, error_type="server", summary="x", will_retry=True))
    assert not is_terminal(Chunk(conversation_id=C, attempt_id=A, request_id="r", chunk_seq=0, text="x"))


def test_an_attempt_has_one_end_then_one_persisted_and_everything_else_after_it_is_late() -> None:
    started = Started(conversation_id=C, attempt_id=A, message_id="m", user_message_id="u", turn=1, model="m")
    done = Done(conversation_id=C, attempt_id=A, request_id="r")
    persisted = Persisted(conversation_id=C, attempt_id=A, message_id="m", status="complete", text="")
    result = ToolResult(conversation_id=C, attempt_id=A, call_id="c", status="ok", content="")
    chunk = Chunk(conversation_id=C, attempt_id=A, request_id="r", chunk_seq=0, text="x")
    stale = StaleToolResult(conversation_id=C, attempt_id=A, call_id="c", why="closed")
    sent = RequestSent(conversation_id=C, attempt_id=A, request_id="r", model="m")
    assert next_phase("none", started) == "open"
    assert next_phase("none", done) == "none"
    assert next_phase("open", sent) == "open"
    assert next_phase("open", done) == "ended"
    assert next_phase("open", persisted) == "persisted"
    assert next_phase("ended", persisted) == "persisted"
    for late in (done, sent, result, started, Recovered(conversation_id=C, attempt_id=A)):
        assert next_phase("ended", late) is None
        assert next_phase("persisted", late) is None
    assert next_phase("persisted", persisted) is None
    for phase in ("ended", "persisted"):
        assert next_phase(phase, chunk) == phase, "a chunk after the end stays a stale chunk, never late"
        assert next_phase(phase, stale) == phase
