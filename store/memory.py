"""The in-memory side of a store, one for both back ends: every live conversation's summary, the tombstones of the
deleted ones, the events of those read or written (``store.event_log``), and every read of them.

Guarantees:
- All of it is under ``lock``, the store's one lock (shared with its ``store.writer.Writer``); what costs a
  conversation's length (making chunks again from their rows, reading a file) happens outside it, on a copy
  taken under it.
- ``add`` gives an event the next seq of its conversation (1, 2, 3... going on from what was read), keeps it,
  folds it into the conversation's summary (``ledger.summary.summarize``) and queues it for the writer (urgent,
  so written at once, when ``store.api.is_urgent``). A deletion leaves a tombstone (``bury``): ``is_deleted``
  says so, and the conversation leaves ``conversation_ids``, ``summaries`` and ``all_events``; its ``deleted``
  event stays (``tombstones``: what it spent, ``Deleted.usage``), as the back end keeps it with the tombstone.
- Eager (no ``Backing``: PostgreSQL) holds every conversation; it never forgets one, keeps a deleted one's events
  (their last seq is what following compares: ``store.postgres.follow``), and ``might_contain`` is always True.
- Lazy (a ``Backing``: the TinyDB files) holds only what was read or written since opening or ``forget``: the
  rest is read from the backing when asked (``events``; kept unless ``keep`` is False, the summary corrected if
  the events say otherwise), a deleted conversation is only its tombstone, ``forget`` drops a conversation once
  nothing of it waits for the writer, and ``might_contain`` asks the backing (False only when the conversation
  cannot hold the words; one in memory or with an attempt still open always passes).
- ``health``, ``problems``, ``flush`` and ``flush_sync`` answer from the writer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from ledger.errors import UnknownConversationError
from ledger.events import AnyEvent, Deleted
from ledger.summary import ConversationSummary, summarize
from store.api import is_urgent
from store.event_log import EventLog, log_of
from store.health import StoreHealth
from store.writer import Writer


@dataclass(frozen=True, slots=True)
class Read:
    """A conversation as a backing read it: its events, and what to do (under the lock) if the memory keeps them."""

    events: list[AnyEvent]
    kept: Callable[[], None]


class Backing(Protocol):
    """Where a lazy memory finds the conversations it does not hold (the TinyDB files)."""

    def read(self, conversation_id: str) -> Read | None:
        """Outside the lock: the conversation's stored events; None when nothing is stored."""

    def might_contain(self, conversation_id: str, words: list[str]) -> bool:
        """Outside the lock: False only when what is stored cannot hold every one of the lower-case ``words``."""

    def forget(self, conversation_id: str) -> None:
        """Under the lock: the memory dropped the conversation's events."""

    def corrected(self) -> None:
        """Under the lock: a summary read from the backing was corrected from the conversation's events."""


def summary_of_events(cid: str, events: list[AnyEvent]) -> ConversationSummary:
    summary: ConversationSummary | None = None
    for event in events:
        summary = summarize(summary, event)
    return summary or ConversationSummary(cid)


class Memory:
    """The conversations a store holds, and the read methods of the store protocol (``store.api``) on them: the
    base class of both stores, which add how they open, append and close."""

    def __init__(self, lock: threading.Condition, writer: Writer, backing: Backing | None = None) -> None:
        self.lock = lock
        self.writer = writer
        self._backing = backing
        self._logs: dict[str, EventLog] = {}  # the conversations read or written (all of them when eager)
        self._summaries: dict[str, ConversationSummary] = {}  # every live conversation
        self._deleted: set[str] = set()
        self._graves: dict[str, Deleted] = {}  # the ``deleted`` event of each tombstone that has one

    # --- reading ---------------------------------------------------------------------------------------------

    def conversation_ids(self) -> list[str]:
        with self.lock:
            return list(self._summaries)

    def summaries(self) -> list[ConversationSummary]:
        """Every live conversation's summary (what was stored and what was appended since), in no set order."""
        with self.lock:
            return list(self._summaries.values())

    def summary(self, conversation_id: str) -> ConversationSummary | None:
        with self.lock:
            return self._summaries.get(conversation_id)

    def events(self, conversation_id: str, *, keep: bool = True) -> tuple[AnyEvent, ...]:
        """The conversation's events, read from the backing when not in memory (kept, unless ``keep`` is False)."""
        with self.lock:
            kept = self._copy(conversation_id)
            if kept is None and conversation_id in self._deleted:
                return ()
            if kept is None and (self._backing is None or conversation_id not in self._summaries):
                raise UnknownConversationError(conversation_id)
        if kept is not None:  # the chunks are made again from their rows outside the lock
            return kept.events()
        assert self._backing is not None
        read = self._backing.read(conversation_id)
        events = read.events if read is not None else []
        fresh = EventLog(conversation_id, events) if keep else None  # chunks as rows, made outside the lock
        with self.lock:
            kept = self._copy(conversation_id)  # appended (or read) meanwhile: that copy is newer
            if kept is None and fresh is not None and conversation_id not in self._deleted:
                self._logs[conversation_id] = fresh
                if read is not None:
                    read.kept()
                self._check_summary(conversation_id, events, self._backing)
        return kept.events() if kept is not None else tuple(events)

    def might_contain(self, conversation_id: str, words: list[str]) -> bool:
        """False only when the conversation cannot hold every one of the lower-case ``words``: a search reads and
        replays only the conversations that pass."""
        if self._backing is None:
            return True
        with self.lock:
            summary = self._summaries.get(conversation_id)
            if conversation_id in self._logs or summary is None or summary.open_attempts:
                return True
        return self._backing.might_contain(conversation_id, words)

    def is_loaded(self, conversation_id: str) -> bool:
        with self.lock:
            return conversation_id in self._logs

    def forget(self, conversation_id: str) -> bool:
        """Drop a conversation's events from memory unless some wait to be written; whether it was dropped."""
        if self._backing is None:
            return False
        with self.lock:
            if self.writer.unwritten(conversation_id):
                return False
            self._logs.pop(conversation_id, None)
            self._backing.forget(conversation_id)
            return True

    def forget_saved(self) -> int:
        """``forget`` every conversation whose events are all written; how many were dropped."""
        with self.lock:
            cids = list(self._logs)
        return sum(self.forget(cid) for cid in cids)

    def all_events(self) -> list[AnyEvent]:
        """Every live conversation's events (those not in memory are read without being kept)."""
        return [e for cid in self.conversation_ids() for e in self.events(cid, keep=False)]

    def is_deleted(self, conversation_id: str) -> bool:
        return conversation_id in self._deleted

    def tombstones(self) -> dict[str, Deleted]:
        """Every deleted conversation's ``deleted`` event as stored (a tombstone older than that has a bare one)."""
        with self.lock:
            return {cid: self._graves.get(cid) or Deleted(conversation_id=cid) for cid in sorted(self._deleted)}

    def last_seq(self, conversation_id: str) -> int:
        """The seq of the last event held of the conversation (0 when none is)."""
        kept = self._logs.get(conversation_id)
        return kept.last_seq if kept is not None else 0

    def health(self) -> StoreHealth:
        """Whether saving works (and why not), events held only in memory, and every distinct problem."""
        return self.writer.health()

    @property
    def problems(self) -> list[str]:
        """The readable line of every distinct problem (damage found when opening, a live saving failure)."""
        return self.writer.problems

    def flush_sync(self, timeout: float | None = 30.0) -> bool:
        """Wait until every event appended so far is durable: True then; False if a write failed meanwhile or
        ``timeout`` passed (the events stay in memory and are retried)."""
        return self.writer.flush_sync(timeout)

    async def flush(self) -> bool:
        return await self.writer.flush()

    # --- what a back end changes (under ``lock``) --------------------------------------------------------------

    def restore(
        self, summaries: dict[str, ConversationSummary], deleted: set[str], graves: dict[str, Deleted] | None = None
    ) -> None:
        """Start from what the store holds: the live conversations' summaries, the tombstones and their events."""
        self._summaries, self._deleted = summaries, deleted
        self._graves = {cid: e for cid, e in (graves or {}).items() if cid in deleted}

    def snapshot(self) -> tuple[dict[str, ConversationSummary], set[str], dict[str, Deleted]]:
        """The summaries, tombstones and their ``deleted`` events as they are now (for an index)."""
        return dict(self._summaries), set(self._deleted), dict(self._graves)

    def add(self, event: AnyEvent) -> AnyEvent:
        """The event with the next seq of its conversation: kept, summarized and queued for the writer."""
        kept = log_of(self._logs, event.conversation_id)
        event = replace(event, seq=kept.last_seq + 1)
        kept.append(event)
        self.writer.queue(event.conversation_id, event, urgent=is_urgent(event))
        self.fold(event)
        return event

    def keep(self, event: AnyEvent) -> None:
        """An event read with its seq (already stored): kept and summarized, not queued."""
        log_of(self._logs, event.conversation_id).append(event)
        self.fold(event)

    def fold(self, event: AnyEvent) -> None:
        """Fold the event into its conversation's summary; a deletion leaves only a tombstone."""
        summary = summarize(self._summaries.get(event.conversation_id), event)
        if summary.deleted:
            self.bury(event.conversation_id, event)
        else:
            self._summaries[event.conversation_id] = summary

    def bury(self, conversation_id: str, event: AnyEvent | None = None) -> None:
        """The conversation is deleted: a tombstone with its ``deleted`` event (its other events stay only in an
        eager memory)."""
        self._deleted.add(conversation_id)
        if isinstance(event, Deleted):
            self._graves[conversation_id] = event
        self._summaries.pop(conversation_id, None)
        if self._backing is not None:
            self._logs.pop(conversation_id, None)

    def truncate(self, conversation_id: str, seq: int) -> None:
        """Keep only the conversation's events before ``seq``, its summary folded again from them."""
        before = [e for e in log_of(self._logs, conversation_id).events() if e.seq < seq]
        self._logs[conversation_id] = EventLog(conversation_id, before)
        if not before:
            self._summaries.pop(conversation_id, None)
        elif (summary := summary_of_events(conversation_id, before)).deleted:
            self.bury(conversation_id, before[-1])
        else:
            self._summaries[conversation_id] = summary

    def _copy(self, conversation_id: str) -> EventLog | None:
        kept = self._logs.get(conversation_id)
        return kept.copy() if kept is not None else None

    def _check_summary(self, conversation_id: str, events: list[AnyEvent], backing: Backing) -> None:
        """The stored summary, corrected if the events say otherwise (a crash between the index and the file of
        one batch)."""
        if not events:
            return
        summary = summary_of_events(conversation_id, events)
        if summary != self._summaries.get(conversation_id):
            self._summaries[conversation_id] = summary
            backing.corrected()
            self.writer.wake()
