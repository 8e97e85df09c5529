"""The files of one data folder as the store reads and writes them: its lock, the index, one TinyDB file per
conversation; the backing of the store's lazy memory (``store.memory.Backing``).

Guarantees:
- ``take_lock`` holds the folder's lock (``store.tinydb.lock``) before anything is written; every write checks it.
- ``write(cid, events)`` appends the events' documents to the conversation's file, or, when the last event is
  ``deleted``, removes the file. Each file is replaced atomically (``store.tinydb.storage``); a write that raises leaves
  file and cache as they were, so retrying it neither loses nor doubles anything.
- ``write_index(summaries, deleted, graves)`` replaces the index (one entry per live conversation with its
  summary, and a tombstone per deleted one, keeping its ``deleted`` event: what it spent) atomically; the store
  writes it before the conversation files of the same batch, so an index never says less than the files (an
  attempt it marks open may be closed on disk, never the reverse).
- ``index_due`` says the index on disk says less than it should (a title, an open attempt, the list or the end of
  an attempt changed, or a summary was ``corrected`` when its conversation was read): the writer rewrites it.
- ``read(cid)`` reads a conversation's file when the store's memory asks (damage is kept aside, when
  ``writable``, and reported: ``store.tinydb.opening``); ``might_contain`` reads only the texts of user messages
  and finished answers (``persisted``), and says True for a file it cannot read (reading it reports the damage).
- Only the files of conversations written (or read and kept) since they were last ``forget``-ten are cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tinydb import TinyDB

from ledger.events import AnyEvent, Deleted
from ledger.summary import ConversationSummary
from store.memory import Read
from store.tinydb.bounding import OVERSIZE_FILE, Bounding
from store.tinydb.documents import to_documents, untracked_rows
from store.tinydb.entries import index_docs
from store.tinydb.lock import DataDirLock
from store.tinydb.opening import INDEX_FILE, TABLE, Report, read_conversation
from store.tinydb.storage import AtomicJSONStorage, atomic_write, dumps, loads


class FolderFiles:
    def __init__(self, data_dir: Path, report: Report, bounding: Bounding | None = None) -> None:
        self.data_dir = data_dir
        self.bounding = bounding  # long texts of older files moved into blobs when read (``store.tinydb.bounding``)
        self.writable = False  # set once the folder's lock is held at opening
        self.index_due = False
        self._report = report
        self._lock: DataDirLock | None = None
        self._dbs: dict[str, TinyDB] = {}
        self._index: dict[str, Any] = {}
        self._deleted_at: dict[str, str] = {}

    def write(self, cid: str, events: Sequence[AnyEvent]) -> None:
        """Make the events durable (or the deletion, when the last one is ``deleted``); raises on any failure."""
        self.take_lock()
        if isinstance(events[-1], Deleted):
            self._remove(cid)
        else:
            self._db(cid).table(TABLE).insert_multiple(to_documents(events))

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

    def loaded(self, cid: str, docs: list[dict[str, Any]]) -> None:
        """The conversation's stored documents, as opening read them (saves reading the file again to append)."""
        untracked_rows(docs)
        data = {TABLE: {str(i): doc for i, doc in enumerate(docs, start=1)}}
        self._dbs[cid] = TinyDB(self.path(cid), storage=AtomicJSONStorage, data=data)

    def read(self, cid: str) -> Read | None:
        """The conversation's events from its file; None when there is none (``store.memory.Backing``)."""
        read = read_conversation(
            self.data_dir, cid, writable=self.writable, report=self._report, bounding=self.bounding
        )
        if read is None:
            return None
        events, docs = read
        return Read(events, kept=lambda: self.loaded(cid, docs))

    def might_contain(self, cid: str, words: list[str]) -> bool:
        """False only when no line of a user message or of a finished answer (its ``persisted`` text) in the
        conversation's file holds every one of the lower-case ``words``."""
        try:
            path = self.path(cid)
            if self.bounding is not None and self.writable and path.stat().st_size > OVERSIZE_FILE:
                return True  # not parsed here (it would hold the interpreter): reading it bounds it first
            docs = loads(path.read_bytes())[TABLE].values()
            texts = [d["text"] for d in docs if d.get("kind") in ("submitted", "persisted")]
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return True  # damaged: reading it reports the damage
        lines = (line.lower() for text in texts if isinstance(text, str) for line in text.splitlines())
        return any(all(w in line for w in words) for line in lines)

    def corrected(self) -> None:
        """A summary of the index was corrected from its conversation's file: the index is due."""
        self.index_due = True

    def forget(self, cid: str) -> None:
        """Drop the cached file of a conversation nothing is being written to."""
        db = self._dbs.pop(cid, None)
        if db is not None:
            db.close()

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

    def _db(self, cid: str) -> TinyDB:
        db = self._dbs.get(cid)
        if db is None:
            db = self._dbs[cid] = TinyDB(self.path(cid), storage=AtomicJSONStorage)
        return db

    def _remove(self, cid: str) -> None:
        self.forget(cid)
        self.path(cid).unlink(missing_ok=True)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
