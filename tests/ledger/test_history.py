"""Model history rules (docs/ledger.md): what the next request sends after complete, stopped, failed, retried turns."""

from __future__ import annotations

from ledger.events.core import (
    AnyEvent,
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Retrying,
    Selected,
    Started,
    Submitted,
)
from ledger.history import as_messages, model_history
from ledger.reducer import replay

C = "c"


class Turns:
    """Builds the ledger of a conversation one turn at a time, as the engine would."""

    def __init__(self) -> None:
        self.events: list[AnyEvent] = []
        self.turn = 0

    def add(self, event_cls, **fields) -> None:
        self.events.append(event_cls(seq=len(self.events) + 1, ts="", conversation_id=C, **fields))

    def ask(self, text: str) -> tuple[str, str]:
        self.turn += 1
        user, msg = f"u{self.turn}", f"m{self.turn}"
        self.add(Submitted, message_id=user, turn=self.turn, text=text)
        self.start(msg, f"a{self.turn}", user)
        return msg, f"a{self.turn}"

    def start(self, msg: str, attempt: str, user: str = "u?", trigger: str = "submit") -> None:
        self.add(
            Started,
            attempt_id=attempt,
            message_id=msg,
            user_message_id=user,
            turn=self.turn,
            model="m",
            trigger=trigger,
        )

    def stream(self, attempt: str, *pieces: str) -> None:
        for n, piece in enumerate(pieces):
            self.add(Chunk, attempt_id=attempt, request_id="r", chunk_seq=n, text=piece)

    def history(self) -> list[dict[str, str]]:
        return as_messages(model_history(replay(self.events).conversations[C]))


def test_complete_answer_enters_history() -> None:
    t = Turns()
    _, a = t.ask("hi")
    t.stream(a, "Hello", " there")
    t.add(Done, attempt_id=a, request_id="r")
    t.ask("next")
    assert t.history()[:2] == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello there"}]


def test_interrupted_prefix_appears_exactly_as_rendered() -> None:
    t = Turns()
    _, a = t.ask("list three things")
    t.stream(a, "1. apples\n", "2. pe")
    t.add(CancelRequested, attempt_id=a, source="user")
    t.add(Chunk, attempt_id=a, request_id="r", chunk_seq=2, text="ars (never seen)")
    t.add(Cancelled, attempt_id=a, source="user")
    t.ask("expand on point 2")
    assert t.history() == [
        {"role": "user", "content": "list three things"},
        {"role": "assistant", "content": "1. apples\n2. pe"},
        {"role": "user", "content": "expand on point 2"},
    ]


def test_empty_interruption_adds_nothing() -> None:
    t = Turns()
    _, a = t.ask("hi")
    t.add(CancelRequested, attempt_id=a, source="user")
    t.add(Cancelled, attempt_id=a, source="user")
    t.ask("again")
    assert [m["role"] for m in t.history()] == ["user", "user"]


def test_failed_attempt_adds_nothing_even_with_partial_text() -> None:
    t = Turns()
    _, a = t.ask("hi")
    t.stream(a, "partial answer that broke")
    t.add(Failed, attempt_id=a, request_id="r", error_type="connection", summary="dropped")
    t.ask("again")
    assert all("partial answer" not in m["content"] for m in t.history())


def test_after_a_retry_the_selected_attempt_is_used() -> None:
    t = Turns()
    msg, a1 = t.ask("hi")
    t.stream(a1, "first try")
    t.add(Done, attempt_id=a1, request_id="r")
    t.add(Retrying, message_id=msg, previous_attempt_id=a1, attempt_id="a1b")
    t.start(msg, "a1b", trigger="retry")
    t.stream("a1b", "second try")
    t.add(Done, attempt_id="a1b", request_id="r")
    assert t.history()[-1] == {"role": "assistant", "content": "second try"}
    t.add(Selected, message_id=msg, attempt_id=a1)
    assert t.history()[-1] == {"role": "assistant", "content": "first try"}


def test_discarded_partial_from_delete_adds_nothing() -> None:
    t = Turns()
    _, a = t.ask("hi")
    t.stream(a, "some text")
    t.add(CancelRequested, attempt_id=a, source="delete", keep_partial=False)
    t.add(Cancelled, attempt_id=a, source="delete")
    assert [m["role"] for m in t.history()] == ["user"]


def test_reasoning_is_shown_but_never_sent_back() -> None:
    t = Turns()
    _, a = t.ask("think")
    t.add(Chunk, attempt_id=a, request_id="r", chunk_seq=0, text="secret thoughts", block="reasoning")
    t.add(Chunk, attempt_id=a, request_id="r", chunk_seq=1, text="answer")
    t.add(Done, attempt_id=a, request_id="r")
    conv = replay(t.events).conversations[C]
    assert conv.attempts[a].reasoning == "secret thoughts"
    assert t.history()[-1] == {"role": "assistant", "content": "answer"}
