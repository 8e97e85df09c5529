"""``UsageBook``: every person's usage rows, folded from the ledger, priced from the cost map, cheap to ask again.

Guarantees:
- The rows of a conversation are ``ledger.usage.usage_rows`` of its state: the one it holds in memory, else the
  replay of its stored events (read without being kept). A deleted conversation's are those its ``deleted`` event
  kept (``store.api.EventStore.tombstones``, ``ledger.usage.buried_rows``, marked ``deleted``): deleting a chat
  never lowers what counts. Nothing else is counted: no counter beside the ledger.
- A conversation's rows are kept with the ``last_seq`` they were folded at and made again only once its last seq
  (from memory, else the store's index) moved: asking again costs a look-up per conversation, and gives what a
  full fold gives (tests/engine/test_spend_book.py proves it in a hypothesis property).
- ``priced`` prices a row with ``engine.provider.cost.price`` (litellm's map and ``--model-info``, read when asked:
  unknown, never $0, for a model without a price; pending before litellm is imported).
- ``rows`` may read files: call it off the event loop (``rows_async``); it is safe in a worker thread (the kept
  folds are under a lock; the state it reads is an immutable snapshot).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass

from engine.provider import Cost, price, total
from ledger.errors import UnknownConversationError
from ledger.events import Deleted, TurnMetrics
from ledger.reducer import replay
from ledger.state import ConversationState, State
from ledger.usage import UsageRow, buried_rows, usage_rows
from store.api import EventStore

ANYONE = object()  # ``rows(ANYONE)``: every person's rows (the admins' usage page)


@dataclass(frozen=True, slots=True)
class Spent:
    """What a set of rows used: their priced sum (``engine.provider.cost.total``) and their tokens."""

    cost: Cost
    tokens: int

    @property
    def usd(self) -> float:
        return self.cost.usd or 0.0


def priced(row: UsageRow) -> Cost:
    metrics = TurnMetrics(
        input_tokens=row.input_tokens, output_tokens=row.output_tokens, cached_tokens=row.cached_tokens,
        cache_write_tokens=row.cache_write_tokens, reasoning_tokens=row.reasoning_tokens, estimated=row.estimated,
    )  # fmt: skip
    if row.status == "running" and not row.tokens:
        return Cost(usd=0.0, attempts=1)  # a request under way, no step finished: nothing known to price yet
    return price(row.model, metrics)


def spent(rows: list[UsageRow]) -> Spent:
    return Spent(total(priced(r) for r in rows), sum(r.tokens for r in rows))


class UsageBook:
    def __init__(self, store: EventStore, state: Callable[[], State]) -> None:
        self.store, self.state = store, state
        self._kept: dict[str, tuple[int, tuple[UsageRow, ...]]] = {}
        self._buried: dict[str, tuple[UsageRow, ...]] = {}
        self._lock = threading.Lock()
        self.folds = 0  # how many conversations were folded (again): what the cache saves shows here

    def rows(self, person: object = ANYONE) -> list[UsageRow]:
        """The rows of every conversation of ``person``, deleted ones included (None: personal mode's one person;
        ``ANYONE``: all). A chat deleted while this reads counts once, as deleted."""
        state, live = self.state(), self.store.summaries()
        graves = self.store.tombstones()
        out: list[UsageRow] = []
        for summary in live:
            if (
                summary.deleted
                or summary.conversation_id in graves
                or (person is not ANYONE and summary.owner != person)
            ):
                continue
            out += self.of(summary.conversation_id, summary.last_seq, state.conversations.get(summary.conversation_id))
        for cid, event in graves.items():
            if person is ANYONE or event.owner == person:
                out += self.buried(cid, event)
        return out

    def buried(self, cid: str, event: Deleted) -> tuple[UsageRow, ...]:
        """A deleted conversation's rows (made once: a ``deleted`` event never changes)."""
        with self._lock:
            kept = self._buried.get(cid)
        if kept is None:
            kept = buried_rows(event)
            with self._lock:
                self._buried[cid] = kept
        return kept

    async def rows_async(self, person: object = ANYONE) -> list[UsageRow]:
        return await asyncio.to_thread(self.rows, person)

    def of(self, cid: str, last_seq: int, held: ConversationState | None) -> tuple[UsageRow, ...]:
        """One conversation's rows: kept ones while its last seq is the one they were folded at."""
        seq = held.last_seq if held is not None else last_seq
        with self._lock:
            kept = self._kept.get(cid)
        if kept is not None and kept[0] == seq:
            return kept[1]
        try:
            conv = held if held is not None else replay(self.store.events(cid, keep=False)).conversations.get(cid)
        except UnknownConversationError:  # deleted since the index was read
            return ()
        if conv is None or conv.deleted:
            return ()
        rows = usage_rows(conv)
        with self._lock:
            self._kept[cid] = (conv.last_seq, rows)
            self.folds += 1
        return rows
