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
- All disk writes happen on one writer thread (``store.writer``, the one PostgreSQL uses too), off the event
  loop; a batch is one checksummed record appended to each of its conversations' logs and fsynced
  (``store.tinydb.logfile``): it costs in proportion to the batch, not to the conversation or to all history. A log
  grown to the size of its conversation's compacted file is compacted (the file replaced atomically: temp file,
  fsync, rename) by the writer after a batch is durable (``housekeep``), never while one is written.
- Saving fails loudly: the first failed write sets ``health().saving_fails`` (a readable reason); events are kept
  in memory and retried with exponential backoff (``flush_interval`` doubling up to ``store.writer.MAX_BACKOFF``);
  one log line and one counted problem per distinct failure; the first successful write clears it.
- ``flush_sync`` returns whether everything appended before the call is on disk (False after a failed write or
  the timeout); ``close`` tries for a bounded time and returns how many events could not be saved.
- A deleted conversation refuses every later write (``ConversationDeletedError``); its file is removed and a
  tombstone kept in the index, so the refusal survives a restart. In memory it is only its id (a tombstone).
- Lazy (``store.memory``, the files its backing: ``store.tinydb.files``): opening reads the index
  (``store.tinydb.opening.read_index``: summaries and tombstones), not the conversations;
  ``events(cid)`` reads a conversation's file when first asked (damage is handled and reported then) and keeps it
  (a ``store.event_log.EventLog``: chunks as rows the garbage collector skips) until ``forget(cid)``, which
  drops it once nothing of it waits to be written. ``summaries()`` come from the index, kept up to date on every
  append by ``ledger.summary.summarize``; the index is rewritten with a batch when a title, an open attempt, the
  list or the end of an attempt changed (not for chunks alone), and always before that batch's conversation files.
  An index written with a batch never closes the attempts that batch ends (they stay open in it until the next
  index, written once the batch is durable): a crash between the index and the conversation files leaves the
  attempt open in both, so start-up recovery (which reads only the conversations the index marks open) ends it.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from pathlib import Path

from ledger.errors import ConversationDeletedError, DataDirInUseError, StoreError
from ledger.events import AnyEvent, Deleted
from ledger.summary import ConversationSummary, closes
from store.api import is_urgent
from store.health import ProblemLog, describe_os_error
from store.memory import Memory
from store.tinydb.bounding import Bounding
from store.tinydb.files import FolderFiles
from store.tinydb.opening import read_index
from store.tinydb.reserve import RESERVE_BYTES, Reserve, is_full, no_room, read_spill, spill, spill_path
from store.writer import Batch, Batches, StoreStats, Writer, Written

log = logging.getLogger("store.tinydb.store")
Index = tuple[dict[str, ConversationSummary], set[str], dict[str, Deleted]]


class Store(Memory, Batches):
    """Persistent, append-only events per conversation. Open with ``Store.open(data_dir)``."""

    def __init__(
        self, data_dir: str | Path, *, flush_interval: float = 0.25, read_only: bool = False,
        reserve_bytes: int = RESERVE_BYTES, spill_dir: Path | None = None, bounding: Bounding | None = None,
    ) -> None:  # fmt: skip
        self.data_dir = Path(data_dir)
        self._reserve = Reserve(self.data_dir, reserve_bytes)
        self.spill_path = spill_path(self.data_dir, spill_dir)
        self._closing = False  # the batch being written is a shutdown's
        self._last_error: BaseException | None = None  # of the last write (a full disk's events are spilled)
        self.read_only = read_only
        self.flush_interval = flush_interval
        self.stats = StoreStats()
        self._log = ProblemLog(log)
        self._files = FolderFiles(self.data_dir, self._log.report, bounding)
        self._index: Index | None = None  # the index the batch being written writes first, if due
        self._closes_held = False  # that index keeps open the attempts its batch ends (closed by the next one)
        lock = threading.Condition()
        writer = Writer(lock, self, self._log, flush_interval=flush_interval, name="ledger-store-writer")
        super().__init__(lock, writer, backing=self._files)

    @classmethod
    def open(
        cls, data_dir: str | Path, *, flush_interval: float = 0.25, read_only: bool = False,
        reserve_bytes: int = RESERVE_BYTES, spill_dir: Path | None = None, bounding: Bounding | None = None,
    ) -> Store:  # fmt: skip
        """Lock the folder and read its index; ``read_only`` takes no lock and changes nothing (export). A writable
        store makes its reserve and takes back what the last shutdown spilled (``store.tinydb.reserve``); with a
        ``bounding``, conversation files are bounded when read (``store.tinydb.bounding``)."""
        store = cls(
            data_dir, flush_interval=flush_interval, read_only=read_only, reserve_bytes=reserve_bytes,
            spill_dir=spill_dir, bounding=bounding,
        )  # fmt: skip
        store._files.writable = not read_only and store._take_folder()
        index = read_index(store.data_dir, writable=store._files.writable, report=store._log.report, bounding=bounding)
        store.restore(index.summaries, index.deleted, index.graves)
        store._files.load(index.docs)
        if not read_only:
            store.writer.start()
            if store._files.writable:
                store._reserve.make()
                store._take_spill()
        return store

    @property
    def where(self) -> str:
        """The data folder, as people name it (``store.api``)."""
        return str(self.data_dir)

    # --- writing ---------------------------------------------------------------------------------------------

    def append(self, event: AnyEvent) -> AnyEvent:
        """Give the event its seq, keep it, and queue it for the writer. Raises if the conversation was deleted."""
        cid = event.conversation_id
        if self.read_only:
            raise StoreError("this store was opened read-only")
        if not self.is_loaded(cid) and self.summary(cid) is not None:
            self.events(cid)  # its seqs continue those on disk (the engine reads a conversation before writing it)
        with self.lock:
            if self.is_deleted(cid):
                raise ConversationDeletedError(cid)
            old = self.summary(cid)
            event = self.add(event)
            if _index_changes(old, self.summary(cid), event):
                self._files.index_due = True
        return event

    def close(self, timeout: float = 10.0) -> int:
        """Write what is pending, trying for at most ``timeout`` seconds, stop the writer and release the folder.
        Returns how many events could not be saved (0 when everything is on disk)."""
        if self.read_only:
            return 0
        unsaved = self.writer.stop(timeout)
        left = self.writer.left() if unsaved and is_full(self._last_error) else []
        if left:
            try:
                spill(self.spill_path, left)
            except OSError as exc:
                log.error("%d event(s) could not be spilled to %s either: %s", len(left), self.spill_path, exc)
            else:
                log.error(
                    "%d event(s) could not be saved in %s (%s); written to %s, taken back at the next start",
                    len(left), self.data_dir, self.health().saving_fails, self.spill_path,
                )  # fmt: skip
                unsaved -= len(left)
        if unsaved:
            reason = self.health().saving_fails or "the writer hung"
            log.error("%d event(s) could not be saved before closing: %s", unsaved, reason)
        self._files.release()
        return unsaved

    def _take_spill(self) -> None:
        """Append what the last shutdown spilled and this folder does not hold yet; remove the file once saved."""
        events, problem = read_spill(self.spill_path)
        if problem is not None:
            self._log.report("spill", problem)
        if not events:
            return
        taken = 0
        for event in events:
            cid = event.conversation_id
            if self.is_deleted(cid):
                continue
            held = list(self.events(cid)) if self.summary(cid) is not None or self.is_loaded(cid) else []
            if held and event.seq <= held[-1].seq:
                continue  # saved before the spill after all
            self.append(replace(event, seq=0))
            taken += 1
        if self.flush_sync():
            self.spill_path.unlink(missing_ok=True)
            log.warning("took back %d event(s) the last shutdown could not save here (%s)", taken, self.spill_path)

    def _take_folder(self) -> bool:
        """Create the folder and take its lock; False (saving reported as failing) if it cannot be written."""
        try:
            self._files.take_lock()
        except OSError as exc:
            self.writer.saving_failed(exc)
            return False
        return True

    # --- one batch, on the writer thread (``store.writer`` decides when) ---------------------------------------

    def due(self) -> bool:
        return self._files.index_due

    def taken(self, batch: Batch, closing: bool) -> None:
        self._closing = closing
        self._index = self.snapshot() if self._files.index_due or closing else None
        self._files.index_due = False
        self._closes_held = False
        if self._index is not None:  # the index is written before the events: it must not close what they end
            summaries = self._index[0]
            for cid, events in batch.items():
                ended = {a for a in map(closes, events) if a is not None}
                if ended and cid in summaries:
                    still = summaries[cid].open_attempts
                    summaries[cid] = summaries[cid]._replace(open_attempts=tuple(sorted({*still, *ended})))
                    self._closes_held = True

    def written(self, ok: bool) -> None:
        if self._index is not None and (not ok or self._closes_held):
            self._files.index_due = True  # again: after a failure, or to close what this batch ended

    def write(self, batch: Batch) -> Written:
        """``write_once``; while closing, a write that failed for a full disk is tried once more in the space the
        reserve gave back. A write that worked on a disk with no room left reports the full disk with nothing
        failed (``store.tinydb.reserve.no_room``)."""
        saved, failed, first = self.write_once(batch)
        if failed and self._closing and is_full(first) and self._reserve.release():
            log.warning("the disk is full while closing: the reserve in %s is used to save what waits", self.data_dir)
            more, failed, first = self.write_once(failed)
            saved += more
        if first is None and not self._closing and self._files.writable:
            first = no_room(self.data_dir)  # written, but the next writes will fail: say so now (failed stays {})
        self._last_error = first
        return saved, failed, first

    def write_once(self, batch: Batch) -> Written:
        """Write the index (when due), then each conversation's events: (events saved, events that failed per
        conversation, the first error). A failed index write fails the whole batch (retried as one)."""
        saved, failed, first = 0, {}, None
        if self._index is not None:
            try:
                self._files.write_index(*self._index)
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
            self.stats.record(time.perf_counter() - started, len(events))
        if not batch:
            try:
                self._files.take_lock()  # nothing to write: check that writing works again (a read-only start)
            except (OSError, DataDirInUseError) as exc:
                first = exc
        return saved, failed, first

    def describe(self, error: BaseException) -> tuple[str, str]:
        return describe_os_error(error)

    def housekeeping_in(self) -> float | None:
        return 0.0 if self._files.compaction_due() else None

    def housekeep(self) -> None:
        self._files.compact_one()

    def compacting(self) -> bool:
        """Whether the writer has a log's compaction due or under way (what is measured in memory waits for it)."""
        return self._files.compacting()


def _index_changes(old: ConversationSummary | None, new: ConversationSummary | None, event: AnyEvent) -> bool:
    """Whether the index must say what ``event`` changed: a new or deleted conversation (``new`` is None), a
    title, an open attempt, or the end of something (not chunks alone)."""
    if old is None or new is None:
        return True
    return (old.title, old.open_attempts) != (new.title, new.open_attempts) or is_urgent(event)
