"""What the conversation list needs of a conversation, without its events: id, title and times.

Guarantees: a ``ConversationSummary`` is small and immutable; ``summary_of`` gives the summary of a replayed
conversation, so a list built from summaries and a list built from full states show the same titles and order
(newest activity first, ``newest_first``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ledger.state import ConversationState


class ConversationSummary(NamedTuple):
    conversation_id: str
    title: str = ""
    created_ts: str = ""
    updated_ts: str = ""

    @property
    def when(self) -> str:
        """The time the list groups and sorts by: the last activity, else the creation."""
        return self.updated_ts or self.created_ts


def summary_of(conv: ConversationState) -> ConversationSummary:
    return ConversationSummary(conv.conversation_id, conv.title, conv.created_ts, conv.updated_ts)


def newest_first(summaries: Iterable[ConversationSummary]) -> list[ConversationSummary]:
    return sorted(summaries, key=lambda s: (s.updated_ts, s.created_ts), reverse=True)
