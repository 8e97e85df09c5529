"""The conversation list kept in order: newest activity first, without re-sorting every conversation per change.

Guarantees: ``newest_first(source)`` equals ``ledger.summary.newest_first`` over ``source.summaries()`` as long as
every conversation whose summary changed since the last call was ``touch``-ed; a change costs one removal and one
insertion (a bisect, then a shift of the list in C), never a sort of the whole list; the first call (and ``reset``)
sorts once.
"""

from __future__ import annotations

from bisect import insort
from typing import Protocol

from ledger.summary import ConversationSummary


class SummarySource(Protocol):
    def summaries(self) -> list[ConversationSummary]: ...

    def summary(self, conversation_id: str) -> ConversationSummary | None: ...


def _key(summary: ConversationSummary) -> tuple[str, str]:
    return (summary.updated_ts, summary.created_ts)


class Listing:
    def __init__(self) -> None:
        self._ordered: list[ConversationSummary] | None = None  # oldest first
        self._touched: set[str] = set()
        self._titles: list[str] | None = None  # casefolded, newest first, for the last ``newest_first``

    def titles(self) -> list[str]:
        """The casefolded titles of the last ``newest_first``, in its order (a title filter costs no casefold)."""
        if self._titles is None:
            self._titles = [s.title.casefold() for s in reversed(self._ordered or [])]
        return self._titles

    def touch(self, conversation_id: str) -> None:
        """This conversation's summary changed (or it was created or deleted)."""
        if self._ordered is not None:
            self._touched.add(conversation_id)

    def reset(self) -> None:
        self._ordered, self._touched, self._titles = None, set(), None

    def newest_first(self, source: SummarySource) -> list[ConversationSummary]:
        if self._ordered is None:
            self._ordered, self._titles = sorted(source.summaries(), key=_key), None
        elif self._touched:
            touched, self._touched = self._touched, set()
            self._titles = None
            self._ordered = [s for s in self._ordered if s.conversation_id not in touched]
            for cid in touched:
                summary = source.summary(cid)
                if summary is not None and not summary.deleted:
                    insort(self._ordered, summary, key=_key)
        return self._ordered[::-1]
