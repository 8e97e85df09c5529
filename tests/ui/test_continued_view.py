"""How a continued answer is laid out (``ui.continued_view``): the prefix above the continuation, a code block the
prefix left open going on inside it, and the answer as one text for the export."""

from __future__ import annotations

from ledger.events.core import AnyEvent, Cancelled, CancelRequested, Chunk, Done, Started, Submitted
from ledger.reducer import replay
from ui.continued_view import answer_steps, open_fence, prefix_steps, reopened
from ui.export import conversation_markdown

C = "c1"


def test_a_continuation_inside_a_code_block_the_prefix_left_open_is_shown_inside_it() -> None:
    prefix = "Here:\n\n```python\ndef f(x):\n    return"
    assert open_fence(prefix) == "```python"
    assert reopened(prefix, " x + 1\n```\nDone.") == "```python\n x + 1\n```\nDone."
    closed = "```\ncode\n```\nAnd then"
    assert open_fence(closed) is None and reopened(closed, " more.") == " more."
    assert open_fence("~~~~\na\n~~~\nstill open") == "~~~~", "a shorter fence does not close a longer one"


def test_a_continued_answer_is_one_text_in_the_export_and_its_prefix_is_shown_above_it() -> None:
    events: list[AnyEvent] = [
        Submitted(conversation_id=C, message_id="u1", turn=1, text="tell me"),
        Started(conversation_id=C, attempt_id="a1", message_id="m1", user_message_id="u1", turn=1, model="x"),
        Chunk(conversation_id=C, attempt_id="a1", request_id="r1", chunk_seq=0, text="The first half of a sent"),
        CancelRequested(conversation_id=C, attempt_id="a1", source="user"),
        Cancelled(conversation_id=C, attempt_id="a1", source="user"),
        Started(
            conversation_id=C,
            attempt_id="a2",
            message_id="m1",
            user_message_id="u1",
            turn=1,
            model="x",
            trigger="continue",
            continues="a1",
        ),  # fmt: skip
        Chunk(conversation_id=C, attempt_id="a2", request_id="r2", chunk_seq=0, text="ence, and the rest."),
        Done(conversation_id=C, attempt_id="a2", request_id="r2", finish_reason="stop"),
    ]
    conv = replay(events).conversations[C]
    attempt = conv.attempts["a2"]
    assert prefix_steps(conv, attempt) == [("The first half of a sent", [])]
    assert answer_steps(conv, attempt) == [("The first half of a sentence, and the rest.", [])]
    assert "The first half of a sentence, and the rest." in conversation_markdown(conv)


def test_an_answer_continued_twice_shows_its_prefix_as_one_text_not_a_paragraph_per_continue() -> None:
    """Issue 40: the second Continue's page and export showed the first two parts as two paragraphs ("…a sent" and
    "ence, and"), a break inside a word that the model never sent."""

    def started(attempt_id: str, continues: str | None) -> Started:
        return Started(conversation_id=C, attempt_id=attempt_id, message_id="m1", user_message_id="u1", turn=1,
                       model="x", trigger="continue" if continues else "submit", continues=continues)  # fmt: skip

    def stopped(attempt_id: str, text: str) -> list[AnyEvent]:
        return [
            Chunk(conversation_id=C, attempt_id=attempt_id, request_id=attempt_id, chunk_seq=0, text=text),
            CancelRequested(conversation_id=C, attempt_id=attempt_id, source="user"),
            Cancelled(conversation_id=C, attempt_id=attempt_id, source="user"),
        ]

    events: list[AnyEvent] = [
        Submitted(conversation_id=C, message_id="u1", turn=1, text="tell me"),
        started("a1", None),
        *stopped("a1", "The first half of a sent"),
        started("a2", "a1"),
        *stopped("a2", "ence, and"),
        started("a3", "a2"),
        Chunk(conversation_id=C, attempt_id="a3", request_id="r3", chunk_seq=0, text=" the rest."),
        Done(conversation_id=C, attempt_id="a3", request_id="r3", finish_reason="stop"),
    ]
    conv = replay(events).conversations[C]
    assert prefix_steps(conv, conv.attempts["a3"]) == [("The first half of a sentence, and", [])]
    assert answer_steps(conv, conv.attempts["a3"]) == [("The first half of a sentence, and the rest.", [])]
    assert "The first half of a sentence, and the rest." in conversation_markdown(conv)
