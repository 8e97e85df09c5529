"""The event store: one TinyDB file per conversation, an index of conversations, one writer thread, one process.

Guarantees:
- ``Store.open`` takes the data folder's lock (``store.tinydb.lock``) before it reads or writes anything there; a second
  writer raises ``DataDirInUseError`` naming the holder. ``read_only`` stores (export) take no lock, write nothing.
- Opening never fails on what it finds in the folder (``store.tinydb.opening``): damage is kept aside and reported in
  ``health().problems``. A folder that cannot be written (read-only, no permission) opens too, with saving
  reported as failing from the start.
- ``append`` assigns the next ``seq`` of the conversation and returns at once (it never touches the disk);
  events become readable through ``events()`` immediately and durable within ``flush_interval`` (250 ms), or
  at once for events that end something (``is_urgent``). A crash loses at most the last unflushed batch.
- All disk writes happen on one writer thread, off the event loop; each write replaces a whole file atomically
  (``store.tinydb.storage``), and costs in proportion to that conversation's size, not to all history.
- Saving fails loudly: the first failed write sets ``health().saving_fails`` (a readable reason); events are kept
  in memory and retried with exponential backoff (``flush_interval`` doubling up to ``MAX_BACKOFF``); one log line
  and one counted problem per distinct failure; the first successful write clears it.
- ``flush_sync`` returns whether everything appended before the call is on disk (False after a failed write or
  the timeout); ``close`` tries for a bounded time and returns how many events could not be saved.
- A deleted conversation refuses every later write (``ConversationDeletedError``); its file is removed and a
  tombstone kept in the index, so the refusal survives a restart. In memory it is only its id (a tombstone).
- Lazy: opening reads the index (``store.tinydb.opening.read_index``: summaries and tombstones), not the conversations;
  ``events(cid)`` reads a conversation's file when first asked (damage is handled and reported then) and keeps it
  (a ``store.event_log.EventLog``: chunks as rows the garbage collector skips) until ``forget(cid)``, which
  drops it once nothing of it waits to be written. ``summaries()`` come from the index, kept up to date on every
  append by ``ledger.summary.summarize``; the index is rewritten with a batch when a title, an open attempt, the
  list or the end of an attempt changed (not for chunks alone), and always before that batch's conversation files.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ledger.errors import ConversationDeletedError, DataDirInUseError, StoreError, UnknownConversationError
from ledger.events import AnyEvent
from ledger.summary import ConversationSummary, summarize
from store.api import is_urgent
from store.event_log import EventLog, log_of
from store.health import ProblemLog, StoreHealth, describe_os_error
from store.tinydb.files import FolderFiles
from store.tinydb.opening import TABLE, read_conversation, read_index, summary_of_events
from store.tinydb.storage import loads

log = logging.getLogger("store.tinydb.store")
MAX_BACKOFF = 2.0  # seconds between retries of a failing write, at most


@dataclass(kw_only=True, slots=True)
class StoreStats:
    flushes: int = 0
    write_seconds: float = 0.0
    worst_write_ms: float = 0.0
    events_written: int = 0


class Store:
    """Persistent, append-only events per conversation. Open with ``Store.open(data_dir)``."""

    def __init__(self, data_dir: str | Path, *, flush_interval: float = 0.25, read_only: bool = False) -> None:
        self.data_dir = Path(data_dir)
        self.read_only = read_only
        self.flush_interval = flush_interval
        self.stats = StoreStats()
        self._log = ProblemLog(log)
        self._cond = threading.Condition()
        self._events: dict[str, EventLog] = {}  # the conversations read or written since opening/forget
        self._summaries: dict[str, ConversationSummary] = {}  # every live conversation
        self._deleted: set[str] = set()
        self._index_due = False  # a summary changed in a way the index must say (not chunks alone)
        self._writing: set[str] = set()
        self._pending: dict[str, list[AnyEvent]] = {}
        self._pending_since: float | None = None
        self._urgent = False
        self._appended = self._saved = self._written = 0
        self._closing = False
        self._close_deadline = 0.0
        self._saving_error: str | None = None
        self._failed_tries = self._failures_total = 0
        self._retry_at: float | None = None
        self._files = FolderFiles(self.data_dir)
        self._writable = False
        self._writer = threading.Thread(target=self._write_loop, name="ledger-store-writer", daemon=True)

    @classmethod
    def open(cls, data_dir: str | Path, *, flush_interval: float = 0.25, read_only: bool = False) -> Store:
        """Lock the folder and read its index; ``read_only`` takes no lock and changes nothing (export)."""
        store = cls(data_dir, flush_interval=flush_interval, read_only=read_only)
        store._writable = not read_only and store._take_folder()
        index = read_index(store.data_dir, writable=store._writable, report=store._log.report)
        store._deleted, store._summaries = index.deleted, index.summaries
        store._files.load(index.docs)
        if not read_only:
            store._writer.start()
        return store

    # --- reading ---------------------------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """The data folder, as people name it (``store.api``)."""
        return str(self.data_dir)

    def conversation_ids(self) -> list[str]:
        with self._cond:
            return list(self._summaries)

    def summaries(self) -> list[ConversationSummary]:
        """Every live conversation's summary (from the index and what was appended since), in no set order."""
        with self._cond:
            return list(self._summaries.values())

    def summary(self, conversation_id: str) -> ConversationSummary | None:
        with self._cond:
            return self._summaries.get(conversation_id)

    def events(self, conversation_id: str, *, keep: bool = True) -> tuple[AnyEvent, ...]:
        """The conversation's events, read from its file when not in memory (kept, unless ``keep`` is False)."""
        with self._cond:
            kept = self._events.get(conversation_id)
            kept = kept.copy() if kept is not None else None
            if kept is None and conversation_id in self._deleted:
                return ()
            if kept is None and conversation_id not in self._summaries:
                raise UnknownConversationError(conversation_id)
        if kept is not None:  # the chunks are made again from their rows outside the lock
            return kept.events()
        read = read_conversation(self.data_dir, conversation_id, writable=self._writable, report=self._log.report)
        events, docs = read if read is not None else ([], [])
        fresh = EventLog(conversation_id, events) if keep else None  # chunks as rows, made outside the lock
        with self._cond:
            kept = self._events.get(conversation_id)
            kept = kept.copy() if kept is not None else None  # appended (or read) meanwhile: that copy is newer
            if kept is None and fresh is not None and conversation_id not in self._deleted:
                self._events[conversation_id] = fresh
                if read is not None:
                    self._files.loaded(conversation_id, docs)
                self._check_summary(conversation_id, events)
        return kept.events() if kept is not None else tuple(events)

    def _check_summary(self, conversation_id: str, events: list[AnyEvent]) -> None:
        """Under ``_cond``: the index's summary, corrected if the file says otherwise (a crash between the index
        and the file of one batch)."""
        if not events:
            return
        summary = summary_of_events(conversation_id, events)
        if summary != self._summaries.get(conversation_id):
            self._summaries[conversation_id] = summary
            self._index_due = True
            self._cond.notify_all()

    def might_contain(self, conversation_id: str, words: list[str]) -> bool:
        """False only when no line of a user message or of a finished answer (its ``persisted`` text) in the
        conversation's file holds every one of the lower-case ``words``: a search reads and replays only the
        conversations that pass (a conversation in memory, or with an attempt still open, always passes)."""
        with self._cond:
            summary = self._summaries.get(conversation_id)
            if conversation_id in self._events or summary is None or summary.open_attempts:
                return True
        try:
            docs = loads(self._files.path(conversation_id).read_bytes())[TABLE].values()
            texts = [d["text"] for d in docs if d.get("kind") in ("submitted", "persisted")]
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return True  # damaged: reading it reports the damage
        lines = (line.lower() for text in texts if isinstance(text, str) for line in text.splitlines())
        return any(all(w in line for w in words) for line in lines)

    def is_loaded(self, conversation_id: str) -> bool:
        with self._cond:
            return conversation_id in self._events

    def forget(self, conversation_id: str) -> bool:
        """Drop a conversation's events from memory unless some wait to be written; whether it was dropped."""
        with self._cond:
            if conversation_id in self._pending or conversation_id in self._writing:
                return False
            self._events.pop(conversation_id, None)
            self._files.forget(conversation_id)
            return True

    def forget_saved(self) -> int:
        """``forget`` every conversation whose events are all on disk; how many were dropped."""
        with self._cond:
            cids = list(self._events)
        return sum(self.forget(cid) for cid in cids)

    def all_events(self) -> list[AnyEvent]:
        """Every live conversation's events (reads the files of those not in memory, without keeping them)."""
        return [e for cid in self.conversation_ids() for e in self.events(cid, keep=False)]

    def is_deleted(self, conversation_id: str) -> bool:
        return conversation_id in self._deleted

    def health(self) -> StoreHealth:
        """Whether saving works (and why not), events held only in memory, and every distinct problem."""
        with self._cond:
            return StoreHealth(
                saving_fails=self._saving_error,
                unsaved=self._appended - self._saved,
                failed_tries=self._failed_tries,
                problems=self._log.problems(),
            )

    @property
    def problems(self) -> list[str]:
        """The readable line of every distinct problem (damage found when opening, a live saving failure)."""
        return self._log.messages()

    # --- writing ---------------------------------------------------------------------------------------------

    def append(self, event: AnyEvent) -> AnyEvent:
        """Give the event its seq, keep it, and queue it for the writer. Raises if the conversation was deleted."""
        cid = event.conversation_id
        if self.read_only:
            raise StoreError("this store was opened read-only")
        if not self.is_loaded(cid) and cid in self._summaries:
            self.events(cid)  # its seqs continue those on disk (the engine reads a conversation before writing it)
        with self._cond:
            if cid in self._deleted:
                raise ConversationDeletedError(cid)
            kept = log_of(self._events, cid)
            event = replace(event, seq=kept.last_seq + 1)
            kept.append(event)
            first, now_urgent = not self._pending, is_urgent(event) and not self._urgent
            self._pending.setdefault(cid, []).append(event)
            self._appended += 1
            self._summarize(event)
            if first or self._pending_since is None:
                self._pending_since = time.monotonic()
            if now_urgent:
                self._urgent = True
            if first or now_urgent:  # a batch that already waits for its interval needs no wake-up per chunk
                self._cond.notify_all()
        return event

    def _summarize(self, event: AnyEvent) -> None:
        """Under ``_cond``: fold the event into its conversation's summary; a deletion leaves only a tombstone."""
        cid = event.conversation_id
        old = self._summaries.get(cid)
        new = summarize(old, event)
        if new.deleted:
            self._summaries.pop(cid, None)
            self._deleted.add(cid)
            self._events.pop(cid, None)
            self._index_due = True
            return
        self._summaries[cid] = new
        if old is None or (old.title, old.open_attempts) != (new.title, new.open_attempts) or is_urgent(event):
            self._index_due = True

    def flush_sync(self, timeout: float | None = 30.0) -> bool:
        """Wait until every event appended so far is on disk: True then; False if a write failed meanwhile or
        ``timeout`` passed (the events stay in memory and are retried)."""
        if self.read_only:
            return True
        with self._cond:
            target, failures = self._appended, self._failures_total
            self._urgent = True
            self._cond.notify_all()
            self._cond.wait_for(
                lambda: self._written >= target or self._failures_total > failures or not self._writer.is_alive(),
                timeout=timeout,
            )
            return self._written >= target

    async def flush(self) -> bool:
        return await asyncio.to_thread(self.flush_sync)

    def close(self, timeout: float = 10.0) -> int:
        """Write what is pending, trying for at most ``timeout`` seconds, stop the writer and release the folder.
        Returns how many events could not be saved (0 when everything is on disk)."""
        if self.read_only:
            return 0
        with self._cond:
            self._closing, self._urgent, self._retry_at = True, True, None
            self._close_deadline = time.monotonic() + timeout
            self._cond.notify_all()
        if self._writer.is_alive():
            self._writer.join(timeout=timeout + 1.0)
        with self._cond:
            unsaved, reason = self._appended - self._saved, self._saving_error
        if unsaved:
            log.error("%d event(s) could not be saved before closing: %s", unsaved, reason or "the writer hung")
        self._files.release()
        return unsaved

    # --- the writer thread -----------------------------------------------------------------------------------

    def _write_loop(self) -> None:
        tries_while_closing = 0
        while True:
            with self._cond:
                self._cond.wait_for(
                    lambda: self._pending or self._index_due or self._closing or self._retry_at is not None
                )
                self._wait_for_batch()
                self._wait_for_retry()
                done = not self._pending and not self._index_due and (self._retry_at is None or self._closing)
                late = tries_while_closing > 0 and time.monotonic() >= self._close_deadline
                if self._closing and (done or late):
                    return
                tries_while_closing += self._closing
                batch, self._pending = self._pending, {}
                self._pending_since, self._urgent = None, False
                target = self._appended
                self._writing = set(batch)
                index = (dict(self._summaries), set(self._deleted)) if self._index_due or self._closing else None
                self._index_due = False
            saved, failed, error = self._write_batch(batch, index)
            with self._cond:
                self._writing = set()
                if index is not None and error is not None:
                    self._index_due = True
                self._saved += saved
                if error is None:
                    self._written = max(self._written, target)
                    self._saving_works()
                else:
                    for cid, events in failed.items():
                        self._pending[cid] = events + self._pending.get(cid, [])
                    self._saving_failed(error)
                self._cond.notify_all()
            del batch, failed  # not kept while waiting for the next one: saved events live on as rows only

    def _wait_for_batch(self) -> None:
        """Let a batch gather for ``flush_interval``, unless something urgent came or the store is closing."""
        while not self._urgent and not self._closing and self._pending_since is not None:
            left = self.flush_interval - (time.monotonic() - self._pending_since)
            if left <= 0:
                return
            self._cond.wait(timeout=left)

    def _wait_for_retry(self) -> None:
        """After a failed write, wait out the backoff (new events do not cut it short; closing bounds it)."""
        while self._retry_at is not None:
            until = min(self._retry_at, self._close_deadline) if self._closing else self._retry_at
            left = until - time.monotonic()
            if left <= 0:
                return
            self._cond.wait(timeout=left)

    def _saving_failed(self, error: BaseException) -> None:
        key, reason = describe_os_error(error)
        self._saving_error = reason
        self._failed_tries += 1
        self._failures_total += 1
        self._retry_at = time.monotonic() + min(self.flush_interval * 2 ** min(self._failed_tries - 1, 16), MAX_BACKOFF)
        self._urgent = True
        self._log.report(
            f"saving:{key}",
            f"Saving fails: {reason}. New events are kept in memory and saved as soon as writing works again.",
            kind="saving",
        )

    def _saving_works(self) -> None:
        if self._saving_error is not None:
            self._log.clear_saving(f"saving works again after {self._failed_tries} failed tries")
        self._saving_error, self._failed_tries, self._retry_at = None, 0, None

    def _write_batch(
        self, batch: dict[str, list[AnyEvent]], index: tuple[dict[str, ConversationSummary], set[str]] | None
    ) -> tuple[int, dict[str, list[AnyEvent]], BaseException | None]:
        """Write the index (when due), then each conversation's events: (events saved, events that failed per
        conversation, the first error). A failed index write fails the whole batch (retried as one)."""
        saved, failed, first = 0, {}, None
        if index is not None:
            try:
                self._files.write_index(*index)
            except Exception as exc:  # noqa: BLE001 - the single writer must survive any write error
                return 0, batch, exc
        for cid, events in batch.items():
            started = time.perf_counter()
            try:
                self._files.write(cid, events)
            except Exception as exc:  # noqa: BLE001 - the single writer must survive any write error
                failed[cid] = events
                first = first or exc
                continue
            saved += len(events)
            elapsed = time.perf_counter() - started
            self.stats.flushes += 1
            self.stats.write_seconds += elapsed
            self.stats.worst_write_ms = max(self.stats.worst_write_ms, elapsed * 1000)
            self.stats.events_written += len(events)
        if not batch:
            try:
                self._files.take_lock()  # nothing to write: check that writing works again (a read-only start)
            except (OSError, DataDirInUseError) as exc:
                first = exc
        return saved, failed, first

    def _take_folder(self) -> bool:
        """Create the folder and take its lock; False (saving reported as failing) if it cannot be written."""
        try:
            self._files.take_lock()
        except OSError as exc:
            self._saving_failed(exc)
            return False
        return True
