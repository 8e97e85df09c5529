"""The files of one data folder as the store reads and writes them: its lock, the index, one TinyDB file per
conversation; the backing of the store's lazy memory (``store.memory.Backing``).

Guarantees:
- ``take_lock`` holds the folder's lock (``store.tinydb.lock``) before anything is written; every write checks it.
- ``write(cid, events)`` appends the events' documents to the conversation's files (``store.tinydb.logfile``: one
  record on its log, fsynced; its cost follows the batch, not the conversation), or, when the last event is
  ``deleted``, removes them. A write that raises leaves the files as they were, so retrying it neither loses nor
  doubles anything.
- A log grown to the size of its compacted file is compacted (``compact_one``) by the writer thread after a batch
  (``Store.housekeep``), never while a batch is written, and never while another thread reads that conversation:
  a read waits for the compaction of its conversation, a compaction skips a conversation being read.
- ``write_index(summaries, deleted, graves)`` replaces the index (one entry per live conversation with its
  summary, and a tombstone per deleted one, keeping its ``deleted`` event: what it spent) atomically; the store
  writes it before the conversation files of the same batch, so an index never says less than the files (an
  attempt it marks open may be closed on disk, never the reverse).
- ``index_due`` says the index on disk says less than it should (a title, an open attempt, the list or the end of
  an attempt changed, or a summary was ``corrected`` when its conversation was read): the writer rewrites it.
- ``read(cid)`` reads a conversation's file when the store's memory asks (damage is kept aside, when
  ``writable``, and reported: ``store.tinydb.opening``); ``might_contain`` reads only the texts of user messages
  and finished answers (``persisted``), and says True for a file it cannot read (reading it reports the damage).
- Only the writer's handles of conversations written (or read and kept) since they were last ``forget``-ten are
  kept: an open log, its size and its compacted file's; never their documents.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ledger.events import AnyEvent, Deleted
from ledger.summary import ConversationSummary
from store.memory import Read
from store.tinydb.bounding import OVERSIZE_FILE, Bounding
from store.tinydb.documents import last_seq, to_documents
from store.tinydb.entries import index_docs
from store.tinydb.lock import DataDirLock
from store.tinydb.logfile import ConversationLog, read_log, table_docs
from store.tinydb.opening import INDEX_FILE, Report, read_conversation
from store.tinydb.records import scan
from store.tinydb.storage import atomic_write, dumps, loads

log = logging.getLogger("store.tinydb.files")


class FolderFiles:
    def __init__(self, data_dir: Path, report: Report, bounding: Bounding | None = None) -> None:
        self.data_dir = data_dir
        self.bounding = bounding  # long texts of older files moved into blobs when read (``store.tinydb.bounding``)
        self.writable = False  # set once the folder's lock is held at opening
        self.index_due = False
        self._report = report
        self._lock: DataDirLock | None = None
        self._logs: dict[str, ConversationLog] = {}  # the writer's handles (``forget`` drops them)
        self._guard = threading.Condition()  # over what follows: reads and compactions of one conversation exclude
        self._reading: Counter[str] = Counter()
        self._compacting: str | None = None
        self._due: set[str] = set()  # conversations whose log is to be compacted
        self._index: dict[str, Any] = {}
        self._deleted_at: dict[str, str] = {}

    def write(self, cid: str, events: Sequence[AnyEvent]) -> None:
        """Make the events durable (or the deletion, when the last one is ``deleted``); raises on any failure."""
        self.take_lock()
        if isinstance(events[-1], Deleted):
            self._remove(cid)
            return
        files = self._files(cid)
        files.append(to_documents(events))
        if files.due:
            with self._guard:
                self._due.add(cid)

    def write_index(
        self, summaries: dict[str, ConversationSummary], deleted: set[str], graves: dict[str, Deleted] | None = None
    ) -> None:
        """Replace the index with these summaries and tombstones; raises on any failure."""
        self.take_lock()
        for cid in deleted - self._deleted_at.keys():
            self._deleted_at[cid] = _now()
        docs = index_docs(summaries, deleted, self._index, graves)
        for doc in docs["conversations"].values():
            if doc.get("deleted") and "deleted_at" not in doc:
                doc["deleted_at"] = self._deleted_at.get(str(doc["id"]), _now())
        atomic_write(self.data_dir / INDEX_FILE, dumps(docs))
        self._index = docs

    def load(self, index: dict[str, Any]) -> None:
        """Start from the index opening read."""
        self._index = index

    def loaded(self, cid: str, end: int) -> None:
        """Under the store's lock: the conversation was read and is kept, its log's good records ending at ``end``
        (the writer appends there, after keeping aside anything beyond)."""
        path = self.path(cid)
        base = path.stat().st_size if path.exists() else 0
        with self._guard:
            old, self._logs[cid] = self._logs.get(cid), ConversationLog(path, base_bytes=base, end=end)
        if old is not None:
            old.close()

    def read(self, cid: str) -> Read | None:
        """The conversation's events from its files; None when there are none (``store.memory.Backing``)."""
        with self._read(cid):
            read = read_conversation(
                self.data_dir, cid, writable=self.writable, report=self._report, bounding=self.bounding
            )
        if read is None:
            return None
        events, end = read
        return Read(events, kept=lambda: self.loaded(cid, end))

    def might_contain(self, cid: str, words: list[str]) -> bool:
        """False only when no line of a user message or of a finished answer (its ``persisted`` text) in the
        conversation's file holds every one of the lower-case ``words``."""
        try:
            path = self.path(cid)
            if self.bounding is not None and self.writable and path.stat().st_size > OVERSIZE_FILE:
                return True  # not parsed here (it would hold the interpreter): reading it bounds it first
            with self._read(cid):
                tail = read_log(path)
                docs = table_docs(loads(path.read_bytes())) if path.exists() or not tail else []
            found = scan(tail, after=last_seq(docs))
            if found.damaged:
                return True  # reading it reports the damage
            docs += found.docs
            texts = [d["text"] for d in docs if d.get("kind") in ("submitted", "persisted")]
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return True  # damaged: reading it reports the damage
        lines = (line.lower() for text in texts if isinstance(text, str) for line in text.splitlines())
        return any(all(w in line for w in words) for line in lines)

    def corrected(self) -> None:
        """A summary of the index was corrected from its conversation's file: the index is due."""
        self.index_due = True

    def forget(self, cid: str) -> None:
        """Drop the writer's handle of a conversation nothing is being written to."""
        with self._guard:
            files = self._logs.pop(cid, None)
            self._due.discard(cid)
        if files is not None and self._compacting != cid:
            files.close()

    def compaction_due(self) -> bool:
        """Whether a log waits to be compacted (and its conversation is not being read)."""
        with self._guard:
            return any(not self._reading[cid] for cid in self._due)

    def compacting(self) -> bool:
        """Whether a compaction is due or under way (its parsed documents live on the writer thread meanwhile)."""
        with self._guard:
            return self._compacting is not None or any(not self._reading[cid] for cid in self._due)

    def compact_one(self) -> None:
        """On the writer thread, after a batch: compact one due log. A failure is logged (the log stays as it is,
        whole, and is compacted again when it next grows)."""
        with self._guard:
            cid = next((c for c in sorted(self._due) if not self._reading[c]), None)
            if cid is None:
                return
            self._due.discard(cid)
            files = self._logs.get(cid)
            if files is None or not files.due:
                return
            self._compacting = cid
        try:
            files.compact()
        except (OSError, ValueError) as exc:
            log.warning("the log of conversation %s could not be compacted (it stays as it is): %s", cid, exc)
        finally:
            with self._guard:
                self._compacting = None
                forgotten = self._logs.get(cid) is not files
                self._guard.notify_all()
            if forgotten:  # ``forget`` left its closing to the compaction
                files.close()

    def take_lock(self) -> None:
        """Hold the folder's lock; raises ``DataDirInUseError`` or the ``OSError`` of an unwritable folder."""
        if self._lock is None or not self._lock.held:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._lock = DataDirLock.acquire(self.data_dir)

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def path(self, cid: str) -> Path:
        return self.data_dir / f"conv-{cid}.json"

    def _files(self, cid: str) -> ConversationLog:
        files = self._logs.get(cid)
        if files is None:  # a new conversation (one on disk is read, and its handle made, before it is written)
            files = ConversationLog(self.path(cid))
            with self._guard:
                self._logs[cid] = files
        return files

    @contextmanager
    def _read(self, cid: str) -> Iterator[None]:
        """While another thread reads a conversation's files: never during its compaction (waits for it to end)."""
        with self._guard:
            self._guard.wait_for(lambda: self._compacting != cid)
            self._reading[cid] += 1
        try:
            yield
        finally:
            with self._guard:
                self._reading[cid] -= 1
                if not self._reading[cid]:
                    del self._reading[cid]
                self._guard.notify_all()

    def _remove(self, cid: str) -> None:
        files = self._logs.get(cid) or ConversationLog(self.path(cid), base_bytes=0, end=0)
        self.forget(cid)
        files.remove()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
