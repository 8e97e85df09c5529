"""One writer thread that makes queued events durable in batches, for a store that says how to write a batch.

Guarantees (the same rules as the TinyDB store's writer, for ``store.postgres.store``):
- ``queue`` (called under ``_cond``) never touches the database; a batch gathers for ``flush_interval`` (250 ms)
  unless an urgent event arrives or the store is closing, then ``write_batch`` runs on the writer thread.
- A failed batch is kept (in front of what came later) and retried with exponential backoff up to
  ``MAX_BACKOFF``; the first failure sets ``saving_fails`` with a readable reason (``describe``), one log line
  and one counted problem per distinct failure; the first successful write clears it.
- ``flush_sync`` returns whether everything queued before the call was written (False after a failed write or
  the timeout); ``stop_writer`` tries for a bounded time and returns how many events could not be saved.
- ``housekeep`` runs on the writer thread after every batch, whenever ``housekeeping_in`` seconds pass idle, and
  after a notify while idle (so a new ``housekeeping_in`` counts at once).
"""

from __future__ import annotations

import asyncio
import threading
import time

from ledger.events import AnyEvent
from store.health import ProblemLog, StoreHealth
from store.tinydb.store import StoreStats

MAX_BACKOFF = 2.0
Batch = dict[str, list[AnyEvent]]


class BatchWriter:
    def __init__(self, flush_interval: float, problems: ProblemLog) -> None:
        self.flush_interval = flush_interval
        self._log = problems
        self._cond = threading.Condition()
        self._pending: Batch = {}
        self._pending_since: float | None = None
        self._urgent = self._closing = False
        self._appended = self._saved = self._written = 0
        self._close_deadline = 0.0
        self._saving_error: str | None = None
        self._failed_tries = self._failures_total = 0
        self._retry_at: float | None = None
        self.stats = StoreStats()
        self._writer = threading.Thread(target=self._write_loop, name="ledger-batch-writer", daemon=True)

    # --- what a store provides -------------------------------------------------------------------------------

    def write_batch(self, batch: Batch) -> tuple[int, Batch, BaseException | None]:
        """Write the batch: (events saved, events that failed per conversation, the first error)."""
        raise NotImplementedError

    def describe(self, error: BaseException) -> tuple[str, str]:
        """(a key naming the kind of failure, a readable reason)."""
        raise NotImplementedError

    def housekeeping_in(self) -> float | None:
        """Seconds until idle work is due (asked under ``_cond``); None when there is none."""
        return None

    def housekeep(self) -> None:
        """Idle work, on the writer thread, outside ``_cond``."""

    # --- what a store uses -----------------------------------------------------------------------------------

    def queue(self, cid: str, event: AnyEvent, *, urgent: bool) -> None:
        """Under ``_cond``: queue an event for the writer."""
        first, now_urgent = not self._pending, urgent and not self._urgent
        self._pending.setdefault(cid, []).append(event)
        self._appended += 1
        if first or self._pending_since is None:
            self._pending_since = time.monotonic()
        if now_urgent:
            self._urgent = True
        if first or now_urgent:  # a batch that already waits for its interval needs no wake-up per chunk
            self._cond.notify_all()

    def has_pending(self, cid: str) -> bool:
        return cid in self._pending

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
        return self._log.messages()

    async def flush(self) -> bool:
        return await asyncio.to_thread(self.flush_sync)

    def start_writer(self) -> None:
        self._writer.start()

    def flush_sync(self, timeout: float | None = 30.0) -> bool:
        if not self._writer.is_alive() and not self._pending:
            return self._written >= self._appended
        with self._cond:
            target, failures = self._appended, self._failures_total
            self._urgent = True
            self._cond.notify_all()
            self._cond.wait_for(
                lambda: self._written >= target or self._failures_total > failures or not self._writer.is_alive(),
                timeout=timeout,
            )
            return self._written >= target

    def stop_writer(self, timeout: float) -> int:
        with self._cond:
            self._closing, self._urgent, self._retry_at = True, True, None
            self._close_deadline = time.monotonic() + timeout
            self._cond.notify_all()
        if self._writer.is_alive():
            self._writer.join(timeout=timeout + 1.0)
        with self._cond:
            return self._appended - self._saved

    # --- the writer thread -----------------------------------------------------------------------------------

    def _busy(self) -> bool:
        return bool(self._pending) or self._closing or self._retry_at is not None

    def _write_loop(self) -> None:
        tries_while_closing = 0
        while True:
            with self._cond:
                if not self._busy():  # a notify while idle re-reads ``housekeeping_in`` (a lease taken, no append)
                    self._cond.wait(timeout=self.housekeeping_in())
                if not self._busy():
                    idle = True
                else:
                    idle = False
                    self._wait_for_batch()
                    self._wait_for_retry()
                    done = not self._pending and (self._retry_at is None or self._closing)
                    late = tries_while_closing > 0 and time.monotonic() >= self._close_deadline
                    if self._closing and (done or late):
                        return
                    tries_while_closing += self._closing
                    batch, self._pending = self._pending, {}
                    self._pending_since, self._urgent = None, False
                    target = self._appended
            if not idle:
                self._write(batch, target)
                del batch  # not kept while waiting for the next one: saved events live on as rows only
            self.housekeep()

    def _write(self, batch: Batch, target: int) -> None:
        started = time.perf_counter()
        saved, failed, error = self.write_batch(batch) if batch else (0, {}, None)
        if error is None:
            elapsed = time.perf_counter() - started
            self.stats.flushes += 1
            self.stats.write_seconds += elapsed
            self.stats.worst_write_ms = max(self.stats.worst_write_ms, elapsed * 1000)
            self.stats.events_written += saved
        with self._cond:
            self._saved += saved
            if error is None:
                self._written = max(self._written, target)
                self._saving_works()
            else:
                for cid, events in failed.items():
                    self._pending[cid] = events + self._pending.get(cid, [])
                self._saving_failed(error)
            self._cond.notify_all()

    def _wait_for_batch(self) -> None:
        while not self._urgent and not self._closing and self._pending_since is not None:
            left = self.flush_interval - (time.monotonic() - self._pending_since)
            if left <= 0:
                return
            self._cond.wait(timeout=left)

    def _wait_for_retry(self) -> None:
        while self._retry_at is not None:
            until = min(self._retry_at, self._close_deadline) if self._closing else self._retry_at
            left = until - time.monotonic()
            if left <= 0:
                return
            self._cond.wait(timeout=left)

    def _saving_failed(self, error: BaseException) -> None:
        key, reason = self.describe(error)
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
