"""Titles, pure: the cleaning of a model's title, when a chat asks for one, and the rule that a rename wins."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ledger.events.core import AnyEvent, Created, Done, Renamed, Started, Submitted
from ledger.events.title import Titled
from ledger.reducer import replay
from ledger.summary import summarize
from ledger.titles import TITLE_CHARS, clean_title, title_request, wants_title

CID = "c1"


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        ('"Caching in Python."', "Caching in Python"),
        ("Title: **Debugging flaky tests**\nBecause the question…", "Debugging flaky tests"),
        ("# Rust lifetimes explained!", "Rust lifetimes explained"),
        ("  «Les caches en Python»  ", "Les caches en Python"),
        ("Tell me about caching #drop #slow", "Tell me about caching"),
        ("C# generics", "C# generics"),
        ("\n\n   \n", ""),
        ("'#drop'", ""),
        ("word " * 30, ("word " * 12).strip() + "…"),
    ],
)
def test_a_model_title_is_cleaned_to_one_short_line(raw: str, title: str) -> None:
    assert clean_title(raw) == title


@given(st.text())
@example('"#a#b"')
@example("Title: Title: x.")
@example("x" * 200)
@example("a" * 59 + ' "b')
def test_a_cleaned_title_is_one_stripped_line_without_tags_or_end_punctuation_and_cleaning_it_again_changes_nothing(
    raw: str,
) -> None:
    title = clean_title(raw)
    assert len(title) <= TITLE_CHARS
    assert "\n" not in title and "\r" not in title and title == title.strip()
    assert not re.search(r"(?<!\S)#\w", title), "no tag is left"
    assert not title.endswith(tuple(".,;:!?")) and not title.startswith(tuple("\"'`*_“”‘’«»„"))
    assert clean_title(title) == title


def first_exchange(title: str = "") -> list[AnyEvent]:
    base = {"conversation_id": CID, "ts": "2026-12-02T07:00:00.000+00:00"}
    return [
        Created(**base, seq=1, title=title),
        Submitted(**base, seq=2, message_id="u1", turn=1, text="What is a cache? #slow"),
        Started(**base, seq=3, attempt_id="a1", message_id="m1", user_message_id="u1", turn=1, model="x"),
        Done(**base, seq=4, attempt_id="a1", request_id="r1"),
    ]


def test_a_chat_wants_a_title_after_its_first_answer_only_while_it_has_its_first_message_as_title() -> None:
    events = first_exchange()
    conv = replay(events).conversations[CID]
    assert wants_title(conv, "a1")
    renamed = replay([*events, Renamed(conversation_id=CID, seq=5, title="Mine")]).conversations[CID]
    assert not wants_title(renamed, "a1")
    assert not wants_title(replay(first_exchange("Given")).conversations[CID], "a1")
    system, user = title_request(conv, [("u1", None), ("m1", "a1")])
    assert "What is a cache?" in user and "#slow" not in user and "3 to 6 words" in system


def test_a_titled_applies_only_while_the_title_is_the_one_it_replaces_in_the_state_and_the_summary() -> None:
    events = first_exchange()
    titled = Titled(conversation_id=CID, seq=6, title="Caches", replaces="What is a cache? #slow", from_attempt="t1")
    late = [*events, Renamed(conversation_id=CID, seq=5, title="Mine"), titled]
    for sequence, title in (([*events, titled], "Caches"), (late, "Mine")):
        assert replay(sequence).conversations[CID].title == title
        summary = None
        for event in sequence:
            summary = summarize(summary, event)
        assert summary is not None and summary.title == title
