"""The commands' rules without a provider: what Send, Edit, Retry, select and branch append, and why they refuse."""

from __future__ import annotations

import pytest
from immutables import Map

from ledger import decide
from ledger.decide import InputRejected, NewAttempt
from ledger.events.core import AnyEvent, CancelRequested
from ledger.reducer import replay
from ledger.state import ConversationState, State
from ledger.tree import selected_path
from tests.support.ledger_builders import conversation_events

NEW = NewAttempt("a-new", "demo")


def chat(*more: AnyEvent, answers: int = 2) -> ConversationState:
    """A chat with ``answers`` complete turns (u1/m1/a1, u2/m2/a2, ...) and then ``more``."""
    return replay([*conversation_events("c", answers=answers, chunks=3), *more]).conversations["c"]


def then(conv: ConversationState, *events: AnyEvent) -> ConversationState:
    """The chat after a decision's events were appended, as the reducer has it."""
    return replay(events, State(conversations=Map({"c": conv}))).conversations["c"]


def test_a_send_answers_after_the_last_answer_shown_in_the_next_turn() -> None:
    conv = chat()
    submitted, started = decide.send(conv, "third", NEW, user_id="u3", answer_id="m3", streaming=False)
    assert (submitted.turn, submitted.parent, submitted.text, submitted.edit_of) == (3, "a2", "third", None)
    assert (started.attempt_id, started.message_id, started.user_message_id, started.turn) == ("a-new", "m3", "u3", 3)
    assert started.trigger == "submit" and started.model == "demo"
    after = then(conv, submitted, started)
    assert selected_path(after)[-2:] == ("u3", "m3") and after.attempts["a-new"].status == "streaming"


def test_an_edit_is_a_new_version_beside_the_old_message() -> None:
    conv = chat()
    decide.editable(conv, "u2")
    submitted, _ = decide.send(
        conv, "second, again", NEW, user_id="u2b", answer_id="m2b", edit_of="u2", streaming=False
    )
    assert submitted.parent == conv.messages["u2"].parent and submitted.edit_of == "u2"
    for not_yours in ("m2", "nope"):
        with pytest.raises(InputRejected, match="Only your own messages can be edited"):
            decide.editable(conv, not_yours)


def test_nothing_is_sent_while_an_answer_streams_or_when_the_text_does_not_fit() -> None:
    conv = chat()
    with pytest.raises(InputRejected, match="still streaming. Stop it first"):
        decide.send(conv, "more", NEW, user_id="u3", answer_id="m3", streaming=True)
    with pytest.raises(InputRejected, match="Type a message first"):
        decide.check_text(" \n\t", 100)
    with pytest.raises(InputRejected, match="This message has 101 characters; the limit is 100"):
        decide.check_text("x" * 101, 100)
    decide.check_text("x" * 100, 100)


def test_a_retry_is_a_new_attempt_of_the_answer_shown_last_unless_another_is_named() -> None:
    conv = chat()
    assert decide.retry_target(conv, None) == "m2" and decide.retry_target(conv, "m1") == "m1"
    retrying, started = decide.retry(conv, "m1", NEW, streaming=False)
    assert (retrying.message_id, retrying.previous_attempt_id, retrying.attempt_id, retrying.why) == (
        "m1", "a1", "a-new", "user"
    )  # fmt: skip
    assert (started.message_id, started.user_message_id, started.turn, started.trigger) == ("m1", "u1", 1, "retry")
    after = then(conv, retrying, started)
    assert after.messages["m1"].attempt_ids == ("a1", "a-new")
    for nothing in ("u1", "nope"):
        with pytest.raises(InputRejected, match="There is no answer to retry"):
            decide.retry_target(conv, nothing)
    with pytest.raises(InputRejected, match="There is no answer to retry"):
        decide.retry_target(chat(answers=0), None)
    with pytest.raises(InputRejected, match="still streaming"):
        decide.retry(conv, "m1", NEW, streaming=True)


def test_a_branch_is_named_by_its_place_in_the_chat_shown_not_by_the_versions_hidden_behind_it() -> None:
    conv = chat()
    edit = decide.send(conv, "first, again", NEW, user_id="u1b", answer_id="m1b", edit_of="u1", streaming=False)
    edited = then(conv, *edit)
    assert edit[0].turn == 3  # the ledger's turn counts every version
    assert decide.branch(edited, "u1b", "c2").title == "chat c — branch from message 1"
    assert decide.branch(conv, "m2", "c3").title == "chat c — branch from answer 2"


def test_switching_versions_or_attempts_waits_for_the_stream_and_records_only_a_change() -> None:
    conv = chat()
    assert decide.select_version(conv, "u2") == ()  # shown already
    assert decide.select_attempt(conv, "m1", "a1") == ()
    with pytest.raises(InputRejected, match="That message does not exist"):
        decide.select_version(conv, "m2")
    with pytest.raises(InputRejected, match="That attempt does not exist"):
        decide.select_attempt(conv, "m1", "a2")
    live = then(conv, *decide.retry(conv, "m1", NEW, streaming=False))
    closing = then(live, CancelRequested(conversation_id="c", attempt_id="a-new", source="user", keep_partial=True))
    for streaming in (live, closing):  # a closing attempt has not ended yet
        with pytest.raises(InputRejected, match="before switching versions"):
            decide.select_version(streaming, "u1")
        with pytest.raises(InputRejected, match="before switching attempts"):
            decide.select_attempt(streaming, "m1", "a1")


def test_a_branch_copies_the_shown_path_and_returns_a_user_messages_text_as_the_draft() -> None:
    conv = chat()
    from_answer = decide.branch(conv, "m1", "c2")
    assert from_answer.chain == (("u1", None), ("m1", "a1")) and from_answer.draft is None
    assert from_answer.title == "chat c — branch from answer 1"
    assert (from_answer.branched.message_id, from_answer.branched.new_conversation_id) == ("m1", "c2")
    from_question = decide.branch(conv, "u2", "c3")
    assert from_question.chain == (("u1", None), ("m1", "a1")) and from_question.draft == "question 2"
    assert from_question.title == "chat c — branch from message 2"
    long = decide.branch_title("t" * 200 + " — branch from answer 1", "assistant", 7)
    assert len(long) == decide.TITLE_CHARS and long.endswith("t — branch from answer 7")  # one suffix, its own
    with pytest.raises(InputRejected, match="That message does not exist"):
        decide.branch(conv, "nope", "c4")
    live = then(conv, *decide.retry(conv, "m1", NEW, streaming=False))
    for through_it in ("m1", "u2", "m2"):
        with pytest.raises(InputRejected, match="before branching from it"):
            decide.branch(live, through_it, "c5")
    assert decide.branch(live, "u1", "c6").chain == ()


def test_a_name_must_show_something_and_is_cut_to_its_length_and_a_deleted_chat_is_gone() -> None:
    assert decide.rename("c", "plain").title == "plain"
    assert decide.rename("c", "x" * 500).title == "x" * decide.TITLE_CHARS
    with pytest.raises(InputRejected, match="needs a name"):
        decide.rename("c", "")
    with pytest.raises(InputRejected, match="no longer exists"):
        decide.existing(None)
    assert decide.existing(chat()).conversation_id == "c"
