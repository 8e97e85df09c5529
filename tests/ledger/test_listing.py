"""The conversation list kept in order per change equals a full sort (``ledger.listing``), checked with hypothesis."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.listing import Listing
from ledger.summary import ConversationSummary, newest_first


class Source:
    def __init__(self) -> None:
        self.by_id: dict[str, ConversationSummary] = {}

    def summaries(self) -> list[ConversationSummary]:
        return list(self.by_id.values())

    def summary(self, conversation_id: str) -> ConversationSummary | None:
        return self.by_id.get(conversation_id)


changes = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 30), st.booleans(), st.booleans()), max_size=60
)


@settings(max_examples=300, deadline=None)
@given(changes)
def test_the_list_updated_per_touched_conversation_equals_the_list_sorted_from_scratch(changes: list) -> None:
    source, listing = Source(), Listing()
    for cid, minute, delete, look in changes:
        if delete:
            source.by_id.pop(cid, None)
        else:
            source.by_id[cid] = ConversationSummary(cid, created_ts="2026-01-01", updated_ts=f"2026-01-02T{minute:02d}")
        listing.touch(cid)
        if look:
            got, expected = listing.newest_first(source), newest_first(source.summaries())
            assert [(s.updated_ts, s.created_ts) for s in got] == [(s.updated_ts, s.created_ts) for s in expected]
            assert sorted(got) == sorted(expected)
            assert listing.titles() == [s.title.casefold() for s in got]
