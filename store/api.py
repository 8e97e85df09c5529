"""What the engine needs from an event store; ``store.tinydb.store.Store`` (TinyDB) and ``store.postgres.store.PgStore``
(PostgreSQL) both provide it, and one contract suite (``tests/store/test_store_contract.py``) holds them to it.

Guarantees every implementation keeps:
- ``append`` gives the event the next ``seq`` of its conversation (1, 2, 3... without gaps) and returns at once;
  the event is readable through ``events()`` immediately and durable within the flush interval (at once for
  events that end something). A deleted conversation refuses every later write, also after a restart.
- ``events``/``all_events`` give what was appended, in seq order, equal after a reopen; ``all_events`` and
  ``conversation_ids`` leave deleted conversations out; ``tombstones`` gives each deleted conversation's
  ``deleted`` event (what it spent: ``Deleted.usage``), kept with its tombstone, equal after a reopen (a tombstone
  written before that was kept: a bare ``Deleted``).
- ``summaries`` gives every live conversation's ``ledger.summary.ConversationSummary`` without reading its events;
  ``events(cid)`` reads a conversation on demand (kept in memory unless ``keep`` is False) and ``forget(cid)`` may
  drop it again once it is saved (returns whether it did); ``might_contain`` is False only when a conversation
  cannot hold the words (search skips reading it).
- ``health`` says whether saving works; ``flush``/``flush_sync`` report whether everything is durable; ``close``
  returns how many events could not be saved. ``where`` names the store for people (no credentials in it).
"""

from __future__ import annotations

from typing import Protocol

from ledger.events import URGENT_KINDS, AnyEvent, Deleted, Failed
from ledger.summary import ConversationSummary
from store.health import StoreHealth

#: Events the store writes at once instead of within its flush interval: the end of an attempt, and changes a
#: person would be upset to lose (a sent message, a new, renamed or deleted conversation, a chosen attempt).
FLUSH_AT_ONCE_KINDS: frozenset[str] = URGENT_KINDS  # the kinds whose ``FLAGS`` say ``urgent``


def is_urgent(event: AnyEvent) -> bool:
    """Whether a store writes ``event`` at once rather than within its flush interval."""
    return event.KIND in FLUSH_AT_ONCE_KINDS or (isinstance(event, Failed) and not event.will_retry)


class EventStore(Protocol):
    read_only: bool

    @property
    def where(self) -> str: ...

    def conversation_ids(self) -> list[str]: ...

    def summaries(self) -> list[ConversationSummary]: ...

    def summary(self, conversation_id: str) -> ConversationSummary | None: ...

    def events(self, conversation_id: str, *, keep: bool = True) -> tuple[AnyEvent, ...]: ...

    def forget(self, conversation_id: str) -> bool: ...

    def might_contain(self, conversation_id: str, words: list[str]) -> bool: ...

    def all_events(self) -> list[AnyEvent]: ...

    def is_deleted(self, conversation_id: str) -> bool: ...

    def tombstones(self) -> dict[str, Deleted]: ...

    def health(self) -> StoreHealth: ...

    @property
    def problems(self) -> list[str]: ...

    def append(self, event: AnyEvent) -> AnyEvent: ...

    def flush_sync(self, timeout: float | None = 30.0) -> bool: ...

    async def flush(self) -> bool: ...

    def close(self, timeout: float = 10.0) -> int: ...
