"""The message queue's decisions (``ledger.queue``) over random sessions, as the engine takes them: every command
decided on the state replayed from the events so far, its events appended in order. Properties: no queued
message is sent twice, a removed one never; nothing is sent by itself after an answer that did not complete or
after a restart; the state replayed from the ledger equals the state built one event at a time."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger import decide, queue
from ledger.codec import from_dict, to_dict
from ledger.decide import InputRejected, NewAttempt
from ledger.events.core import (
    AnyEvent,
    Cancelled,
    CancelRequested,
    Created,
    Done,
    Failed,
    Persisted,
    Recovered,
    Started,
    Submitted,
)
from ledger.events.queue import QueuedRemoved
from ledger.reducer import reduce, replay
from ledger.state import EMPTY_STATE, ConversationState, State

CID = "c"
COMMANDS = st.one_of(
    st.tuples(st.just("queue"), st.integers(0, 9)),
    st.tuples(st.just("edit"), st.integers(0, 9)),
    st.tuples(st.just("remove"), st.integers(0, 9)),
    st.tuples(st.just("send_now"), st.integers(0, 9)),
    st.tuples(st.just("auto"), st.integers(0, 9)),  # the automatic send after the n-th last ended attempt, late
    st.tuples(st.just("end"), st.sampled_from(["complete", "stopped", "failed", "restart"])),
    st.tuples(st.just("submit"), st.integers(0, 9)),
    st.tuples(st.just("retry"), st.integers(0, 9)),
)


class Session:
    """Appends what the decisions return, keeping the state built one event at a time and why each send came."""

    def __init__(self) -> None:
        self.events: list[AnyEvent] = []
        self.state: State = EMPTY_STATE
        self.ended: list[str] = []  # attempts in the order they ended
        self.auto_sent: list[tuple[str, str]] = []  # (queue id, the attempt it followed)
        self.n = 0
        self.queued: list[str] = []  # every queue id ever queued
        self.add(Created(conversation_id=CID))

    @property
    def conv(self) -> ConversationState:
        return self.state.conversations[CID]

    def add(self, *events: AnyEvent) -> None:
        for event in events:
            self.n += 1
            stamped = replace(event, seq=self.n, ts=f"2026-12-02T04:00:{self.n % 60:02d}.000+00:00")
            self.events.append(stamped)
            self.state = reduce(self.state, stamped)

    def new(self) -> tuple[NewAttempt, str, str]:
        return NewAttempt(f"a{self.n}", "x"), f"u{self.n}", f"m{self.n}"

    def start(self, first: AnyEvent, started: Started) -> None:
        self.add(first, started)

    def run(self, command: tuple[str, object]) -> None:
        kind, arg = command
        live = self.conv.live_attempt()
        try:
            if kind == "queue":
                queue_id = f"q{self.n}"
                self.add(queue.enqueue(self.conv, queue_id, f"text {arg}", streaming=live is not None))
                self.queued.append(queue_id)
            elif kind in ("edit", "remove", "send_now", "auto") and self.queued:
                # any message ever queued: a second tab or a late automatic send asks for one sent or removed
                queue_id = self.queued[int(str(arg)) % len(self.queued)]
                if kind == "edit":
                    self.add(*queue.edit_queued(self.conv, queue_id, f"edited {self.n}"))
                elif kind == "remove":
                    self.add(queue.remove_queued(self.conv, queue_id))
                else:
                    self.send(queue_id, kind == "auto", int(str(arg)))
            elif kind == "end" and live is not None:
                self.end(live.attempt_id, live.message_id, str(arg))
            elif kind == "submit":
                new, user, answer = self.new()
                self.start(*decide.send(self.conv, "hi", new, user_id=user, answer_id=answer, streaming=bool(live)))
            elif kind == "retry" and live is None and self.conv.message_ids:
                target = decide.retry_target(self.conv, None)
                self.start(*decide.retry(self.conv, target, self.new()[0], streaming=False))
        except InputRejected:
            pass

    def send(self, queue_id: str, auto: bool, back: int) -> None:
        new, user, answer = self.new()
        after = self.ended[-1 - back % len(self.ended)] if auto and self.ended else None
        if auto and after is None:
            return
        streaming = self.conv.live_attempt() is not None
        sending = queue.send_queued(
            self.conv, queue_id, new, user_id=user, answer_id=answer, streaming=streaming, after=after
        )
        if sending is not None:
            self.start(*sending)
            if after is not None:
                self.auto_sent.append((queue_id, after))

    def end(self, attempt_id: str, message_id: str, how: str) -> None:
        ids = {"conversation_id": CID, "attempt_id": attempt_id}
        if how == "complete":
            self.add(Done(**ids, request_id="r"))
        elif how == "stopped":
            self.add(CancelRequested(**ids, source="user"), Cancelled(**ids, source="user"))
        elif how == "failed":
            self.add(Failed(**ids, error_type="server", summary="boom"))
        else:
            self.add(Recovered(**ids))
        status = self.conv.attempts[attempt_id].status
        assert status in ("complete", "interrupted", "failed", "empty"), status
        self.add(Persisted(**ids, message_id=message_id, status=status, text=""))
        self.ended.append(attempt_id)


def session(plan: list[tuple[str, object]]) -> Session:
    s = Session()
    for command in [("submit", 0), *plan]:
        s.run(command)
    return s


@settings(max_examples=400, deadline=None)
@given(st.lists(COMMANDS, max_size=50))
def test_no_queued_message_is_sent_twice_and_a_removed_one_never(plan: list[tuple[str, object]]) -> None:
    s = session(plan)
    sent = Counter(e.queue_id for e in s.events if isinstance(e, Submitted) and e.queue_id is not None)
    removed = {e.queue_id for e in s.events if isinstance(e, QueuedRemoved)}
    assert all(count == 1 for count in sent.values()), sent
    assert removed.isdisjoint(sent), "a removed message was sent"
    assert {i.queue_id for i in s.conv.queue}.isdisjoint(set(sent) | removed), "a sent or removed one still waits"


@settings(max_examples=400, deadline=None)
@given(st.lists(COMMANDS, max_size=50))
def test_the_queue_sends_by_itself_only_after_an_answer_that_completed_and_while_not_paused(
    plan: list[tuple[str, object]],
) -> None:
    s = session(plan)
    for queue_id, after in s.auto_sent:
        assert s.conv.attempts[after].status == "complete", f"{queue_id} followed an answer that did not complete"
    before: State = EMPTY_STATE
    for event in s.events:
        if isinstance(event, Submitted) and event.queue_id in {q for q, _ in s.auto_sent}:
            conv = before.conversations[CID]
            assert conv.queue_paused is None and conv.live_attempt() is None, "sent by itself while paused"
        before = reduce(before, event)


@settings(max_examples=300, deadline=None)
@given(st.lists(COMMANDS, max_size=50))
def test_the_queue_replayed_from_the_exported_ledger_equals_the_live_one(plan: list[tuple[str, object]]) -> None:
    s = session(plan)
    assert replay(from_dict(to_dict(e)) for e in s.events) == s.state
    conv = s.conv
    if conv.queue and conv.live_attempt() is None and s.ended:
        last = conv.attempts[s.ended[-1]]
        assert conv.queue_paused is not None or last.status == "complete", "a queue left waiting without a reason"


def test_a_restart_pauses_a_queue_that_holds_messages_until_send_now() -> None:
    s = session([("queue", 1), ("end", "restart"), ("auto", 0)])
    assert s.conv.queue_paused == "restart" and len(s.conv.queue) == 1 and s.auto_sent == []
    s.run(("send_now", 0))
    assert not s.conv.queue and s.conv.queue_paused is None and s.conv.live_attempt() is not None


def test_a_retry_resumes_a_stopped_queue_and_a_plain_send_does_not() -> None:
    s = session([("queue", 1), ("queue", 2), ("end", "stopped"), ("submit", 0), ("end", "complete"), ("auto", 0)])
    assert s.conv.queue_paused == "stopped" and len(s.conv.queue) == 2 and s.auto_sent == []
    s.run(("retry", 0))
    s.run(("end", "complete"))
    s.run(("auto", 0))
    assert len(s.auto_sent) == 1 and len(s.conv.queue) == 1 and s.conv.queue_paused is None
