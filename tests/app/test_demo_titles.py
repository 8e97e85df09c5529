"""The demo model names chats as the title request asks: 3 to 6 words (issue 41: titles of 1-2 words)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from demo.answers import title_answer
from ledger.titles import TITLE_REQUEST, clean_title, without_tags


def titled(question: str) -> str:
    """The title the demo model gives a chat that began with ``question`` (the request as ``ledger.titles`` words
    it), cleaned as the app cleans it."""
    question = " ".join((without_tags(question) or "(files only)").split())
    prompt = f"{TITLE_REQUEST} (3 to 6 words, nothing else).\n\nuser: {question}\nassistant: An answer."
    return clean_title(title_answer(prompt))


def test_a_one_word_subject_becomes_a_three_word_title() -> None:
    assert titled("Tell me about caching") == "Chat about caching"
    assert titled("How do B-trees and LSM trees compare for heavy writes?") == "B-trees and LSM trees compare"


@given(st.text(alphabet=st.sampled_from("abc xyz Tell me about the #drop ?!\n"), max_size=80))
def test_every_demo_title_has_three_to_six_words(question: str) -> None:
    assert 3 <= len(titled(question).split()) <= 6
