"""``SpendGuard``: whether a person may make one more model request, asked before every one.

Guarantees:
- ``over(person)`` folds the person's usage from the ledger (``engine.spend.book``: every attempt, stopped, failed,
  re-sent requests, titles and compactions included; a running agent turn's finished steps too) over the current
  UTC day and month and compares it with the limit in force (``engine.spend.limits.effective``); None when under
  every cap, or when no cap applies (then nothing is folded at all).
- ``check(person)`` raises ``InputRejected`` with ``Over.sentence`` ("You have spent $0.05 of your $0.05 daily
  limit; it resets at 00:00 UTC.") when over: the caller has appended nothing.
- The limits are read from their store at every check (any instance's change holds at the next request), off the
  event loop, as is the fold; ``clock`` is the one source of "now" (tests set it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

from engine.spend.book import UsageBook, spent
from engine.spend.limits import PERIODS, Over, effective, iso, over, period_start
from ledger.decide import InputRejected
from store.limits import LimitStore, MemoryLimits, SpendLimit


def utc_now() -> datetime:
    return datetime.now(UTC)


class SpendGuard:
    def __init__(
        self, book: UsageBook, limits: LimitStore | None = None, fallback: SpendLimit | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:  # fmt: skip
        self.book, self.limits = book, limits if limits is not None else MemoryLimits()
        self.fallback, self.clock = fallback or SpendLimit(), clock

    def limit_of(self, person: str | None) -> SpendLimit:
        """The limit in force for ``person`` (reads the store: off the event loop)."""
        return effective(self.limits.limits(), person, self.fallback)

    def over_now(self, person: str | None) -> Over | None:
        limit = self.limit_of(person)
        if limit.none:
            return None
        now = self.clock()
        rows = self.book.rows(person)
        used = {p: spent([r for r in rows if r.ts >= iso(period_start(p, now))]) for p in PERIODS}
        return over(limit, used, now)

    async def over(self, person: str | None) -> Over | None:
        return await asyncio.to_thread(self.over_now, person)

    async def check(self, person: str | None) -> None:
        found = await self.over(person)
        if found is not None:
            raise InputRejected(found.sentence)
