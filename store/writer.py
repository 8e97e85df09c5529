"""The one writer thread of a store, for both back ends: it makes queued events durable in batches, and a back end
(``Batches``: the TinyDB files, PostgreSQL) says how to write one batch.

Guarantees:
- ``queue`` (called under the store's lock) never touches the disk or the database, and wakes the writer only
  when the event starts a batch (nothing was pending) or newly makes it urgent: a batch that already waits for
  its interval needs no wake-up per chunk.
- A batch gathers for ``flush_interval`` (250 ms) unless an urgent event arrives (``store.api.is_urgent``), a
  flush is asked for or the store is closing; then ``Batches.write`` runs on the writer thread, off the event
  loop: the only thread that writes.
- A failed batch is kept (in front of what came later) and retried with exponential backoff (``flush_interval``
  doubling, up to ``MAX_BACKOFF``; new events do not cut it short); the first failure sets
  ``health().saving_fails`` with a readable reason (``Batches.describe``), one log line and one counted problem
  per distinct failure; the first successful write clears it. A write that reports an error with nothing failed
  (the back end's warning of trouble ahead: a disk with no room left) counts as written and as failing.
- ``flush_sync`` returns whether everything queued before the call was written (False after a failed write, the
  timeout, or events dropped meanwhile: ``drop``, ``discard``: a back end's refused part); ``stop`` tries for
  a bounded time and returns how many events could not be saved; the thread itself ends at that deadline even
  while every write fails (``running`` turns False).
- ``Batches.housekeep`` runs on the writer thread after every batch, whenever ``housekeeping_in`` seconds pass
  idle, and after a wake-up while idle (so a new ``housekeeping_in`` counts at once).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

from ledger.events import AnyEvent
from store.health import ProblemLog, StoreHealth

MAX_BACKOFF = 1.0  # seconds between retries of a failing write, at most (saving resumes within ~1 s)
Batch = dict[str, list[AnyEvent]]
#: What writing a batch gave: events saved, the events that failed per conversation, the first error.
Written = tuple[int, Batch, BaseException | None]


@dataclass(kw_only=True, slots=True)
class StoreStats:
    """What the writes cost, as a back end's ``Batches.write`` records them (for the benchmarks)."""

    flushes: int = 0
    write_seconds: float = 0.0
    worst_write_ms: float = 0.0
    events_written: int = 0

    def record(self, seconds: float, events: int) -> None:
        self.flushes += 1
        self.write_seconds += seconds
        self.worst_write_ms = max(self.worst_write_ms, seconds * 1000)
        self.events_written += events


class Batches:
    """What a back end gives the writer: how to write one batch, and any work of its own beside the events."""

    def write(self, batch: Batch) -> Written:
        """On the writer thread, outside the lock: make the batch durable (it may be empty)."""
        raise NotImplementedError

    def describe(self, error: BaseException) -> tuple[str, str]:
        """(a key naming the kind of failure, a readable reason)."""
        raise NotImplementedError

    def due(self) -> bool:
        """Under the lock: whether work other than queued events waits for the writer."""
        return False

    def taken(self, batch: Batch, closing: bool) -> None:
        """Under the lock, as the writer takes ``batch`` to write it."""

    def written(self, ok: bool) -> None:
        """Under the lock, once the batch taken last was written (``ok``) or failed."""

    def housekeeping_in(self) -> float | None:
        """Under the lock: seconds until idle work is due; None when there is none."""
        return None

    def housekeep(self) -> None:
        """Idle work, on the writer thread, outside the lock."""


class Writer:
    """Queued events, and the thread that writes them through ``batches``; everything under ``lock``."""

    def __init__(
        self, lock: threading.Condition, batches: Batches, problems: ProblemLog, *, flush_interval: float, name: str
    ) -> None:
        self.flush_interval = flush_interval
        self._cond = lock
        self._batches = batches
        self._log = problems
        self._pending: Batch = {}
        self._writing: set[str] = set()
        self._pending_since: float | None = None
        self._urgent = self._closing = False
        self._appended = self._saved = self._written = self._dropped = 0
        self._close_deadline = 0.0
        self._saving_error: str | None = None
        self._failed_tries = self._failures_total = 0
        self._retry_at: float | None = None
        self._thread = threading.Thread(target=self._write_loop, name=name, daemon=True)

    # --- what a store uses -----------------------------------------------------------------------------------

    def queue(self, cid: str, event: AnyEvent, *, urgent: bool) -> None:
        """Under the lock: queue an event for the writer."""
        first, now_urgent = not self._pending, urgent and not self._urgent
        self._pending.setdefault(cid, []).append(event)
        self._appended += 1
        if first or self._pending_since is None:
            self._pending_since = time.monotonic()
        if now_urgent:
            self._urgent = True
        if first or now_urgent:  # a batch that already waits for its interval needs no wake-up per chunk
            self._cond.notify_all()

    def unwritten(self, cid: str) -> bool:
        """Under the lock: whether some of the conversation's events wait to be written or are being written."""
        return cid in self._pending or cid in self._writing

    def drop(self, cid: str) -> int:
        """Under the lock: give up the conversation's queued events (they will never be written); how many."""
        dropped = self._pending.pop(cid, [])
        self.discard(len(dropped))
        return len(dropped)

    def discard(self, count: int) -> None:
        """Under the lock: ``count`` events taken for writing will never be written (refused): not unsaved any
        more, and a ``flush_sync`` waiting for them returns False."""
        self._saved += count
        self._dropped += count

    def wake(self) -> None:
        """Under the lock: the back end has work for the writer (``Batches.due``)."""
        self._cond.notify_all()

    def health(self) -> StoreHealth:
        """Whether saving works (and why not), events held only in memory, and every distinct problem.

        Read without the lock: a page's periodic check runs on the event loop, and the lock may be held by a
        thread waiting for the database (a write lease taken while the pool reconnects: up to seconds), which
        froze every page of the instance (issue 40: ``GET /`` 0.9 s after an outage). Each value is one
        attribute read (``_saved`` first: ``unsaved`` may count an event saved meanwhile as unsaved, never the other
        way round)."""
        saved, appended = self._saved, self._appended
        return StoreHealth(
            saving_fails=self._saving_error,
            unsaved=appended - saved,
            failed_tries=self._failed_tries,
            problems=self._log.problems(),
        )

    @property
    def problems(self) -> list[str]:
        """The readable line of every distinct problem (damage found when opening, a live saving failure)."""
        return self._log.messages()

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the writer thread is still alive (after ``stop``: False once it gave up or finished)."""
        return self._thread.is_alive()

    def flush_sync(self, timeout: float | None = 30.0) -> bool:
        """Wait until every event queued so far is written: True then; False if a write failed meanwhile or
        ``timeout`` passed (the events stay queued and are retried). A failed write is retried at once, not after
        its backoff: whoever asks to flush wants to know now."""
        if not self._thread.is_alive() and not self._pending:
            return self._written >= self._appended
        with self._cond:
            target, failures, dropped = self._appended, self._failures_total, self._dropped
            self._urgent = True
            self._retry_at = min(self._retry_at, time.monotonic()) if self._retry_at is not None else None
            self._cond.notify_all()
            self._cond.wait_for(
                lambda: self._written >= target or self._failures_total > failures or not self._thread.is_alive(),
                timeout=timeout,
            )
            return self._written >= target and self._dropped == dropped

    async def flush(self) -> bool:
        return await asyncio.to_thread(self.flush_sync)

    def stop(self, timeout: float) -> int:
        """Write what is queued, trying for at most ``timeout`` seconds, and stop the thread; how many events
        could not be saved (0 when everything is written)."""
        with self._cond:
            self._closing, self._urgent, self._retry_at = True, True, None
            self._close_deadline = time.monotonic() + timeout
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout + 1.0)
        with self._cond:
            return self._appended - self._saved

    def left(self) -> list[AnyEvent]:
        """After ``stop``: the events that could not be written, per conversation in order (none while the thread
        still runs: it may yet write them)."""
        with self._cond:
            if self._thread.is_alive():
                return []
            return [event for events in self._pending.values() for event in events]

    def saving_failed(self, error: BaseException) -> None:
        """Under the lock (or before the thread starts): a write failed; retry with backoff, and say so once."""
        key, reason = self._batches.describe(error)
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

    # --- the writer thread -----------------------------------------------------------------------------------

    def _busy(self) -> bool:
        return bool(self._pending) or self._closing or self._retry_at is not None or self._batches.due()

    def _write_loop(self) -> None:
        tries_while_closing = 0
        while True:
            with self._cond:
                if not self._busy():  # a wake-up while idle re-reads ``housekeeping_in`` (a lease taken, no append)
                    self._cond.wait(timeout=self._batches.housekeeping_in())
                idle = not self._busy()
                if not idle:
                    self._wait_for_batch()
                    self._wait_for_retry()
                    done = not self._pending and not self._batches.due() and (self._retry_at is None or self._closing)
                    late = tries_while_closing > 0 and time.monotonic() >= self._close_deadline
                    if self._closing and (done or late):
                        return
                    tries_while_closing += self._closing
                    batch, self._pending = self._pending, {}
                    self._pending_since, self._urgent = None, False
                    target = self._appended
                    self._writing = set(batch)
                    self._batches.taken(batch, self._closing)
            if not idle:
                work = [batch]
                del batch  # not kept once written (``_write`` lets go of it before waking the waiters)
                self._write(work, target)
            self._batches.housekeep()

    def _write(self, work: list[Batch], target: int) -> None:
        """Write the one batch in ``work``; it is let go of before the waiters wake: saved events live on as rows
        only, and a ``flush_sync`` that returned finds no batch still held by this thread."""
        batch = work.pop()
        saved, failed, error = self._batches.write(batch)
        del batch
        with self._cond:
            self._writing = set()
            self._batches.written(error is None)
            self._saved += saved
            if not failed:  # an error with nothing failed: written, but the back end sees trouble ahead (a full disk)
                self._written = max(self._written, target)
            if error is None:
                self._saving_works()
            else:
                for cid, events in failed.items():
                    self._pending[cid] = events + self._pending.get(cid, [])
                self.saving_failed(error)
            self._cond.notify_all()

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

    def _saving_works(self) -> None:
        if self._saving_error is not None:
            self._log.clear_saving(f"saving works again after {self._failed_tries} failed tries")
        self._saving_error, self._failed_tries, self._retry_at = None, 0, None
